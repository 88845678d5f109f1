//! The pure verification layer against the installed fio 3.33, both directions: fio
//! writes blocks that flexio's checker accepts (and rejects once damaged), flexio's filler
//! writes blocks that fio verifies (and rejects once damaged), for every checksum,
//! pattern form, interval and header offset; and verify-state files read and written
//! across. Skips with `SKIP:` when fio is missing, unless FLEXIO_REQUIRE_FIO=1.

use crate::common;

use common::{fio_bin, run_in};
use flexio_run::verify::format::{Expect, Place};
use flexio_run::verify::state::{self, StateV3, VerifyState};
use flexio_run::verify::{wlog, Class, Format, Generation, Kind, Stamp};
use std::path::Path;

const BS: usize = 4096;
const BLOCKS: usize = 16;

fn s(p: &Path) -> String {
    p.to_string_lossy().into_owned()
}

fn flip(path: &Path, at: u64) {
    let mut d = std::fs::read(path).unwrap();
    d[at as usize] ^= 0x40;
    std::fs::write(path, d).unwrap();
}

/// A case: fio's options and the matching flexio format.
struct Case {
    args: Vec<String>,
    fmt: Format,
}

fn cases() -> Vec<Case> {
    let mut v = Vec::new();
    for k in flexio_run::verify::kind::CHECKSUMS {
        v.push(Case {
            args: vec![format!("--verify={}", k.name())],
            fmt: Format::new(Generation::Fio333, k, 1),
        });
    }
    v.push(Case {
        args: vec!["--verify=meta".into()],
        fmt: Format::new(Generation::Fio333, Kind::Meta, 1),
    });
    let pat = |s: &str| Some(flexio_job::pattern::parse_verify_pattern(s).unwrap());
    // verify_pattern alone: fio 3.33 writes header + pattern (type 17).
    for p in [
        "0xdeadbeef",
        "%o",
        "0x12%o\"ab\"",
        "\"abcd\"-120xdeadface",
        "1-2 3",
    ] {
        v.push(Case {
            args: vec![format!("--verify_pattern={p}")],
            fmt: Format {
                pattern: pat(p),
                ..Format::new(Generation::Fio333, Kind::PatternHdr, 1)
            },
        });
        v.push(Case {
            args: vec!["--verify=pattern".into(), format!("--verify_pattern={p}")],
            fmt: Format {
                pattern: pat(p),
                ..Format::new(Generation::Fio333, Kind::Pattern, 1)
            },
        });
    }
    for (k, iv, off) in [
        (Kind::Crc32c, 512, 0),
        (Kind::Md5, 1024, 100),
        (Kind::Sha256, 0, 200),
        (Kind::Crc7, 2048, 1000),
        (Kind::Sha3_512, 1024, 300),
    ] {
        let mut args = vec![format!("--verify={}", k.name())];
        if iv > 0 {
            args.push(format!("--verify_interval={iv}"));
        }
        if off > 0 {
            args.push(format!("--verify_offset={off}"));
        }
        v.push(Case {
            args,
            fmt: Format {
                interval: iv,
                hdr_offset: off,
                ..Format::new(Generation::Fio333, k, 1)
            },
        });
    }
    v.push(Case {
        args: vec!["--verify=crc32c".into(), "--verify_pattern=0xab%o".into()],
        fmt: Format {
            pattern: pat("0xab%o"),
            ..Format::new(Generation::Fio333, Kind::Crc32c, 1)
        },
    });
    v
}

/// Whether damage in the middle of the data is seen: not by `meta` (header only) nor by
/// fio 3.33's sha512 (its field holds data bytes from the start and end only).
fn covers_data(f: &Format) -> bool {
    !matches!(f.kind, Kind::Sha512 | Kind::Meta)
}

fn place(f: &str) -> Place<'_> {
    Place {
        file: f,
        flags: "8",
    }
}

