//! The README's first command: `flexio` with no job runs the built-in benchmark in the
//! current directory, prints the summary table and removes its scratch file.

use crate::common;
use common::*;

#[test]
fn default_benchmark_runs_summarises_and_cleans_up() {
    let d = tempfile::tempdir().unwrap();
    let t0 = std::time::Instant::now();
    let r = flexio(&[], d.path());
    let secs = t0.elapsed().as_secs();
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    assert!(
        r.stderr.contains("running the default benchmark"),
        "{}",
        r.stderr
    );
    assert!(
        r.stdout.contains("flexio default benchmark summary"),
        "{}",
        r.stdout
    );
    for w in [
        "seq-read-1m",
        "seq-write-1m",
        "rand-read-4k",
        "rand-write-4k",
    ] {
        let line = r
            .stdout
            .lines()
            .rev()
            .find(|l| l.starts_with(w))
            .unwrap_or_else(|| panic!("no summary row for {w}"));
        assert!(line.contains("/s"), "{line}");
    }
    // Four 14 s phases: "about a minute".
    assert!((50..=120).contains(&secs), "took {secs} s");
    assert_eq!(
        std::fs::read_dir(d.path()).unwrap().count(),
        0,
        "scratch file left behind"
    );
}
