//! The plain synchronous loop (one request at a time, none of the per-request features)
//! must be indistinguishable from the general loop: the same requests, data, counters and
//! errors. Each job runs twice in fresh directories, once as is and once with
//! FLEXIO_GENERAL_PATH=1, and everything deterministic is compared: exit status, stderr,
//! per-direction counts and bytes, latency sample counts, depth maps, errors, and the bytes
//! of every file the job left behind. Errors and short transfers on the plain loop (handed
//! to the general completion) are compared in tests/faults.rs.
//!
//! The general loop itself comes in two copies: a lean one, for jobs using none of the
//! features whose checks it leaves out, and the full one (FLEXIO_GENERAL_PATH=2 forces it);
//! those are compared the same way.

use crate::common;
use common::*;
use std::path::Path;

struct Out {
    code: i32,
    stderr: String,
    json: serde_json::Value,
    files: Vec<(String, Vec<u8>)>,
}

/// A run with FLEXIO_GENERAL_PATH=`path` (0: as chosen, 1: general loop, 2: its full copy).
fn run(args: &[&str], path: &str) -> Out {
    let dir = tempfile::tempdir().unwrap();
    let mut a = args.to_vec();
    a.push("--output-format=json");
    let env = [("FLEXIO_GENERAL_PATH", path)];
    let r = run_in_env(&flexio_bin(), &a, dir.path(), &env);
    let json =
        serde_json::from_str(&r.stdout).unwrap_or_else(|e| panic!("{args:?}: {e}: {}", r.stdout));
    Out {
        code: r.code,
        stderr: r.stderr,
        json,
        files: files_of(dir.path()),
    }
}

fn files_of(d: &Path) -> Vec<(String, Vec<u8>)> {
    let mut v: Vec<_> = std::fs::read_dir(d)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file())
        .map(|p| {
            (
                p.file_name().unwrap().to_string_lossy().into_owned(),
                std::fs::read(&p).unwrap(),
            )
        })
        .collect();
    v.sort();
    v
}

/// The deterministic part of a job's JSON.
fn facts(j: &serde_json::Value) -> Vec<String> {
    let mut v = Vec::new();
    for d in ["read", "write", "trim"] {
        for k in ["io_bytes", "total_ios", "short_ios", "drop_ios"] {
            v.push(format!("{d}.{k}={}", j[d][k]));
        }
        for k in ["clat_ns", "lat_ns"] {
            v.push(format!("{d}.{k}.N={}", j[d][k]["N"]));
        }
    }
    for k in [
        "error",
        "total_err",
        "first_error",
        "iodepth_level",
        "iodepth_submit",
        "iodepth_complete",
    ] {
        v.push(format!("{k}={}", j[k]));
    }
    v
}

fn tool_pct(j: &serde_json::Value, key: &str) -> f64 {
    j["flexio"]["tool"][key].as_f64().unwrap_or(-1.0)
}

fn plain_pct(j: &serde_json::Value) -> f64 {
    tool_pct(j, "plain_loop_pct")
}

/// Runs `args` with FLEXIO_GENERAL_PATH `pa` and `pb`: the same exit status, stderr,
/// deterministic JSON facts and files; `check` then looks at each job's pair of JSONs.
fn agree(
    args: &[&str],
    pa: &str,
    pb: &str,
    check: impl Fn(&serde_json::Value, &serde_json::Value),
) {
    let a = run(args, pa);
    let b = run(args, pb);
    assert_eq!(a.code, b.code, "{args:?}\n{}\n{}", a.stderr, b.stderr);
    // Errors name the process, which differs between the runs.
    let pid = regex::Regex::new(r"pid=\d+").unwrap();
    assert_eq!(
        pid.replace_all(&a.stderr, "pid=N"),
        pid.replace_all(&b.stderr, "pid=N"),
        "{args:?}"
    );
    let (ja, jb) = (&a.json["jobs"], &b.json["jobs"]);
    assert_eq!(
        ja.as_array().map(Vec::len),
        jb.as_array().map(Vec::len),
        "{args:?}"
    );
    for i in 0..ja.as_array().map_or(0, Vec::len) {
        assert_eq!(facts(&ja[i]), facts(&jb[i]), "{args:?} job {i}");
        if ja[i]["read"]["total_ios"].as_u64().unwrap_or(0)
            + ja[i]["write"]["total_ios"].as_u64().unwrap_or(0)
            > 0
        {
            check(&ja[i], &jb[i]);
        }
    }
    assert_eq!(
        a.files.iter().map(|f| &f.0).collect::<Vec<_>>(),
        b.files.iter().map(|f| &f.0).collect::<Vec<_>>(),
        "{args:?}"
    );
    for (fa, fb) in a.files.iter().zip(&b.files) {
        assert!(fa.1 == fb.1, "{args:?}: {} differs", fa.0);
    }
}

