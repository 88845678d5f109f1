//! Issue 28, the last mile of verification: `experimental_verify` with every workload fio
//! accepts (read/write mixes, loops, norandommap, verify_only, time-based jobs), verify of
//! the writes of a replayed trace (`read_iolog`, version 2 and 3), and `verify_dump`'s
//! expected data for blocks fio wrote. Each is checked for clean runs and for a byte changed
//! between the writes and the check, and against the installed fio 3.33 where it has the
//! behaviour (skips those parts with `SKIP:` when fio is missing, unless
//! FLEXIO_REQUIRE_FIO=1).

use crate::common;
use common::*;
use serde_json::Value;
use std::path::Path;

/// The two generations: the newest fio's (flexio's default) and fio 3.33's.
const GENS: [&[(&str, &str)]; 2] = [&[], ORACLE_COMPAT];

fn run(env: &[(&str, &str)], args: &[&str], dir: &Path) -> Run {
    run_in_env(&flexio_bin(), args, dir, env)
}

fn refs(a: &[String]) -> Vec<&str> {
    a.iter().map(String::as_str).collect()
}

fn json(r: &Run) -> Value {
    let start = r
        .stdout
        .find('{')
        .unwrap_or_else(|| panic!("no JSON: {r:?}"));
    serde_json::from_str(&r.stdout[start..]).unwrap_or_else(|e| panic!("{e}: {r:?}"))
}

/// (read, write) I/Os of the first job.
fn ios(r: &Run) -> (u64, u64) {
    let v = json(r);
    let n = |d: &str| v["jobs"][0][d]["total_ios"].as_u64().unwrap();
    (n("read"), n("write"))
}

fn flip(path: &Path, at: u64) {
    use std::os::unix::fs::FileExt;
    let f = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(path)
        .unwrap();
    let mut b = [0u8; 1];
    f.read_exact_at(&mut b, at).unwrap();
    b[0] ^= 0x01;
    f.write_all_at(&b, at).unwrap();
}

/// The (offset, length) of the last write a version-3 iolog records.
fn last_write(log: &Path) -> (u64, u64) {
    let text = std::fs::read_to_string(log).unwrap();
    let w = text.lines().rev().find_map(|l| {
        let f: Vec<&str> = l.split_whitespace().collect();
        (f.len() == 5 && f[2] == "write").then(|| (f[3].parse().unwrap(), f[4].parse().unwrap()))
    });
    w.unwrap_or_else(|| panic!("no write in {text}"))
}

fn clean(r: &Run, what: &str) {
    assert_eq!(r.code, 0, "{what}: exit {}\n{}", r.code, r.stderr);
    assert!(
        !r.stderr.contains("verify") && !r.stderr.contains("bad "),
        "{what}: {}",
        r.stderr
    );
}

/// The line fio prints for a failed checksum of the block at `block`.
fn failed_at(r: &Run, file: &str, block: u64) -> bool {
    r.code == 1
        && r.stderr
            .lines()
            .any(|l| l.contains(&format!("verify failed at file {file} offset {block},")))
}

/// The workloads flexio used to refuse, and the ones around them.
const WORKLOADS: &[&[&str]] = &[
    &["--rw=rw"],
    &["--rw=randrw"],
    &["--rw=randrw", "--rwmixread=30"],
    &["--rw=randwrite", "--loops=3"],
    &["--rw=randrw", "--loops=2"],
    &["--rw=rw", "--loops=2", "--rwmixread=70"],
    &["--rw=randrw", "--ioengine=libaio", "--iodepth=16"],
    &["--rw=randwrite", "--norandommap"],
];

