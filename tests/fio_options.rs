//! fio options that complete flexio's option set, each against fio 3.33 where fio 3.33
//! has it: profile (tiobench, act), block_error_percentiles, gtod_cpu, atomic,
//! write_barrier, ignore_error's values, fadvise_hint=noreuse, unique_filename on a server;
//! and the newest fio's steadystate=lat, ramp_size over a reporting group, protocol=vsock,
//! libaio_vectored and cmdprio_hint.

use crate::common;
use common::*;
use std::path::Path;
use std::time::{Duration, Instant};

fn run(bin: &Path, args: &[&str], dir: &Path, env: &[(&str, &str)]) -> Run {
    run_bounded(bin, args, dir, env, 120)
}

/// `--profile=tiobench` runs fio 3.33's four jobs (its profile options never reach the
/// profile in fio 3.33: sizes come from the machine's memory): the same jobs, options
/// echoed and bytes moved, and the four files left in the current directory.
#[test]
fn profile_tiobench_runs_fios_jobs() {
    let Some(fio) = fio_bin() else { return };
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let summary = |bin: &Path, env: &[(&str, &str)]| {
        let d = tempfile::tempdir().unwrap();
        let r = run(
            bin,
            &["--profile=tiobench", "--output-format=json"],
            d.path(),
            env,
        );
        assert_eq!(r.code, 0, "{}: {}", bin.display(), r.stderr);
        let j = json_of(&r.stdout);
        let jobs: Vec<String> = j["jobs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| {
                format!(
                    "{} g{} {} r{} w{}",
                    x["jobname"],
                    x["groupid"],
                    x["job options"],
                    x["read"]["io_bytes"],
                    x["write"]["io_bytes"]
                )
            })
            .collect();
        let mut files: Vec<String> = std::fs::read_dir(d.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        files.sort();
        (j["global options"].clone(), jobs, files)
    };
    let f = summary(&fio, &[]);
    let x = summary(&flexio_bin(), ORACLE_COMPAT);
    assert_eq!(x.0, f.0, "global options");
    assert_eq!(x.1, f.1, "jobs");
    assert_eq!(x.2, f.2, "files");
    assert_eq!(f.1.len(), 4);
}

/// act without device names fails as fio 3.33's does (and fio 3.33 never sees the device
/// names it is given).
#[test]
fn profile_act_fails_as_fio() {
    let d = tempfile::tempdir().unwrap();
    let mut tools = vec![(flexio_bin(), ORACLE_COMPAT)];
    if let Some(f) = fio_bin() {
        tools.push((f, &[]));
    }
    for (bin, env) in &tools {
        let r = run(bin, &["--profile=act"], d.path(), env);
        assert_eq!(r.code, 1, "{}", bin.display());
        let out = format!("{}{}", r.stdout, r.stderr);
        assert!(
            out.contains("act: you need to set IO target(s) with the device-names option."),
            "{}: {out}",
            bin.display()
        );
    }
    let r = run(&flexio_bin(), &["--profile=nope"], d.path(), &[]);
    assert_eq!(r.code, 1);
    assert!(
        r.stderr.contains("profile 'nope' not found"),
        "{}",
        r.stderr
    );
}

