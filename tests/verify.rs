//! Data verification, end to end: every checksum type round-trips, corruption made behind
//! flexio's back is found at its exact offset, fio and flexio verify each other's blocks,
//! and the verify options (backlog, interval, offset, pattern, continue_on_error, state
//! save/load) behave as fio's.

mod common;
use common::*;
use std::collections::BTreeSet;
use std::path::Path;

const KINDS: &[&str] = &[
    "md5", "crc64", "crc32", "crc32c", "sha1", "sha256", "sha512", "xxhash", "meta",
];

fn s(p: &Path) -> String {
    p.display().to_string()
}

/// flexio with fio 3.33's formats (what the installed fio reads and writes).
fn flexio333(args: &[&str], dir: &Path) -> Run {
    run_in_env(&flexio_bin(), args, dir, ORACLE_COMPAT)
}

/// Small deterministic generator for corruption positions.
struct Lcg(u64);
impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 33
    }
}

fn corrupt(path: &Path, offset: u64, xor: u8) {
    use std::os::unix::fs::FileExt;
    let f = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(path)
        .unwrap();
    let mut b = [0u8];
    f.read_exact_at(&mut b, offset).unwrap();
    b[0] ^= xor;
    f.write_all_at(&b, offset).unwrap();
}

fn json_dir(stdout: &str, dir: &str) -> (u64, u64) {
    let v: serde_json::Value = serde_json::from_str(stdout).expect("valid JSON");
    let j = &v["jobs"][0][dir];
    (
        j["io_bytes"].as_u64().unwrap(),
        j["total_ios"].as_u64().unwrap(),
    )
}

#[test]
fn every_type_writes_and_reads_back_clean() {
    let d = tempfile::tempdir().unwrap();
    let f = d.path().join("v.dat");
    for kind in KINDS.iter().chain(["null"].iter()) {
        for rw in ["write", "randwrite"] {
            let _ = std::fs::remove_file(&f);
            let r = flexio(
                &[
                    "--name=v",
                    &format!("--filename={}", s(&f)),
                    &format!("--rw={rw}"),
                    "--bs=4k",
                    "--size=1m",
                    &format!("--verify={kind}"),
                    "--output-format=json",
                ],
                d.path(),
            );
            assert_eq!(r.code, 0, "{kind} {rw}: {}", r.stderr);
            assert_eq!(json_dir(&r.stdout, "write"), (1 << 20, 256), "{kind} {rw}");
            // The read-back is reported as the job's reads.
            assert_eq!(json_dir(&r.stdout, "read"), (1 << 20, 256), "{kind} {rw}");
        }
    }
}

#[test]
fn one_corrupted_byte_is_found_at_its_exact_offset() {
    let d = tempfile::tempdir().unwrap();
    let f = d.path().join("c.dat");
    let fs = s(&f);
    let base = [
        "--name=c".to_string(),
        format!("--filename={fs}"),
        "--rw=write".into(),
        "--bs=4k".into(),
        "--size=1m".into(),
        "--verify=crc32c".into(),
    ];
    let args = |extra: &[&str]| -> Vec<String> {
        base.iter()
            .cloned()
            .chain(extra.iter().map(|x| x.to_string()))
            .collect()
    };
    let w = args(&["--do_verify=0"]);
    let w: Vec<&str> = w.iter().map(|x| x.as_str()).collect();
    assert_eq!(flexio(&w, d.path()).code, 0);
    // verify_only writes nothing, so --readonly allows it.
    let v = args(&["--verify_only=1", "--readonly"]);
    let v: Vec<&str> = v.iter().map(|x| x.as_str()).collect();
    let clean = flexio(&v, d.path());
    assert_eq!(clean.code, 0, "{}", clean.stderr);
    let mut w_ro = w.clone();
    w_ro.push("--readonly");
    assert_eq!(
        flexio(&w_ro, d.path()).code,
        1,
        "--readonly refuses the writing run"
    );

    let at = 123_457u64;
    corrupt(&f, at, 0x01);
    let r = flexio(&v, d.path());
    assert_eq!(r.code, 1, "a verify failure fails the job");
    let block = at / 4096 * 4096;
    assert!(
        r.stderr.contains(&format!(
            "crc32c: verify failed at file {fs} offset {block}, length 4096 (requested block: offset={block}, length=4096, flags=88)"
        )),
        "{}",
        r.stderr
    );
    assert!(r.stderr.contains("       Expected CRC: "), "{}", r.stderr);
    assert!(r.stderr.contains("       Received CRC: "), "{}", r.stderr);
    assert!(
        r.stderr.contains(&format!(
            "first bad byte at offset {at} (block offset +{})",
            at - block
        )),
        "{}",
        r.stderr
    );
    assert!(
        r.stdout.contains("err=84 (file:")
            && r.stdout
                .contains("error=Invalid or incomplete multibyte or wide character"),
        "{}",
        r.stdout
    );
}

