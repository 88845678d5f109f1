//! `zonemode=zbd` against fio 3.33 on regular files, where fio emulates zones: the same job
//! through both, with the I/O each did (write_iolog) compared request by request, the zone
//! reset counts, the output layouts of both fio versions, and fio's messages for jobs it
//! refuses.

mod common;
use common::*;
use std::path::Path;

/// The requests of a version-3 iolog: (action, offset, length).
fn ios(log: &Path) -> Vec<(String, u64, u64)> {
    let text = std::fs::read_to_string(log).unwrap_or_else(|e| panic!("{}: {e}", log.display()));
    text.lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            match f.as_slice() {
                [_, _, act, off, len] if ["read", "write", "trim"].contains(act) => {
                    Some((act.to_string(), off.parse().ok()?, len.parse().ok()?))
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
        std::fs::File::create(d.path().join("f"))
            .unwrap()
            .set_len(16 << 20)
            .unwrap();
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
