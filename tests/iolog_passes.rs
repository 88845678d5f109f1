//! write_iolog where files start over and loops end, line for line against fio 3.33
//! (times aside): the sequential I/Os of a random job's `:N` run (or of
//! percentage_random) go back to the file's start with the random map, as fio's
//! fio_file_reset puts them; a time_based job's sequential position wraps at the region's
//! end; a loop or pass whose last request was a periodic sync does no end sync; the
//! request of the attempt that found a strided file done keeps the offset fio's does; an
//! LFSR started over keeps its count to the next extra step, as fio's lfsr_reset does.

use crate::common;
use common::*;
use std::path::Path;

/// Each job of `cases` (arguments after the name, the log and terse output) in fio and in
/// flexio on [`MIXED_FILES`]: the same write_iolog, line for line.
fn same_logs_as_fio(fio: &Path, cases: &[&[&str]]) {
    for c in cases {
        let mut args: Vec<String> = ["--name=w", "--write_iolog=w.log", "--output-format=terse"]
            .iter()
            .map(|a| a.to_string())
            .collect();
        args.extend(c.iter().map(|a| a.to_string()));
        let (f, x) = both_on_files(fio, MIXED_FILES, &args, |d| iolog_lines(&d.join("w.log")));
        assert_same_iologs(&format!("{c:?}"), &f, &x);
    }
}

/// A non-uniform file service starts a file over when its random map is full: every
/// direction's sequential position goes back to the file's start with it, so the next
/// sequential I/O of a `:N` run is at the start (fio writes at 0 where the position had
/// gone on from before).
#[test]
fn a_full_map_under_a_non_uniform_service_starts_the_sequential_positions_over() {
    let Some(fio) = fio_bin() else { return };
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let cases: &[&[&str]] = &[&[
        "--filename=f:g:h",
        "--rw=randrw:3",
        "--bsrange=4k-16k",
        "--size=1m",
        "--io_size=1500k",
        "--file_service_type=zipf:1.1",
        "--rwmixread=70",
        "--loops=3",
    ]];
    same_logs_as_fio(&fio, cases);
}

/// time_based: a sequential I/O of a random job at the region's end goes back to its
/// start (fio's get_next_seq_offset), before the map is found full. The runs last as long
/// as the runtime lets them, so the logs are compared over the first lines both have.
#[test]
fn time_based_sequential_parts_of_random_jobs_wrap_as_in_fio() {
    let Some(fio) = fio_bin() else { return };
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let cases: &[&[&str]] = &[
        &["--rw=randread:3"],
        &["--rw=randrw:4", "--bsrange=4k-16k"],
        &["--rw=randread", "--percentage_random=50"],
    ];
    for c in cases {
        let mut args: Vec<String> = [
            "--name=w",
            "--filename=h",
            "--size=256k",
            "--time_based=1",
            "--runtime=1",
            "--write_iolog=w.log",
            "--output-format=terse",
        ]
        .iter()
        .map(|a| a.to_string())
        .collect();
        args.extend(c.iter().map(|a| a.to_string()));
        let (mut f, mut x) =
            both_on_files(&fio, MIXED_FILES, &args, |d| iolog_lines(&d.join("w.log")));
        // 256 KiB is 64 blocks of 4 KiB: the first thousand I/Os go round it many times.
        assert!(
            f.len() > 1000 && x.len() > 1000,
            "{c:?}: {} and {} lines",
            f.len(),
            x.len()
        );
        // The last line of each may be the close at the runtime's end.
        let n = f.len().min(x.len()) - 1;
        f.truncate(n);
        x.truncate(n);
        assert_same_iologs(&format!("{c:?}"), &f, &x);
    }
}

/// fio's should_fsync: where the last request of a loop or pass was a periodic sync (the
/// N-th write's, or fio 3.33's after a read), end_fsync and fsync_on_close do not sync
/// the files again there.
#[test]
fn no_end_sync_right_after_a_periodic_one() {
    let Some(fio) = fio_bin() else { return };
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let cases: &[&[&str]] = &[
        &[
            "--filename=h",
            "--rw=rw",
            "--bs=4k",
            "--io_size=3m",
            "--rwmixread=90",
            "--fsync=3",
            "--fsync_on_close=1",
        ],
        &[
            "--filename=h",
            "--rw=write",
            "--bs=64k",
            "--size=192k",
            "--loops=2",
            "--fsync=3",
            "--end_fsync=1",
        ],
        &[
            "--filename=f:g",
            "--rw=randrw",
            "--bs=4k",
            "--size=512k",
            "--fsync=2",
            "--end_fsync=1",
        ],
    ];
    same_logs_as_fio(&fio, cases);
}

