//! `zonemode=zbd` against fio 3.33 on regular files, where fio emulates zones: the same job
//! through both, with the I/O each did (write_iolog) compared request by request, the zone
//! reset counts, the output layouts of both fio versions, and fio's messages for jobs it
//! refuses.

use crate::common;
use common::*;
use std::path::Path;

/// The requests of a version-3 iolog: (file name, action, offset, length).
fn ios(log: &Path) -> Vec<(String, String, u64, u64)> {
    let text = std::fs::read_to_string(log).unwrap_or_else(|e| panic!("{}: {e}", log.display()));
    text.lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            match f.as_slice() {
                [_, file, act, off, len] if ["read", "write", "trim"].contains(act) => {
                    let name = Path::new(file).file_name()?.to_string_lossy().into_owned();
                    Some((name, act.to_string(), off.parse().ok()?, len.parse().ok()?))
                }
                _ => None,
            }
        })
        .collect()
}

/// The JSON document and the normal output of a `--output-format=normal,json` run (fio
/// prints the JSON first).
fn split_json(out: &str) -> (String, String) {
    let start = out
        .find("{\n")
        .unwrap_or_else(|| panic!("no JSON in:\n{out}"));
    let end = out[start..].find("\n}\n").map(|i| start + i + 3).unwrap();
    (out[start..end].to_string(), out[end..].to_string())
}

/// `N zone resets` of the first direction line that has it.
fn resets(out: &str) -> Option<u64> {
    out.lines()
        .find_map(|l| l.split("; ").nth(1)?.strip_suffix(" zone resets"))
        .and_then(|n| n.parse().ok())
}

/// Both tools, each in its own directory holding `f` (16 MiB, sparse), the same arguments
/// (`@D@` = the directory). flexio runs as fio 3.33.
struct Both {
    fio: Run,
    flexio: Run,
    fio_dir: tempfile::TempDir,
    flexio_dir: tempfile::TempDir,
}

fn both_on_file(size: u64, args: &[&str]) -> Option<Both> {
    let fio = fio_bin()?;
    let _guard = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let run = |bin: &Path, env: &[(&str, &str)]| {
        let d = tempfile::tempdir().unwrap();
        std::fs::File::create(d.path().join("f"))
            .unwrap()
            .set_len(size)
            .unwrap();
        let a = subst(args, d.path());
        let r = run_in_env(
            bin,
            &a.iter().map(String::as_str).collect::<Vec<_>>(),
            d.path(),
            env,
        );
        (r, d)
    };
    let (f, fd) = run(&fio, &[]);
    let (x, xd) = run(&flexio_bin(), ORACLE_COMPAT);
    Some(Both {
        fio: f,
        flexio: x,
        fio_dir: fd,
        flexio_dir: xd,
    })
}

/// Run a zbd job on a 16 MiB file through both and require the same requests, in the same
/// order, and the same number of zone resets.
fn same_io(what: &str, extra: &[&str]) {
    let mut args = vec![
        "--name=z",
        "--filename=f",
        "--zonemode=zbd",
        "--zonesize=1M",
        "--write_iolog=io.log",
    ];
    args.extend_from_slice(extra);
    let Some(b) = both_on_file(16 << 20, &args) else {
        return;
    };
    assert_eq!(b.fio.code, 0, "{what}: fio failed: {}", b.fio.stderr);
    assert_eq!(
        b.flexio.code, 0,
        "{what}: flexio failed: {}",
        b.flexio.stderr
    );
    let a = ios(&b.fio_dir.path().join("io.log"));
    let x = ios(&b.flexio_dir.path().join("io.log"));
    assert!(!a.is_empty(), "{what}: fio did no I/O");
    if let Some(i) = a.iter().zip(&x).position(|(p, q)| p != q) {
        panic!(
            "{what}: request #{i} differs: fio {:?}, flexio {:?}",
            a[i], x[i]
        );
    }
    assert_eq!(a.len(), x.len(), "{what}: number of requests");
    assert_eq!(
        resets(&b.fio.stdout),
        resets(&b.flexio.stdout),
        "{what}: zone resets\nfio:\n{}\nflexio:\n{}",
        b.fio.stdout,
        b.flexio.stdout
    );
}

#[test]
fn random_writes_under_open_zone_limits_go_where_fio_s_go() {
    same_io(
        "max_open_zones=2",
        &["--rw=randwrite", "--bs=64k", "--max_open_zones=2"],
    );
    same_io(
        "job_max_open_zones=2 of 4",
        &[
            "--rw=randwrite",
            "--bs=4k",
            "--max_open_zones=4",
            "--job_max_open_zones=2",
        ],
    );
    same_io(
        "bsrange, 2 open zones",
        &["--rw=randwrite", "--bsrange=4k-64k", "--max_open_zones=2"],
    );
    same_io("no limit", &["--rw=randwrite", "--bs=64k"]);
}

