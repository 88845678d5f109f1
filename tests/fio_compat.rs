//! The same jobs through fio 3.33 and flexio: the output must have the same structure
//! (normal: line shapes; JSON/JSON+: keys in order and value types; terse: fields and
//! their kinds). Numbers differ, layouts must not.

use crate::common;
use common::*;

/// Split a `--output-format=normal,json+,terse` output into (normal, json, terse) parts.
fn split(out: &str) -> (String, String, String) {
    let mut normal = String::new();
    let mut json = String::new();
    let mut terse = String::new();
    let mut in_json = false;
    let terse_re = regex::Regex::new(r"^[345];").unwrap();
    for l in out.lines() {
        if l == "{" {
            in_json = true;
        }
        if in_json {
            json.push_str(l);
            json.push('\n');
            if l == "}" {
                in_json = false;
            }
        } else if terse_re.is_match(l) {
            terse.push_str(l);
            terse.push('\n');
        } else {
            normal.push_str(l);
            normal.push('\n');
        }
    }
    (normal, json, terse)
}

/// Run a case through both tools and compare every format.
fn compare(what: &str, args: &[&str]) {
    let mut a: Vec<&str> = args.to_vec();
    a.push("--output-format=normal,json+,terse");
    let Some((f, x)) = both(&a) else { return };
    assert_eq!(
        f.code, x.code,
        "{what}: exit codes differ\nfio: {}\nflexio: {}",
        f.stderr, x.stderr
    );
    let (fn_, fj, ft) = split(&f.stdout);
    let (xn, xj, xt) = split(&x.stdout);
    // The terse block precedes the JSON, which precedes the normal report.
    let order = |s: &str| {
        (
            s.find("\n3;").or(s.find("3;")),
            s.find("\n{\n"),
            s.rfind("Run status group"),
        )
    };
    let (t1, j1, n1) = order(&x.stdout);
    assert!(
        t1 < j1 && j1 < n1,
        "{what}: formats not in fio's order (terse, json, normal):\n{}",
        x.stdout
    );
    let _ = order(&f.stdout);
    assert_same_shape(&fn_, &xn, what);
    assert_same_json_shape(&fj, &xj, what);
    assert_same_terse_shape(&ft, &xt, what);
}

#[test]
fn sequential_read_8m_invalidate() {
    compare(
        "sq-read",
        &[
            "--name=sq-read",
            "--rw=read",
            "--size=1G",
            "--direct=0",
            "--bs=8M",
            "--invalidate=1",
            "--filename=@D@/F",
            // Samples every 50 ms: 1 GiB from the disk takes 0.3-1.5 s, so both tools take
            // several samples. (256 MiB took 90-270 ms here, and a run shorter than about two
            // sample intervals gets a sample in one tool and none in the other.)
            "--bwavgtime=50",
            "--iopsavgtime=50",
        ],
    );
}

#[test]
fn psync_time_based_numjobs_group_reporting() {
    compare(
        "file1",
        &[
            "--filename=@D@/F",
            "--rw=write",
            "--time_based",
            "--runtime=5",
            "--bs=4k",
            "--size=1M",
            "--numjobs=4",
            "--fallocate=none",
            "--group_reporting",
            "--name=file1",
            "--ioengine=psync",
        ],
    );
}

#[test]
fn job_file_with_global_section() {
    let Some(fio) = fio_bin() else { return };
    let _guard = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let text = "[global]\nioengine=sync\nsize=80M\nrw=write\ndirectory=${D}\nthread=1\n\n[write-4k]\nbs=4k\n";
    let mut outs = Vec::new();
    for bin in [fio, flexio_bin()] {
        let d = tempfile::tempdir().unwrap();
        let jf = d.path().join("job.fio");
        std::fs::write(&jf, text).unwrap();
        let mut env = vec![("D", d.path().to_str().unwrap())];
        env.extend_from_slice(ORACLE_COMPAT);
        let out = run_in_env(
            &bin,
            &[jf.to_str().unwrap(), "--output-format=normal,json+,terse"],
            d.path(),
            &env,
        );
        assert!(out.code == 0, "{}", out.stderr);
        outs.push(out.stdout);
    }
    let (fn_, fj, ft) = split(&outs[0]);
    let (xn, xj, xt) = split(&outs[1]);
    assert!(xn.contains("Starting 1 thread"), "{xn}");
    assert_same_shape(&fn_, &xn, "job file");
    assert_same_json_shape(&fj, &xj, "job file");
    assert_same_terse_shape(&ft, &xt, "job file");
    let j = json_of(&xj);
    assert_eq!(j["global options"]["thread"], "1");
    assert_eq!(j["jobs"][0]["job options"]["bs"], "4k");
}