fn same(args: &[&str], expect_plain: bool) {
    agree(args, "0", "1", |ja, jb| {
        let pa = plain_pct(ja);
        if expect_plain {
            assert!(pa > 99.0, "{args:?}: the plain loop was not taken ({pa})");
        } else {
            assert_eq!(pa, 0.0, "{args:?}");
        }
        assert_eq!(plain_pct(jb), 0.0, "{args:?}: not forced general");
    });
}

/// The general loop's lean copy against its full copy (FLEXIO_GENERAL_PATH=2).
fn same_general(args: &[&str], expect_lean: bool) {
    agree(args, "1", "2", |ja, jb| {
        let la = tool_pct(ja, "lean_loop_pct");
        if expect_lean {
            assert!(la > 99.0, "{args:?}: the lean copy was not taken ({la})");
        } else {
            assert_eq!(la, 0.0, "{args:?}");
        }
        assert_eq!(
            tool_pct(jb, "lean_loop_pct"),
            0.0,
            "{args:?}: not forced full"
        );
        assert_eq!(
            plain_pct(ja) + plain_pct(jb),
            0.0,
            "{args:?}: plain loop taken"
        );
    });
}

#[test]
fn lean_and_full_general_loops_agree() {
    let cases: &[(&[&str], bool)] = &[
        (
            &[
                "--name=a",
                "--rw=randrw",
                "--bssplit=4k/50:64k/50",
                "--size=64m",
                "--ioengine=null",
                "--iodepth=8",
                "--iodepth_batch_submit=4",
                "--loops=2",
            ],
            true,
        ),
        (
            &[
                "--name=b",
                "--rw=randwrite",
                "--bsrange=512-16k",
                "--size=4m",
                "--nrfiles=3",
                "--ioengine=psync",
                "--refill_buffers=1",
                "--lat_percentiles=1",
            ],
            true,
        ),
        (
            &[
                "--name=c",
                "--rw=rw",
                "--bs=8k",
                "--size=2m",
                "--ioengine=vsync",
                "--iodepth=4",
                "--scramble_buffers=1",
            ],
            true,
        ),
        (
            &[
                "--name=d",
                "--rw=randread",
                "--bs=4k",
                "--size=4m",
                "--nrfiles=4",
                "--openfiles=2",
                "--file_service_type=random",
                "--ioengine=null",
                "--iodepth=8",
            ],
            true,
        ),
        // A feature the lean copy leaves out keeps the job on the full one.
        (
            &[
                "--name=e",
                "--rw=randwrite",
                "--bs=4k",
                "--size=1m",
                "--ioengine=psync",
                "--fsync=7",
            ],
            false,
        ),
        (
            &[
                "--name=f",
                "--rw=write",
                "--bs=4k",
                "--size=256k",
                "--ioengine=null",
                "--iodepth=4",
                "--rate_iops=4000",
            ],
            false,
        ),
    ];
    for (args, lean) in cases {
        same_general(args, *lean);
    }
}

