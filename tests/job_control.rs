//! Job control options against fio 3.33: exec_prerun/exec_postrun, exitall with
//! exit_what, wait_for.

use crate::common;
use common::*;
use std::path::Path;

/// Run fio, or flexio as fio 3.33 (the oracle's version).
fn run(bin: &Path, args: &[&str], dir: &Path) -> Run {
    let env = if bin == flexio_bin() {
        ORACLE_COMPAT
    } else {
        &[]
    };
    run_in_env(bin, args, dir, env)
}

fn json_jobs(text: &str) -> Vec<serde_json::Value> {
    let v = json_of(text);
    v["jobs"].as_array().unwrap().clone()
}

#[test]
fn exec_hooks_run_around_the_job_as_in_fio() {
    let Some(fio) = fio_bin() else { return };
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    // fio appends `> <job>.<mode>.txt 2>&1` to the command, so a file holds what the last
    // command of the line printed.
    let cases: &[(&str, &str, bool)] = &[
        ("echo pre", "echo post", true),
        // A failing prerun keeps the job from running (and from its postrun).
        ("true; sh -c 'echo pre; exit 3'", "echo post", false),
    ];
    for (pre, post, runs) in cases {
        let mut seen = Vec::new();
        for bin in [fio.as_path(), flexio_bin().as_path()] {
            let d = tempfile::tempdir().unwrap();
            let pre_arg = format!("--exec_prerun={pre}");
            let post_arg = format!("--exec_postrun={post}");
            let r = run(
                bin,
                &[
                    "--name=j",
                    "--size=64k",
                    &pre_arg,
                    &post_arg,
                    "--output-format=json",
                ],
                d.path(),
            );
            assert_eq!(r.code, 0, "{}: {}", bin.display(), r.stderr);
            let jobs = json_jobs(&r.stdout);
            let bytes = jobs[0]["read"]["io_bytes"].as_u64().unwrap();
            let read = |n: &str| std::fs::read_to_string(d.path().join(n)).ok();
            let out = (bytes, read("j.prerun.txt"), read("j.postrun.txt"));
            assert_eq!(out.0 > 0, *runs, "{}: {out:?}", bin.display());
            assert_eq!(out.1.as_deref(), Some("pre\n"));
            seen.push(out);
        }
        assert_eq!(seen[0], seen[1], "{pre}");
    }
}

fn exit_job(dir: &Path, what: &str) -> String {
    format!(
        "[global]\ndirectory={}\nsize=1M\nrw=read\n\
         [a]\ntime_based\nruntime=2\n\
         [b]\nnew_group\nruntime=300ms\ntime_based\nexitall\nexit_what={what}\n\
         [c]\nstonewall\nsize=64k\n",
        dir.display()
    )
}

#[test]
fn exit_what_stops_what_fio_stops() {
    let Some(fio) = fio_bin() else { return };
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    // (exit_what, job a stopped early, job c ran)
    for (what, a_stopped, c_ran) in [
        ("group", false, true),
        ("stonewall", true, true),
        ("all", true, false),
    ] {
        for bin in [fio.as_path(), flexio_bin().as_path()] {
            let d = tempfile::tempdir().unwrap();
            let job = d.path().join("x.fio");
            std::fs::write(&job, exit_job(d.path(), what)).unwrap();
            let r = run(
                bin,
                &["--output-format=json", job.to_str().unwrap()],
                d.path(),
            );
            assert_eq!(r.code, 0, "{}: {}", bin.display(), r.stderr);
            let jobs = json_jobs(&r.stdout);
            let names: Vec<&str> = jobs
                .iter()
                .map(|j| j["jobname"].as_str().unwrap())
                .collect();
            assert_eq!(names, ["a", "b", "c"], "{} {what}", bin.display());
            let a_ms = jobs[0]["job_runtime"].as_u64().unwrap();
            assert_eq!(
                a_ms < 1500,
                a_stopped,
                "{} {what}: a ran {a_ms} ms",
                bin.display()
            );
            let c_bytes = jobs[2]["read"]["io_bytes"].as_u64().unwrap();
            assert_eq!(c_bytes > 0, c_ran, "{} {what}", bin.display());
        }
    }
}