/// Strided zones: the attempt that finds the file done leaves its offset in its request
/// (fio's get_next_offset: relative to the zone where it is past the region, else the
/// file's), and the end's sync logs it.
#[test]
fn strided_zones_failed_attempts_keep_fio_s_offsets() {
    let Some(fio) = fio_bin() else { return };
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let cases: &[&[&str]] = &[
        &[
            "--filename=h",
            "--rw=write:8k",
            "--bssplit=4k/20:8k/30:32k/50",
            "--bs_unaligned=1",
            "--zonemode=strided",
            "--zonesize=64k",
            "--zoneskip=128k",
            "--end_fsync=1",
        ],
        &[
            "--filename=f",
            "--rw=randwrite",
            "--bssplit=4k/50:16k/50",
            "--blockalign=4k",
            "--bs_unaligned=1",
            "--random_distribution=zipf:1.2",
            "--zonemode=strided",
            "--zonesize=64k",
            "--zoneskip=64k",
            "--fsync_on_close=1",
        ],
    ];
    same_logs_as_fio(&fio, cases);
}

/// An engine without a disk (null) logs the open and the close of a file whose first
/// attempt found no I/O, as fio opens the file it picks before it looks for an offset.
#[test]
fn a_diskless_engine_logs_the_open_of_a_file_that_had_no_io() {
    let Some(fio) = fio_bin() else { return };
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let args: Vec<String> = [
        "--name=w",
        "--write_iolog=w.log",
        "--output-format=terse",
        "--filename=f",
        "--ioengine=null",
        "--rw=randwrite:2",
        "--bs=4k,8k",
        "--size=512k",
        "--offset=64k",
        "--norandommap=1",
        "--random_generator=lfsr",
        "--loops=3",
    ]
    .iter()
    .map(|a| a.to_string())
    .collect();
    let (f, x) = both_on_files(&fio, MIXED_FILES, &args, |d| iolog_lines(&d.join("w.log")));
    assert!(f.len() >= 3, "fio's log: {f:?}");
    assert_same_iologs("null, no I/O", &f, &x);
}

/// random_generator=lfsr over a block count that is not a power of two: a file started
/// over (the next pass of io_size beyond the file, the next loop) restarts the register
/// from its seed but not its count to the next extra step, so where the seed's state is
/// in range the pass starts with the block the first pass ended with, as in fio.
#[test]
fn a_restarted_lfsr_keeps_fio_s_step_count() {
    let Some(fio) = fio_bin() else { return };
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    same_logs_as_fio(
        &fio,
        &[
            &[
                "--filename=f",
                "--rw=randwrite",
                "--bs=16k",
                "--size=384k",
                "--io_size=1m",
                "--random_generator=lfsr",
            ],
            &[
                "--filename=f",
                "--rw=randread",
                "--bs=16k",
                "--size=384k",
                "--loops=3",
                "--random_generator=lfsr",
            ],
        ],
    );
}

/// trimwrite doubles number_ios at every loop's start (fio's do_io doubles the option each
/// time it runs), and the limit counts over the loops: `number_ios=5 loops=2` is 20 trims
/// and 20 writes, 10 and 10 in each loop from the file's start (flexio issued 5 I/Os in
/// all). The count alone is checked where fio is missing.
#[test]
fn trimwrite_doubles_number_ios_at_every_loop() {
    let counts = |loops: &str| {
        let d = tempfile::tempdir().unwrap();
        let args = [
            "--name=w",
            "--ioengine=null",
            "--rw=trimwrite",
            "--bs=8k",
            "--size=2m",
            "--number_ios=5",
            loops,
            "--output-format=json",
        ];
        let r = oracle_run(&flexio_bin(), &args, d.path());
        let j = &json_of(&r.stdout)["jobs"][0];
        (
            j["write"]["total_ios"].as_u64().unwrap(),
            j["trim"]["total_ios"].as_u64().unwrap(),
        )
    };
    assert_eq!(counts("--loops=1"), (5, 5));
    assert_eq!(counts("--loops=2"), (20, 20));
    assert_eq!(counts("--loops=3"), (60, 60));
    let Some(fio) = fio_bin() else { return };
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let cases: &[&[&str]] = &[
        &[
            "--filename=f",
            "--rw=trimwrite",
            "--bs=8k",
            "--number_ios=5",
            "--loops=2",
            "--ioengine=null",
            "--size=1m",
        ],
        &[
            "--filename=f",
            "--rw=randtrimwrite",
            "--bs=4k",
            "--number_ios=7",
            "--loops=2",
            "--ioengine=null",
            "--size=1m",
        ],
    ];
    same_logs_as_fio(&fio, cases);
}