#[test]
fn randrw_mix_and_bssplit() {
    compare(
        "randrw",
        &[
            "--name=mix",
            "--filename=@D@/f",
            "--size=64M",
            "--rw=randrw",
            "--rwmixread=70",
            "--bssplit=4k/50:16k/30:64k/20",
            "--runtime=2",
            "--time_based",
        ],
    );
}

#[test]
fn two_groups_with_stonewall() {
    compare(
        "stonewall",
        &[
            "--size=16M",
            "--filename=@D@/f",
            "--name=a",
            "--rw=read",
            "--name=b",
            "--rw=write",
            "--stonewall",
        ],
    );
}

#[test]
fn numjobs_without_group_reporting() {
    compare(
        "numjobs",
        &[
            "--name=nj",
            "--directory=@D@",
            "--size=8M",
            "--numjobs=4",
            "--rw=randread",
        ],
    );
}

#[test]
fn description_and_continue_on_error_keys() {
    compare(
        "desc",
        &[
            "--name=d",
            "--filename=@D@/f",
            "--size=4M",
            "--description=hello world",
            "--continue_on_error=all",
        ],
    );
}

#[test]
fn fsync_statistics_block() {
    compare(
        "fsync",
        &[
            "--name=s",
            "--filename=@D@/f",
            "--size=4M",
            "--rw=write",
            "--fsync=16",
            // Long enough for bandwidth samples in both tools whatever the disk's speed
            // (a 4 MiB write alone can end either side of the 500 ms sample window).
            "--time_based",
            "--runtime=2",
        ],
    );
}

#[test]
fn direct_io_error_report_and_exit_code() {
    // O_DIRECT with a 1000-byte block fails with EINVAL on the first write.
    let Some((f, x)) = both(&[
        "--name=e",
        "--filename=@D@/f",
        "--size=1M",
        "--bs=1000",
        "--direct=1",
        "--rw=write",
    ]) else {
        return;
    };
    assert_eq!(f.code, 1);
    assert_eq!(x.code, 1);
    assert_same_shape(&f.stdout, &x.stdout, "direct error");
    assert!(
        x.stdout.contains("fio: first direct IO errored."),
        "{}",
        x.stdout
    );
    assert!(
        x.stderr.contains("fio: io_u error on file "),
        "{}",
        x.stderr
    );
    assert!(
        x.stderr
            .contains(": Invalid argument: write offset=0, buflen=1000"),
        "{}",
        x.stderr
    );
}

fn engine_case(engine: &str, extra: &[&str]) {
    let mut args = vec!["--name=e", "--filename=@D@/f", "--size=16M"];
    let eng = format!("--ioengine={engine}");
    args.push(&eng);
    args.extend_from_slice(extra);
    compare(engine, &args);
}

#[test]
fn engine_sync() {
    engine_case("sync", &["--rw=randrw"]);
}
#[test]
fn engine_psync() {
    engine_case("psync", &["--rw=randrw"]);
}
#[test]
fn engine_vsync() {
    engine_case("vsync", &["--rw=rw", "--iodepth=4"]);
}
#[test]
fn engine_pvsync() {
    engine_case("pvsync", &["--rw=randrw"]);
}
#[test]
fn engine_pvsync2() {
    engine_case("pvsync2", &["--rw=randrw", "--hipri"]);
}
#[test]
fn engine_mmap() {
    // Page faults from the disk make the 16 MiB take about bwavgtime (500 ms): one tool
    // may then have a bandwidth sample and the other none. A second by time, with samples
    // every 250 ms, gives both tools their bw and iops lines.
    engine_case(
        "mmap",
        &[
            "--rw=randrw",
            "--time_based",
            "--runtime=1",
            "--bwavgtime=250",
            "--iopsavgtime=250",
        ],
    );
}
#[test]
fn engine_null() {
    engine_case("null", &["--rw=randrw", "--iodepth=8"]);
}
#[test]
fn engine_ftruncate() {
    engine_case("ftruncate", &["--rw=write"]);
}
#[test]
fn engine_falloc() {
    engine_case("falloc", &["--rw=randrw"]);
}

fn file_engine_case(engine: &str) {
    let eng = format!("--ioengine={engine}");
    compare(
        engine,
        &[
            "--name=e",
            &eng,
            "--directory=@D@",
            "--nrfiles=50",
            "--filesize=4k",
        ],
    );
}

#[test]
fn engine_filecreate() {
    file_engine_case("filecreate");
}
#[test]
fn engine_filestat() {
    file_engine_case("filestat");
}
#[test]
fn engine_filedelete() {
    file_engine_case("filedelete");
}