#[test]
fn flexio_checks_blocks_fio_wrote() {
    let Some(fio) = fio_bin() else { return };
    let d = tempfile::tempdir().unwrap();
    let f = d.path().join("w.dat");
    let name = s(&f);
    for c in cases() {
        for rw in ["write", "randwrite"] {
            let _ = std::fs::remove_file(&f);
            let mut a = vec![
                "--name=w".to_string(),
                format!("--filename={name}"),
                format!("--rw={rw}"),
                format!("--bs={BS}"),
                format!("--size={}", BS * BLOCKS),
                "--do_verify=0".into(),
            ];
            a.extend(c.args.iter().cloned());
            let av: Vec<&str> = a.iter().map(|x| x.as_str()).collect();
            let r = run_in(&fio, &av, d.path());
            assert_eq!(r.code, 0, "{:?}: {}", c.args, r.stderr);
            let data = std::fs::read(&f).unwrap();
            for (b, blk) in data.chunks(BS).enumerate() {
                let mut blk = blk.to_vec();
                let off = (b * BS) as u64;
                if let Err(m) = c
                    .fmt
                    .check(&mut blk, off, &Expect::default(), &place(&name))
                {
                    panic!(
                        "{:?} {rw} block {b}: {:#?}",
                        c.args,
                        m.lines(Generation::Fio333)
                    );
                }
            }
            // Damage one data byte of block 3 (in the last interval, past any header):
            // the checker sees it. (fio reports damage in an earlier interval but lets a
            // later good interval decide the block's result.)
            if !covers_data(&c.fmt) {
                continue;
            }
            let mut blk = data[3 * BS..4 * BS].to_vec();
            blk[BS - 100] ^= 0x40;
            let m = c
                .fmt
                .check(&mut blk, (3 * BS) as u64, &Expect::default(), &place(&name))
                .expect_err("damage found");
            assert!(
                m.fio_lines[0].contains("verify failed") || m.fio_lines[0].contains("got pattern"),
                "{:?}: {:?}",
                c.args,
                m.fio_lines
            );
        }
    }
}

#[test]
fn fio_verifies_blocks_flexio_wrote() {
    let Some(fio) = fio_bin() else { return };
    let d = tempfile::tempdir().unwrap();
    let f = d.path().join("x.dat");
    let name = s(&f);
    for c in cases() {
        let mut data = vec![0u8; BS * BLOCKS];
        for (n, blk) in data.chunks_mut(BS).enumerate() {
            let st = Stamp {
                seed: wlog::replay_seed(77, n as u64),
                numberio: n as u64,
                time: (1_700_000_000, n as u32),
            };
            c.fmt.fill(blk, (n * BS) as u64, st);
        }
        std::fs::write(&f, &data).unwrap();
        let mut a = vec![
            "--name=r".to_string(),
            format!("--filename={name}"),
            "--rw=read".into(),
            format!("--bs={BS}"),
            format!("--size={}", BS * BLOCKS),
        ];
        a.extend(c.args.iter().cloned());
        let av: Vec<&str> = a.iter().map(|x| x.as_str()).collect();
        let r = run_in(&fio, &av, d.path());
        assert_eq!(r.code, 0, "fio rejects flexio's {:?}: {}", c.args, r.stderr);
        assert!(!r.stderr.contains("verify"), "{:?}: {}", c.args, r.stderr);
        if !covers_data(&c.fmt) {
            continue;
        }
        // Damaged, fio says so, in the words flexio's checker uses.
        let at = (5 * BS + BS - 100) as u64;
        flip(&f, at);
        let r = run_in(&fio, &av, d.path());
        assert_eq!(r.code, 1, "{:?}: fio finds the damage", c.args);
        let mut blk = std::fs::read(&f).unwrap()[5 * BS..6 * BS].to_vec();
        let m = c
            .fmt
            .check(&mut blk, (5 * BS) as u64, &Expect::default(), &place(&name))
            .expect_err("flexio finds it too");
        let fio_lines: Vec<&str> = r
            .stderr
            .lines()
            .filter(|l| !l.starts_with("fio: pid"))
            .collect();
        assert_eq!(fio_lines, m.fio_lines, "{:?}: same lines", c.args);
        // flexio pinpoints the byte (its own data can be rebuilt from the seed).
        let fb = m.first_bad.as_ref().expect("first bad byte");
        assert_eq!(fb.offset, at, "{:?}", c.args);
        assert_eq!(m.class, Class::Corrupt, "{:?}", c.args);
    }
}

