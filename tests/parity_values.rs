//! fio's value forms and command-line rules, against fio 3.33: backwards sequential I/O
//! (`rw=read:-8k`), blank bssplit and zoned percentages, options without a job, and
//! `numjobs=0`.

use crate::common;
use common::*;
use std::path::Path;

/// One column of a lat log written with log_offset=1 (3: block size, 4: offset).
fn log_column(dir: &Path, col: usize) -> Vec<u64> {
    std::fs::read_to_string(dir.join("cap_lat.1.log"))
        .unwrap()
        .lines()
        .map(|l| l.split(", ").nth(col).unwrap().parse().unwrap())
        .collect()
}

/// Run a null-engine job in a fresh directory and return a column of its lat log.
fn column(bin: &Path, args: &[&str], col: usize) -> Vec<u64> {
    let d = tempfile::tempdir().unwrap();
    let mut a = vec![
        "--name=t",
        "--ioengine=null",
        "--write_lat_log=cap",
        "--log_offset=1",
        "--output-format=terse",
    ];
    a.extend_from_slice(args);
    // flexio reproduces the oracle's version (fio 3.33) where fio versions differ.
    let env = if bin == flexio_bin() {
        ORACLE_COMPAT
    } else {
        &[]
    };
    let r = run_in_env(bin, &a, d.path(), env);
    assert_eq!(r.code, 0, "{} {a:?}: {}", bin.display(), r.stderr);
    log_column(d.path(), col)
}

#[test]
fn backwards_sequential_offsets_equal_fio() {
    let Some(fio) = fio_bin() else { return };
    for args in [
        &["--size=64k", "--bs=4k", "--rw=read:-8k"][..],
        &["--size=64k", "--offset=16k", "--bs=4k", "--rw=read:-8k"],
        &["--size=64k", "--io_size=256k", "--bs=4k", "--rw=read:-8k"],
        &["--size=64k", "--bs=4k", "--rw=read:-4k"],
        &[
            "--size=60k",
            "--bs=8k",
            "--rw=write:-12k",
            "--number_ios=20",
        ],
        &["--size=1m", "--bs=4k", "--rw=read:-1m", "--number_ios=50"],
    ] {
        let want = column(&fio, args, 4);
        let got = column(&flexio_bin(), args, 4);
        assert!(want.len() > 3, "{args:?}: fio did only {} I/Os", want.len());
        assert_eq!(got, want, "{args:?}: offsets differ from fio's");
    }
}

#[test]
fn blank_bssplit_percentages_equal_fio() {
    let Some(fio) = fio_bin() else { return };
    let args = [
        "--size=16m",
        "--rw=randread",
        "--bssplit=512/25:1k/:2k/:4k/",
        "--number_ios=2000",
    ];
    let want = column(&fio, &args, 3);
    let got = column(&flexio_bin(), &args, 3);
    assert_eq!(want.len(), 2000);
    assert_eq!(got, want, "block sizes differ from fio's");
    for bs in [512, 1024, 2048, 4096] {
        let n = got.iter().filter(|b| **b == bs).count();
        assert!((350..=650).contains(&n), "{bs}: {n} of 2000");
    }
}

/// `zoned:50/5:30/15:20/`: the blank size is what the others leave (80%), in fio and in
/// flexio (each tool gives the same offsets for both spellings).
#[test]
fn blank_zoned_size_is_the_rest_as_in_fio() {
    let Some(fio) = fio_bin() else { return };
    let base = ["--size=16m", "--rw=randread", "--number_ios=2000"];
    let with = |d: &'static str| {
        let mut v = base.to_vec();
        v.push(d);
        v
    };
    let blank = with("--random_distribution=zoned:50/5:30/15:20/");
    let full = with("--random_distribution=zoned:50/5:30/15:20/80");
    assert_eq!(column(&fio, &blank, 4), column(&fio, &full, 4), "fio");
    let got = column(&flexio_bin(), &blank, 4);
    assert_eq!(got, column(&flexio_bin(), &full, 4), "flexio");
    let first5 = got.iter().filter(|o| **o < 16 * 1024 * 1024 / 20).count();
    assert!(
        (900..=1100).contains(&first5),
        "{first5} of 2000 in the first 5%"
    );
}

/// Job options without `--name` define no job: fio says so and exits 1 (usage on stdout).
#[test]
fn options_without_a_job_are_no_jobs() {
    let Some((f, x)) = both(&["--size=1M", "--rw=read"]) else {
        return;
    };
    assert_eq!((f.code, x.code), (1, 1), "{}", x.stderr);
    assert!(f.stderr.starts_with("No job(s) defined"), "{}", f.stderr);
    assert!(x.stderr.starts_with("No job(s) defined"), "{}", x.stderr);
    assert!(x.stderr.contains("--name="), "{}", x.stderr);
    for out in [&f.stdout, &x.stdout] {
        let mut l = out.lines();
        assert!(l.next().unwrap().contains("-"), "{out}");
        assert!(
            l.next()
                .unwrap()
                .ends_with("[options] [job options] <job file(s)>"),
            "{out}"
        );
    }
    // A job file with no job section: the same.
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("g.fio"), "[global]\nbs=4k\n").unwrap();
    let r = flexio(&["g.fio"], d.path());
    assert_eq!(r.code, 1);
    assert!(r.stderr.starts_with("No job(s) defined"), "{}", r.stderr);
    // --parse-only with no job is fine (fio exits 0 too).
    let r = flexio(&["--parse-only", "--size=1M"], d.path());
    assert_eq!(r.code, 0, "{}", r.stderr);
}

/// `numjobs=0` switches a job off with a note; the others run. (fio 3.33 accepts it and then
/// forks without end, so this is not compared with fio.)
#[test]
fn numjobs_zero_disables_the_job() {
    let d = tempfile::tempdir().unwrap();
    let r = run_bounded(
        &flexio_bin(),
        &[
            "--ioengine=null",
            "--size=1M",
            "--output-format=json",
            "--name=off",
            "--numjobs=0",
            "--name=on",
            "--numjobs=2",
        ],
        d.path(),
        &[],
        60,
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stderr.contains("job 'off' disabled (numjobs=0)"),
        "{}",
        r.stderr
    );
    let j = json_of(&r.stdout);
    let names: Vec<&str> = j["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| j["jobname"].as_str().unwrap())
        .collect();
    assert_eq!(names, vec!["on", "on"]);
    let r = run_bounded(
        &flexio_bin(),
        &["--name=off", "--ioengine=null", "--size=1M", "--numjobs=0"],
        d.path(),
        &[],
        60,
    );
    assert_eq!(r.code, 1);
    assert!(r.stderr.contains("No job(s) defined"), "{}", r.stderr);
    // In a job file too, and --parse-only accepts it.
    std::fs::write(
        d.path().join("sweep.fio"),
        "[global]\nioengine=null\nsize=1M\n[fg]\n[bg]\nnumjobs=0\n",
    )
    .unwrap();
    let r = run_bounded(
        &flexio_bin(),
        &["sweep.fio", "--output-format=terse"],
        d.path(),
        &[],
        60,
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.stdout.lines().count(), 1, "{}", r.stdout);
    assert!(r.stdout.starts_with("3;fio-3.42;fg;"), "{}", r.stdout);
    let r = flexio(&["--parse-only", "sweep.fio"], d.path());
    assert_eq!(r.code, 0, "{}", r.stderr);
}