#[test]
fn full_zones_are_reset_as_in_fio() {
    // Every pass after the first finds the zones full: 16 resets per pass.
    same_io("three passes", &["--rw=write", "--bs=64k", "--loops=3"]);
    // A block size that does not divide the zone: the remainder is left.
    same_io("48k blocks", &["--rw=write", "--bs=48k"]);
    // io_size beyond the file: another pass, the random streams seeded again.
    same_io(
        "threshold and frequency",
        &[
            "--rw=randwrite",
            "--bs=16k",
            "--zone_reset_threshold=0.3",
            "--zone_reset_frequency=0.25",
            "--io_size=48M",
        ],
    );
}

#[test]
fn zone_capacity_below_the_zone_size() {
    same_io(
        "sequential",
        &["--rw=write", "--bs=64k", "--zonecapacity=768k"],
    );
    same_io(
        "random, 3 open zones",
        &[
            "--rw=randwrite",
            "--bs=16k",
            "--zonecapacity=768k",
            "--max_open_zones=3",
        ],
    );
}

#[test]
fn mixed_jobs_write_first_and_read_below_the_write_pointer() {
    same_io(
        "randrw, 3 open zones",
        &["--rw=randrw", "--bs=16k", "--max_open_zones=3"],
    );
    same_io(
        "randrw, read_beyond_wp",
        &["--rw=randrw", "--bs=16k", "--read_beyond_wp=1"],
    );
}

#[test]
fn later_jobs_read_what_earlier_ones_wrote() {
    // One run, three jobs on one file: the zones' write pointers carry over.
    let job = "[global]\nfilename=f\nzonemode=zbd\nzonesize=1M\n\
               [w]\nrw=randwrite\nbs=16k\nnumber_ios=300\nmax_open_zones=3\nwrite_iolog=w.log\n\
               [r]\nstonewall\nrw=randread\nbs=8k\nnumber_ios=500\nwrite_iolog=r.log\n\
               [s]\nstonewall\nrw=read\nbs=8k\nwrite_iolog=s.log\n";
    let Some(fio) = fio_bin() else { return };
    let _guard = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let mut got = Vec::new();
    for (bin, env) in [(fio, &[][..]), (flexio_bin(), ORACLE_COMPAT)] {
        let d = tempfile::tempdir().unwrap();
        // `f`, and `g` and `h` for jobs of several files.
        for name in ["f", "g", "h"] {
            std::fs::File::create(d.path().join(name))
                .unwrap()
                .set_len(16 << 20)
                .unwrap();
        }
        std::fs::write(d.path().join("j.fio"), job).unwrap();
        let r = run_in_env(&bin, &["j.fio"], d.path(), env);
        assert_eq!(r.code, 0, "{}: {}", bin.display(), r.stderr);
        got.push(["w.log", "r.log", "s.log"].map(|l| ios(&d.path().join(l))));
    }
    for (i, name) in ["write", "random read", "sequential read"]
        .iter()
        .enumerate()
    {
        assert!(!got[0][i].is_empty(), "{name}: fio did no I/O");
        assert_eq!(got[0][i], got[1][i], "{name} job: requests differ");
    }
}

#[test]
fn queued_writes_close_their_zones_when_they_complete() {
    // io_uring at depth 8 on a page-cached file: fio's choices depend on when it reaps the
    // write that fills a zone, and on its waits for the queue when the limit is reached.
    let probe = both_on_file(
        1 << 20,
        &[
            "--name=p",
            "--filename=f",
            "--ioengine=io_uring",
            "--rw=read",
            "--size=4k",
        ],
    );
    let Some(p) = probe else { return };
    if p.fio.code != 0 || p.flexio.code != 0 {
        eprintln!(
            "SKIP: io_uring is not available here: {}{}",
            p.fio.stderr, p.flexio.stderr
        );
        return;
    }
    same_io(
        "io_uring depth 8",
        &[
            "--rw=randwrite",
            "--bs=16k",
            "--max_open_zones=3",
            "--ioengine=io_uring",
            "--iodepth=8",
        ],
    );
}