/// Corrupt `n` distinct blocks (one random byte each, anywhere in the block, header
/// included) and check that every one is reported, with the exact byte for data bytes.
fn corruptions(kind: &str, n: usize, seed: u64) {
    let d = tempfile::tempdir().unwrap();
    let f = d.path().join("m.dat");
    let fs = s(&f);
    let blocks = n as u64 * 2;
    let bs = 4096u64;
    let size = format!("--size={}", blocks * bs);
    let common = [
        "--name=m",
        &format!("--filename={fs}"),
        "--rw=randwrite",
        "--bs=4k",
        &size,
        &format!("--verify={kind}"),
    ]
    .map(|x| x.to_string());
    let run = |extra: &[&str]| {
        let a: Vec<&str> = common
            .iter()
            .map(|x| x.as_str())
            .chain(extra.iter().copied())
            .collect();
        flexio(&a, d.path())
    };
    assert_eq!(run(&["--do_verify=0"]).code, 0);
    let mut rng = Lcg(seed);
    let mut chosen: BTreeSet<u64> = BTreeSet::new();
    while chosen.len() < n {
        chosen.insert(rng.next() % blocks);
    }
    let mut data_bytes = Vec::new();
    for b in &chosen {
        let within = rng.next() % bs;
        let xor = (rng.next() % 255 + 1) as u8;
        let at = b * bs + within;
        corrupt(&f, at, xor);
        data_bytes.push((b * bs, at, within));
    }
    let r = run(&["--verify_only=1", "--continue_on_error=verify"]);
    assert_eq!(
        r.code, 0,
        "continue_on_error=verify: failures are counted, not fatal"
    );
    let mut reported: BTreeSet<u64> = BTreeSet::new();
    for line in r.stderr.lines() {
        if let Some(rest) = line.split(&format!("at file {fs} offset ")).nth(1) {
            let off: u64 = rest.split(',').next().unwrap().parse().unwrap();
            reported.insert(off / bs);
        }
    }
    assert_eq!(
        reported, chosen,
        "{kind}: every corrupted block is reported, nothing else"
    );
    for (block, at, within) in data_bytes {
        // Bytes past header and checksum field: the exact byte is named.
        let csum = match kind {
            "md5" => 16,
            "crc64" => 8,
            "sha1" => 20,
            "sha256" => 64,
            "sha512" => 128,
            "meta" => 0,
            _ => 4,
        };
        if within >= 40 + csum && kind != "meta" {
            assert!(
                r.stderr.contains(&format!(
                    "first bad byte at offset {at} (block offset +{within})"
                )),
                "{kind}: byte {at} of block {block}"
            );
        }
    }
    assert!(
        r.stdout
            .contains(&format!("errors    : total={n}, first_error=84/<Invalid or incomplete multibyte or wide character>")),
        "{}",
        r.stdout
    );
    assert!(r.stdout.contains("err=84 ()"), "{}", r.stdout);
}