/// experimental_verify with every workload, in both generations: the read-back reads each
/// write of each loop once (the job's own reads passed over), clean; and a verify_only
/// replay of the same job finds a byte changed in a block the job wrote.
#[test]
fn experimental_verify_replays_every_workload() {
    let d = tempfile::tempdir().unwrap();
    let f = d.path().join("x.dat");
    let fs = f.display().to_string();
    let file = format!("--filename={fs}");
    for env in GENS {
        for w in WORKLOADS {
            let gen = if env.is_empty() { "newest" } else { "3.33" };
            if !env.is_empty() && w.contains(&"--norandommap") {
                // fio 3.33 checks a rewritten block against its first write and reports a
                // numberio mismatch (tests/verify_cross.rs compares that report).
                continue;
            }
            let what = format!("{gen} {}", w.join(" "));
            let mut base = vec![
                "--name=x",
                file.as_str(),
                "--bs=4k",
                "--size=256k",
                "--verify=crc32c",
                "--output-format=json",
            ];
            base.extend_from_slice(w);
            let with = |extra: &[&str]| -> Vec<String> {
                base.iter().chain(extra).map(|s| s.to_string()).collect()
            };
            let _ = std::fs::remove_file(&f);
            let plain = run(env, &refs(&with(&["--do_verify=0"])), d.path());
            assert_eq!(plain.code, 0, "{what}: {}", plain.stderr);
            let (reads, writes) = ios(&plain);
            assert!(writes > 0, "{what}");
            let _ = std::fs::remove_file(&f);
            let exp = run(env, &refs(&with(&["--experimental_verify=1"])), d.path());
            clean(&exp, &what);
            assert_eq!(
                ios(&exp),
                (reads + writes, writes),
                "{what}: every write is read back once"
            );
            // Written, then replayed by a second run: clean; with a changed byte, found.
            let _ = std::fs::remove_file(&f);
            let log = d.path().join("w.log");
            let log_arg = format!("--write_iolog={}", log.display());
            let wr = run(env, &refs(&with(&["--do_verify=0", &log_arg])), d.path());
            assert_eq!(wr.code, 0, "{what}: {}", wr.stderr);
            let replay = with(&["--verify_only", "--experimental_verify=1"]);
            clean(
                &run(env, &refs(&replay), d.path()),
                &format!("{what} verify_only"),
            );
            let (at, _) = last_write(&log);
            flip(&f, at + 2000);
            let bad = run(env, &refs(&replay), d.path());
            assert!(
                failed_at(&bad, &fs, at),
                "{what}: the changed block {at} is reported\n{}",
                bad.stderr
            );
        }
    }
}

