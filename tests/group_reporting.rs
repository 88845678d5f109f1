//! How jobs become reporting units, against fio 3.33: a group_reporting job joins the job
//! before it in its group even when that one does not ask for group reporting; the joined
//! unit keeps its first job's name and units (fio notes a kb_base that differs); and a job
//! that joins a reported group must agree with it on lat_percentiles, or fio refuses it;
//! the bandwidth-sample line is in bytes whatever the unit_base.
//! Skips the fio side when fio is missing.

use crate::common;
use common::*;

/// The `NAME: (groupid=G, jobs=N)` headers of a normal output.
fn unit_headers(text: &str) -> Vec<String> {
    text.lines()
        .filter(|l| l.contains(": (groupid="))
        .map(|l| l.split("): err=").next().unwrap_or("").to_string())
        .collect()
}

#[test]
fn a_group_reporting_job_joins_the_job_before_it() {
    // j0 has no group_reporting; j1 and its clone have it and join j0's unit: one unit of
    // three jobs, named j0 (flexio made two units: j0, and j1 with its clone).
    let args = [
        "--ioengine=null",
        "--size=256k",
        "--name=j0",
        "--rw=read",
        "--name=j1",
        "--rw=write",
        "--numjobs=2",
        "--group_reporting",
    ];
    let d = tempfile::tempdir().unwrap();
    let r = oracle_run(&flexio_bin(), &args, d.path());
    assert_eq!(
        unit_headers(&r.stdout),
        ["j0: (groupid=0, jobs=3"],
        "{}",
        r.stdout
    );
    if let Some((f, _)) = both(&args) {
        assert_eq!(
            unit_headers(&f.stdout),
            ["j0: (groupid=0, jobs=3"],
            "fio 3.33"
        );
    }
    // A new group starts a new unit, whatever group_reporting says.
    let mut split = args.to_vec();
    split.insert(5, "--new_group");
    let r = oracle_run(&flexio_bin(), &split, d.path());
    assert_eq!(
        unit_headers(&r.stdout),
        ["j0: (groupid=0, jobs=1", "j1: (groupid=1, jobs=2"],
        "{}",
        r.stdout
    );
}

#[test]
fn lat_percentiles_must_agree_within_a_reported_group() {
    let args = [
        "--ioengine=null",
        "--size=256k",
        "--name=j0",
        "--name=j1",
        "--group_reporting",
        "--lat_percentiles=1",
    ];
    let d = tempfile::tempdir().unwrap();
    let r = flexio_oracle(&args, d.path());
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(
        r.stderr
            .contains("lat_percentiles in job: j1 differs from group"),
        "{}",
        r.stderr
    );
    if let Some((f, _)) = both(&args) {
        assert_eq!(f.code, 1);
        assert!(f
            .stderr
            .contains("lat_percentiles in job: j1 differs from group"));
    }
    // Without group_reporting on the joining job, with the same setting, or where the
    // other job's disable_lat turns its lat_percentiles off (fio's option check), it runs.
    for ok in [
        vec![
            "--ioengine=null",
            "--size=64k",
            "--name=a",
            "--name=b",
            "--lat_percentiles=1",
        ],
        vec![
            "--ioengine=null",
            "--size=64k",
            "--lat_percentiles=1",
            "--name=a",
            "--name=b",
            "--group_reporting",
        ],
        vec![
            "--ioengine=null",
            "--size=64k",
            "--name=a",
            "--lat_percentiles=1",
            "--disable_lat=1",
            "--name=b",
            "--group_reporting",
        ],
    ] {
        let r = flexio_oracle(&ok, d.path());
        assert_eq!(r.code, 0, "{ok:?}: {}", r.stderr);
        if let Some((f, _)) = both(&ok) {
            assert_eq!(f.code, 0, "fio 3.33, {ok:?}: {}", f.stderr);
        }
    }
}