#[test]
fn regions_round_to_whole_zones_with_fio_s_notes() {
    for (extra, note) in [
        (
            "--offset=100k",
            "f: rounded up offset from 102400 to 1048576",
        ),
        (
            "--size=3500k",
            "f: rounded down io_size from 3584000 to 3145728",
        ),
    ] {
        let args = [
            "--name=z",
            "--filename=f",
            "--zonemode=zbd",
            "--zonesize=1M",
            "--rw=write",
            "--bs=64k",
            "--write_iolog=io.log",
            extra,
        ];
        let Some(b) = both_on_file(16 << 20, &args) else {
            return;
        };
        assert!(b.fio.stdout.contains(note), "fio: {}", b.fio.stdout);
        assert!(
            b.flexio.stdout.contains(note),
            "flexio: {}",
            b.flexio.stdout
        );
        assert_eq!(
            ios(&b.fio_dir.path().join("io.log")),
            ios(&b.flexio_dir.path().join("io.log")),
            "{extra}"
        );
    }
}

#[test]
fn jobs_fio_refuses_are_refused_with_fio_s_words() {
    let cases: &[(&[&str], &str)] = &[
        (
            &[],
            "Specifying the zone size is mandatory for regular file/block device with --zonemode=zbd",
        ),
        (
            &["--zonesize=256"],
            "zone size must be at least 512 bytes for --zonemode=zbd",
        ),
        (
            &["--zonesize=1M", "--zonecapacity=2M"],
            "job parameter zonecapacity 2097152 is larger than zone size 1048576",
        ),
        (
            &["--zonesize=32M"],
            "file/device size 16777216 is smaller than zone size 33554432",
        ),
        (
            &["--zonesize=1M", "--job_max_open_zones=2"],
            "'job_max_open_zones' cannot be used without a global open zones limit",
        ),
        (
            &["--zonesize=1M", "--zoneskip=100k"],
            "zoneskip 102400 is not a multiple of the device zone size 1048576.",
        ),
        (
            &["--zonesize=1M", "--rw=trim"],
            "trim block size 65536 is not the zone size 1048576",
        ),
        (
            &["--zonesize=1M", "--offset=100k", "--size=1M"],
            "io_size must be at least one zone",
        ),
        (
            &["--zonesize=1M", "--zone_reset_threshold=1.5"],
            "value out of range: 1.500000 (range max: 1.000000)",
        ),
        // zonesize under zonemode=none, given or fio's default, is refused.
        (
            &["--zonemode=none", "--zonesize=1M"],
            "--zonemode=none and --zonesize are not compatible.",
        ),
    ];
    for (extra, msg) in cases {
        let mut args = vec![
            "--name=z",
            "--filename=f",
            "--zonemode=zbd",
            "--rw=write",
            "--bs=64k",
        ];
        args.extend_from_slice(extra);
        let Some(b) = both_on_file(16 << 20, &args) else {
            return;
        };
        let fio_all = format!("{}{}", b.fio.stdout, b.fio.stderr);
        assert!(fio_all.contains(msg), "{extra:?}: fio says: {fio_all}");
        assert!(
            b.flexio.stderr.contains(msg),
            "{extra:?}: flexio says: {}{}",
            b.flexio.stdout,
            b.flexio.stderr
        );
        assert_eq!(b.fio.code, 1, "{extra:?}: fio's exit status");
        assert_eq!(b.flexio.code, 1, "{extra:?}: flexio's exit status");
    }
    // zonesize without zonemode= is refused as well (fio's default zonemode is none), and
    // strided zones without a zone size.
    let none = "--zonemode=none and --zonesize are not compatible.";
    for (extra, msg) in [
        (&["--zonesize=64k"][..], none),
        (&["--zonerange=128k", "--zonesize=64k"], none),
        (
            &["--zonemode=strided", "--zonerange=128k"],
            "--zonesize must be specified when using --zonemode=strided.",
        ),
    ] {
        let mut args = vec!["--name=z", "--filename=f", "--rw=randread", "--bs=8k"];
        args.extend_from_slice(extra);
        let Some(b) = both_on_file(1 << 20, &args) else {
            return;
        };
        for (who, r) in [("fio", &b.fio), ("flexio", &b.flexio)] {
            assert_eq!(r.code, 1, "{extra:?}: {who}: {}{}", r.stdout, r.stderr);
            assert!(r.stderr.contains(msg), "{extra:?}: {who}: {}", r.stderr);
        }
    }
    // A write larger than a zone fails the job when it is issued (fio's error text).
    let args = [
        "--name=z",
        "--filename=f",
        "--zonemode=zbd",
        "--zonesize=1M",
        "--rw=write",
        "--bs=2M",
    ];
    let Some(b) = both_on_file(16 << 20, &args) else {
        return;
    };
    for (who, r) in [("fio", &b.fio), ("flexio", &b.flexio)] {
        assert_eq!(r.code, 1, "{who}: {}{}", r.stdout, r.stderr);
        assert!(
            r.stdout
                .contains("func=I/O buflen exceeds zone size, error=Invalid argument")
                || r.stderr.contains("func=I/O buflen exceeds zone size"),
            "{who}: {}{}",
            r.stdout,
            r.stderr
        );
    }
}