#[test]
fn newest_format_blocks_are_a_generation_mismatch_for_fio333() {
    let Some(fio) = fio_bin() else { return };
    let d = tempfile::tempdir().unwrap();
    let f = d.path().join("n.dat");
    let name = s(&f);
    let new = Format::new(Generation::Latest, Kind::Crc32c, 1);
    let mut data = vec![0u8; BS * 4];
    for (n, blk) in data.chunks_mut(BS).enumerate() {
        new.fill(blk, (n * BS) as u64, Stamp::default());
    }
    std::fs::write(&f, &data).unwrap();
    let a = [
        "--name=r".to_string(),
        format!("--filename={name}"),
        "--rw=read".into(),
        format!("--bs={BS}"),
        format!("--size={}", BS * 4),
        "--verify=crc32c".into(),
    ];
    let av: Vec<&str> = a.iter().map(|x| x.as_str()).collect();
    let r = run_in(&fio, &av, d.path());
    assert_eq!(r.code, 1);
    assert!(r.stderr.contains("verify: bad header crc"), "{}", r.stderr);
    let old = Format::new(Generation::Fio333, Kind::Crc32c, 1);
    let m = old
        .check(
            &mut data[..BS].to_vec(),
            0,
            &Expect::default(),
            &place(&name),
        )
        .unwrap_err();
    assert_eq!(m.class, Class::OtherGeneration);
    assert!(m.fio_lines[0].starts_with("verify: bad header crc"));
    assert_eq!(m.fio_lines, r.stderr.lines().take(1).collect::<Vec<_>>());
    // And fio 3.33's blocks under the newest format: version 5, wanted 81.
    let run = |a: &[&str]| run_in(&fio, a, d.path());
    let w = [
        "--name=w".to_string(),
        format!("--filename={name}"),
        "--rw=write".into(),
        format!("--bs={BS}"),
        format!("--size={}", BS * 4),
        "--verify=crc32c".into(),
        "--do_verify=0".into(),
    ];
    assert_eq!(
        run(&w.iter().map(|x| x.as_str()).collect::<Vec<_>>()).code,
        0
    );
    let mut blk = std::fs::read(&f).unwrap()[..BS].to_vec();
    let m = new
        .check(&mut blk, 0, &Expect::default(), &place(&name))
        .unwrap_err();
    assert_eq!(m.class, Class::OtherGeneration);
    assert!(
        m.fio_lines[0].starts_with(
            "verify: unsupported header version 5, wanted 81. Are you trying to verify across versions of fio? at file"
        ),
        "{:?}",
        m.fio_lines
    );
    assert!(m
        .lines(Generation::Latest)
        .iter()
        .any(|l| l.contains("a 3.33-format writer")));
}

/// A write job with fewer completed writes than its depth: fio 3.33's state record has all
/// depth × nofiles completion slots (the unused ones zero), and flexio's state for the
/// same job is the same bytes; each reads the other's.
#[test]
fn verify_state_of_a_short_job_is_fios_bytes() {
    let Some(fio) = fio_bin() else { return };
    for (depth, blocks) in [(4, 2), (8, 3)] {
        let what = format!("iodepth={depth}, {blocks} writes");
        let job = [
            "--name=w".to_string(),
            "--filename=w.dat".into(),
            "--rw=write".into(),
            format!("--bs={BS}"),
            format!("--size={}", BS * blocks),
            "--ioengine=libaio".into(),
            format!("--iodepth={depth}"),
            "--verify=crc32c".into(),
            "--do_verify=0".into(),
            "--verify_state_save=1".into(),
            "--output-format=json".into(),
        ];
        let av: Vec<&str> = job.iter().map(|x| x.as_str()).collect();
        let state_of = |bin: &Path, env: &[(&str, &str)]| {
            let d = tempfile::tempdir().unwrap();
            let r = common::run_in_env(bin, &av, d.path(), env);
            assert_eq!(r.code, 0, "{what}: {}", r.stderr);
            std::fs::read(d.path().join("local-w-0-verify.state")).unwrap()
        };
        let theirs = state_of(&fio, &[]);
        let ours = state_of(&common::flexio_bin(), common::ORACLE_COMPAT);
        assert_eq!(theirs.len(), 24 + 152 + 16 * depth, "{what}: fio's size");
        assert_eq!(ours, theirs, "{what}");
        let VerifyState::V3(s3) = state::decode(Generation::Fio333, &theirs, 4).unwrap() else {
            panic!("v3")
        };
        assert_eq!(s3.comps.len(), blocks, "{what}");
    }
}