#[test]
fn a_kb_base_that_differs_in_a_unit_is_noted() {
    let args = [
        "--ioengine=null",
        "--size=256k",
        "--name=a",
        "--kb_base=1000",
        "--name=b",
        "--group_reporting",
    ];
    let note = "fio: kb_base differs for jobs in group, using 1000 as the base";
    let d = tempfile::tempdir().unwrap();
    let r = oracle_run(&flexio_bin(), &args, d.path());
    assert!(r.stdout.contains(note), "{}", r.stdout);
    // The unit reports in its first job's base: decimal units first.
    let line = r
        .stdout
        .lines()
        .find(|l| l.contains("read: IOPS="))
        .unwrap();
    assert!(line.contains("MB/s ("), "{line}");
    if let Some((f, _)) = both(&args) {
        assert!(f.stdout.contains(note), "fio 3.33: {}", f.stdout);
    }
    // The JSON stays parseable: the note goes to stderr there.
    let mut json = args.to_vec();
    json.push("--output-format=json");
    let r = oracle_run(&flexio_bin(), &json, d.path());
    assert!(r.stderr.contains(note), "{}", r.stderr);
    json_of(&r.stdout);
    assert!(r.stdout.trim_start().starts_with('{'));
}

#[test]
fn a_groups_lines_use_its_last_units_kb_base() {
    // fio's group figures take each unit's kb_base in turn and the units' direction lines
    // use the group's: j0 asks for kb_base=1000, but the last unit of its group (j1's
    // clone) has 1024, so every line of the group is in IEC units first (flexio printed
    // j0's lines and the group's in SI units).
    let args = [
        "--ioengine=null",
        "--size=256k",
        "--name=j0",
        "--rw=read",
        "--group_reporting",
        "--kb_base=1000",
        "--name=j1",
        "--rw=write",
        "--numjobs=2",
    ];
    let first_units = |text: &str| -> Vec<String> {
        text.lines()
            .filter(|l| l.contains(": IOPS=") || l.contains(": bw="))
            .map(|l| {
                let v = l
                    .split(['=', ' ', ','])
                    .find(|w| w.ends_with("/s"))
                    .unwrap();
                v.trim_start_matches(|c: char| c.is_ascii_digit() || c == '.')
                    .to_string()
            })
            .collect()
    };
    let d = tempfile::tempdir().unwrap();
    let r = oracle_run(&flexio_bin(), &args, d.path());
    let got = first_units(&r.stdout);
    // j0's read line, the write lines of j1 and its clone, the group's READ and WRITE
    // lines: all IEC first (MiB/s or KiB/s).
    assert_eq!(got.len(), 5, "{}", r.stdout);
    assert!(
        got.iter().all(|u| u.ends_with("iB/s")),
        "{got:?}: {}",
        r.stdout
    );
    if let Some((f, _)) = both(&args) {
        let fio = first_units(&f.stdout);
        assert!(fio.iter().all(|u| u.ends_with("iB/s")), "fio 3.33: {fio:?}");
    }
}

#[test]
fn a_unit_base_that_differs_is_noted_with_fios_unit_code() {
    // fio keeps unit_base as its num2str unit: 0 and 8 are both bytes/s (4), 1 is bits/s
    // (5); its note names that code, and 0 against 8 is no difference.
    let cases: &[(&[&str], Option<&str>)] = &[
        (&["--name=a", "--unit_base=1", "--name=b"], Some("5")),
        (&["--name=a", "--name=b", "--unit_base=1"], Some("4")),
        (&["--name=a", "--unit_base=8", "--name=b"], None),
    ];
    for (jobs, code) in cases {
        let mut args = vec!["--ioengine=null", "--size=64k", "--group_reporting"];
        args.extend_from_slice(jobs);
        let want = code
            .map(|c| format!("fio: unit_base differs for jobs in group, using {c} as the base"));
        let noted = |text: &str| {
            text.lines()
                .find(|l| l.contains("unit_base differs"))
                .map(str::to_string)
        };
        let d = tempfile::tempdir().unwrap();
        let r = oracle_run(&flexio_bin(), &args, d.path());
        assert_eq!(noted(&r.stdout), want, "{jobs:?}");
        if let Some((f, _)) = both(&args) {
            assert_eq!(noted(&f.stdout), want, "fio 3.33, {jobs:?}");
        }
    }
}

#[test]
fn a_unit_takes_the_percentile_settings_of_its_last_job() {
    // fio sets a unit's percentile options from each job it adds: j0 asks for slat
    // percentiles, j1 (which joins it) does not, so the unit prints none (flexio kept j0's).
    let args = [
        "--ioengine=null",
        "--iodepth=4",
        "--size=256k",
        "--group_reporting",
        "--name=j0",
        "--slat_percentiles=1",
        "--clat_percentiles=0",
        "--name=j1",
    ];
    let d = tempfile::tempdir().unwrap();
    let r = oracle_run(&flexio_bin(), &args, d.path());
    assert!(!r.stdout.contains("slat percentiles"), "{}", r.stdout);
    assert!(r.stdout.contains("clat percentiles"), "{}", r.stdout);
    if let Some((f, _)) = both(&args) {
        assert!(
            !f.stdout.contains("slat percentiles"),
            "fio 3.33: {}",
            f.stdout
        );
        assert!(
            f.stdout.contains("clat percentiles"),
            "fio 3.33: {}",
            f.stdout
        );
    }
}

