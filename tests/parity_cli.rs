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