#[test]
fn output_has_fio_3_33_s_layout_with_the_reset_count() {
    let args = [
        "--name=z",
        "--filename=f",
        "--zonemode=zbd",
        "--zonesize=1M",
        "--rw=randrw",
        "--bs=64k",
        "--loops=2",
        "--max_open_zones=2",
        "--output-format=normal,json",
    ];
    let Some(b) = both_on_file(16 << 20, &args) else {
        return;
    };
    assert_eq!(b.flexio.code, 0, "{}", b.flexio.stderr);
    let (fj, fnorm) = split_json(&b.fio.stdout);
    let (xj, xnorm) = split_json(&b.flexio.stdout);
    assert_same_shape(&fnorm, &xnorm, "zbd randrw");
    assert_same_json_shape(&fj, &xj, "zbd randrw");
    // fio 3.33: the count after the write line only, nothing in JSON.
    let n = resets(&b.flexio.stdout).expect("a reset count");
    assert!(n > 0, "two passes over full zones reset some");
    assert_eq!(resets(&b.fio.stdout), Some(n));
    assert!(b
        .flexio
        .stdout
        .lines()
        .any(|l| l.starts_with("  read: IOPS=") && !l.contains("zone resets")));
    assert!(json_of(&xj)["jobs"][0].get("zone_resets").is_none());
}

#[test]
fn the_newest_layout_shows_resets_on_every_line_of_zbd_jobs_only() {
    let d = tempfile::tempdir().unwrap();
    std::fs::File::create(d.path().join("f"))
        .unwrap()
        .set_len(16 << 20)
        .unwrap();
    let zbd = [
        "--name=z",
        "--filename=f",
        "--zonemode=zbd",
        "--zonesize=1M",
        "--rw=randrw",
        "--bs=64k",
        "--loops=2",
        "--max_open_zones=2",
    ];
    let r = flexio(&zbd, d.path());
    assert_eq!(r.code, 0, "{}", r.stderr);
    let lines: Vec<&str> = r
        .stdout
        .lines()
        .filter(|l| l.starts_with("  read: IOPS=") || l.starts_with("  write: IOPS="))
        .collect();
    assert_eq!(lines.len(), 2, "{}", r.stdout);
    let n = resets(&r.stdout).unwrap();
    assert!(n > 0);
    for l in &lines {
        assert!(l.ends_with(&format!("; {n} zone resets")), "{l}");
    }
    let mut a = zbd.to_vec();
    a.push("--output-format=json");
    let j = json_of(&flexio(&a, d.path()).stdout);
    let job = j["jobs"][0].as_object().unwrap();
    let fio_keys: Vec<&String> = job.keys().filter(|k| *k != "flexio").collect();
    assert_eq!(fio_keys.last().map(|k| k.as_str()), Some("zone_resets"));
    assert!(job["zone_resets"].as_u64().unwrap() > 0);
    // Without zonemode=zbd: no count anywhere.
    let plain = [
        "--name=p",
        "--filename=f",
        "--rw=randrw",
        "--bs=64k",
        "--size=1M",
        "--output-format=normal,json",
    ];
    let r = flexio(&plain, d.path());
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(!r.stdout.contains("zone resets"), "{}", r.stdout);
    assert!(json_of(&split_json(&r.stdout).0)["jobs"][0]
        .get("zone_resets")
        .is_none());
}