/// Against fio 3.33: the same read and write counts for the mixes, each tool's verify_only
/// replay accepting the other's writes (loops included) and both reporting the same changed
/// block; time-based jobs read nothing back in either tool (fio 3.33's time-based read-back
/// reads nothing).
#[test]
fn experimental_verify_matches_fio_333() {
    let Some(fio) = fio_bin() else { return };
    let d = tempfile::tempdir().unwrap();
    let f = d.path().join("e.dat");
    let fs = f.display().to_string();
    let file = format!("--filename={fs}");
    let job = |w: &[&str], extra: &[&str]| -> Vec<String> {
        [
            "--name=x",
            file.as_str(),
            "--bs=4k",
            "--size=256k",
            "--verify=crc32c",
            "--output-format=json",
        ]
        .iter()
        .chain(w)
        .chain(extra)
        .map(|s| s.to_string())
        .collect()
    };
    let go = |bin: Option<&Path>, a: &[String]| match bin {
        Some(b) => run_in(b, &refs(a), d.path()),
        None => flexio_oracle(&refs(a), d.path()),
    };
    for w in [
        &["--rw=rw"][..],
        &["--rw=randrw"],
        &["--rw=randrw", "--rwmixread=30"],
        &["--rw=rw", "--rwmixread=70"],
        &["--rw=randrw", "--ioengine=libaio", "--iodepth=16"],
    ] {
        let what = w.join(" ");
        let a = job(w, &["--experimental_verify=1"]);
        let _ = std::fs::remove_file(&f);
        let x = go(Some(&fio), &a);
        let _ = std::fs::remove_file(&f);
        let y = go(None, &a);
        clean(&x, &format!("fio {what}"));
        clean(&y, &format!("flexio {what}"));
        assert_eq!(ios(&x), ios(&y), "{what}: fio 3.33's counts");
    }
    for w in [
        &["--rw=randrw"][..],
        &["--rw=randwrite", "--loops=2"],
        &["--rw=randrw", "--loops=2"],
    ] {
        let what = w.join(" ");
        let write = job(w, &["--do_verify=0"]);
        let replay = job(w, &["--verify_only", "--experimental_verify=1"]);
        for (writer, checker) in [(Some(fio.as_path()), None), (None, Some(fio.as_path()))] {
            let _ = std::fs::remove_file(&f);
            assert_eq!(go(writer, &write).code, 0, "{what}");
            clean(&go(checker, &replay), &format!("{what}: cross replay"));
        }
        // A byte changed in the last block fio wrote: both replays report it alike.
        let log = d.path().join("w.log");
        let log_arg = format!("--write_iolog={}", log.display());
        let _ = std::fs::remove_file(&f);
        assert_eq!(
            go(Some(&fio), &job(w, &["--do_verify=0", &log_arg])).code,
            0
        );
        let (at, _) = last_write(&log);
        flip(&f, at + 3000);
        let x = go(Some(&fio), &replay);
        let y = go(None, &replay);
        assert!(failed_at(&x, &fs, at), "{what}: fio\n{}", x.stderr);
        assert!(failed_at(&y, &fs, at), "{what}: flexio\n{}", y.stderr);
        let line = |r: &Run| {
            r.stderr
                .lines()
                .find(|l| l.contains("verify failed at"))
                .map(String::from)
        };
        assert_eq!(line(&x), line(&y), "{what}: the same report line");
    }
    // Time-based: writes until the time is up, no read-back, in fio 3.33 and in flexio.
    let a = job(
        &["--rw=randwrite", "--time_based", "--runtime=1"],
        &["--experimental_verify=1"],
    );
    for r in [
        go(Some(&fio), &a),
        go(None, &a),
        flexio(&refs(&a), d.path()),
    ] {
        clean(&r, "time_based");
        let (reads, writes) = ios(&r);
        assert_eq!(reads, 0, "time_based: nothing read back");
        assert!(
            writes > 64,
            "time_based: writes go on past one pass ({writes})"
        );
    }
}

/// Traces over `file`: version 2 and version 3 (with time stamps) of writes only (one block
/// rewritten, one 8 KiB write with two 4 KiB header intervals, and in version 3 one more
/// block), and a version 3 trace that also reads. fio 3.33 reports a false
/// `bad header rand_seed` for a write replayed before a read of the trace, so the mixed
/// trace is checked in flexio only.
fn traces(dir: &Path, file: &Path) -> Vec<(&'static str, std::path::PathBuf)> {
    let f = file.display();
    let v2 = format!(
        "fio version 2 iolog\n{f} add\n{f} open\n{f} write 0 4096\n{f} write 8192 4096\n\
         {f} write 4096 4096\n{f} write 8192 4096\n{f} write 16384 8192\n{f} close\n"
    );
    let v3 = format!(
        "fio version 3 iolog\n0 {f} add\n0 {f} open\n10 {f} write 0 4096\n20 {f} write 8192 4096\n\
         30 {f} write 4096 4096\n40 {f} write 8192 4096\n50 {f} write 16384 8192\n\
         60 {f} write 32768 4096\n70 {f} close\n"
    );
    let mixed = format!(
        "fio version 3 iolog\n0 {f} add\n0 {f} open\n10 {f} write 0 4096\n20 {f} write 8192 4096\n\
         25 {f} read 0 4096\n30 {f} write 4096 4096\n40 {f} write 8192 4096\n\
         50 {f} write 16384 8192\n55 {f} read 49152 4096\n70 {f} close\n"
    );
    let mut out = Vec::new();
    for (name, text) in [("v2", v2), ("v3", v3), ("mixed", mixed)] {
        let p = dir.join(format!("{name}.iolog"));
        std::fs::write(&p, text).unwrap();
        out.push((name, p));
    }
    out
}