#[test]
fn verify_state_files_cross_with_fio333() {
    let Some(fio) = fio_bin() else { return };
    let d = tempfile::tempdir().unwrap();
    let f = d.path().join("st.dat");
    let name = s(&f);
    // flexio writes 40 sequential blocks of a 64-block job and a v3 state saying so;
    // fio 3.33 (verify_only, verify_state_load) checks exactly those 40.
    let fmt = Format::new(Generation::Fio333, Kind::Crc32c, 1);
    let written = 40usize;
    let mut data = vec![0u8; BS * 64];
    for (n, blk) in data.chunks_mut(BS).enumerate().take(written) {
        let st = Stamp {
            seed: wlog::replay_seed(1, n as u64),
            numberio: n as u64,
            time: (0, 0),
        };
        fmt.fill(blk, (n * BS) as u64, st);
    }
    std::fs::write(&f, &data).unwrap();
    let st = VerifyState::V3(StateV3 {
        depth: 1,
        nofiles: 1,
        numberio: written as u64,
        index: 0,
        name: "st".into(),
        comps: vec![(0, ((written - 1) * BS) as u64)],
        ..StateV3::default()
    });
    state::save(&d.path().join(state::file_name("st", 0)), &st).unwrap();
    let job = [
        "--name=st".to_string(),
        format!("--filename={name}"),
        "--rw=write".into(),
        format!("--bs={BS}"),
        format!("--size={}", BS * 64),
        "--verify=crc32c".into(),
        "--verify_only".into(),
        "--verify_state_load=1".into(),
        "--output-format=json".into(),
    ];
    let av: Vec<&str> = job.iter().map(|x| x.as_str()).collect();
    let r = run_in(&fio, &av, d.path());
    assert_eq!(r.code, 0, "fio accepts flexio's state: {}", r.stderr);
    let v: serde_json::Value =
        serde_json::from_str(&r.stdout[r.stdout.find('{').unwrap()..]).unwrap();
    assert_eq!(
        v["jobs"][0]["read"]["io_bytes"].as_u64(),
        Some((written * BS) as u64),
        "fio verified exactly the blocks the state names"
    );
    // Without the state fio reads the unwritten rest and fails.
    let r = run_in(&fio, &av[..7], d.path());
    assert_eq!(r.code, 1);

    // fio 3.33 interrupted mid-write: its state file parses, and names its last writes.
    let _ = std::fs::remove_file(&f);
    let child = std::process::Command::new(&fio)
        .args([
            "--name=cut",
            &format!("--filename={name}"),
            "--rw=write",
            &format!("--bs={BS}"),
            "--size=64m",
            "--verify=crc32c",
            "--rate_iops=400",
            "--iodepth=4",
            "--ioengine=libaio",
            "--output=/dev/null",
        ])
        .current_dir(d.path())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(1200));
    common::send_signal(child.id(), "INT");
    let _ = child.wait_with_output();
    let p = d.path().join("local-cut-0-verify.state");
    let bytes = std::fs::read(&p).expect("fio saved its state");
    let VerifyState::V3(s3) = state::decode(Generation::Fio333, &bytes, 4).unwrap() else {
        panic!("v3")
    };
    assert_eq!(
        (s3.name.as_str(), s3.depth, s3.nofiles, s3.index),
        ("cut", 4, 1, 0)
    );
    assert!(s3.numberio > 10 && !s3.comps.is_empty());
    assert_eq!(
        VerifyState::V3(s3.clone()).encode(),
        bytes,
        "flexio writes back fio's bytes exactly"
    );
    // Every block before the window verifies; the comps name completed blocks.
    let data = std::fs::read(&f).unwrap();
    let completed = s3.numberio - s3.depth as u64;
    for n in 0..completed as usize {
        let mut blk = data[n * BS..(n + 1) * BS].to_vec();
        fmt.check(&mut blk, (n * BS) as u64, &Expect::default(), &place(&name))
            .unwrap_or_else(|m| panic!("block {n}: {:?}", m.lines(Generation::Fio333)));
    }
    for (_, off) in &s3.comps {
        let o = *off as usize;
        let mut blk = data[o..o + BS].to_vec();
        assert!(fmt
            .check(&mut blk, *off, &Expect::default(), &place(&name))
            .is_ok());
    }
}