#[test]
fn wait_for_starts_a_job_after_its_waitee() {
    let Some(fio) = fio_bin() else { return };
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    for bin in [fio.as_path(), flexio_bin().as_path()] {
        let d = tempfile::tempdir().unwrap();
        let job = d.path().join("w.fio");
        std::fs::write(
            &job,
            format!(
                "[global]\ndirectory={}\nsize=1M\nrw=read\nwrite_lat_log\nlog_unix_epoch=1\n\
                 [a]\ntime_based\nruntime=400ms\n[b]\nwait_for=a\nsize=64k\n",
                d.path().display()
            ),
        )
        .unwrap();
        let r = run(
            bin,
            &["--output-format=terse", job.to_str().unwrap()],
            d.path(),
        );
        assert_eq!(r.code, 0, "{}: {}", bin.display(), r.stderr);
        let first = |n: &str, last: bool| -> u64 {
            let t = std::fs::read_to_string(d.path().join(n)).unwrap();
            let l = if last {
                t.lines().last()
            } else {
                t.lines().next()
            };
            l.unwrap().split(", ").next().unwrap().parse().unwrap()
        };
        let (a_start, a_end, b_start) = (
            first("a_lat.1.log", false),
            first("a_lat.1.log", true),
            first("b_lat.2.log", false),
        );
        assert!(
            a_end >= a_start + 350,
            "{}: a ran {a_start}..{a_end}",
            bin.display()
        );
        assert!(
            b_start >= a_end,
            "{}: b started at {b_start}, a ended at {a_end}",
            bin.display()
        );
    }
    let d = tempfile::tempdir().unwrap();
    for bin in [fio.as_path(), flexio_bin().as_path()] {
        let r = run(bin, &["--name=c", "--wait_for=zz", "--size=64k"], d.path());
        assert_ne!(r.code, 0);
        assert!(
            (r.stdout.clone() + &r.stderr).contains("waitee job zz unknown"),
            "{}: {}{}",
            bin.display(),
            r.stdout,
            r.stderr
        );
    }
}

#[test]
fn flow_keeps_jobs_in_the_ratio_of_their_weights() {
    let Some(fio) = fio_bin() else { return };
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    for sleep in ["0", "50"] {
        for bin in [fio.as_path(), flexio_bin().as_path()] {
            let d = tempfile::tempdir().unwrap();
            let r = run(
                bin,
                &[
                    "--output-format=json",
                    "--ioengine=null",
                    "--size=1G",
                    "--time_based",
                    "--runtime=1",
                    "--flow_id=7",
                    &format!("--flow_sleep={sleep}"),
                    "--name=a",
                    "--flow=3",
                    "--name=b",
                    "--flow=1",
                ],
                d.path(),
            );
            assert_eq!(r.code, 0, "{}: {}", bin.display(), r.stderr);
            let jobs = json_jobs(&r.stdout);
            let n = |i: usize| jobs[i]["read"]["total_ios"].as_u64().unwrap() as f64;
            let ratio = n(0) / n(1);
            // 3:1 by weight; a job starting a moment before the other runs unchecked for
            // that moment, so the bounds leave room for a loaded machine (1:1 would be 1.0).
            assert!(
                (2.2..4.2).contains(&ratio) && n(1) > 100.0,
                "{} flow_sleep={sleep}: {} vs {} I/Os",
                bin.display(),
                n(0),
                n(1)
            );
        }
    }
}

/// (offset, issue ns, completion ns) of every request in a clat log written with
/// log_offset=1 and log_issue_time=1.
fn spans(text: &str) -> Vec<(u64, u64, u64)> {
    text.lines()
        .map(|l| {
            let f: Vec<u64> = l
                .split(", ")
                .map(|x| {
                    u64::from_str_radix(
                        x.trim_start_matches("0x"),
                        if x.starts_with("0x") { 16 } else { 10 },
                    )
                    .unwrap()
                })
                .collect();
            (f[4], f[6], f[6] + f[1])
        })
        .collect()
}