#[test]
fn a_thousand_random_single_byte_corruptions_are_all_detected() {
    corruptions("crc32c", 1000, 1);
}

#[test]
fn random_corruptions_are_detected_by_every_checksum() {
    for (i, k) in [
        "md5", "crc64", "crc32", "sha1", "sha256", "sha512", "xxhash",
    ]
    .iter()
    .enumerate()
    {
        corruptions(k, 100, 100 + i as u64);
    }
}

#[test]
fn backlog_interval_offset_and_pattern() {
    let d = tempfile::tempdir().unwrap();
    let f = d.path().join("b.dat");
    let fs = format!("--filename={}", s(&f));
    for extra in [
        vec!["--verify=md5", "--verify_backlog=16"],
        vec![
            "--verify=md5",
            "--verify_backlog=16",
            "--verify_backlog_batch=4",
        ],
        vec!["--verify=crc32c", "--verify_interval=512"],
        vec![
            "--verify=crc64",
            "--verify_interval=1k",
            "--verify_offset=100",
        ],
        vec!["--verify_pattern=0xdeadbeef%o"],
        vec!["--verify=xxhash", "--verify_pattern=\"abc\""],
        vec!["--verify=sha1", "--bsrange=512-8k", "--norandommap"],
    ] {
        let _ = std::fs::remove_file(&f);
        let mut a = vec![
            "--name=b",
            &fs,
            "--rw=randwrite",
            "--bs=4k",
            "--size=1m",
            "--ioengine=psync",
            "--output-format=json",
        ];
        a.extend(extra.iter().copied());
        let r = flexio(&a, d.path());
        assert_eq!(r.code, 0, "{extra:?}: {}", r.stderr);
        let (wb, _) = json_dir(&r.stdout, "write");
        let (rb, _) = json_dir(&r.stdout, "read");
        if extra.contains(&"--norandommap") {
            // Blocks written twice are checked once (as last written).
            assert!(rb > 0 && rb <= wb, "{extra:?}: read {rb} written {wb}");
        } else {
            assert_eq!(rb, wb, "{extra:?}: every written block is read back");
        }
        assert!(wb >= 1 << 20, "{extra:?}");
    }
    // An interval narrows a failure to its 512 bytes; verify_offset moves the header.
    let _ = std::fs::remove_file(&f);
    let base = ["--name=b", &fs, "--rw=write", "--bs=4k", "--size=64k"];
    let mut w = base.to_vec();
    w.extend([
        "--verify=crc32c",
        "--verify_interval=512",
        "--verify_offset=64",
        "--do_verify=0",
    ]);
    assert_eq!(flexio(&w, d.path()).code, 0);
    let raw = std::fs::read(&f).unwrap();
    assert_eq!(
        &raw[64..66],
        &0xaccau16.to_ne_bytes(),
        "header swapped to +64"
    );
    corrupt(&f, 8192 + 1024 + 300, 0x80);
    let mut v = base.to_vec();
    v.extend([
        "--verify=crc32c",
        "--verify_interval=512",
        "--verify_offset=64",
        "--verify_only",
    ]);
    let r = flexio(&v, d.path());
    assert_eq!(r.code, 1);
    assert!(
        r.stderr
            .contains("offset 9216, length 512 (requested block: offset=8192, length=4096"),
        "{}",
        r.stderr
    );
    // verify=pattern: the exact byte and its bits.
    let _ = std::fs::remove_file(&f);
    let mut w = base.to_vec();
    w.extend(["--verify_pattern=0xaabbcc", "--do_verify=0"]);
    assert_eq!(flexio(&w, d.path()).code, 0);
    corrupt(&f, 5000, 0xaa);
    let r = flexio(
        &[
            "--name=b",
            &fs,
            "--rw=read",
            "--bs=4k",
            "--size=64k",
            "--verify_pattern=0xaabbcc",
        ],
        d.path(),
    );
    assert_eq!(r.code, 1);
    assert!(
        r.stderr.contains("fio: got pattern '11', wanted 'bb'. Bad bits 4\nfio: bad pattern block offset 904\npattern: verify failed at file"),
        "{}",
        r.stderr
    );
}