#[test]
fn a_groups_lines_follow_its_units_unified_reporting_as_fio() {
    // fio ORs its units' unified_rw_reporting (mixed 1, both 2) and keeps a mixed unit's
    // figures in the read slot: a mixed unit beside a plain one gives a MIXED line per
    // direction (flexio folded both units into one), mixed beside both gives plain lines
    // and no MIXED line.
    let cases: &[(&str, &str, &[&str])] = &[
        ("mixed", "none", &["  MIXED io=256KiB", "  MIXED io=256KiB"]),
        ("mixed", "both", &["   READ io=256KiB", "  WRITE io=256KiB"]),
        ("mixed", "mixed", &["  MIXED io=512KiB"]),
    ];
    let lines = |out: &str| -> Vec<String> {
        out.lines()
            .skip_while(|l| !l.starts_with("Run status group"))
            .skip(1)
            .take_while(|l| !l.is_empty())
            .map(|l| {
                let label = l.split(':').next().unwrap();
                let io = l.split(", ").find(|f| f.starts_with("io=")).unwrap();
                format!("{label} {}", io.split(' ').next().unwrap())
            })
            .collect()
    };
    for (a, b, want) in cases {
        let ua = format!("--unified_rw_reporting={a}");
        let ub = format!("--unified_rw_reporting={b}");
        let args = [
            "--ioengine=null",
            "--size=256k",
            "--name=a",
            "--rw=randrw",
            &ua,
            "--name=b",
            "--rw=write",
            &ub,
        ];
        let d = tempfile::tempdir().unwrap();
        let r = oracle_run(&flexio_bin(), &args, d.path());
        assert_eq!(lines(&r.stdout), *want, "{a} {b}: {}", r.stdout);
        if let Some((f, _)) = both(&args) {
            assert_eq!(lines(&f.stdout), *want, "fio 3.33, {a} {b}: {}", f.stdout);
        }
    }
}

/// fio's bandwidth-sample line (`bw (  KiB/s)`) is in bytes whatever unit_base says (its
/// direction and group lines follow it), `kB` under kb_base=1000, and `MiB` above kb_base²
/// in either base (flexio printed `Kibit`/`Mibit` and `MB`).
#[test]
fn the_bandwidth_sample_line_is_in_bytes_as_in_fio() {
    let label = |text: &str| -> Vec<String> {
        text.lines()
            .filter_map(|l| l.trim_start().strip_prefix("bw ("))
            .map(|l| l.split("/s)").next().unwrap().trim().to_string())
            .collect()
    };
    // (options, the label wanted): a rate-limited psync job below kb_base², the null
    // engine far above it.
    let cases: [(&[&str], &str); 4] = [
        (&["--unit_base=1"], "KiB"),
        (&["--kb_base=1000"], "kB"),
        (&["--ioengine=null", "--unit_base=1"], "MiB"),
        (&["--ioengine=null", "--kb_base=1000"], "MiB"),
    ];
    for (extra, want) in cases {
        let mut args = vec![
            "--name=j",
            "--ioengine=psync",
            "--filename=f",
            "--rw=write",
            "--bs=4k",
            "--size=1m",
            "--rate=2m",
            "--time_based",
            "--runtime=1200ms",
        ];
        if extra[0] == "--ioengine=null" {
            args.retain(|a| !a.starts_with("--rate") && !a.starts_with("--ioengine"));
        }
        args.extend_from_slice(extra);
        let d = tempfile::tempdir().unwrap();
        let r = flexio(&args, d.path());
        assert_eq!(r.code, 0, "{extra:?}: {}", r.stderr);
        assert_eq!(label(&r.stdout), [want], "{extra:?}: {}", r.stdout);
        if let Some((f, _)) = both(&args) {
            assert_eq!(
                label(&f.stdout),
                [want],
                "fio 3.33, {extra:?}: {}",
                f.stdout
            );
        }
    }
}