/// Several files past their end (io_size beyond them): sequential I/O over whole files
/// starts each file but the last over on its own and ends the last one (a job of `f:g`
/// with io_size three times a file writes f, g, f, g... to their ends, then f alone);
/// regions smaller than the files, and random I/O, start over all together. Both tools,
/// files of 16 and 8 MiB, the same requests to the same files and the same resets.
#[test]
fn several_files_past_their_end_go_on_as_in_fio() {
    let Some(fio) = fio_bin() else { return };
    let _guard = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let cases: &[(&str, &[&str])] = &[
        ("f:g", &["--rw=write", "--io_size=48M"]),
        ("f:g:h", &["--rw=write", "--io_size=104M"]),
        ("f:s", &["--rw=write", "--io_size=40M"]),
        ("s:f", &["--rw=write", "--io_size=40M"]),
        ("s:f:g", &["--rw=write", "--io_size=64M"]),
        ("f:g", &["--rw=write", "--io_size=48M", "--size=32M"]),
        ("f:g", &["--rw=write", "--io_size=48M", "--size=24M"]),
        ("f:g", &["--rw=write", "--io_size=48M", "--offset=4M"]),
        (
            "f:g",
            &[
                "--rw=write",
                "--io_size=48M",
                "--file_service_type=sequential",
            ],
        ),
        (
            "f:g:s",
            &["--rw=write", "--io_size=72M", "--file_service_type=random"],
        ),
        ("f:g", &["--rw=write", "--io_size=40M", "--bs=96k"]),
        ("f:g", &["--rw=rw", "--io_size=48M"]),
    ];
    let sizes: &[(&str, u64)] = &[
        ("f", 16 << 20),
        ("g", 16 << 20),
        ("h", 16 << 20),
        ("s", 8 << 20),
    ];
    for (files, extra) in cases {
        let what = format!("{files} {extra:?}");
        let mut args = vec![
            "--name=z".to_string(),
            format!("--filename={files}"),
            "--zonemode=zbd".into(),
            "--zonesize=1M".into(),
            "--bs=256k".into(),
            "--write_iolog=io.log".into(),
            "--output=out.txt".into(),
        ];
        args.extend(extra.iter().map(|a| a.to_string()));
        let look = |d: &Path| {
            let out = std::fs::read_to_string(d.join("out.txt")).unwrap_or_default();
            (ios(&d.join("io.log")), resets(&out))
        };
        let (f, x) = both_on_files(&fio, sizes, &args, look);
        if let Some(k) = f.0.iter().zip(&x.0).position(|(p, q)| p != q) {
            panic!(
                "{what}: request #{k} differs: fio {:?}, flexio {:?}",
                f.0[k], x.0[k]
            );
        }
        assert_eq!(f.0.len(), x.0.len(), "{what}: number of requests");
        assert!(f.1.is_some(), "{what}: fio printed no zone resets");
        assert_eq!(f.1, x.1, "{what}: zone resets");
    }
}

// ---- verify, trims and writes in one job, zoneskip ------------------------------------

/// What a run did: its exit status, each job's issued requests (read, write, trim: the
/// `issued rwts` line) and error (JSON), the zone resets of each write line in order.
#[derive(Debug, PartialEq)]
struct Outcome {
    code: i32,
    issued: Vec<[u64; 3]>,
    errors: Vec<u64>,
    resets: Vec<u64>,
}

fn outcome(r: &Run) -> Outcome {
    let (json, normal) = split_json(&r.stdout);
    let j = json_of(&json);
    let errors = j["jobs"]
        .as_array()
        .map(|a| a.iter().map(|x| x["error"].as_u64().unwrap_or(0)).collect())
        .unwrap_or_default();
    let issued = normal
        .lines()
        .filter_map(|l| l.trim().strip_prefix("issued rwts: total="))
        .map(|t| {
            let n: Vec<u64> = t
                .split_whitespace()
                .next()
                .unwrap_or("")
                .split(',')
                .filter_map(|v| v.parse().ok())
                .collect();
            [0, 1, 2].map(|d| n.get(d).copied().unwrap_or(u64::MAX))
        })
        .collect();
    let resets = normal
        .lines()
        .filter_map(|l| l.split("; ").nth(1)?.strip_suffix(" zone resets"))
        .filter_map(|n| n.parse().ok())
        .collect();
    Outcome {
        code: r.code,
        issued,
        errors,
        resets,
    }
}