#[test]
fn the_verify_example_runs_clean_and_fio_accepts_its_blocks() {
    let d = tempfile::tempdir().unwrap();
    let job = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/verify.fio");
    let job = job.to_str().unwrap();
    let r = flexio_oracle(&[job, "--output-format=json"], d.path());
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(json_dir(&r.stdout, "write").0, 64 << 20);
    assert_eq!(json_dir(&r.stdout, "read").0, 64 << 20);
    if let Some(fio) = fio_bin() {
        let r = run_in(
            &fio,
            &[job, "--verify_only=1", "--output=/dev/null"],
            d.path(),
        );
        assert_eq!(
            r.code, 0,
            "fio checks the blocks flexio wrote: {}",
            r.stderr
        );
    }
}

#[test]
fn verify_dump_writes_received_and_expected_blocks() {
    let d = tempfile::tempdir().unwrap();
    let f = d.path().join("d.dat");
    let fs = format!("--filename={}", s(&f));
    let base = [
        "--name=d",
        &fs,
        "--rw=write",
        "--bs=4k",
        "--size=64k",
        "--verify=md5",
    ];
    let mut w = base.to_vec();
    w.push("--do_verify=0");
    assert_eq!(flexio(&w, d.path()).code, 0);
    corrupt(&f, 4096 * 3 + 1000, 0x55);
    let mut v = base.to_vec();
    v.extend(["--verify_only", "--verify_dump=1"]);
    let r = flexio(&v, d.path());
    assert_eq!(r.code, 1);
    let rec = std::fs::read(d.path().join("d.dat.12288.received")).unwrap();
    let exp = std::fs::read(d.path().join("d.dat.12288.expected")).unwrap();
    assert_eq!(rec.len(), 4096);
    let diff: Vec<usize> = (0..4096).filter(|i| rec[*i] != exp[*i]).collect();
    assert_eq!(
        diff,
        vec![1000],
        "the dumps differ in exactly the corrupted byte"
    );
    assert_eq!(rec[1000] ^ exp[1000], 0x55);
}

