//! fio's command line around a run: the status line of time-based jobs, interrupts, and
//! fio's program switches (--debug, --idle-prof, --trigger*, --crctest, ...).

mod common;
use common::*;

/// A time-based job's ETA is known from the start: the status line shows the share of the
/// runtime, as fio's does, not `-.-%` for the first seconds.
#[test]
fn time_based_status_line_shows_the_percentage() {
    let d = tempfile::tempdir().unwrap();
    let r = run_bounded(
        &flexio_bin(),
        &[
            "--eta=always",
            "--eta-newline=1",
            "--eta-interval=500ms",
            "--name=t",
            "--ioengine=null",
            "--size=1g",
            "--time_based",
            "--runtime=3",
            "--output-format=terse",
        ],
        d.path(),
        &[],
        60,
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let lines: Vec<&str> = r
        .stderr
        .split(['\r', '\n'])
        .filter(|l| l.starts_with("Jobs:"))
        .collect();
    assert!(lines.len() >= 2, "{}", r.stderr);
    let pct = regex::Regex::new(r"\]\[\d+\.\d%\]").unwrap();
    for l in &lines {
        assert!(!l.contains("-.-%"), "{l}");
        assert!(pct.is_match(l), "{l}");
    }
}

/// `timeout -s INT` signals flexio and then its process group: two SIGINTs arrive within a
/// moment. The second must not abort the final report (fio never fails this way): every run
/// ends with a complete JSON report and fio's exit status 128.
#[test]
fn double_sigint_from_timeout_still_reports() {
    let Ok(timeout) = which("timeout") else {
        eprintln!("SKIP: timeout(1) is not installed");
        return;
    };
    let runs: usize = std::env::var("FLEXIO_DOUBLE_SIGINT_RUNS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(16);
    let bin = flexio_bin().display().to_string();
    for i in 0..runs {
        let d = tempfile::tempdir().unwrap();
        // Vary the moment: during start-up, and while the jobs run.
        let after = format!("{:.3}", (150 + (i * 97) % 900) as f64 / 1000.0);
        let r = run_bounded(
            &timeout,
            &[
                "--preserve-status",
                "-s",
                "INT",
                &after,
                &bin,
                "--name=t",
                "--ioengine=null",
                "--size=1g",
                "--time_based",
                "--runtime=30",
                "--numjobs=2",
                "--group_reporting",
                "--output-format=json",
            ],
            d.path(),
            &[],
            30,
        );
        assert_eq!(r.code, 128, "run {i} (signal after {after}): {}", r.stderr);
        let j = json_of(&r.stdout);
        assert!(
            j["jobs"][0]["read"]["io_bytes"].is_u64(),
            "run {i}: {}",
            r.stdout
        );
    }
}

fn which(name: &str) -> Result<std::path::PathBuf, ()> {
    std::env::var_os("PATH")
        .and_then(|p| {
            std::env::split_paths(&p)
                .map(|d| d.join(name))
                .find(|p| p.is_file())
        })
        .ok_or(())
}

/// The terse field with the read runtime (ms).
fn terse_read_runtime(stdout: &str) -> u64 {
    let l = stdout
        .lines()
        .find(|l| l.starts_with("3;"))
        .expect("a terse line");
    l.split(';').nth(8).unwrap().parse().unwrap()
}

/// `--trigger-timeout` with `--trigger`: fio and flexio stop the jobs at that time, run the
/// command and report normally (exit status 0).
#[test]
fn trigger_timeout_stops_the_run_and_runs_the_command_as_fio() {
    let args = [
        "--trigger-timeout=1",
        "--trigger=touch fired",
        "--name=t",
        "--ioengine=null",
        "--size=1g",
        "--time_based",
        "--runtime=20",
        "--output-format=terse",
    ];
    let Some(fio) = fio_bin() else { return };
    for bin in [fio, flexio_bin()] {
        let d = tempfile::tempdir().unwrap();
        let r = run_bounded(&bin, &args, d.path(), ORACLE_COMPAT, 30);
        assert_eq!(r.code, 0, "{}: {}", bin.display(), r.stderr);
        assert!(
            d.path().join("fired").exists(),
            "{}: no trigger command",
            bin.display()
        );
        let rt = terse_read_runtime(&r.stdout);
        assert!(
            (300..5000).contains(&rt),
            "{}: runtime {rt} ms",
            bin.display()
        );
    }
}

/// `--trigger-file`: when the file appears the run stops (the file is removed), and the
/// trigger's state-saving applies: a verifying writer leaves its verify state, in
/// `--aux-path`.
#[test]
fn trigger_file_stops_the_run_and_aux_path_holds_the_state() {
    let d = tempfile::tempdir().unwrap();
    std::fs::create_dir(d.path().join("aux")).unwrap();
    let child = spawn_flexio(
        &[
            "--trigger-file=stop-now",
            "--trigger=touch fired",
            "--aux-path=aux",
            "--alloc-size=32768",
            "--name=t",
            "--filename=data",
            "--size=64m",
            "--rw=write",
            "--bs=4k",
            "--verify=crc32c",
            "--verify_state_save=1",
            "--time_based",
            "--runtime=30",
            "--output-format=terse",
        ],
        d.path(),
        &[],
    );
    std::thread::sleep(std::time::Duration::from_millis(800));
    std::fs::write(d.path().join("stop-now"), b"").unwrap();
    let t0 = std::time::Instant::now();
    let out = child.wait_with_output().unwrap();
    assert!(t0.elapsed().as_secs() < 10, "took {:?}", t0.elapsed());
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        !d.path().join("stop-now").exists(),
        "trigger file not removed"
    );
    assert!(d.path().join("fired").exists(), "trigger command not run");
    assert!(
        d.path().join("aux/local-t-0-verify.state").exists(),
        "no verify state in --aux-path"
    );
}

/// `--bandwidth-log` writes fio's three aggregate logs (fio 3.33 creates the same files; it
/// fills them only while its ETA line is computed, flexio whenever asked).
#[test]
fn bandwidth_log_writes_the_aggregate_logs() {
    let args = [
        "--bandwidth-log",
        "--eta-interval=250ms",
        "--name=t",
        "--ioengine=null",
        "--size=1g",
        "--time_based",
        "--runtime=2",
        "--output-format=terse",
    ];
    let names = ["agg-read_bw.log", "agg-write_bw.log", "agg-trim_bw.log"];
    if let Some(fio) = fio_bin() {
        let d = tempfile::tempdir().unwrap();
        let r = run_in(&fio, &args, d.path());
        assert_eq!(r.code, 0, "{}", r.stderr);
        for n in names {
            assert!(d.path().join(n).exists(), "fio: no {n}");
        }
    }
    let d = tempfile::tempdir().unwrap();
    let r = run_bounded(&flexio_bin(), &args, d.path(), &[], 30);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let re = regex::Regex::new(r"^(\d+), (\d+), ([012]), 0, 0$").unwrap();
    for (dd, n) in names.iter().enumerate() {
        let text = std::fs::read_to_string(d.path().join(n)).unwrap();
        let rows: Vec<(u64, u64)> = text
            .lines()
            .map(|l| {
                let c = re.captures(l).unwrap_or_else(|| panic!("{n}: {l}"));
                assert_eq!(c[3].parse::<usize>().unwrap(), dd, "{n}: {l}");
                (c[1].parse().unwrap(), c[2].parse().unwrap())
            })
            .collect();
        assert!(rows.len() >= 4, "{n}: {text}");
        assert!(rows.windows(2).all(|w| w[0].0 < w[1].0), "{n}: {text}");
        let any_bw = rows.iter().any(|r| r.1 > 0);
        assert_eq!(any_bw, dd == 0, "{n}: {text}");
    }
}

/// `--idle-prof`: fio's "CPU idleness" block and JSON member (flexio measures from
/// /proc/stat and has no "unit work" figures: its keys are a subset of fio's).
#[test]
fn idle_prof_reports_cpu_idleness_like_fio() {
    let common = [
        "--idle-prof=percpu",
        "--name=t",
        "--ioengine=null",
        "--size=1g",
        "--time_based",
        "--runtime=1",
    ];
    let d = tempfile::tempdir().unwrap();
    let r = run_bounded(&flexio_bin(), &common, d.path(), &[], 30);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let re = regex::Regex::new(
        r"\nCPU idleness:\n  system: \d+\.\d\d%\n  percpu: \d+\.\d\d%(, \d+\.\d\d%)*\n$",
    )
    .unwrap();
    assert!(re.is_match(&r.stdout), "{}", r.stdout);
    let mut a = common.to_vec();
    a.push("--output-format=json");
    let x = run_bounded(&flexio_bin(), &a, d.path(), &[], 30);
    let xj = json_of(&x.stdout);
    let idle = xj["cpu_idleness"].as_object().expect("cpu_idleness");
    let sys = idle["system"].as_f64().unwrap();
    assert!((0.0..=100.0).contains(&sys), "{sys}");
    let Some(fio) = fio_bin() else { return };
    let f = run_in(&fio, &a, d.path());
    let fj = json_of(&f.stdout);
    let fio_keys = fj["cpu_idleness"].as_object().expect("fio cpu_idleness");
    for k in idle.keys() {
        assert!(fio_keys.contains_key(k), "{k} not in fio's {fio_keys:?}");
    }
    let last = |j: &serde_json::Value| {
        j.as_object()
            .unwrap()
            .keys()
            .rfind(|k| *k != "flexio")
            .cloned()
    };
    assert_eq!(last(&xj), last(&fj), "cpu_idleness is the last member");
}

/// `--debug`: fio's announcement and line layout (`<category:8> <pid:5> <message>`).
#[test]
fn debug_lines_are_laid_out_like_fio() {
    let args = [
        "--debug=parse,io",
        "--name=t",
        "--ioengine=null",
        "--size=8k",
        "--output-format=terse",
    ];
    let d = tempfile::tempdir().unwrap();
    let x = run_bounded(&flexio_bin(), &args, d.path(), &[], 30);
    assert_eq!(x.code, 0, "{}", x.stderr);
    let check = |who: &str, out: &str| {
        assert!(
            out.contains("fio: set debug option parse\n"),
            "{who}: {out}"
        );
        assert!(out.contains("fio: set debug option io\n"), "{who}: {out}");
        let size = regex::Regex::new(r"(?m)^parse {4}\d+ +handle_option=size, ptr=8k$").unwrap();
        assert!(size.is_match(out), "{who}: {out}");
        let io = regex::Regex::new(r"(?m)^io {7}\d+ +(queue|complete): io_u \S+: off=0x1000,len=0x1000,ddir=0,file=t\.0\.0").unwrap();
        assert!(io.is_match(out), "{who}: {out}");
    };
    check("flexio", &x.stdout);
    if let Some(fio) = fio_bin() {
        let f = run_in(&fio, &args, d.path());
        check("fio", &f.stdout);
    }
    let r = flexio(&["--debug=mutex", "--name=t", "--size=8k"], d.path());
    assert_eq!(r.code, 1);
    assert!(r.stderr.contains("not supported by flexio"), "{}", r.stderr);
    let r = flexio(&["--debug=help"], d.path());
    assert_eq!(r.code, 0);
    assert!(
        r.stdout.starts_with("fio: dumping debug options:parse,"),
        "{}",
        r.stdout
    );
}

/// `--crctest`: fio's table layout, hashes in fio's order (those flexio has).
#[test]
fn crctest_prints_fios_table() {
    let d = tempfile::tempdir().unwrap();
    let x = run_bounded(
        &flexio_bin(),
        &["--crctest=crc32c,md5,sha1"],
        d.path(),
        &[],
        60,
    );
    assert_eq!(x.code, 0, "{}", x.stderr);
    let re = regex::Regex::new(r"^([a-z0-9-]+):\t{1,2} *\d+\.\d\d MiB/sec$").unwrap();
    let names: Vec<String> = x
        .stdout
        .lines()
        .map(|l| re.captures(l).unwrap_or_else(|| panic!("{l:?}"))[1].to_string())
        .collect();
    assert_eq!(names, vec!["md5", "crc32c", "sha1"]);
    if let Some(fio) = fio_bin() {
        let f = run_in(&fio, &["--crctest=crc32c,md5,sha1"], d.path());
        let fnames: Vec<String> = f
            .stdout
            .lines()
            .map(|l| re.captures(l).unwrap_or_else(|| panic!("fio: {l:?}"))[1].to_string())
            .collect();
        assert_eq!(names, fnames);
    }
    let r = flexio(&["--crctest=murmur3"], d.path());
    assert_eq!(r.code, 1);
    assert!(r.stderr.contains("not supported by flexio"), "{}", r.stderr);
}

/// `--cpuclock-test`: fio's `cs:` lines, one per CPU, and a verdict.
#[test]
fn cpuclock_test_checks_every_cpu() {
    let d = tempfile::tempdir().unwrap();
    let x = run_bounded(&flexio_bin(), &["--cpuclock-test"], d.path(), &[], 120);
    assert!(x.stdout.starts_with("cs: reliable_tsc: "), "{}", x.stdout);
    let n: usize = regex::Regex::new(r"cs: Testing (\d+) CPUs")
        .unwrap()
        .captures(&x.stdout)
        .unwrap_or_else(|| panic!("{}", x.stdout))[1]
        .parse()
        .unwrap();
    let per_cpu = x
        .stdout
        .lines()
        .filter(|l| l.contains(" clocks seen, first "))
        .count();
    assert_eq!(per_cpu, n, "{}", x.stdout);
    match x.code {
        0 => assert!(x.stdout.ends_with("cs: Pass!\n"), "{}", x.stdout),
        _ => assert!(x.stdout.ends_with("cs: Failed!\n"), "{}", x.stdout),
    }
}