/// Both tools on `f` (and `g`, `h`; 16 MiB each) with a job file (`j.fio`): the same outcome, the same
/// requests in each of `logs` (the jobs' write_iolog files), and that outcome returned.
fn same_job_file(what: &str, job: &str, logs: &[&str]) -> Option<Outcome> {
    let fio = fio_bin()?;
    let _guard = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let mut got = Vec::new();
    for (bin, env) in [(fio, &[][..]), (flexio_bin(), ORACLE_COMPAT)] {
        let d = tempfile::tempdir().unwrap();
        // `f`, and `g` and `h` for jobs of several files.
        for name in ["f", "g", "h"] {
            std::fs::File::create(d.path().join(name))
                .unwrap()
                .set_len(16 << 20)
                .unwrap();
        }
        std::fs::write(d.path().join("j.fio"), job).unwrap();
        let r = run_in_env(
            &bin,
            &["j.fio", "--output-format=normal,json"],
            d.path(),
            env,
        );
        let logs: Vec<_> = logs.iter().map(|l| ios(&d.path().join(l))).collect();
        got.push((outcome(&r), logs, r));
    }
    let (x, f) = (got.pop().unwrap(), got.pop().unwrap());
    assert_eq!(
        f.0, x.0,
        "{what}: outcome\nfio:\n{}{}\nflexio:\n{}{}",
        f.2.stdout, f.2.stderr, x.2.stdout, x.2.stderr
    );
    for (i, l) in logs.iter().enumerate() {
        if let Some(k) = f.1[i].iter().zip(&x.1[i]).position(|(p, q)| p != q) {
            panic!(
                "{what}: {l}: request #{k} differs: fio {:?}, flexio {:?}",
                f.1[i][k], x.1[i][k]
            );
        }
        assert_eq!(
            f.1[i].len(),
            x.1[i].len(),
            "{what}: {l}: number of requests"
        );
    }
    Some(f.0)
}

/// One job on `f` given as command-line options, through [`same_job_file`].
fn same_job(what: &str, opts: &[&str]) -> Option<Outcome> {
    let mut job = String::from("[z]\nfilename=f\nzonemode=zbd\nzonesize=1M\nwrite_iolog=io.log\n");
    for o in opts {
        job.push_str(o.trim_start_matches("--"));
        job.push('\n');
    }
    same_job_file(what, &job, &["io.log"])
}

/// A single job's outcome: exit status, issued (read, write, trim), zone resets.
type Single = (i32, [u64; 3], u64);

/// A job's options and the outcome both tools must have.
type Case = (&'static [&'static str], Single);

/// The single job's outcome.
fn one(o: &Option<Outcome>) -> Option<Single> {
    let o = o.as_ref()?;
    assert_eq!(o.issued.len(), 1, "{o:?}");
    Some((o.code, o.issued[0], o.resets.first().copied().unwrap_or(0)))
}

#[test]
fn verify_with_zones_writes_then_reads_back_as_fio_does() {
    let cases: &[Case] = &[
        (
            &["rw=write", "bs=4k", "verify=crc32c"],
            (0, [4096, 4096, 0], 0),
        ),
        (
            &["rw=randwrite", "bs=4k", "verify=crc32c"],
            (0, [4096, 4096, 0], 0),
        ),
        // Each loop resets the zones with data before it writes (and closes them).
        (
            &[
                "rw=randwrite",
                "bs=16k",
                "verify=crc32c",
                "max_open_zones=2",
                "loops=2",
            ],
            (0, [2048, 2048, 0], 16),
        ),
        (
            &[
                "rw=randrw",
                "bs=16k",
                "verify=md5",
                "max_open_zones=3",
                "loops=2",
            ],
            (0, [2048, 1058, 0], 10),
        ),
        (
            &[
                "rw=randwrite",
                "bs=16k",
                "verify=crc32c",
                "verify_backlog=16",
            ],
            (0, [1024, 1024, 0], 0),
        ),
        // fio 3.33 loops one pass at a time: resets between them.
        (
            &["rw=randwrite", "bs=16k", "verify=crc32c", "io_size=40M"],
            (0, [2048, 2048, 0], 16),
        ),
        (
            &[
                "rw=write",
                "bs=16k",
                "verify=crc32c",
                "zonecapacity=768k",
                "loops=2",
            ],
            (0, [1536, 1536, 0], 16),
        ),
        (
            &[
                "rw=randwrite",
                "bs=16k",
                "verify=crc32c",
                "offset=2M",
                "size=8M",
                "loops=2",
            ],
            (0, [1024, 1024, 0], 8),
        ),
    ];
    for (opts, want) in cases {
        let got = one(&same_job(&format!("{opts:?}"), opts));
        if got.is_none() {
            return;
        }
        assert_eq!(got, Some(*want), "{opts:?}");
    }
}