#[test]
fn fio_and_flexio_verify_each_others_blocks() {
    let Some(fio) = fio_bin() else { return };
    let d = tempfile::tempdir().unwrap();
    let f = d.path().join("x.dat");
    let fs = format!("--filename={}", s(&f));
    for kind in [
        "md5",
        "crc64",
        "crc32",
        "crc32c",
        "crc32c-intel",
        "crc16",
        "crc7",
        "sha1",
        "sha256",
        "sha512",
        "sha3-224",
        "sha3-256",
        "sha3-384",
        "sha3-512",
        "xxhash",
        "meta",
    ] {
        let vk = format!("--verify={kind}");
        let w = [
            "--name=x",
            &fs,
            "--rw=randwrite",
            "--bs=4k",
            "--size=256k",
            &vk,
            "--do_verify=0",
        ];
        let rd = ["--name=x", &fs, "--rw=read", "--bs=4k", "--size=256k", &vk];
        let _ = std::fs::remove_file(&f);
        assert_eq!(flexio_oracle(&w, d.path()).code, 0);
        let r = run_in(&fio, &rd, d.path());
        assert_eq!(r.code, 0, "fio reads flexio's {kind} blocks: {}", r.stderr);
        assert!(!r.stderr.contains("verify"), "{kind}: {}", r.stderr);
        let _ = std::fs::remove_file(&f);
        assert_eq!(run_in(&fio, &w, d.path()).code, 0);
        let r = flexio_oracle(&rd, d.path());
        assert_eq!(r.code, 0, "flexio reads fio's {kind} blocks: {}", r.stderr);
        // Same corruption, same report, line for line (flexio adds its own lines after).
        // meta covers the header only; fio 3.33's sha512 field holds the first and last
        // data bytes, not a digest of them all.
        if kind == "meta" || kind == "sha512" {
            continue;
        }
        corrupt(&f, 4096 * 5 + 2000, 0x40);
        let a = run_in(&fio, &rd, d.path());
        let b = flexio_oracle(&rd, d.path());
        assert_eq!((a.code, b.code), (1, 1), "{kind}");
        let fio_lines: Vec<&str> = a
            .stderr
            .lines()
            .filter(|l| !l.starts_with("fio: pid"))
            .collect();
        let ours: Vec<&str> = b
            .stderr
            .lines()
            .filter(|l| !l.contains("flexio:") && !l.starts_with("fio: pid"))
            .collect();
        assert_eq!(fio_lines, ours, "{kind}");
    }
    // Blocks of one type checked as another: the same report, type mismatch line included.
    let _ = std::fs::remove_file(&f);
    let w = [
        "--name=x",
        &fs,
        "--rw=write",
        "--bs=4k",
        "--size=16k",
        "--verify=crc32c",
        "--do_verify=0",
    ];
    assert_eq!(run_in(&fio, &w, d.path()).code, 0);
    let rd = [
        "--name=x",
        &fs,
        "--rw=read",
        "--bs=4k",
        "--size=16k",
        "--verify=md5",
    ];
    let a = run_in(&fio, &rd, d.path());
    let b = flexio_oracle(&rd, d.path());
    let keep = |s: &str| -> Vec<String> {
        s.lines()
            .filter(|l| !l.contains("flexio:") && !l.starts_with("fio: pid"))
            .map(|l| l.to_string())
            .collect()
    };
    assert!(a
        .stderr
        .contains("fio: verify type mismatch (5 media, 2 given)"));
    assert_eq!(keep(&a.stderr), keep(&b.stderr));
}

/// An interrupted write job (SIGINT: the state is saved on the way out), then a
/// `verify_only` run with `verify_state_load=1`: exactly the completed writes are read
/// back, in either generation's state format; without the state the unwritten rest fails.
fn state_save_and_load(compat: Option<&str>, engine: &[&str]) {
    let d = tempfile::tempdir().unwrap();
    let f = d.path().join("st.dat");
    let fs = format!("--filename={}", s(&f));
    let env: Vec<(&str, &str)> = compat.map(|c| ("FLEXIO_COMPAT", c)).into_iter().collect();
    let mut job = vec![
        "--name=st",
        &fs,
        "--rw=write",
        "--bs=4k",
        "--size=64m",
        "--verify=crc32c",
    ];
    job.extend_from_slice(engine);
    let mut w: Vec<&str> = job.to_vec();
    w.extend(["--rate_iops=2000", "--output-format=json"]);
    let child = spawn_flexio(&w, d.path(), &env);
    std::thread::sleep(std::time::Duration::from_millis(1500));
    send_signal(child.id(), "INT");
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(128));
    let (written, n) = json_dir(&String::from_utf8_lossy(&out.stdout), "write");
    assert!(n > 100, "wrote {n} blocks before the signal");
    let state = std::fs::read(d.path().join("local-st-0-verify.state")).unwrap();
    let version = if compat.is_some() { 3u64 } else { 7 };
    assert_eq!(&state[..8], &version.to_le_bytes(), "state file version");
    let mut v = job.to_vec();
    v.extend([
        "--verify_only",
        "--verify_state_load=1",
        "--output-format=json",
    ]);
    let r = run_in_env(&flexio_bin(), &v, d.path(), &env);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(
        json_dir(&r.stdout, "read").0,
        written,
        "only completed writes are checked"
    );
    // Without the state, the unwritten rest fails.
    let mut v = job.to_vec();
    v.push("--verify_only");
    assert_eq!(run_in_env(&flexio_bin(), &v, d.path(), &env).code, 1);
}