fn fresh(file: &Path) {
    let _ = std::fs::remove_file(file);
    std::fs::write(file, vec![0u8; 64 << 10]).unwrap();
}

/// verify with read_iolog: the trace's writes are read back after it (each block once, its
/// last write; the 8 KiB write with its two header intervals), clean and with fio 3.33's
/// read counts; a byte changed after the replay is found by a verify_only replay of the
/// trace in both generations, with fio 3.33's report line.
#[test]
fn trace_writes_are_verified_like_fio() {
    let d = tempfile::tempdir().unwrap();
    let file = d.path().join("t.dat");
    let fs = file.display().to_string();
    let fio = fio_bin();
    for (name, trace) in traces(d.path(), &file) {
        let t = format!("--read_iolog={}", trace.display());
        let job = |extra: &[&str]| -> Vec<String> {
            [
                "--name=j",
                t.as_str(),
                "--verify=crc32c",
                "--output-format=json",
            ]
            .iter()
            .chain(extra)
            .map(|s| s.to_string())
            .collect()
        };
        let go = |env: &[(&str, &str)], a: &[String]| run(env, &refs(a), d.path());
        let mut counts = Vec::new();
        for env in GENS {
            fresh(&file);
            let r = go(env, &job(&[]));
            clean(&r, &format!("{name} {env:?}"));
            counts.push(ios(&r));
        }
        // Writes 0, 8192, 4096, 8192 again, 16384 (and 32768 in v3): one read-back per
        // block (its last write), plus the mixed trace's own two reads.
        let (blocks, reads) = match name {
            "v2" => (4, 0),
            "v3" => (5, 0),
            _ => (4, 2),
        };
        assert_eq!(counts[0], (blocks + reads, blocks + 1), "{name}: newest");
        assert_eq!(counts[1], counts[0], "{name}: 3.33");
        if let (Some(fio), false) = (&fio, name == "mixed") {
            fresh(&file);
            let a = job(&[]);
            let r = run_in(fio, &refs(&a), d.path());
            clean(&r, &format!("fio {name}"));
            assert_eq!(ios(&r), counts[1], "{name}: fio 3.33's counts");
        }
        // Changed after the replay: a verify_only replay of the trace finds it, in the 8 KiB
        // write's second interval.
        for env in GENS {
            fresh(&file);
            assert_eq!(go(env, &job(&["--do_verify=0"])).code, 0);
            let check = job(&["--verify_only"]);
            clean(&go(env, &check), &format!("{name} verify_only {env:?}"));
            flip(&file, 16384 + 5000);
            let r = go(env, &check);
            assert!(failed_at(&r, &fs, 20480), "{name} {env:?}\n{}", r.stderr);
            if let (Some(fio), false) = (&fio, env.is_empty() || name == "mixed") {
                let x = run_in(fio, &refs(&check), d.path());
                assert!(failed_at(&x, &fs, 20480), "fio {name}\n{}", x.stderr);
                let line = |r: &Run| {
                    r.stderr
                        .lines()
                        .find(|l| l.contains("verify failed at"))
                        .map(String::from)
                };
                assert_eq!(line(&x), line(&r), "{name}: fio 3.33's report line");
            }
        }
    }
    // experimental_verify has no generator to replay for a trace: refused.
    let (_, trace) = &traces(d.path(), &file)[0];
    let t = format!("--read_iolog={}", trace.display());
    let r = flexio(
        &["--name=j", &t, "--verify=crc32c", "--experimental_verify=1"],
        d.path(),
    );
    assert_eq!(r.code, 1);
    assert!(
        r.stderr
            .contains("experimental_verify with read_iolog is not supported by flexio"),
        "{}",
        r.stderr
    );
}