#[test]
fn trims_and_writes_in_one_zoned_job_as_fio_does() {
    let cases: &[Case] = &[
        (&["rw=trimwrite", "bs=1M"], (0, [0, 16, 16], 0)),
        (&["rw=trimwrite", "bs=4k,4k,1M"], (0, [0, 3841, 16], 0)),
        (&["rw=trimwrite", "bs=1M", "loops=2"], (0, [0, 32, 32], 16)),
        (
            &["rw=trimwrite", "bs=4k,4k,1M", "verify=crc32c"],
            (0, [3841, 3841, 16], 0),
        ),
    ];
    for (opts, want) in cases {
        let got = one(&same_job(&format!("{opts:?}"), opts));
        if got.is_none() {
            return;
        }
        assert_eq!(got, Some(*want), "{opts:?}");
    }
    // randtrimwrite starts with a random trim, which looks for a zone with data: on empty
    // zones there is none, and the job ends at once without I/O (fio 3.33 prints no
    // statistics for it).
    for bs in ["bs=1M", "bs=4k,4k,1M"] {
        let Some(o) = same_job(bs, &["rw=randtrimwrite", bs]) else {
            return;
        };
        assert_eq!((o.code, o.errors.as_slice()), (0, &[0][..]), "{bs}");
    }
    // After a writer: each trim resets a zone with data, its write fills it again; one the
    // open-zone limit sends elsewhere is followed by another write of the trimmed block.
    let job = "[global]\nfilename=f\nzonemode=zbd\nzonesize=1M\n\
               [w]\nrw=write\nbs=1M\n\
               [tw]\nstonewall\nrw=randtrimwrite\nbs=1M\nwrite_iolog=tw.log\n";
    let Some(o) = same_job_file("randtrimwrite after a writer", job, &["tw.log"]) else {
        return;
    };
    assert_eq!(o.issued[1], [0, 16, 16]);
    assert_eq!(o.resets, [0, 16]);
    let job = "[global]\nfilename=f\nzonemode=zbd\nzonesize=1M\nbs=16k\n\
               [w]\nrw=randwrite\nmax_open_zones=4\n\
               [v]\nstonewall\nrw=randread\nnumber_ios=1\n\
               [tw]\nstonewall\nrw=randtrimwrite\nbs=4k,4k,1M\nwrite_iolog=tw.log\n";
    let Some(o) = same_job_file("randtrimwrite under the limit", job, &["tw.log"]) else {
        return;
    };
    // (the third job's seeds put its first trim's write in another open zone)
    assert_eq!(o.issued[2], [0, 17, 16]);
    assert_eq!(o.resets, [7, 16], "fio 3.33: on the write lines only");
}

#[test]
fn zoneskip_with_zones_moves_on_as_fio_does() {
    let cases: &[Case] = &[
        // One zone, two skipped, from the start again past the end.
        (&["rw=write", "bs=4k", "zoneskip=2M"], (0, [0, 4096, 0], 10)),
        // Loops go on from the zone the previous one reached.
        (
            &["rw=write", "bs=256k", "zoneskip=2M", "loops=2"],
            (0, [0, 128, 0], 26),
        ),
        (
            &[
                "rw=write",
                "bs=256k",
                "zoneskip=2M",
                "io_size=6M",
                "loops=2",
                "offset=1M",
            ],
            (0, [0, 48, 0], 7),
        ),
        // A block size that does not divide the zone: a zone's worth drawn moves on.
        (&["rw=write", "bs=48k", "zoneskip=2M"], (0, [0, 342, 0], 15)),
        (
            &["rw=write", "bs=256k", "zoneskip=2M", "zonecapacity=768k"],
            (0, [0, 64, 0], 16),
        ),
        // Random I/O does not skip.
        (
            &["rw=randwrite", "bs=256k", "zoneskip=2M"],
            (0, [0, 64, 0], 0),
        ),
    ];
    for (opts, want) in cases {
        let got = one(&same_job(&format!("{opts:?}"), opts));
        if got.is_none() {
            return;
        }
        assert_eq!(got, Some(*want), "{opts:?}");
    }
    // Reads move on at the write pointer; a pass that finds nothing more starts over while
    // the given io_size asks for more.
    let job = "[global]\nfilename=f\nzonemode=zbd\nzonesize=1M\n\
               [w]\nrw=write\nbs=256k\nzoneskip=1M\nio_size=5M\nwrite_iolog=w.log\n\
               [r]\nstonewall\nrw=read\nbs=128k\nzoneskip=2M\nio_size=6M\nwrite_iolog=r.log\n\
               [rr]\nstonewall\nrw=randread\nbs=128k\nzoneskip=2M\nio_size=2M\nwrite_iolog=rr.log\n";
    let Some(o) = same_job_file("zoneskip reads", job, &["w.log", "r.log", "rr.log"]) else {
        return;
    };
    assert_eq!(o.issued, [[0, 20, 0], [48, 0, 0], [16, 0, 0]]);
}