#[test]
fn serialize_overlap_keeps_overlapping_requests_apart() {
    let d = tempfile::tempdir().unwrap();
    let engine = "libaio";
    let r = flexio(
        &[
            "--name=s",
            &format!("--ioengine={engine}"),
            "--iodepth=16",
            "--rw=randwrite",
            "--norandommap",
            "--size=32k",
            "--bs=4k",
            "--time_based",
            "--runtime=300ms",
            "--serialize_overlap=1",
            "--write_lat_log=s",
            "--log_offset=1",
            "--log_issue_time=1",
            "--output-format=terse",
        ],
        d.path(),
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let mut v = spans(&std::fs::read_to_string(d.path().join("s_clat.1.log")).unwrap());
    assert!(v.len() >= 500, "{} requests", v.len());
    v.sort_by_key(|s| (s.0, s.1));
    for w in v.windows(2) {
        if w[0].0 == w[1].0 {
            assert!(
                w[1].1 >= w[0].2,
                "two writes to {} in flight together: {w:?}",
                w[0].0
            );
        }
    }
    // fio accepts the same job.
    if let Some(fio) = fio_bin() {
        let r = run(
            &fio,
            &[
                "--name=s",
                "--ioengine=libaio",
                "--iodepth=16",
                "--rw=randwrite",
                "--size=32k",
                "--number_ios=100",
                "--serialize_overlap=1",
                "--output-format=terse",
            ],
            d.path(),
        );
        assert_eq!(r.code, 0, "{}", r.stderr);
    }
}

#[test]
fn lockfile_modes_run_jobs_sharing_a_file_as_fio() {
    let Some(fio) = fio_bin() else { return };
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    for mode in ["exclusive", "readwrite", "none"] {
        let mut counts = Vec::new();
        for bin in [fio.as_path(), flexio_bin().as_path()] {
            let d = tempfile::tempdir().unwrap();
            let f = format!("--filename={}", d.path().join("shared").display());
            let lock = format!("--lockfile={mode}");
            let r = run(
                bin,
                &[
                    "--output-format=json",
                    "--thread",
                    &f,
                    &lock,
                    "--size=256k",
                    "--bs=4k",
                    "--name=w",
                    "--rw=randwrite",
                    "--name=r",
                    "--rw=randread",
                ],
                d.path(),
            );
            assert_eq!(r.code, 0, "{} {mode}: {}", bin.display(), r.stderr);
            let jobs = json_jobs(&r.stdout);
            counts.push((
                jobs[0]["write"]["total_ios"].as_u64().unwrap(),
                jobs[1]["read"]["total_ios"].as_u64().unwrap(),
            ));
        }
        assert_eq!(counts[0], counts[1], "{mode}");
    }
}

#[test]
fn opendir_adds_the_files_fio_adds() {
    let Some(fio) = fio_bin() else { return };
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let d = tempfile::tempdir().unwrap();
    let od = d.path().join("od");
    std::fs::create_dir_all(od.join("sub/deeper")).unwrap();
    for (name, size) in [
        ("a", 16384),
        ("sub/b", 8192),
        ("c", 4096),
        ("sub/deeper/e", 12288),
    ] {
        std::fs::write(od.join(name), vec![1u8; size]).unwrap();
    }
    std::os::unix::fs::symlink(od.join("a"), od.join("link")).unwrap();
    let mut logs = Vec::new();
    for (bin, log) in [
        (fio.as_path(), "fio.iolog"),
        (flexio_bin().as_path(), "flexio.iolog"),
    ] {
        let l = d.path().join(log);
        let r = run(
            bin,
            &[
                "--name=j",
                &format!("--opendir={}", od.display()),
                "--rw=randread",
                "--bs=4k",
                &format!("--write_iolog={}", l.display()),
                "--output-format=terse",
            ],
            d.path(),
        );
        assert_eq!(r.code, 0, "{}: {}", bin.display(), r.stderr);
        // The files added and the I/O; fio closes a file as soon as its part is done,
        // flexio at the end, so open and close lines are left out.
        logs.push(
            std::fs::read_to_string(&l)
                .unwrap()
                .lines()
                .skip(1)
                .map(|l| l.split_once(' ').unwrap().1.to_string())
                .filter(|l| !l.ends_with(" open") && !l.ends_with(" close"))
                .collect::<Vec<_>>(),
        );
    }
    assert_eq!(logs[0], logs[1]);
    assert_eq!(logs[0].iter().filter(|l| l.ends_with(" add")).count(), 4);
}
