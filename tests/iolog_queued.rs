//! write_iolog on engines that queue, line for line against fio 3.33 (times aside):
//! periodic syncs on libaio (fio 3.33 runs them at once and decides "last was a sync" from
//! completions), the offsets syncs log (the free request on top of fio's stack), a request
//! the engine was busy for logged at each attempt, commits and reaps as fio counts them
//! (iodepth_batch, iodepth_low), the loops of strided zones, and files closed after their
//! requests in flight.

use crate::common;
use common::*;

#[test]
fn queued_logs_follow_fio_s_syncs_commits_and_reaps() {
    let Some(fio) = fio_bin() else { return };
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let cases: &[(&str, &[&str])] = &[
        // fio 3.33's libaio runs a sync at once while the writes before it are in flight;
        // a sync due before any of the writes after the last one was reaped is skipped
        // (41 syncs for 128 writes), and each sync logs the offset its request slot held.
        ("f", &["--rw=write", "--bs=8k", "--iodepth=8", "--fsync=3"]),
        (
            "f",
            &[
                "--rw=randwrite",
                "--bs=4k",
                "--size=256k",
                "--iodepth=8",
                "--fdatasync=2",
            ],
        ),
        ("f", &["--rw=randrw", "--bs=4k", "--iodepth=8", "--fsync=4"]),
        (
            "f",
            &[
                "--rw=write",
                "--bs=4k",
                "--size=256k",
                "--iodepth=4",
                "--sync_file_range=write:5",
                "--fsync=3",
            ],
        ),
        // Writes not yet committed make the sync wait (busy): it is logged again when it
        // is queued again.
        (
            "f",
            &[
                "--rw=write",
                "--bs=4k",
                "--size=256k",
                "--iodepth=4",
                "--iodepth_batch=4",
                "--fsync=3",
            ],
        ),
        // A reap submits what is pending without counting a commit (the next batch
        // commits sooner); iodepth_low drains a full queue, also where the sync was busy.
        (
            "f",
            &[
                "--rw=randrw",
                "--bs=4k",
                "--iodepth=8",
                "--iodepth_batch=3",
                "--iodepth_low=2",
                "--fsync=4",
            ],
        ),
        (
            "f:g",
            &[
                "--rw=randrw:3",
                "--bssplit=4k/20:8k/30:32k/50",
                "--size=384k",
                "--io_size=512k",
                "--file_service_type=sequential",
                "--rwmixread=70",
                "--zonemode=strided",
                "--zonesize=64k",
                "--zoneskip=64k",
                "--iodepth=8",
                "--iodepth_batch_submit=2",
                "--fdatasync=5",
            ],
        ),
        // The attempt that found the file done keeps its offset in its request, which goes
        // back under the completions of the requests in flight: the sync at the next
        // pass's start logs the last completed one's.
        (
            "n",
            &[
                "--rw=randwrite",
                "--bsrange=4k-16k",
                "--size=256k",
                "--io_size=1m",
                "--offset=10%",
                "--iodepth=4",
                "--fsync=3",
            ],
        ),
        (
            "f",
            &[
                "--rw=write",
                "--bs=4k",
                "--size=256k",
                "--io_size=1m",
                "--iodepth=8",
                "--fsync=5",
                "--end_fsync=1",
            ],
        ),
        // number_ios reached in the first pass of io_size beyond the files: the job ends
        // there (the loops it asks for would go on, empty; passes do not).
        (
            "f:g",
            &[
                "--rw=rw",
                "--bsrange=4k-16k",
                "--io_size=3m",
                "--number_ios=10",
                "--iodepth=4",
                "--end_fsync=1",
                "--file_service_type=sequential",
            ],
        ),
        // A file found done with requests in flight is closed after them (its `close`
        // logged at once): the service passes over it meanwhile, under non-uniform service
        // (a drawn file still closing is drawn again) and under openfiles (it still counts
        // open); the other files go on, so the free slots and the syncs' offsets are fio's.
        (
            "f:g:h",
            &[
                "--rw=read",
                "--bs=4k,8k",
                "--file_service_type=gauss:5",
                "--iodepth=8",
                "--iodepth_batch_submit=4",
            ],
        ),
        (
            "f:g",
            &[
                "--rw=rw",
                "--bsrange=4k-64k",
                "--size=384k",
                "--file_service_type=zipf:1.1",
                "--rwmixread=70",
                "--rw_sequencer=identical",
                "--iodepth=4",
                "--iodepth_batch_submit=4",
            ],
        ),
        (
            "f:g:h",
            &[
                "--rw=randread",
                "--file_service_type=pareto:0.8",
                "--iodepth=16",
                "--io_size=4m",
            ],
        ),
        (
            "f:g",
            &[
                "--rw=randwrite",
                "--size=1m",
                "--file_service_type=random",
                "--iodepth=8",
                "--fdatasync=2",
            ],
        ),
        (
            "f:g:h",
            &[
                "--rw=read:4k",
                "--bsrange=4k-64k",
                "--openfiles=1",
                "--iodepth=8",
            ],
        ),
        // Strided zones on an engine that queues: each loop stops at `size` queued (io_size
        // bounding the loops together), and io_size beyond the files goes in passes of
        // `size` as without zones.
        (
            "f",
            &[
                "--rw=randwrite",
                "--bssplit=8k/70:2k",
                "--blockalign=4k",
                "--bs_unaligned=1",
                "--io_size=512k",
                "--loops=3",
                "--zonemode=strided",
                "--zonesize=64k",
                "--zoneskip=128k",
            ],
        ),
        (
            "f",
            &[
                "--rw=readwrite",
                "--bs=16k",
                "--size=512k",
                "--io_size=768k",
                "--loops=2",
                "--zonemode=strided",
                "--zonesize=64k",
                "--zoneskip=128k",
                "--iodepth=4",
            ],
        ),
    ];
    for (files, extra) in cases {
        let what = format!("{files} {extra:?}");
        let mut args = vec![
            "--name=w".to_string(),
            format!("--filename={files}"),
            "--ioengine=libaio".into(),
            "--write_iolog=w.log".into(),
            "--output-format=terse".into(),
        ];
        args.extend(extra.iter().map(|a| a.to_string()));
        let (f, x) = both_on_files(&fio, MIXED_FILES, &args, |d| iolog_lines(&d.join("w.log")));
        assert_same_iologs(&what, &f, &x);
    }
}