#[test]
fn zoned_reads_start_over_while_io_size_asks_for_more() {
    let job = "[global]\nfilename=f\nzonemode=zbd\nzonesize=1M\n\
               [w]\nrw=write\nbs=256k\nio_size=5M\n\
               [r]\nstonewall\nrw=read\nbs=128k\nio_size=12M\nwrite_iolog=r.log\n\
               [s]\nstonewall\nrw=read\nbs=128k\nwrite_iolog=s.log\n";
    let Some(o) = same_job_file("reads past the data", job, &["r.log", "s.log"]) else {
        return;
    };
    // io_size given: 12 MiB read over the 5 MiB there; not given: what is there.
    assert_eq!(o.issued, [[0, 20, 0], [96, 0, 0], [40, 0, 0]]);
}

/// Several files: a reader's pass ends when the zones have nothing more in any of them,
/// and the next pass starts them all again (the file service picking a file afresh), in
/// each file service.
#[test]
fn zoned_reads_of_several_files_start_over_together() {
    for service in [
        "rw=read",
        "rw=randread",
        "rw=randread\nfile_service_type=random",
        "rw=read\nfile_service_type=sequential",
        "rw=randread\nnorandommap",
        "rw=read\nfile_service_type=roundrobin:3",
        "rw=randread\nfile_service_type=random:2",
    ] {
        let job = format!(
            "[global]\nfilename=f:g:h\nzonemode=zbd\nzonesize=1M\n\
             [w]\nrw=write\nbs=256k\nio_size=5M\n\
             [r]\nstonewall\n{service}\nbs=128k\nio_size=12M\nwrite_iolog=r.log\n"
        );
        let Some(o) = same_job_file(service, &job, &["r.log"]) else {
            return;
        };
        // 12 MiB read over the 5 MiB there: more than one pass.
        assert_eq!(o.issued, [[0, 20, 0], [96, 0, 0]], "{service}");
    }
}

/// A reader with verify after a zoned writer, the file corrupted in between (exec_prerun).
fn corrupted_read_back_job(corrupt: bool) -> String {
    let pre = if corrupt {
        "exec_prerun=sh -c 'printf XXXXXXXX | dd of=f bs=1 seek=5342880 conv=notrunc 2>/dev/null'\n"
    } else {
        ""
    };
    format!(
        "[global]\nfilename=f\nzonemode=zbd\nzonesize=1M\nbs=16k\nverify=crc32c\n\
         [w]\nrw=randwrite\nmax_open_zones=3\ndo_verify=0\n\
         [r]\nstonewall\nrw=read\n{pre}"
    )
}

#[test]
fn verify_catches_corruption_of_zoned_data() {
    // flexio alone: the read-back passes on intact data and fails on the corrupted block.
    let _guard = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    for corrupt in [false, true] {
        let d = tempfile::tempdir().unwrap();
        std::fs::File::create(d.path().join("f"))
            .unwrap()
            .set_len(16 << 20)
            .unwrap();
        std::fs::write(d.path().join("j.fio"), corrupted_read_back_job(corrupt)).unwrap();
        let r = flexio(&["j.fio"], d.path());
        let all = format!("{}{}", r.stdout, r.stderr);
        if corrupt {
            assert_eq!(r.code, 1, "{all}");
            assert!(
                all.contains("crc32c: verify failed at file f offset 5341184, length 16384"),
                "{all}"
            );
        } else {
            assert_eq!(r.code, 0, "{all}");
            assert!(!all.contains("verify failed"), "{all}");
        }
    }
    drop(_guard);
    // And as fio 3.33: the same block, the same counts.
    let Some(o) = same_job_file("corrupted", &corrupted_read_back_job(true), &[]) else {
        return;
    };
    assert_eq!(o.code, 1);
    assert_eq!(o.errors, [0, 84]);
    assert_eq!(o.issued, [[0, 1024, 0], [327, 0, 0]]);
}

#[test]
fn what_stays_refused_with_zones_is_named() {
    let d = tempfile::tempdir().unwrap();
    std::fs::File::create(d.path().join("f"))
        .unwrap()
        .set_len(16 << 20)
        .unwrap();
    for (extra, what) in [
        (
            "--zone_reset_frequency=0.25",
            "zone_reset_frequency with verify and zonemode=zbd is not supported by flexio",
        ),
        (
            "--experimental_verify=1",
            "experimental_verify with zonemode=zbd is not supported by flexio",
        ),
    ] {
        let r = flexio(
            &[
                "--name=z",
                "--filename=f",
                "--zonemode=zbd",
                "--zonesize=1M",
                "--rw=randwrite",
                "--bs=16k",
                "--verify=crc32c",
                extra,
            ],
            d.path(),
        );
        assert_eq!(r.code, 1, "{extra}: {}", r.stderr);
        assert!(r.stderr.contains(what), "{extra}: {}", r.stderr);
    }
}