#[test]
fn plain_and_general_loops_agree() {
    let cases: &[(&[&str], bool)] = &[
        (
            &[
                "--name=a",
                "--rw=randwrite",
                "--bsrange=512-16k",
                "--size=4m",
                "--nrfiles=3",
                "--ioengine=psync",
            ],
            true,
        ),
        (
            &[
                "--name=b",
                "--rw=randrw",
                "--rwmixread=30",
                "--bssplit=4k/50:8k/30:64k/20",
                "--size=4m",
                "--ioengine=pvsync",
                "--norandommap=1",
            ],
            true,
        ),
        (
            &[
                "--name=c",
                "--rw=write",
                "--bs=4k",
                "--size=2m",
                "--loops=3",
                "--ioengine=sync",
                "--refill_buffers=1",
            ],
            true,
        ),
        (
            &[
                "--name=d",
                "--rw=rw",
                "--bs=8k",
                "--size=2m",
                "--ioengine=pvsync2",
                "--zero_buffers=1",
                "--gtod_reduce=1",
            ],
            true,
        ),
        (
            &[
                "--name=e",
                "--rw=randread",
                "--bs=4k",
                "--size=4m",
                "--nrfiles=4",
                "--file_service_type=random",
                "--ioengine=psync",
                "--lat_percentiles=1",
            ],
            true,
        ),
        (
            &[
                "--name=f",
                "--rw=randrw",
                "--bs=4k",
                "--size=2m",
                "--ioengine=mmap",
            ],
            true,
        ),
        // A feature the plain loop does not have keeps the job on the general loop.
        (
            &[
                "--name=g",
                "--rw=randwrite",
                "--bs=4k",
                "--size=1m",
                "--ioengine=psync",
                "--fsync=7",
            ],
            false,
        ),
        // trim_mode=punch: trims punch holes, which only the general loop's full copy does.
        (
            &[
                "--name=k",
                "--rw=randtrim",
                "--bs=64k",
                "--size=1m",
                "--ioengine=psync",
                "--trim_mode=punch",
            ],
            false,
        ),
        // null completes in the call at depth 1 (it has a commit step all the same: no
        // submit/complete marks on either loop); deeper, it queues and stays general.
        (
            &[
                "--name=h",
                "--rw=randrw",
                "--bssplit=4k/50:64k/50",
                "--size=64m",
                "--ioengine=null",
                "--loops=2",
            ],
            true,
        ),
        (
            &[
                "--name=i",
                "--rw=randread",
                "--bs=4k",
                "--size=16m",
                "--ioengine=null",
                "--iodepth=8",
            ],
            false,
        ),
        // vsync has a commit step and gathers requests even at depth 1: general.
        (
            &[
                "--name=j",
                "--rw=write",
                "--bs=4k",
                "--size=1m",
                "--ioengine=vsync",
            ],
            false,
        ),
    ];
    for (args, plain) in cases {
        same(args, *plain);
    }
}

/// Replay runs on the plain loop when the trace is all the job has of the per-I/O features:
/// the same requests, file actions, waits, data and counts as the general loop; a trace
/// with syncs stays general.
#[test]
fn plain_and_general_loops_agree_on_replay() {
    let traces = tempfile::tempdir().unwrap();
    let trace = |name: &str, text: String| {
        let p = traces.path().join(name);
        std::fs::write(&p, text).unwrap();
        p.display().to_string()
    };
    // Two files opened on demand, reads and writes of several sizes between them, one
    // closed and opened again; more entries than a parsed batch holds.
    let mut t = String::from("fio version 2 iolog\na add\nb add\na open\nb open\n");
    for i in 0..65u64 {
        t += &format!("a write {} 65536\n", i * 65536);
    }
    for i in 0..10_000u64 {
        let (f, op) = if i % 3 == 0 {
            ("b", "write")
        } else {
            ("a", "read")
        };
        let len = [4096u64, 512, 16384][(i % 7 % 3) as usize];
        t += &format!("{f} {op} {} {len}\n", (i * 7919 % 1024) * 4096);
        if i == 5000 {
            t += "b close\nb open\n";
        }
    }
    t += "a close\nb close\n";
    let mixed = trace("mixed.log", t);
    // Waits (version 2) and delays (version 3).
    let mut t = String::from("fio version 2 iolog\na add\na open\n");
    for i in 0..300u64 {
        t += &format!("a write {} 4096\n", i * 4096);
        if i % 100 == 99 {
            t += &format!("a wait {}\n", 2 * (i + 1) / 100);
        }
    }
    t += "a close\n";
    let waits = trace("waits.log", t);
    let mut t = String::from("fio version 3 iolog\n0 a add\n0 a open\n");
    for i in 0..300u64 {
        t += &format!("{} a write {} 4096\n", 1 + i * 100, i * 4096);
    }
    t += "30100 a close\n";
    let delays = trace("delays.log", t);
    // The plain loop keeps the trace's pace: 300 writes 100 µs apart take 30 ms.
    let o = run(
        &[
            "--name=d",
            "--ioengine=psync",
            &format!("--read_iolog={delays}"),
        ],
        "0",
    );
    let j = &o.json["jobs"][0];
    assert!(plain_pct(j) > 99.0, "{}", o.stderr);
    let ms = j["job_runtime"].as_u64().unwrap();
    assert!((29..1000).contains(&ms), "{ms} ms");
    // A trim and reads past what was written.
    let trims = trace(
        "trims.log",
        "fio version 2 iolog\na add\na open\na write 0 65536\na trim 0 8192\n\
         a read 0 4096\na read 1048576 4096\na close\n"
            .to_string(),
    );
    let synced = trace(
        "synced.log",
        "fio version 2 iolog\na add\na open\na write 0 4096\na sync 0 0\na write 4096 4096\n\
         a close\n"
            .to_string(),
    );
    let arg = |p: &str| format!("--read_iolog={p}");
    for (args, plain) in [
        (
            vec!["--name=m".into(), "--ioengine=psync".into(), arg(&mixed)],
            true,
        ),
        (
            vec![
                "--name=m".into(),
                "--ioengine=psync".into(),
                arg(&mixed),
                "--replay_redirect=c".into(),
            ],
            true,
        ),
        (
            vec!["--name=w".into(), "--ioengine=sync".into(), arg(&waits)],
            true,
        ),
        (
            vec!["--name=d".into(), "--ioengine=psync".into(), arg(&delays)],
            true,
        ),
        (
            vec![
                "--name=d".into(),
                "--ioengine=pvsync2".into(),
                arg(&delays),
                "--replay_no_stall=1".into(),
            ],
            true,
        ),
        // psync's trims fail on a regular file (ENOTTY); the job goes on past them.
        (
            vec![
                "--name=t".into(),
                "--ioengine=psync".into(),
                arg(&trims),
                "--continue_on_error=all".into(),
            ],
            true,
        ),
        (
            vec!["--name=s".into(), "--ioengine=psync".into(), arg(&synced)],
            false,
        ),
    ] {
        let a: Vec<&str> = args.iter().map(String::as_str).collect();
        same(&a, plain);
    }
}

