//! flexio issues fio 3.33's random offsets, in fio's order, for the same seed and options.
//! The fixtures are fio's first 10,000 offsets (4 KiB block numbers) captured from its lat
//! logs with log_offset=1 (tests/fixtures/capture-offsets.sh); flexio's are read back from
//! its own lat log the same way.

use crate::common;
use common::*;

fn fixture(name: &str) -> (String, Vec<u64>) {
    let text = std::fs::read_to_string(format!(
        "{}/tests/fixtures/{name}",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap();
    let mut lines = text.lines();
    let header = lines.next().unwrap().to_string();
    (header, lines.map(|l| l.parse().unwrap()).collect())
}

/// Block numbers from a lat log written with log_offset=1.
fn offsets_from_log(path: &std::path::Path) -> Vec<u64> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| l.split(", ").nth(4).unwrap().parse::<u64>().unwrap() / 4096)
        .collect()
}

fn check(name: &str, extra: &[&str], thread: u32) {
    let (header, want) = fixture(name);
    assert_eq!(want.len(), 10_000, "{name}");
    let d = tempfile::tempdir().unwrap();
    let mut args = vec![
        "--name=t",
        "--ioengine=null",
        "--size=1g",
        "--bs=4k",
        "--rw=randread",
        "--norandommap",
        "--number_ios=10000",
        "--write_lat_log=cap",
        "--log_offset=1",
        "--output-format=terse",
    ];
    args.extend_from_slice(extra);
    let r = flexio_oracle(&args, d.path());
    assert_eq!(r.code, 0, "{}", r.stderr);
    let got = offsets_from_log(&d.path().join(format!("cap_lat.{thread}.log")));
    assert_eq!(got.len(), want.len(), "{header}");
    if let Some(i) = got.iter().zip(&want).position(|(a, b)| a != b) {
        panic!(
            "{header}: offset #{i} differs: flexio block {} vs fio block {}",
            got[i], want[i]
        );
    }
}

#[test]
fn tausworthe_offsets_equal_fio() {
    check(
        "fio-offsets-tausworthe-seed4242.txt",
        &[
            "--random_generator=tausworthe",
            "--randrepeat=0",
            "--randseed=4242",
        ],
        1,
    );
}

#[test]
fn lfsr_offsets_equal_fio() {
    check(
        "fio-offsets-lfsr-seed4242.txt",
        &[
            "--random_generator=lfsr",
            "--randrepeat=0",
            "--randseed=4242",
        ],
        1,
    );
}

#[test]
fn tausworthe64_offsets_of_a_second_thread_equal_fio() {
    check(
        "fio-offsets-tausworthe64-thread2.txt",
        &["--random_generator=tausworthe64", "--numjobs=2"],
        2,
    );
}

#[test]
fn random_map_gives_full_coverage_without_repeats() {
    // 4096 blocks, random map on: every block exactly once, for each generator.
    for gen in ["tausworthe", "tausworthe64", "lfsr"] {
        let d = tempfile::tempdir().unwrap();
        let g = format!("--random_generator={gen}");
        let r = flexio(
            &[
                "--name=m",
                "--ioengine=null",
                "--size=16m",
                "--bs=4k",
                "--rw=randread",
                &g,
                "--write_lat_log=m",
                "--log_offset=1",
                "--output-format=terse",
            ],
            d.path(),
        );
        assert_eq!(r.code, 0, "{}", r.stderr);
        let mut blocks = offsets_from_log(&d.path().join("m_lat.1.log"));
        assert_eq!(blocks.len(), 4096, "{gen}");
        blocks.sort_unstable();
        blocks.dedup();
        assert_eq!(blocks.len(), 4096, "{gen}: repeated blocks");
    }
}

#[test]
fn fixtures_are_what_fio_produces() {
    // Where fio is installed, the fixtures are re-captured and must not have drifted.
    let Some(fio) = fio_bin() else { return };
    let d = tempfile::tempdir().unwrap();
    let out = std::process::Command::new(&fio)
        .args([
            "--name=t",
            "--ioengine=null",
            "--size=1g",
            "--bs=4k",
            "--rw=randread",
            "--norandommap",
            "--number_ios=10000",
            "--write_lat_log=cap",
            "--log_offset=1",
            "--output-format=terse",
            "--random_generator=lfsr",
            "--randrepeat=0",
            "--randseed=4242",
        ])
        .current_dir(d.path())
        .output()
        .unwrap();
    assert!(out.status.success());
    let got = offsets_from_log(&d.path().join("cap_lat.1.log"));
    assert_eq!(got, fixture("fio-offsets-lfsr-seed4242.txt").1);
}