#[test]
fn verify_state_save_and_load_check_only_completed_writes() {
    state_save_and_load(None, &[]);
    state_save_and_load(
        None,
        &["--rw=randwrite", "--ioengine=libaio", "--iodepth=32"],
    );
}

#[test]
fn verify_state_save_and_load_in_fio_333_format() {
    state_save_and_load(Some("3.33"), &[]);
}

/// A writing job killed outright (SIGKILL: no chance to save on the way out) leaves the
/// state of its last checkpoint (flexio refreshes it every second while writing); the
/// state-load verify then checks exactly the writes that state names as completed, all
/// of which are on the file, and nothing after them.
#[test]
fn a_killed_write_job_is_verified_up_to_its_last_checkpoint() {
    use flexio::verify::state::{self, VerifyState, EMPTY};
    use flexio::verify::Generation;
    for engine in [
        &["--ioengine=psync"][..],
        &["--ioengine=libaio", "--iodepth=32"][..],
    ] {
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join("k.dat");
        let fs = format!("--filename={}", s(&f));
        let mut job = vec![
            "--name=k",
            &fs,
            "--rw=write",
            "--bs=4k",
            "--size=64m",
            "--verify=crc32c",
        ];
        job.extend_from_slice(engine);
        let mut w = job.clone();
        w.push("--rate_iops=2000");
        let mut child = spawn_flexio(&w, d.path(), &[]);
        std::thread::sleep(std::time::Duration::from_millis(2600));
        send_signal(child.id(), "KILL");
        let _ = child.wait();
        let sf = d.path().join("local-k-0-verify.state");
        let VerifyState::V7(st) = state::load(&sf, Generation::Latest, 32).unwrap() else {
            panic!("newest state format expected")
        };
        let first_inflight = st.inflight.iter().copied().filter(|n| *n != EMPTY).min();
        let expect = first_inflight.unwrap_or(st.numberio).min(st.numberio);
        assert!(expect > 1000, "{expect} writes by the last checkpoint");
        let mut v = job.clone();
        v.extend([
            "--verify_only",
            "--verify_state_load=1",
            "--output-format=json",
        ]);
        let r = flexio(&v, d.path());
        assert_eq!(r.code, 0, "{engine:?}: {}", r.stderr);
        assert_eq!(
            json_dir(&r.stdout, "read").0,
            expect * 4096,
            "{engine:?}: the writes completed by the checkpoint, no more"
        );
        // The file holds more than that (writes after the checkpoint): a verify without
        // the state reaches blocks never written and fails.
        let mut v = job.clone();
        v.push("--verify_only");
        assert_eq!(flexio(&v, d.path()).code, 1);
    }
}

/// fio's rule for `verify_state_load`: any job may ask for it; the state is read when the
/// job starts (a missing file fails the job with fio's two lines) and limits whatever
/// verification the job does, verify_only or not.
#[test]
fn verify_state_load_is_accepted_as_fio_accepts_it() {
    let d = tempfile::tempdir().unwrap();
    let job = [
        "--name=m",
        "--filename=m.dat",
        "--rw=write",
        "--bs=4k",
        "--size=64k",
        "--verify=crc32c",
        "--verify_state_load=1",
    ];
    let r = flexio333(&job, d.path());
    assert_eq!(r.code, 1);
    let lines = "fio: open state file: No such file or directory\nfio: state file: local-m-0-verify.state (for_write=0)";
    assert!(r.stderr.contains(lines), "{}", r.stderr);
    if let Some(fio) = fio_bin() {
        let a = run_in(&fio, &job, d.path());
        assert_eq!(a.code, 1);
        assert!(a.stderr.contains(lines), "{}", a.stderr);
    }
    // With a state from an earlier run, a write job with its own read-back is accepted.
    let mut w = job.to_vec();
    w.pop();
    assert_eq!(flexio333(&w, d.path()).code, 0);
    let r = flexio333(&job, d.path());
    assert_eq!(r.code, 0, "{}", r.stderr);
}