/// Without trims fio 3.33 shows the two lines with every state 0 and no JSON object; with
/// trims (which fio 3.33 aborts on: its sort reads the 32-bit block records as 64-bit) the
/// states count the blocks and the percentiles their trim cycles.
#[test]
fn block_error_percentiles() {
    let d = tempfile::tempdir().unwrap();
    let f = d.path().join("f");
    let fname = format!("--filename={}", f.display());
    let args = [
        "--name=t",
        fname.as_str(),
        "--rw=write",
        "--bs=4k",
        "--size=64k",
        "--block_error_percentiles=1",
    ];
    let x = run(&flexio_bin(), &args, d.path(), ORACLE_COMPAT);
    assert_eq!(x.code, 0, "{}", x.stderr);
    let lines = |s: &str| -> String {
        let i = s
            .find("  block lifetime percentiles")
            .expect("the block lines");
        s[i..].lines().take(2).collect::<Vec<_>>().join("\n")
    };
    let want = "  block lifetime percentiles :\n   |        states               : unwritten=0, trimmed=0, written=0, trim failure=0, write failure=0";
    assert_eq!(lines(&x.stdout), want);
    if let Some(fio) = fio_bin() {
        let r = run(&fio, &args, d.path(), &[]);
        assert_eq!(lines(&r.stdout), want, "fio 3.33");
        let mut j = args.to_vec();
        j.push("--output-format=json");
        let r = run(&fio, &j, d.path(), &[]);
        assert!(json_of(&r.stdout)["jobs"][0].get("block").is_none());
        let r = run(&flexio_bin(), &j, d.path(), &[]);
        assert!(json_of(&r.stdout)["jobs"][0].get("block").is_none());
    }
    let Some(l) = common::loopdev::LoopDev::new(16 << 20) else {
        return;
    };
    let dev = format!("--filename={}", l.dev.display());
    // trimwrite, 3 loops: every block trimmed three times, then written.
    let r = run(
        &flexio_bin(),
        &[
            "--name=t",
            &dev,
            "--rw=trimwrite",
            "--bs=4k",
            "--size=1m",
            "--loops=3",
            "--block_error_percentiles=1",
            "--percentile_list=50:99",
            "--output-format=json",
        ],
        d.path(),
        &[],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let b = &json_of(&r.stdout)["jobs"][0]["block"];
    assert_eq!(b["states"]["written"], 256, "{b}");
    assert_eq!(b["states"]["trimmed"], 0);
    assert_eq!(b["percentiles"]["50.000000"], 3);
    assert_eq!(b["percentiles"]["99.000000"], 3);
    // Half the blocks trimmed once.
    let r = run(
        &flexio_bin(),
        &[
            "--name=t",
            &dev,
            "--rw=trim",
            "--bs=4k",
            "--size=1m",
            "--io_size=512k",
            "--block_error_percentiles=1",
        ],
        d.path(),
        &[],
    );
    assert!(
        r.stdout
            .contains("states               : unwritten=128, trimmed=128, written=0,"),
        "{}",
        r.stdout
    );
}

/// gtod_cpu: the CPU is set aside for the timekeeper and cleared from the jobs' CPU masks,
/// as in fio 3.33 (a program the job starts inherits the job's mask).
#[test]
fn gtod_cpu_takes_its_cpu_out_of_the_jobs_masks() {
    if std::thread::available_parallelism().map_or(1, |n| n.get()) < 2 {
        eprintln!("SKIP: gtod_cpu needs two CPUs");
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let show = d.path().join("cpus.sh");
    std::fs::write(
        &show,
        "#!/bin/sh\ngrep Cpus_allowed_list /proc/self/status\n",
    )
    .unwrap();
    std::fs::set_permissions(&show, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let prog = format!("--program={}", show.display());
    let args = [
        "--name=g",
        "--ioengine=exec",
        prog.as_str(),
        "--std_redirect=0",
        "--runtime=1",
        "--cpus_allowed=0-1",
        "--gtod_cpu=1",
    ];
    let cpus = |r: &Run| {
        r.stdout
            .lines()
            .find(|l| l.starts_with("Cpus_allowed_list"))
            .map(|l| l.split_whitespace().last().unwrap_or("").to_string())
    };
    let x = run(&flexio_bin(), &args, d.path(), ORACLE_COMPAT);
    assert_eq!(cpus(&x).as_deref(), Some("0"), "{}{}", x.stdout, x.stderr);
    if let Some(fio) = fio_bin() {
        let f = run(&fio, &args, d.path(), &[]);
        assert_eq!(cpus(&f), cpus(&x), "fio 3.33");
    }
    // The jobs read the time the timekeeper publishes.
    let r = run(
        &flexio_bin(),
        &[
            "--name=n",
            "--ioengine=null",
            "--size=16m",
            "--gtod_cpu=1",
            "--output-format=json",
        ],
        d.path(),
        &[],
    );
    let j = json_of(&r.stdout);
    assert_eq!(j["flexio"]["clock"]["source"], "gtod_cpu", "{}", r.stdout);
    assert_eq!(j["jobs"][0]["read"]["io_bytes"], 16 << 20);
}

/// atomic: fio 3.33 opens with O_ATOMIC and O_DIRECT and runs; the newest fio writes with
/// RWF_ATOMIC and only on engines that can (psync cannot).
#[test]
fn atomic_as_fio() {
    let d = tempfile::tempdir().unwrap();
    let f = format!("--filename={}", d.path().join("f").display());
    let args = [
        "--name=a",
        f.as_str(),
        "--rw=write",
        "--size=64k",
        "--atomic=1",
        "--output-format=json",
    ];
    let x = run(&flexio_bin(), &args, d.path(), ORACLE_COMPAT);
    let xj = json_of(&x.stdout);
    if let Some(fio) = fio_bin() {
        let r = run(&fio, &args, d.path(), &[]);
        let fj = json_of(&r.stdout);
        assert_eq!(
            xj["jobs"][0]["error"], fj["jobs"][0]["error"],
            "{}",
            x.stderr
        );
        assert_eq!(
            xj["jobs"][0]["write"]["io_bytes"],
            fj["jobs"][0]["write"]["io_bytes"]
        );
    }
    let r = run(&flexio_bin(), &args, d.path(), &[]);
    assert_eq!(r.code, 1);
    assert!(
        r.stderr
            .contains("fio: engine does not support atomic writes"),
        "{}",
        r.stderr
    );
    // A job that does not write: atomic is cleared.
    let r = run(
        &flexio_bin(),
        &[
            "--name=a",
            f.as_str(),
            "--rw=read",
            "--size=64k",
            "--atomic=1",
        ],
        d.path(),
        &[],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
}

/// write_barrier: no engine of fio's or flexio's issues barrier writes; the job runs as
/// without it, in both.
#[test]
fn write_barrier_is_accepted_as_fio() {
    let d = tempfile::tempdir().unwrap();
    let f = format!("--filename={}", d.path().join("f").display());
    let args = [
        "--name=b",
        f.as_str(),
        "--rw=write",
        "--size=64k",
        "--write_barrier=2",
        "--output-format=json",
    ];
    let x = run(&flexio_bin(), &args, d.path(), ORACLE_COMPAT);
    assert_eq!(x.code, 0, "{}", x.stderr);
    let xj = json_of(&x.stdout);
    assert_eq!(xj["jobs"][0]["write"]["total_ios"], 16);
    assert_eq!(xj["jobs"][0]["sync"]["total_ios"], 0);
    if let Some(fio) = fio_bin() {
        let fj = json_of(&run(&fio, &args, d.path(), &[]).stdout);
        assert_eq!(fj["jobs"][0]["write"]["total_ios"], 16);
        assert_eq!(fj["jobs"][0]["job options"], xj["jobs"][0]["job options"]);
    }
}

/// ignore_error's values: what fio 3.33 accepts and refuses (names as written, the 34 of
/// EPERM..ERANGE, atoi numbers); the newest fio's 133 names and hex numbers by default.
#[test]
fn ignore_error_values_as_fio() {
    let d = tempfile::tempdir().unwrap();
    let fio = fio_bin();
    for (v, ok_333, ok_newest) in [
        ("EIO", true, true),
        ("ERANGE:ENOSPC", true, true),
        ("EDQUOT", false, true),
        ("EWOULDBLOCK", false, true),
        ("0x1c", false, true),
        ("28", true, true),
        ("12abc", true, true),
        ("0", false, false),
        ("enospc", false, false),
        ("EBOGUS", false, false),
        ("EIO::5", true, true),
        (",ENOSPC", true, true),
    ] {
        let a = format!("--ignore_error={v}");
        let args = [
            "--name=i",
            "--ioengine=null",
            "--size=4k",
            a.as_str(),
            "--output-format=terse",
        ];
        let x = run(&flexio_bin(), &args, d.path(), ORACLE_COMPAT);
        assert_eq!(x.code == 0, ok_333, "--compat=3.33 {v}: {}", x.stderr);
        if let Some(f) = &fio {
            // fio 3.33 reports a bad value and runs nothing.
            let r = run(f, &args, d.path(), &[]);
            let fio_ok = !r.stderr.contains("failed parsing");
            assert_eq!(fio_ok, ok_333, "fio 3.33 {v}: {}", r.stderr);
        }
        let n = run(&flexio_bin(), &args, d.path(), &[]);
        assert_eq!(n.code == 0, ok_newest, "newest {v}: {}", n.stderr);
    }
}

/// fadvise_hint=noreuse (fio 3.35): a bad value in fio 3.33, accepted by default.
#[test]
fn fadvise_noreuse() {
    let d = tempfile::tempdir().unwrap();
    let f = format!("--filename={}", d.path().join("f").display());
    let args = [
        "--name=n",
        f.as_str(),
        "--rw=write",
        "--size=64k",
        "--fadvise_hint=noreuse",
    ];
    let x = run(&flexio_bin(), &args, d.path(), ORACLE_COMPAT);
    assert_eq!(x.code, 1);
    assert!(
        x.stderr
            .contains("'noreuse' is not a valid value in fio 3.33"),
        "{}",
        x.stderr
    );
    if let Some(fio) = fio_bin() {
        let r = run(&fio, &args, d.path(), &[]);
        assert!(r.stderr.contains("failed parsing"), "{}", r.stderr);
    }
    let n = run(&flexio_bin(), &args, d.path(), &[]);
    assert_eq!(n.code, 0, "{}", n.stderr);
}

/// steadystate=lat / lat_slope (fio 3.42): the JSON carries the window's latencies and
/// their mean, the normal line `lat=Nnsec, lat slope=`; fio 3.33 has no such criterion.
#[test]
fn steadystate_latency_criteria() {
    let d = tempfile::tempdir().unwrap();
    let base = [
        "--name=s",
        "--ioengine=null",
        "--size=100g",
        "--time_based",
        "--runtime=5",
        "--rate_iops=2000",
        "--ss_dur=4",
        "--ss_interval=2",
    ];
    let mut a = base.to_vec();
    a.extend(["--ss=lat:1ms", "--output-format=json"]);
    let r = run(&flexio_bin(), &a, d.path(), &[]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let ss = &json_of(&r.stdout)["jobs"][0]["steadystate"];
    assert_eq!(
        ss["ss"], "lat:1000.000000",
        "lat:1ms is 1000 (ns), as fio reads it"
    );
    let lat: Vec<u64> = ss["data"]["lat_ns"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_u64().unwrap())
        .collect();
    assert_eq!(lat.len(), 2, "ss_dur / ss_interval samples");
    assert!(lat.iter().all(|v| *v > 0 && *v < 1_000_000), "{lat:?}");
    assert_eq!(ss["data"]["lat_mean"], (lat[0] + lat[1]) / 2);
    let keys: Vec<&str> = ss["data"]
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(
        keys,
        ["bw_mean", "iops_mean", "lat_mean", "lat_ns", "iops", "bw"]
    );
    let mut a = base.to_vec();
    a.push("--ss=lat_slope:5%");
    let r = run(&flexio_bin(), &a, d.path(), &[]);
    let line = r
        .stdout
        .lines()
        .find(|l| l.starts_with("  steadystate  :"))
        .unwrap();
    let re = regex::Regex::new(r"iops=\d+, lat=\d+k?nsec, lat slope=-?\d+\.\d{3}%$").unwrap();
    assert!(re.is_match(line), "{line}");
    // fio 3.33 (without ss_interval, which it does not have either).
    let mut a = base[..6].to_vec();
    a.extend(["--ss_dur=4", "--ss=lat:250"]);
    let x = run(&flexio_bin(), &a, d.path(), ORACLE_COMPAT);
    assert_eq!(x.code, 1);
    assert!(
        x.stderr.contains("'lat' is not a valid value in fio 3.33"),
        "{}",
        x.stderr
    );
    if let Some(fio) = fio_bin() {
        let r = run(&fio, &a, d.path(), &[]);
        assert!(
            r.stderr.contains("failed parsing ss=lat:250"),
            "{}",
            r.stderr
        );
    }
}

/// ramp_size with group_reporting: the bytes of all the group's jobs count, and they leave
/// the ramp together (fio 3.42). Two jobs at 200 KiB/s each with ramp_size=300k reach it
/// together after 0.75 s (the ramp ends at the 1 s tick); each alone would need 1.5 s.
#[test]
fn ramp_size_counts_a_groups_bytes() {
    let d = tempfile::tempdir().unwrap();
    let t = Instant::now();
    let r = run(
        &flexio_bin(),
        &[
            "--name=r",
            "--ioengine=null",
            "--size=1g",
            "--rate=200k",
            "--ramp_size=300k",
            "--runtime=1",
            "--time_based",
            "--numjobs=2",
            "--group_reporting",
            "--output-format=json",
        ],
        d.path(),
        &[],
    );
    let wall = t.elapsed();
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        wall >= Duration::from_millis(1900) && wall < Duration::from_millis(2700),
        "ramp ends at the 1 s tick, then 1 s: {wall:?}"
    );
    let bytes = json_of(&r.stdout)["jobs"][0]["read"]["io_bytes"]
        .as_u64()
        .unwrap();
    assert!((300_000..=520_000).contains(&bytes), "measured {bytes}");
}

/// protocol=vsock (fio 3.37): unknown to fio 3.33; by default the run says what is missing
/// (no AF_VSOCK, or no peer at the context id).
#[test]
fn net_vsock() {
    let d = tempfile::tempdir().unwrap();
    let args = [
        "--name=v",
        "--ioengine=net",
        "--protocol=vsock",
        "--hostname=1",
        "--port=5123",
        "--rw=write",
        "--size=64k",
    ];
    let x = run(&flexio_bin(), &args, d.path(), ORACLE_COMPAT);
    assert_eq!(x.code, 1);
    assert!(
        x.stderr
            .contains("'vsock' is not a valid value in fio 3.33"),
        "{}",
        x.stderr
    );
    let r = run(&flexio_bin(), &args, d.path(), &[]);
    assert_ne!(r.code, 0);
    assert!(
        r.stderr
            .contains("protocol=vsock: this system has no AF_VSOCK sockets")
            || r.stderr.contains("connect vsock 1:5123: "),
        "{}",
        r.stderr
    );
    let r = run(
        &flexio_bin(),
        &[
            "--name=v",
            "--ioengine=net",
            "--protocol=vsock",
            "--hostname=x",
            "--port=1",
            "--rw=write",
            "--size=64k",
        ],
        d.path(),
        &[],
    );
    assert!(
        r.stderr.contains("is not a context id") || r.stderr.contains("no AF_VSOCK"),
        "{}",
        r.stderr
    );
}

/// libaio_vectored (fio 3.39) and cmdprio_hint (fio 3.36): newer than fio 3.33, by
/// default they run (vectored I/O moves the same bytes).
#[test]
fn libaio_vectored_and_cmdprio_hint() {
    let d = tempfile::tempdir().unwrap();
    let f = format!("--filename={}", d.path().join("f").display());
    let args = [
        "--name=l",
        f.as_str(),
        "--ioengine=libaio",
        "--rw=randrw",
        "--size=256k",
        "--iodepth=8",
        "--libaio_vectored=1",
        "--cmdprio_percentage=50",
        "--cmdprio_class=2",
        "--cmdprio_hint=3",
        "--output-format=json",
    ];
    let r = run(&flexio_bin(), &args, d.path(), &[]);
    if r.stderr.contains("libaio is not available") {
        eprintln!("SKIP: no native AIO here");
        return;
    }
    assert_eq!(r.code, 0, "{}", r.stderr);
    let j = json_of(&r.stdout);
    let moved = j["jobs"][0]["read"]["io_bytes"].as_u64().unwrap()
        + j["jobs"][0]["write"]["io_bytes"].as_u64().unwrap();
    assert_eq!(moved, 256 << 10);
    let x = run(&flexio_bin(), &args, d.path(), ORACLE_COMPAT);
    assert_eq!(x.code, 1);
    assert!(
        x.stderr.contains("unrecognized option '--libaio_vectored'"),
        "{}",
        x.stderr
    );
}

/// unique_filename (on by default): a server puts the client's address before the file
/// names a job generates, as fio 3.33's server does (over TCP and a Unix socket).
#[test]
fn unique_filename_on_a_server() {
    let Some(fio) = fio_bin() else { return };
    for unix in [false, true] {
        let mut listings = Vec::new();
        for bin in [fio.clone(), flexio_bin()] {
            let d = tempfile::tempdir().unwrap();
            let work = d.path().join("w");
            std::fs::create_dir(&work).unwrap();
            let (addr, client) = if unix {
                let s = d.path().join("s.sock").display().to_string();
                (format!("sock:{s}"), format!("--client=sock:{s}"))
            } else {
                let port = std::net::TcpListener::bind("127.0.0.1:0")
                    .unwrap()
                    .local_addr()
                    .unwrap()
                    .port();
                (
                    format!("ip:127.0.0.1,{port}"),
                    format!("--client=ip:127.0.0.1,{port}"),
                )
            };
            let log = d.path().join("server.log");
            let mut server =
                spawn_logged_env(&bin, &[&format!("--server={addr}")], d.path(), &log, &[]);
            let t = Instant::now();
            loop {
                let up = if unix {
                    std::os::unix::net::UnixStream::connect(addr.trim_start_matches("sock:"))
                        .is_ok()
                } else {
                    std::net::TcpStream::connect(addr.trim_start_matches("ip:").replace(',', ":"))
                        .is_ok()
                };
                if up {
                    break;
                }
                assert!(
                    t.elapsed() < Duration::from_secs(10),
                    "server never listened"
                );
                std::thread::sleep(Duration::from_millis(20));
            }
            let job = d.path().join("j.fio");
            std::fs::write(
                &job,
                format!(
                    "[global]\nrw=write\nsize=64k\ndirectory={}\n[a]\n[b]\nunique_filename=0\n",
                    work.display()
                ),
            )
            .unwrap();
            let j = job.display().to_string();
            let r = run(
                &bin,
                &[client.as_str(), j.as_str()],
                d.path(),
                ORACLE_COMPAT,
            );
            let _ = server.kill();
            let _ = server.wait();
            assert_eq!(r.code, 0, "{}: {}{}", bin.display(), r.stdout, r.stderr);
            let mut names: Vec<String> = std::fs::read_dir(&work)
                .unwrap()
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .collect();
            names.sort();
            listings.push(names);
        }
        assert_eq!(
            listings[1], listings[0],
            "flexio vs fio (unix socket: {unix})"
        );
        if !unix {
            assert_eq!(listings[0], ["127.0.0.1.a.0.0", "b.0.0"]);
        }
    }
}

/// The mmap engine refuses, at its init as fio does, a job that syncs every N blocks
/// (`fsync`, `fdatasync`) with blocks that are not whole pages: fio's two lines, the job
/// failed with error 1 and no error text, and the other job of the run still runs (a
/// job the tool found in fio 3.33, exit 1, that flexio ran). Whole pages, or no syncs,
/// run.
#[test]
fn mmap_syncs_need_whole_page_blocks_as_fio() {
    let job = |bs: &str, sync: &str| {
        vec![
            "--name=a".to_string(),
            "--ioengine=null".into(),
            "--size=64k".into(),
            "--name=b".into(),
            "--ioengine=mmap".into(),
            "--rw=write".into(),
            format!("--bs={bs}"),
            "--size=256k".into(),
            sync.to_string(),
            "--output-format=json".into(),
        ]
    };
    let mut tools = vec![(flexio_bin(), ORACLE_COMPAT), (flexio_bin(), &[][..])];
    if let Some(f) = fio_bin() {
        tools.push((f, &[]));
    }
    for (bin, env) in &tools {
        let what = format!("{} {env:?}", bin.display());
        let d = tempfile::tempdir().unwrap();
        let a = job("512", "--fdatasync=4");
        let r = run(
            bin,
            &a.iter().map(String::as_str).collect::<Vec<_>>(),
            d.path(),
            env,
        );
        assert_eq!(r.code, 1, "{what}: {}", r.stderr);
        assert!(
            r.stderr.contains(
                "fio: mmap options dictate a minimum block size of 4096 bytes\n\
                 fio: io engine mmap init failed.\n"
            ),
            "{what}: {}",
            r.stderr
        );
        let j = json_of(&r.stdout);
        assert_eq!(j["jobs"][0]["error"], 0, "{what}");
        assert_eq!(j["jobs"][0]["read"]["io_bytes"], 65536, "{what}");
        assert_eq!(j["jobs"][1]["error"], 1, "{what}");
        assert_eq!(j["jobs"][1]["write"]["io_bytes"], 0, "{what}");
        for (bs, sync) in [("4k", "--fsync=4"), ("512", "--fsync_on_close=1")] {
            let d = tempfile::tempdir().unwrap();
            let a = job(bs, sync);
            let r = run(
                bin,
                &a.iter().map(String::as_str).collect::<Vec<_>>(),
                d.path(),
                env,
            );
            assert_eq!(r.code, 0, "{what} {bs} {sync}: {}", r.stderr);
            assert_eq!(json_of(&r.stdout)["jobs"][1]["write"]["io_bytes"], 262144);
        }
    }
}