/// The file-operation engines run on the plain loop (their timed operation at a file's
/// first request): the same operations, latency samples, errors and files as the general
/// loop.
#[test]
fn plain_and_general_loops_agree_on_file_engines() {
    let base = |engine: &'static str| -> Vec<String> {
        vec![
            "--name=f".into(),
            format!("--ioengine={engine}"),
            "--nrfiles=300".into(),
            "--filesize=4k".into(),
            "--bs=4k".into(),
        ]
    };
    let with = |mut v: Vec<String>, extra: &[&str]| {
        v.extend(extra.iter().map(|s| s.to_string()));
        v
    };
    let cases: Vec<(Vec<String>, bool)> = vec![
        (base("filecreate"), true),
        (base("dircreate"), true),
        // Several requests per file: the operation at the first, the rest counted.
        (
            with(base("filecreate"), &["--filesize=16k", "--loops=2"]),
            true,
        ),
        // filestat and dirstat lay their names out first; random file service.
        (
            with(base("filestat"), &["--file_service_type=random"]),
            true,
        ),
        (
            with(base("filestat"), &["--stat_type=statx", "--openfiles=16"]),
            true,
        ),
        (
            with(base("dirstat"), &["--file_service_type=sequential"]),
            true,
        ),
        (with(base("filedelete"), &["--lat_percentiles=1"]), true),
        (base("dirdelete"), true),
        // The operation fails (the second loop's mkdir finds the directory): the error
        // and what was done before it, or with continue_on_error everything else.
        (with(base("dircreate"), &["--loops=2"]), true),
        (
            with(base("dircreate"), &["--loops=2", "--continue_on_error=all"]),
            true,
        ),
        // Time-based: the loop goes round the files again.
        (
            with(base("filestat"), &["--time_based", "--runtime=200ms"]),
            true,
        ),
        // Think time keeps the job on the general loop.
        (with(base("filecreate"), &["--thinktime=1"]), false),
    ];
    for (args, plain) in cases {
        let a: Vec<&str> = args.iter().map(String::as_str).collect();
        if a.contains(&"--time_based") {
            // The counts follow the time: the plain loop ran, and the operation came once
            // per file (at its first request of the loop), as on the general loop.
            for path in ["0", "1"] {
                let o = run(&a, path);
                let j = &o.json["jobs"][0];
                assert_eq!(o.code, 0, "{a:?}: {}", o.stderr);
                assert_eq!(plain_pct(j) > 99.0, path == "0", "{a:?}");
                assert_eq!(j["read"]["clat_ns"]["N"], 300, "{a:?} {path}");
                assert!(
                    j["read"]["total_ios"].as_u64().unwrap() > 300,
                    "{a:?} {path}"
                );
            }
            continue;
        }
        same(&a, plain);
    }
}
