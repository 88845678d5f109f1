//! What writes put on the target: random data by default (fio fills its buffers before the
//! first write), the `buffer_pattern` when given, zeros only when asked for, and about the
//! asked-for share of zeros with `buffer_compress_percentage`. Compared with fio 3.33's
//! files where fio is installed.

use crate::common;
use common::*;

fn zero_share(p: &std::path::Path) -> f64 {
    let d = std::fs::read(p).unwrap();
    d.iter().filter(|b| **b == 0).count() as f64 / d.len() as f64
}

fn write_file(bin: &std::path::Path, dir: &std::path::Path, extra: &[&str]) -> std::path::PathBuf {
    let mut args = vec![
        "--name=w",
        "--filename=w.dat",
        "--rw=write",
        "--bs=64k",
        "--size=2m",
        "--output-format=terse",
    ];
    args.extend_from_slice(extra);
    let r = run_in_env(bin, &args, dir, ORACLE_COMPAT);
    assert_eq!(r.code, 0, "{extra:?}: {}", r.stderr);
    dir.join("w.dat")
}

#[test]
fn writes_carry_the_data_the_job_asks_for() {
    let d = tempfile::tempdir().unwrap();
    let bin = flexio_bin();
    let fio = fio_bin();
    let cases: [(&[&str], f64, f64); 5] = [
        // (options, least zero share, most zero share)
        (&[], 0.0, 0.25),
        (&["--refill_buffers=1"], 0.0, 0.25),
        (&["--zero_buffers=1"], 1.0, 1.0),
        (&["--buffer_compress_percentage=50"], 0.40, 0.60),
        (&["--buffer_pattern=0x5a"], 0.0, 0.0),
    ];
    for (extra, lo, hi) in cases {
        let p = write_file(&bin, d.path(), extra);
        let z = zero_share(&p);
        assert!((lo..=hi).contains(&z), "flexio {extra:?}: zero share {z}");
        if let Some(f) = &fio {
            let fd = tempfile::tempdir().unwrap();
            let q = write_file(f, fd.path(), extra);
            let zf = zero_share(&q);
            assert!((lo..=hi).contains(&zf), "fio {extra:?}: zero share {zf}");
        }
        std::fs::remove_file(&p).unwrap();
    }
    let p = write_file(&bin, d.path(), &["--buffer_pattern=\"abc\""]);
    let data = std::fs::read(&p).unwrap();
    // Each 64 KiB write starts the pattern at its first byte (a buffer holds it from its
    // start).
    for block in data.chunks(64 << 10) {
        assert!(
            block.chunks(3).all(|c| c == &b"abc"[..c.len()]),
            "the pattern repeats through every write: {:?}",
            &block[..12]
        );
    }
}

/// The share of 4 KiB blocks of `files` (together) that are unique.
fn unique_share(files: &[std::path::PathBuf]) -> f64 {
    let mut seen = std::collections::HashSet::new();
    let mut n = 0usize;
    for f in files {
        for b in std::fs::read(f).unwrap().chunks(4096) {
            n += 1;
            seen.insert(b.to_vec());
        }
    }
    seen.len() as f64 / n as f64
}

/// dedupe_percentage: that share of the written blocks repeat earlier ones (repeat mode:
/// the latest new block; working_set: blocks of a set, shared by the jobs with
/// dedupe_global), as in fio 3.33's files for the same jobs.
#[test]
fn dedupe_writes_repeat_the_asked_share() {
    let fio = fio_bin();
    let cases: [(&str, &[&str], usize); 3] = [
        ("repeat", &["--dedupe_percentage=50"], 1),
        (
            "ws",
            &[
                "--dedupe_percentage=30",
                "--dedupe_mode=working_set",
                "--dedupe_working_set_percentage=20",
            ],
            1,
        ),
        (
            "global",
            &[
                "--dedupe_percentage=50",
                "--dedupe_mode=working_set",
                "--dedupe_working_set_percentage=50",
                "--dedupe_global=1",
                "--buffer_compress_percentage=50",
            ],
            2,
        ),
    ];
    for (name, extra, jobs) in cases {
        let mut shares = Vec::new();
        let mut tools = vec![("flexio", flexio_bin())];
        if let Some(f) = &fio {
            tools.push(("fio", f.clone()));
        }
        for (tool, bin) in &tools {
            let d = tempfile::tempdir().unwrap();
            let mut args = vec![
                "--rw=write".to_string(),
                "--bs=4k".into(),
                "--size=16m".into(),
                "--ioengine=psync".into(),
                "--output-format=terse".into(),
            ];
            args.extend(extra.iter().map(|s| s.to_string()));
            for j in 0..jobs {
                args.push(format!("--name=j{j}"));
            }
            let a: Vec<&str> = args.iter().map(String::as_str).collect();
            let r = run_in_env(bin, &a, d.path(), ORACLE_COMPAT);
            assert_eq!(r.code, 0, "{tool} {name}: {}", r.stderr);
            let files: Vec<_> = (0..jobs)
                .map(|j| d.path().join(format!("j{j}.0.0")))
                .collect();
            let each: Vec<f64> = files
                .iter()
                .map(|f| unique_share(std::slice::from_ref(f)))
                .collect();
            shares.push((*tool, unique_share(&files), each));
        }
        eprintln!("{name}: unique share (all files, each file): {shares:?}");
        let (_, fx, _) = &shares[0];
        let want = match name {
            "repeat" => 0.50,
            "ws" => 0.70,
            _ => 0.50,
        };
        // Repeat and a per-job set: unique share = 1 - pct (within sampling noise); the
        // global set makes the two files share blocks: together they dedupe further than
        // each alone.
        if name != "global" {
            assert!((fx - want).abs() < 0.04, "{name}: flexio {fx}");
        } else {
            let each = &shares[0].2;
            assert!(each.iter().all(|e| *e > *fx + 0.05), "{name}: {shares:?}");
        }
        if let Some((_, f, _)) = shares.get(1) {
            assert!((fx - f).abs() < 0.06, "{name}: flexio {fx} against fio {f}");
        }
    }
}

#[test]
fn dedupe_working_set_needs_a_size_and_one_file() {
    let d = tempfile::tempdir().unwrap();
    let base = [
        "--name=d",
        "--rw=write",
        "--dedupe_percentage=50",
        "--dedupe_mode=working_set",
    ];
    let mut a = base.to_vec();
    a.push("--filename=x");
    let r = run_in(&flexio_bin(), &a, d.path());
    assert_ne!(r.code, 0);
    assert!(
        r.stderr
            .contains("pregenerated dedupe working set requires size to be set"),
        "{}",
        r.stderr
    );
    let mut a = base.to_vec();
    a.extend(["--size=1m", "--nrfiles=2"]);
    let r = run_in(&flexio_bin(), &a, d.path());
    assert_ne!(r.code, 0);
    assert!(
        r.stderr.contains(
            "dedupe working set mode supported with single file per job, but 2 files provided"
        ),
        "{}",
        r.stderr
    );
}
