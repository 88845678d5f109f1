//! Data verification, end to end: every checksum type round-trips, corruption made behind
//! flexio's back is found at its exact offset, fio and flexio verify each other's blocks,
//! and the verify options (backlog, interval, offset, pattern, continue_on_error, state
//! save/load) behave as fio's.

use crate::common;
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

/// An engine that only pretends to read (null) has its reads taken as verified, as fio's
/// verify does for its FIO_FAKEIO engines: the read-back of every write runs and passes
/// (before, flexio checked the null engine's untouched buffers and failed at the first
/// block). fio 3.33 agrees where it is installed.
#[test]
fn a_pretending_engine_verifies_clean_as_in_fio() {
    let cases: &[&[&str]] = &[
        &["--rw=write", "--verify=crc32c"],
        &["--rw=randwrite", "--iodepth=8", "--verify=md5"],
        &["--rw=randwrite", "--verify=sha256", "--verify_async=2"],
    ];
    for extra in cases {
        let mut a = vec![
            "--name=v",
            "--ioengine=null",
            "--bs=4k",
            "--size=256k",
            "--output-format=json",
        ];
        a.extend_from_slice(extra);
        let d = tempfile::tempdir().unwrap();
        let r = flexio(&a, d.path());
        assert_eq!(r.code, 0, "{extra:?}: {}", r.stderr);
        assert_eq!(json_dir(&r.stdout, "read"), (256 << 10, 64), "{extra:?}");
        if let Some((f, x)) = both(&a) {
            assert_eq!((f.code, x.code), (0, 0), "{extra:?}: {}", f.stderr);
            assert_eq!(json_dir(&f.stdout, "read"), json_dir(&x.stdout, "read"));
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

/// The classification line flexio printed for each reported block of `file` (keyed by
/// the block offset the failure line names).
fn classifications(stderr: &str, file: &str, bs: u64) -> std::collections::BTreeMap<u64, String> {
    let mut out = std::collections::BTreeMap::new();
    let mut cur = None;
    for line in stderr.lines() {
        if let Some(rest) = line.split(&format!("at file {file} offset ")).nth(1) {
            let off: u64 = rest.split(',').next().unwrap().parse().unwrap();
            cur = Some(off / bs * bs);
        }
        if let Some(c) = line.strip_prefix("flexio: classification: ") {
            let at = cur.take().expect("a classification after a failure line");
            out.insert(at, c.to_string());
        }
    }
    out
}

/// Corrupt `n` distinct blocks (one random byte each, anywhere in the block, header
/// included) and check that every one is reported, classified `corrupt`, with the exact
/// byte for data bytes; in the newest format, or fio 3.33's with `compat`.
fn corruptions(kind: &str, n: usize, seed: u64, compat: bool) {
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
        if compat {
            flexio333(&a, d.path())
        } else {
            flexio(&a, d.path())
        }
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
    let classes = classifications(&r.stderr, &fs, bs);
    let reported: BTreeSet<u64> = classes.keys().map(|o| o / bs).collect();
    assert_eq!(
        reported, chosen,
        "{kind}: every corrupted block is reported (and classified), nothing else"
    );
    for (at, c) in &classes {
        assert!(c.starts_with("corrupt: "), "{kind}: block {at}: {c}");
    }
    // The header of the generation: fio 3.33's 40 bytes, the newest fio's 48.
    let header = if compat { 40 } else { 48 };
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
        if within >= header + csum && kind != "meta" {
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
    corruptions("crc32c", 1000, 1, false);
}

#[test]
fn random_corruptions_are_detected_by_every_checksum() {
    for (i, k) in [
        "md5", "crc64", "crc32", "sha1", "sha256", "sha512", "xxhash",
    ]
    .iter()
    .enumerate()
    {
        // fio 3.33's sha512 field does not cover the middle of the data: newest only.
        let compat = i % 2 == 1 && *k != "sha512";
        corruptions(k, 100, 100 + i as u64, compat);
    }
}

/// A block that holds an older write of itself (stale) or part of an older write (torn),
/// as a device that loses or half-applies a rewrite leaves it: found at its offset and
/// classified, with the write numbers and the tear's offset.
#[test]
fn stale_and_torn_blocks_are_found_and_classified() {
    let d = tempfile::tempdir().unwrap();
    let f = d.path().join("st.dat");
    let fs = s(&f);
    let file = format!("--filename={fs}");
    let base = [
        "--name=st",
        file.as_str(),
        "--rw=write",
        "--bs=4k",
        "--size=64k",
        "--verify=crc32c",
    ];
    let with = |extra: &[&str]| -> Vec<String> {
        base.iter().chain(extra).map(|x| x.to_string()).collect()
    };
    let go = |a: &[String]| flexio(&a.iter().map(String::as_str).collect::<Vec<_>>(), d.path());
    // The first pass alone (writes #0..#15): the older versions of the blocks.
    assert_eq!(go(&with(&["--do_verify=0"])).code, 0);
    let old = std::fs::read(&f).unwrap();
    // Two passes (#0..#15, then #16..#31): block k last holds write 16+k.
    assert_eq!(go(&with(&["--io_size=128k", "--do_verify=0"])).code, 0);
    // verify_only leaves the write-sequence check off unless asked (the newest fio's rule):
    // without it a stale block, consistent in itself, passes.
    let replay = with(&[
        "--io_size=128k",
        "--verify_only",
        "--verify_write_sequence=1",
        "--continue_on_error=verify",
    ]);
    let r = go(&replay);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        !r.stderr.contains("verify"),
        "clean before the damage: {}",
        r.stderr
    );
    let new = std::fs::read(&f).unwrap();
    let mut cur = new.clone();
    let blk = |k: usize| k * 4096..(k + 1) * 4096;
    // Stale: blocks 2 and 7 hold their first-pass write whole.
    for k in [2, 7] {
        cur[blk(k)].copy_from_slice(&old[blk(k)]);
    }
    // Torn: block 4 new then old from +2048, block 11 old then new from +1024.
    cur[4 * 4096 + 2048..5 * 4096].copy_from_slice(&old[4 * 4096 + 2048..5 * 4096]);
    cur[11 * 4096..11 * 4096 + 1024].copy_from_slice(&old[11 * 4096..11 * 4096 + 1024]);
    std::fs::write(&f, &cur).unwrap();
    let r = go(&replay);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let classes = classifications(&r.stderr, &fs, 4096);
    assert_eq!(
        classes.keys().copied().collect::<Vec<_>>(),
        vec![2 * 4096, 4 * 4096, 7 * 4096, 11 * 4096],
        "{}",
        r.stderr
    );
    for k in [2u64, 7] {
        assert_eq!(
            classes[&(k * 4096)],
            format!(
                "stale: a complete earlier write (#{k}) of this block; the last write (#{}) is not on the media",
                16 + k
            ),
            "{}",
            r.stderr
        );
    }
    for (k, tear) in [(4u64, 2048u64), (11, 1024)] {
        let c = &classes[&(k * 4096)];
        assert!(
            c.starts_with("torn: ") && c.contains(&format!("offset {}", k * 4096 + tear)),
            "block {k}: {c}\n{}",
            r.stderr
        );
    }
    // fio's own lines name the same blocks.
    for k in [2u64, 4, 7, 11] {
        assert!(
            r.stderr
                .contains(&format!("at file {fs} offset {}, length 4096", k * 4096)),
            "{}",
            r.stderr
        );
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

/// verify_dump against fio 3.33: the same files and the same "data dumped as" lines, for
/// a checksum failure (received and expected), a header failure (`hdr_fail` only) and a
/// pattern failure, with the dumps in the working directory or under `--aux-path`
/// (joined with a `/` as fio joins it, so a trailing `/` gives two), and fio's message
/// when that directory is missing. Each tool replays blocks it wrote itself (flexio's
/// random data bytes are its own generator's, which fio accepts through the checksums),
/// damaged in the same places; every dump holds the interval as read, and an expected
/// dump's data differs from it in exactly the damaged bytes.
#[test]
fn verify_dump_files_and_lines_match_fio_333() {
    let Some(fio) = fio_bin() else { return };
    // (job options, damaged bytes)
    let cases: [(&[&str], &[u64]); 3] = [
        (&["--verify=crc32c"], &[8192 + 100, 40960 + 7]),
        (&["--verify=crc32c"], &[4]),
        (
            &["--verify=pattern", "--verify_pattern=0x5a"],
            &[8192 + 100],
        ),
    ];
    for (opts, damage) in cases {
        for aux in [None, Some(""), Some("/"), Some("missing")] {
            let what = format!("{opts:?} {damage:?} aux {aux:?}");
            let run = |tool: &str| {
                let cwd = tempfile::tempdir().unwrap();
                let auxdir = tempfile::tempdir().unwrap();
                let f = cwd.path().join("d.dat");
                let fs = format!("--filename={}", s(&f));
                let mut job = vec![
                    "--name=d",
                    fs.as_str(),
                    "--rw=write",
                    "--bs=4k",
                    "--size=64k",
                ];
                job.extend_from_slice(opts);
                let go = |a: &[&str]| {
                    if tool == "fio" {
                        run_in(&fio, a, cwd.path())
                    } else {
                        flexio333(a, cwd.path())
                    }
                };
                assert_eq!(go(&job).code, 0, "{tool} {what}");
                for at in damage {
                    corrupt(&f, *at, 0x01);
                }
                let data = std::fs::read(&f).unwrap();
                let aux_arg = aux.map(|a| match a {
                    "missing" => "missing".to_string(),
                    _ => format!("{}{a}", auxdir.path().display()),
                });
                let opt = aux_arg.as_ref().map(|a| format!("--aux-path={a}"));
                let mut v: Vec<&str> = opt.iter().map(String::as_str).collect();
                v.extend(&job);
                v.extend([
                    "--verify_only",
                    "--verify_dump=1",
                    "--continue_on_error=verify",
                ]);
                let r = go(&v);
                let prefix = auxdir.path().display().to_string();
                let lines: Vec<String> = r
                    .stderr
                    .lines()
                    .chain(r.stdout.lines())
                    .filter(|l| {
                        l.contains("data dumped as") || l.starts_with("open verify buf file")
                    })
                    .map(|l| l.replace(&prefix, "@AUX@"))
                    .collect();
                let dir = if aux.is_some() && aux != Some("missing") {
                    auxdir.path().to_path_buf()
                } else {
                    cwd.path().to_path_buf()
                };
                let mut files: Vec<(String, Vec<u8>)> = std::fs::read_dir(&dir)
                    .unwrap()
                    .flatten()
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .filter(|n| n.starts_with("d.dat."))
                    .map(|n| {
                        let b = std::fs::read(dir.join(&n)).unwrap();
                        (n, b)
                    })
                    .collect();
                files.sort();
                // What each dump holds.
                for (n, b) in &files {
                    let off: usize = n.split('.').nth(2).unwrap().parse().unwrap();
                    let read = &data[off..off + b.len()];
                    if n.ends_with(".expected") {
                        // fio stamps the rebuilt header afresh (time, crc): the data past
                        // fio 3.33's 40-byte header and crc32c field is compared.
                        let skip = if opts.contains(&"--verify=pattern") {
                            0
                        } else {
                            44
                        };
                        let diff: Vec<u64> = (skip..b.len())
                            .filter(|i| b[*i] != read[*i])
                            .map(|i| (off + i) as u64)
                            .collect();
                        let want: Vec<u64> = damage
                            .iter()
                            .copied()
                            .filter(|d| (off as u64..(off + b.len()) as u64).contains(d))
                            .collect();
                        assert_eq!(diff, want, "{tool} {what}: {n}");
                    } else {
                        assert!(b == read, "{tool} {what}: {n} is the interval as read");
                    }
                }
                let names: Vec<String> = files.into_iter().map(|x| x.0).collect();
                (lines, names)
            };
            let (fl, ff) = run("fio");
            let (xl, xf) = run("flexio");
            assert!(!fl.is_empty(), "{what}: fio dumped nothing");
            assert_eq!(xl, fl, "{what}: lines");
            assert_eq!(xf, ff, "{what}: files");
        }
    }
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

/// The offsets of the `op` entries (`write`, `read`) of a version-3 iolog.
fn log_offsets(path: &Path, op: &str) -> Vec<u64> {
    std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            (f.len() == 5 && f[2] == op).then(|| f[3].parse().unwrap())
        })
        .collect()
}

/// An interrupted write job (SIGINT: the state is saved on the way out), then a
/// `verify_only` run with `verify_state_load=1`: exactly the completed writes are read
/// back (the same blocks: the writer's write_iolog against the verifier's), in either
/// generation's state format; without the state the unwritten rest fails.
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
    w.extend([
        "--rate_iops=2000",
        "--output-format=json",
        "--write_iolog=w.log",
    ]);
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
        "--write_iolog=r.log",
    ]);
    let r = run_in_env(&flexio_bin(), &v, d.path(), &env);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(
        json_dir(&r.stdout, "read").0,
        written,
        "only completed writes are checked"
    );
    let wrote: BTreeSet<u64> = log_offsets(&d.path().join("w.log"), "write")
        .into_iter()
        .collect();
    let checked = log_offsets(&d.path().join("r.log"), "read");
    assert_eq!(wrote.len() as u64, n, "{engine:?}: one log entry per write");
    assert_eq!(
        checked.iter().copied().collect::<BTreeSet<u64>>(),
        wrote,
        "{compat:?} {engine:?}: the blocks checked are the blocks written"
    );
    assert_eq!(checked.len(), wrote.len(), "each checked once");
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
    state_save_and_load(
        Some("3.33"),
        &["--rw=randwrite", "--ioengine=libaio", "--iodepth=32"],
    );
}

/// A writing job killed outright (SIGKILL: no chance to save on the way out) leaves the
/// state of its last checkpoint (flexio refreshes it every second while writing, so at
/// most the last second of writes goes unchecked); the state-load verify then checks
/// exactly the writes that state names as completed, all of which are on the file, and
/// nothing after them: the blocks of the first K writes, in either generation's format
/// (fio 3.33's state names the last `iodepth` completions and the writes issued; the
/// newest the writes issued and those in flight).
#[test]
fn a_killed_write_job_is_verified_up_to_its_last_checkpoint() {
    use flexio_run::verify::state::{self, VerifyState, EMPTY};
    use flexio_run::verify::Generation;
    for (gen, env) in [
        (Generation::Latest, &[][..]),
        (Generation::Fio333, ORACLE_COMPAT),
    ] {
        for engine in [
            &["--ioengine=psync"][..],
            &["--ioengine=libaio", "--iodepth=32"][..],
        ] {
            let what = format!("{gen:?} {engine:?}");
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
            let mut child = spawn_flexio(&w, d.path(), env);
            std::thread::sleep(std::time::Duration::from_millis(2600));
            send_signal(child.id(), "KILL");
            let _ = child.wait();
            let sf = d.path().join("local-k-0-verify.state");
            // The writes the checkpoint names as done: at least this many are checked.
            let (lo, hi) = match state::load(&sf, gen, 32).unwrap() {
                VerifyState::V7(st) => {
                    let first_inflight = st.inflight.iter().copied().filter(|n| *n != EMPTY).min();
                    let k = first_inflight.unwrap_or(st.numberio).min(st.numberio);
                    (k, k)
                }
                // fio 3.33's rule: the writes issued, less those (at most iodepth) not
                // among the last completions.
                VerifyState::V3(st) => {
                    assert!(!st.comps.is_empty(), "{what}: completions recorded");
                    (st.numberio.saturating_sub(st.depth as u64), st.numberio)
                }
            };
            assert!(lo > 1000, "{what}: {lo} writes by the last checkpoint");
            let mut v = job.clone();
            v.extend([
                "--verify_only",
                "--verify_state_load=1",
                "--output-format=json",
                "--write_iolog=r.log",
            ]);
            let r = run_in_env(&flexio_bin(), &v, d.path(), env);
            assert_eq!(r.code, 0, "{what}: {}", r.stderr);
            let checked = log_offsets(&d.path().join("r.log"), "read");
            let k = checked.len() as u64;
            assert!(
                (lo..=hi).contains(&k),
                "{what}: {k} blocks checked, the checkpoint names {lo}..={hi}"
            );
            assert_eq!(json_dir(&r.stdout, "read").0, k * 4096, "{what}");
            // Sequential writes: the first k writes are blocks 0..k.
            let want: Vec<u64> = (0..k).map(|b| b * 4096).collect();
            assert_eq!(
                checked, want,
                "{what}: the first {k} writes' blocks, in order"
            );
            // The file holds more than that (writes after the checkpoint): a verify
            // without the state reaches blocks never written and fails.
            let mut v = job.clone();
            v.push("--verify_only");
            assert_eq!(
                run_in_env(&flexio_bin(), &v, d.path(), env).code,
                1,
                "{what}"
            );
        }
    }
}

/// Interrupted runs across the two tools (fio 3.33 state files): flexio stopped by SIGINT
/// is verified by fio 3.33 with verify_state_load + verify_only, and fio 3.33 stopped by
/// SIGINT is verified by flexio, each checking exactly the blocks the other wrote (the
/// writer's write_iolog against the verifier's).
#[test]
fn interrupted_runs_are_verified_across_fio_333_and_flexio() {
    let Some(fio) = fio_bin() else { return };
    for engine in [
        &["--rw=write"][..],
        &["--rw=randwrite", "--ioengine=libaio", "--iodepth=32"][..],
    ] {
        for fio_writes in [false, true] {
            let what = format!("{engine:?}, fio writes: {fio_writes}");
            let d = tempfile::tempdir().unwrap();
            let f = d.path().join("x.dat");
            let fs = format!("--filename={}", s(&f));
            let mut job = vec!["--name=x", &fs, "--bs=4k", "--size=64m", "--verify=crc32c"];
            job.extend_from_slice(engine);
            let mut w = job.clone();
            w.extend(["--rate_iops=2000", "--write_iolog=w.log"]);
            let child = if fio_writes {
                std::process::Command::new(&fio)
                    .args(&w)
                    .current_dir(d.path())
                    .stdout(std::process::Stdio::null())
                    .stderr(std::process::Stdio::null())
                    .spawn()
                    .unwrap()
            } else {
                spawn_flexio(&w, d.path(), ORACLE_COMPAT)
            };
            std::thread::sleep(std::time::Duration::from_millis(1500));
            send_signal(child.id(), "INT");
            let out = child.wait_with_output().unwrap();
            assert_eq!(out.status.code(), Some(128), "{what}");
            let state = std::fs::read(d.path().join("local-x-0-verify.state")).unwrap();
            assert_eq!(
                &state[..8],
                &3u64.to_le_bytes(),
                "{what}: fio 3.33's version"
            );
            let mut v = job.clone();
            v.extend([
                "--verify_only",
                "--verify_state_load=1",
                "--write_iolog=r.log",
            ]);
            let r = if fio_writes {
                flexio333(&v, d.path())
            } else {
                run_in(&fio, &v, d.path())
            };
            assert_eq!(r.code, 0, "{what}: {}{}", r.stdout, r.stderr);
            assert!(!r.stderr.contains("verify"), "{what}: {}", r.stderr);
            let wrote = log_offsets(&d.path().join("w.log"), "write");
            let checked = log_offsets(&d.path().join("r.log"), "read");
            assert!(wrote.len() > 100, "{what}: {} writes", wrote.len());
            assert_eq!(
                checked.iter().copied().collect::<BTreeSet<u64>>(),
                wrote.iter().copied().collect::<BTreeSet<u64>>(),
                "{what}: the blocks checked are the blocks written"
            );
            assert_eq!(checked.len(), wrote.len(), "{what}: each block once");
        }
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

/// The CPU list of each thread of process `pid` whose name starts with `prefix`.
fn thread_cpus(pid: u32, prefix: &str) -> Vec<String> {
    let mut out = Vec::new();
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return out;
    };
    for t in tasks.flatten() {
        let comm = std::fs::read_to_string(t.path().join("comm")).unwrap_or_default();
        if !comm.trim_end().starts_with(prefix) {
            continue;
        }
        let status = std::fs::read_to_string(t.path().join("status")).unwrap_or_default();
        if let Some(l) = status.lines().find(|l| l.starts_with("Cpus_allowed_list:")) {
            out.push(l["Cpus_allowed_list:".len()..].trim().to_string());
        }
    }
    out
}

/// verify_async_cpus (a fio 3.33 option its --cmdhelp=all does not list): the verifier
/// threads run on the CPUs it names, the job thread keeps its own; a CPU the machine
/// does not have is refused before any I/O, as fio refuses it.
#[test]
fn verify_async_cpus_pins_the_verifier_threads() {
    let usable = std::thread::available_parallelism().map_or(1, |n| n.get());
    if usable < 2 {
        eprintln!("SKIP: verify_async_cpus needs two CPUs to tell a pinned thread apart");
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let f = d.path().join("a.dat");
    let fs = format!("--filename={}", s(&f));
    let base = [
        "--name=a",
        fs.as_str(),
        "--bs=4k",
        "--size=4m",
        "--verify=crc32c",
    ];
    let mut w = base.to_vec();
    w.push("--rw=write");
    // fio 3.33's format, so that fio reads the same file below.
    let r = flexio333(&w, d.path());
    assert_eq!(r.code, 0, "{}", r.stderr);
    // A read-verify job checking every block it reads, long enough to be looked at.
    let last = (usable - 1).to_string();
    let cpus = format!("--verify_async_cpus={last}");
    let mut v = base.to_vec();
    v.extend([
        "--rw=randread",
        "--verify_async=2",
        cpus.as_str(),
        "--time_based",
        "--runtime=3",
    ]);
    let child = spawn_flexio(&v, d.path(), ORACLE_COMPAT);
    let pid = child.id();
    let mut verifiers = Vec::new();
    let mut job = Vec::new();
    for _ in 0..20 {
        std::thread::sleep(std::time::Duration::from_millis(100));
        verifiers = thread_cpus(pid, "flexio-verify");
        // The job thread: `flexio-<thread number>`.
        job = thread_cpus(pid, "flexio-1");
        if verifiers.len() == 2 && !job.is_empty() {
            break;
        }
    }
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        verifiers,
        vec![last.clone(), last.clone()],
        "verifier threads"
    );
    assert!(
        !job.is_empty() && job.iter().all(|c| *c != last),
        "the job thread keeps its CPUs: {job:?}"
    );
    // A CPU flexio cannot use: refused before any I/O (fio: `CPU 99 too large`).
    let mut bad = v.clone();
    bad.retain(|a| !a.starts_with("--verify_async_cpus"));
    bad.push("--verify_async_cpus=1000");
    let r = flexio(&bad, d.path());
    assert_eq!(r.code, 1);
    assert!(
        r.stderr
            .contains("verify_async_cpus: CPU 1000 is not available to flexio"),
        "{}",
        r.stderr
    );
    if let Some(fio) = fio_bin() {
        let mut ok = v.clone();
        ok.retain(|a| !a.starts_with("--time_based") && !a.starts_with("--runtime"));
        assert_eq!(run_in(&fio, &ok, d.path()).code, 0, "fio accepts {ok:?}");
        let a = run_in(&fio, &bad, d.path());
        assert_eq!(a.code, 1, "fio refuses CPU 1000: {}", a.stderr);
        assert!(a.stderr.contains("too large"), "{}", a.stderr);
    }
}

/// `verify=pattern_hdr` came with fio 3.40: fio 3.33 refuses it as a bad value before any
/// I/O, and so does flexio under `--compat=3.33` (naming the release), on the command line
/// and in a job file; the newest fio's behaviour (flexio's default) accepts it.
#[test]
fn pattern_hdr_is_refused_as_fio_333_refuses_it() {
    let d = tempfile::tempdir().unwrap();
    let f = d.path().join("p.dat");
    let fs = format!("--filename={}", s(&f));
    let job = [
        "--name=p",
        fs.as_str(),
        "--size=64k",
        "--rw=write",
        "--verify=pattern_hdr",
        "--verify_pattern=0x12",
    ];
    let r = flexio333(&job, d.path());
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(
        r.stderr.contains("'--verify=pattern_hdr': bad value for 'verify': 'pattern_hdr' is not a valid value in fio 3.33 (fio 3.40 added it)"),
        "{}",
        r.stderr
    );
    assert!(!f.exists(), "refused before any I/O");
    let jf = d.path().join("p.fio");
    std::fs::write(
        &jf,
        format!(
            "[p]\nfilename={}\nsize=64k\nrw=write\nverify=pattern_hdr\nverify_pattern=0x12\n",
            s(&f)
        ),
    )
    .unwrap();
    let r = flexio333(&[&s(&jf)], d.path());
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(
        r.stderr.contains("p.fio:5: 'verify=pattern_hdr'"),
        "{}",
        r.stderr
    );
    assert!(!f.exists(), "refused before any I/O");
    // The other values of fio 3.33 stay valid under --compat=3.33.
    let mut ok = job.to_vec();
    ok[4] = "--verify=pattern";
    assert_eq!(flexio333(&ok, d.path()).code, 0);
    let r = flexio(&job, d.path());
    assert_eq!(r.code, 0, "the newest fio's value: {}", r.stderr);
    if let Some(fio) = fio_bin() {
        let _ = std::fs::remove_file(&f);
        for a in [
            run_in(&fio, &job, d.path()),
            run_in(&fio, &[&s(&jf)], d.path()),
        ] {
            assert_eq!(a.code, 1);
            assert!(
                a.stderr.contains("fio: failed parsing verify=pattern_hdr"),
                "{}",
                a.stderr
            );
            // fio's list of valid values does not have it.
            assert!(a.stdout.contains(": pattern ") && !a.stdout.contains("pattern_hdr"));
        }
        assert!(!f.exists(), "fio refuses it before any I/O");
    }
}

/// A job of several files: fio 3.33 keeps each file's last `iodepth` completed writes and
/// its state lists them file by file, newest first, min(writes completed, iodepth) a file
/// (a file with fewer gives empty slots, offset 0). flexio's state is the same bytes.
#[test]
fn state_files_of_several_files_match_fio_333() {
    let Some(fio) = fio_bin() else { return };
    for extra in [
        &["--rw=randwrite"][..],
        &["--rw=write"][..],
        &[
            "--rw=write",
            "--file_service_type=sequential",
            "--io_size=40k",
        ][..],
        &["--rw=write", "--io_size=8k"][..],
        &["--rw=write", "--iodepth=3"][..],
        &["--rw=write", "--io_size=12k", "--iodepth=8"][..],
        &[
            "--rw=randwrite",
            "--file_service_type=random",
            "--io_size=48k",
        ][..],
    ] {
        let state = |dir: &Path| std::fs::read(dir.join("local-vs-0-verify.state")).unwrap();
        let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let run = |dir: &Path, fio_run: bool| {
            let dd = format!("--directory={}", s(dir));
            let mut job = vec![
                "--name=vs",
                dd.as_str(),
                "--nrfiles=3",
                "--bs=4k",
                "--size=96k",
                "--ioengine=libaio",
                "--iodepth=4",
                "--verify=crc32c",
                "--do_verify=0",
            ];
            job.extend_from_slice(extra);
            let r = if fio_run {
                run_in(&fio, &job, dir)
            } else {
                flexio333(&job, dir)
            };
            assert_eq!(r.code, 0, "{extra:?}: {}", r.stderr);
        };
        run(a.path(), true);
        run(b.path(), false);
        let (theirs, ours) = (state(a.path()), state(b.path()));
        // More than one iodepth of completions: one ring per file.
        let no_comps = u64::from_le_bytes(theirs[24..32].try_into().unwrap());
        assert!(
            no_comps >= 6,
            "{extra:?}: fio's record has {no_comps} completions"
        );
        assert_eq!(ours, theirs, "{extra:?}");
    }
}

/// The state file of a finished job is fio 3.33's byte for byte, random generator state
/// included (the seeded state after a read-back with randrepeat, the state after the last
/// write without one or with do_verify=0, tausworthe64's five words, zeros for sequential
/// offsets); a job stopped by SIGINT records the generator after one draw per write.
#[test]
fn state_files_match_fio_333_byte_for_byte() {
    let Some(fio) = fio_bin() else { return };
    let d = tempfile::tempdir().unwrap();
    let f = d.path().join("rs.dat");
    let fs = format!("--filename={}", s(&f));
    for extra in [
        &["--rw=randwrite"][..],
        &["--rw=randwrite", "--do_verify=0"][..],
        &["--rw=randwrite", "--number_ios=5"][..],
        &["--rw=randwrite", "--randrepeat=0", "--randseed=7"][..],
        &["--rw=randwrite", "--random_generator=tausworthe64"][..],
        &["--rw=randwrite", "--norandommap", "--io_size=128k"][..],
        &["--rw=randwrite", "--ioengine=libaio", "--iodepth=8"][..],
        &["--rw=write"][..],
        &["--rw=randrw"][..],
    ] {
        let mut job = vec![
            "--name=rs",
            fs.as_str(),
            "--bs=4k",
            "--size=64k",
            "--verify=crc32c",
        ];
        job.extend_from_slice(extra);
        let state = |dir: &Path| std::fs::read(dir.join("local-rs-0-verify.state")).unwrap();
        let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        assert_eq!(run_in(&fio, &job, a.path()).code, 0, "{extra:?}");
        assert_eq!(flexio333(&job, b.path()).code, 0, "{extra:?}");
        assert_eq!(state(b.path()), state(a.path()), "{extra:?}");
    }
    // Stopped while writing: the offset generator after one draw per write.
    let job = [
        "--name=rs",
        fs.as_str(),
        "--bs=4k",
        "--size=64m",
        "--verify=crc32c",
        "--rw=randwrite",
        "--rate_iops=2000",
    ];
    let child = spawn_flexio(&job, d.path(), ORACLE_COMPAT);
    std::thread::sleep(std::time::Duration::from_millis(1000));
    send_signal(child.id(), "INT");
    assert_eq!(child.wait_with_output().unwrap().status.code(), Some(128));
    let b = std::fs::read(d.path().join("local-rs-0-verify.state")).unwrap();
    let r = &b[24..];
    let numberio = u64::from_le_bytes(r[16..24].try_into().unwrap());
    assert!(numberio > 100, "{numberio} writes");
    assert_eq!(&r[32..40], &0u64.to_le_bytes(), "taus88");
    let mut g = flexio_workload::rng::Taus88::new(0xb189_9bed);
    for _ in 0..numberio {
        g.next_u32();
    }
    let want: Vec<u8> = g.state().iter().flat_map(|x| x.to_le_bytes()).collect();
    assert_eq!(&r[40..52], &want[..], "after {numberio} draws");
}

/// fio warns, for each thread, that a write-only job verifying afterwards under time_based
/// never reaches its verify phase (not with verify_backlog, which verifies on the way, nor
/// with reads in the job). flexio printed nothing.
#[test]
fn a_verify_phase_that_never_comes_is_noted_as_fio_notes_it() {
    let note =
        "fio: verification read phase will never start because write phase uses all of runtime";
    let cases: &[(&[&str], usize)] = &[
        (&["--rw=write"], 1),
        (&["--rw=trimwrite"], 1),
        (&["--rw=write", "--numjobs=2"], 2),
        (&["--rw=randrw"], 0),
        (&["--rw=write", "--verify_backlog=16"], 0),
        (&["--rw=write", "--do_verify=0"], 0),
    ];
    for (extra, n) in cases {
        let mut a = vec![
            "--name=v",
            "--ioengine=null",
            "--size=64k",
            "--verify=md5",
            "--time_based",
            "--runtime=200ms",
        ];
        a.extend_from_slice(extra);
        let d = tempfile::tempdir().unwrap();
        let r = flexio(&a, d.path());
        assert_eq!(r.code, 0, "{extra:?}: {}", r.stderr);
        assert_eq!(
            r.stdout.matches(note).count(),
            *n,
            "{extra:?}: {}",
            r.stdout
        );
        if let Some((f, _)) = both(&a) {
            assert_eq!(f.stdout.matches(note).count(), *n, "fio 3.33, {extra:?}");
        }
    }
}

/// fio prints each thread's notes as it reads the thread's options: a job's note, then its
/// header line; a clone's note, and `...` after the last clone's (flexio printed every note
/// before the first header).
#[test]
fn notes_come_between_the_header_lines_as_in_fio() {
    let args = [
        "--ioengine=null",
        "--size=64k",
        "--rw=write",
        "--name=j0",
        "--numjobs=2",
        "--name=j1",
        "--verify=crc32c",
        "--time_based",
        "--runtime=200ms",
        "--numjobs=3",
    ];
    let note =
        "fio: verification read phase will never start because write phase uses all of runtime";
    let preamble = |out: &str| -> Vec<String> {
        out.lines()
            .take_while(|l| !l.starts_with("fio-") && !l.starts_with("flexio-"))
            .map(|l| {
                if l == note {
                    "NOTE".to_string()
                } else {
                    l.split(':').next().unwrap().to_string()
                }
            })
            .collect()
    };
    let d = tempfile::tempdir().unwrap();
    let r = flexio_oracle(&args, d.path());
    assert_eq!(r.code, 0, "{}", r.stderr);
    let want = ["j0", "...", "NOTE", "j1", "NOTE", "NOTE", "..."];
    assert_eq!(preamble(&r.stdout), want, "{}", r.stdout);
    if let Some((f, _)) = both(&args) {
        assert_eq!(preamble(&f.stdout), want, "fio 3.33: {}", f.stdout);
    }
}