#[test]
fn status_interval_dumps() {
    let Some((f, x)) = both(&[
        "--name=s",
        "--ioengine=null",
        "--size=64M",
        "--time_based",
        "--runtime=3",
        "--status-interval=1",
    ]) else {
        return;
    };
    assert_same_shape(&f.stdout, &x.stdout, "status-interval");
    assert!(
        x.stdout.matches("s: (groupid=0").count() >= 3,
        "{}",
        x.stdout
    );
}

/// Deterministic amounts must equal fio's exactly.
fn same_amounts(what: &str, args: &[&str]) {
    let mut a = args.to_vec();
    a.push("--output-format=json");
    let Some((f, x)) = both(&a) else { return };
    assert_eq!(f.code, 0, "{what}: fio failed: {}", f.stderr);
    assert_eq!(x.code, 0, "{what}: flexio failed: {}", x.stderr);
    let (jf, jx) = (json_of(&f.stdout), json_of(&x.stdout));
    for d in ["read", "write", "trim"] {
        let fb = jf["jobs"][0][d]["io_bytes"].as_u64().unwrap();
        let xb = jx["jobs"][0][d]["io_bytes"].as_u64().unwrap();
        if d == "read" || d == "write" {
            let (fs, xs) = (&jf["jobs"][0], &jx["jobs"][0]);
            let tot = |j: &serde_json::Value| {
                j["read"]["io_bytes"].as_u64().unwrap() + j["write"]["io_bytes"].as_u64().unwrap()
            };
            assert_eq!(tot(fs), tot(xs), "{what}: total bytes differ");
        } else {
            assert_eq!(fb, xb, "{what}: {d} bytes differ");
        }
    }
}

#[test]
fn openfiles_and_uneven_file_sizes_move_the_same_bytes() {
    same_amounts(
        "openfiles",
        &[
            "--name=o",
            "--directory=@D@",
            "--nrfiles=20",
            "--openfiles=3",
            "--size=8M",
            "--rw=randrw",
            "--file_service_type=random",
        ],
    );
}

#[test]
fn create_serialize_off_and_sequential_service() {
    same_amounts(
        "create_serialize=0",
        &[
            "--name=c",
            "--directory=@D@",
            "--nrfiles=4",
            "--size=4M",
            "--rw=write",
            "--create_serialize=0",
            "--file_service_type=sequential",
        ],
    );
}

#[test]
fn offsets_increments_and_io_size() {
    same_amounts(
        "offset",
        &[
            "--name=o",
            "--filename=@D@/f",
            "--size=4M",
            "--offset=1M",
            "--io_size=12M",
            "--rw=read",
        ],
    );
    same_amounts(
        "number_ios",
        &[
            "--name=n",
            "--ioengine=null",
            "--size=4M",
            "--number_ios=100",
        ],
    );
    same_amounts(
        "holes",
        &["--name=h", "--ioengine=null", "--size=4M", "--rw=read:4k"],
    );
}

/// number_ios does not end a time_based job: fio's loop goes on while the job is
/// time_based, so both tools run to the runtime (fio 3.33 did 129,030 writes of a
/// 1-second job with number_ios=300).
#[test]
fn number_ios_does_not_end_a_time_based_job() {
    let Some(fio) = fio_bin() else { return };
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    for bin in [fio, flexio_bin()] {
        let d = tempfile::tempdir().unwrap();
        let r = oracle_run(
            &bin,
            &[
                "--name=t",
                "--ioengine=null",
                "--size=4M",
                "--number_ios=100",
                "--time_based",
                "--runtime=300ms",
                "--output-format=json",
            ],
            d.path(),
        );
        let j = json_of(&r.stdout);
        let ios = j["jobs"][0]["read"]["total_ios"].as_u64().unwrap_or(0);
        let ms = j["jobs"][0]["job_runtime"].as_u64().unwrap_or(0);
        assert!(
            ios > 1000 && ms >= 250,
            "{}: {ios} I/Os in {ms} ms",
            bin.display()
        );
    }
}

fn async_case(engine: &str, extra: &[&str]) {
    let mut args = vec![
        "--name=a",
        "--filename=@D@/f",
        "--size=64M",
        "--iodepth=16",
        "--direct=1",
        "--rw=randrw",
        // Samples every 100 ms so that both tools get bw/IOPS samples however fast the
        // disk is today (the structure comparison includes those lines).
        "--bwavgtime=100",
        "--iopsavgtime=100",
    ];
    let eng = format!("--ioengine={engine}");
    args.push(&eng);
    args.extend_from_slice(extra);
    compare(engine, &args);
}