/// verify_dump rebuilds the expected data of a block fio 3.33 wrote (from the header's seed,
/// with fio's data generator): `.expected` is the block as fio wrote it and `.received` the
/// block as changed, for a whole block and for a verify_interval piece, from a read-only
/// check and from a verify_only replay; fio 3.33's own dumps agree (its `.expected` header
/// carries its own time stamp and numbers, the rest is the same). A block flexio wrote is
/// rebuilt the same way.
#[test]
fn verify_dump_rebuilds_blocks_fio_wrote() {
    let d = tempfile::tempdir().unwrap();
    let f = d.path().join("v");
    let fs = format!("--filename={}", f.display());
    let cases: [(&[&str], &[&str], u64, u64); 3] = [
        // (writing job, checking options, byte changed, dumped piece offset)
        (
            &["--rw=write", "--verify=crc32c"],
            &["--rw=read"],
            12288 + 1000,
            12288,
        ),
        (
            &["--rw=randwrite", "--verify=md5", "--verify_interval=1024"],
            &["--verify_only"],
            5 * 4096 + 2 * 1024 + 700,
            5 * 4096 + 2 * 1024,
        ),
        (
            &["--rw=write", "--verify=xxhash", "--bs=1020", "--size=10200"],
            &["--verify_only"],
            3 * 1020 + 1017,
            3 * 1020,
        ),
    ];
    // (writer, its binary when not flexio, the generation both runs use)
    type Writer<'a> = (
        &'a str,
        Option<std::path::PathBuf>,
        &'a [(&'a str, &'a str)],
    );
    let mut writers: Vec<Writer> =
        vec![("flexio 3.33", None, ORACLE_COMPAT), ("flexio", None, &[])];
    if let Some(fio) = fio_bin() {
        writers.insert(0, ("fio", Some(fio), ORACLE_COMPAT));
    }
    for (wname, wbin, env) in &writers {
        for (w, check, at, piece) in cases {
            let what = format!("{wname} {}", w.join(" "));
            let mut base = vec!["--name=v", fs.as_str(), "--bs=4k", "--size=64k"];
            base.extend_from_slice(w);
            // A later --bs/--size overrides the defaults above.
            let mut write = base.clone();
            write.push("--do_verify=0");
            let _ = std::fs::remove_file(&f);
            let r = match wbin {
                Some(b) => run_in(b, &write, d.path()),
                None => run(env, &write, d.path()),
            };
            assert_eq!(r.code, 0, "{what}: {}", r.stderr);
            let orig = std::fs::read(&f).unwrap();
            flip(&f, at);
            let changed = std::fs::read(&f).unwrap();
            let mut v = base.clone();
            v.extend_from_slice(check);
            v.push("--verify_dump=1");
            let out = tempfile::tempdir().unwrap();
            let r = run(env, &v, out.path());
            assert_eq!(r.code, 1, "{what}: {}", r.stderr);
            let dump = |dir: &Path, kind: &str| {
                std::fs::read(dir.join(format!("v.{piece}.{kind}")))
                    .unwrap_or_else(|e| panic!("{what}: v.{piece}.{kind}: {e}\n{}", r.stderr))
            };
            let exp = dump(out.path(), "expected");
            let rec = dump(out.path(), "received");
            let n = exp.len();
            assert!(n > 0, "{what}");
            let p = piece as usize;
            assert_eq!(
                exp,
                orig[p..p + n],
                "{what}: .expected is the block as written"
            );
            assert_eq!(
                rec,
                changed[p..p + n],
                "{what}: .received is the block as read"
            );
            assert!(
                r.stderr
                    .contains(&format!("expected data dumped as v.{piece}.expected")),
                "{what}: {}",
                r.stderr
            );
            if let (Some(fio), "fio") = (wbin, *wname) {
                let fo = tempfile::tempdir().unwrap();
                let x = run_in(fio, &v, fo.path());
                assert!(
                    x.stderr.contains("verify failed"),
                    "{what}: fio: {}",
                    x.stderr
                );
                let fexp = dump(fo.path(), "expected");
                assert_eq!(dump(fo.path(), "received"), rec, "{what}: fio's .received");
                // fio 3.33's header is 40 bytes; it stamps its own time and numbers there.
                assert_eq!(
                    fexp[40..],
                    exp[40..],
                    "{what}: fio's .expected past the header"
                );
            }
        }
    }
}
