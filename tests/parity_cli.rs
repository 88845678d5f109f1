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
