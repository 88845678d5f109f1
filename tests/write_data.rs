//! What writes put on the target: random data by default (fio fills its buffers before the
//! first write), the `buffer_pattern` when given, zeros only when asked for, and about the
//! asked-for share of zeros with `buffer_compress_percentage`. Compared with fio 3.33's
//! files where fio is installed.

mod common;
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