/// Jobs that fail end as fio's do: a file a diskless engine cannot unlink between passes
/// ends the job there (no I/O of the next pass), a failed job does no end_fsync (here a
/// read of the file unlinked and made anew, empty, fails with EIO), and a short read's
/// rest that reads nothing fails the job as fio's "full resid" (its retry logged).
#[test]
fn failed_jobs_end_as_in_fio() {
    let Some(fio) = fio_bin() else { return };
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let cases: &[&[&str]] = &[
        &[
            "--filename=a:b",
            "--rw=read",
            "--bs=16k",
            "--size=256k",
            "--io_size=1500k",
            "--ioengine=null",
            "--unlink_each_loop=1",
        ],
        &[
            "--filename=c",
            "--rw=readwrite",
            "--bsrange=2k-10k",
            "--bs_unaligned=1",
            "--size=1m",
            "--io_size=3m",
            "--rwmixread=70",
            "--ioengine=sync",
            "--end_fsync=1",
            "--unlink_each_loop=1",
        ],
        // A short read's rest is queued again and logged again; the rest reads nothing
        // (the file unlinked and made anew, shorter): EIO, "full resid".
        &[
            "--filename=c",
            "--rw=readwrite",
            "--bs=16k,4k",
            "--blockalign=4k",
            "--size=2m",
            "--offset=64k",
            "--rwmixread=30",
            "--loops=2",
            "--ioengine=psync",
            "--unlink_each_loop=1",
        ],
    ];
    // The function fio's error line names (`func=...`).
    let func = |err: &str| {
        err.split("func=")
            .nth(1)
            .map(|r| r.split(',').next().unwrap_or("").to_string())
    };
    for c in cases {
        let mut args = vec!["--name=w", "--write_iolog=w.log", "--output-format=terse"];
        args.extend(c.iter().copied());
        let mut got = Vec::new();
        for (bin, env) in [(fio.clone(), &[][..]), (flexio_bin(), ORACLE_COMPAT)] {
            let d = tempfile::tempdir().unwrap();
            let r = run_in_env(&bin, &args, d.path(), env);
            // (fio prints it on stdout; flexio on stderr beside a machine-readable format.)
            let said = format!("{}{}", r.stdout, r.stderr);
            got.push((r.code, iolog_lines(&d.path().join("w.log")), func(&said)));
        }
        let what = format!("{c:?}");
        assert_eq!(got[1].0, got[0].0, "{what}: exit codes: flexio, then fio");
        assert_eq!(
            got[1].2, got[0].2,
            "{what}: the failing function: flexio, then fio"
        );
        assert_same_iologs(&what, &got[0].1, &got[1].1);
    }
}