#[test]
fn engine_io_uring() {
    async_case("io_uring", &[]);
}
#[test]
fn engine_io_uring_with_options() {
    async_case(
        "io_uring",
        &[
            "--fixedbufs",
            "--registerfiles",
            "--sqthread_poll",
            "--nonvectored=1",
        ],
    );
}
#[test]
fn engine_libaio() {
    async_case("libaio", &["--userspace_reap"]);
}
#[test]
fn engine_posixaio() {
    async_case("posixaio", &[]);
}
#[test]
fn per_request_priorities() {
    async_case(
        "libaio",
        &[
            "--cmdprio_percentage=30",
            "--cmdprio_class=1",
            "--cmdprio=3",
        ],
    );
}

/// cmdprio_bssplit in fio's simple and per-entry forms (fio's own example): the same report
/// shape, and the same share of reads at each priority (the 64 KiB reads split 25/75 over
/// two priorities, everything else at the thread's).
#[test]
fn per_size_priorities() {
    let args = [
        "--name=a",
        "--filename=@D@/f",
        "--size=64M",
        "--iodepth=16",
        "--rw=randread",
        "--ioengine=libaio",
        // A whole second: with a fixed number of I/Os the run took 40-150 ms, and a run
        // about one sample interval long gets a bw sample in one tool and none in the other.
        "--time_based",
        "--runtime=1",
        "--bssplit=64k/40:1024k/60",
        "--cmdprio_bssplit=64k/25/1/1:64k/75/3/2:1024k/0",
        "--bwavgtime=100",
        "--iopsavgtime=100",
    ];
    compare("cmdprio_bssplit", &args);
    let mut a = args.to_vec();
    a.push("--output-format=json");
    let Some((f, x)) = both(&a) else { return };
    let shares = |out: &str| -> std::collections::BTreeMap<(u64, u64), f64> {
        let j = json_of(out);
        let prios = j["jobs"][0]["read"]["prios"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        let n = |p: &serde_json::Value| p["clat_ns"]["N"].as_u64().unwrap() as f64;
        let total: f64 = prios.iter().map(n).sum();
        prios
            .iter()
            .map(|p| {
                (
                    (
                        p["prioclass"].as_u64().unwrap(),
                        p["prio"].as_u64().unwrap(),
                    ),
                    n(p) / total,
                )
            })
            .collect()
    };
    let (fs, xs) = (shares(&f.stdout), shares(&x.stdout));
    assert_eq!(
        fs.keys().collect::<Vec<_>>(),
        xs.keys().collect::<Vec<_>>(),
        "the same priorities: fio {fs:?}, flexio {xs:?}"
    );
    for (k, v) in &xs {
        assert!(
            (v - fs[k]).abs() < 0.04,
            "priority {k:?}: flexio {v}, fio {}",
            fs[k]
        );
    }
    // The 64k reads split a quarter at 1/1, three quarters at 3/2; the 1M reads (and only
    // they) at the thread's priority.
    let (a, b) = (xs[&(1, 1)], xs[&(3, 2)]);
    assert!((a / (a + b) - 0.25).abs() < 0.04, "{xs:?}");
    assert!(xs[&(0, 0)] > 0.2, "{xs:?}");
}

/// fio's normal output shows the sync percentiles whenever it timed syncs, whatever
/// clat_percentiles says; its JSON only with clat or lat percentiles on (flexio left them
/// out of both under clat_percentiles=0).
#[test]
fn sync_percentiles_follow_fios_rules_in_each_format() {
    for (extra, normal, json) in [
        (&["--clat_percentiles=0"][..], true, false),
        (&["--clat_percentiles=0", "--lat_percentiles=1"], true, true),
        (&[], true, true),
        (&["--disable_clat=1"], false, false),
    ] {
        let mut args = vec![
            "--name=j",
            "--rw=write",
            "--bs=8k",
            "--size=256k",
            "--fsync=8",
            "--output-format=json,normal",
        ];
        args.extend_from_slice(extra);
        let look = |out: &str| {
            let j = json_of(&out[..out.rfind('}').unwrap() + 1]);
            (
                out.contains("sync percentiles"),
                j["jobs"][0]["sync"]["lat_ns"].get("percentile").is_some(),
            )
        };
        let d = tempfile::tempdir().unwrap();
        let r = flexio_oracle(&args, d.path());
        assert_eq!(r.code, 0, "{}", r.stderr);
        assert_eq!(look(&r.stdout), (normal, json), "{extra:?}: {}", r.stdout);
        if let Some((f, _)) = both(&args) {
            assert_eq!(look(&f.stdout), (normal, json), "fio 3.33, {extra:?}");
        }
    }
}
