//! `flexio --cmdhelp=all` against fio 3.33's: every option fio lists is either listed by
//! flexio (it parses and runs it) or named below as not supported, with the reason, and
//! flexio's `--cmdhelp=<name>` says so ("not supported by flexio"). Nothing of fio's is
//! unknown to flexio.

mod common;
use common::*;
use std::collections::BTreeSet;

/// fio 3.33 options flexio rejects as "not supported by flexio", by group, with the reason.
/// Remove a name when flexio implements it (the test fails on a stale entry).
const NOT_SUPPORTED: &[(&str, &[&str])] = &[
    (
        "log options not implemented yet (branch iolog)",
        &["block_error_percentiles"],
    ),
    (
        "job control and placement not implemented yet",
        &[
            "io_submit_mode",
            "uid",
            "gid",
            "cgroup",
            "cgroup_weight",
            "cgroup_nodelete",
            "ioscheduler",
            "numa_cpu_nodes",
            "numa_mem_policy",
            "gtod_cpu",
            "lockmem",
            "profile",
        ],
    ),
    (
        "I/O flags and buffer memory not implemented yet",
        &[
            "write_hint",
            "sync_file_range",
            "write_barrier",
            "atomic",
            "mem",
            "hugepage-size",
        ],
    ),
    (
        "dedupe data generation not implemented yet",
        &[
            "dedupe_mode",
            "dedupe_percentage",
            "dedupe_working_set_percentage",
            "dedupe_global",
        ],
    ),
    (
        "verification threads and trims have their own issue",
        &[
            "trim_percentage",
            "trim_verify_zero",
            "trim_backlog",
            "trim_backlog_batch",
        ],
    ),
    (
        "zonemode=zbd (zoned block devices) not implemented yet",
        &[
            "zonecapacity",
            "max_open_zones",
            "job_max_open_zones",
            "zone_reset_threshold",
            "zone_reset_frequency",
            "read_beyond_wp",
            "ignore_zone_limits",
        ],
    ),
];

/// Option names of a `--cmdhelp=all` listing (`name   : help`, sub-options indented).
fn names(listing: &str) -> BTreeSet<String> {
    listing
        .lines()
        .filter_map(|l| l.split_once(':'))
        .map(|(n, _)| n.trim().to_string())
        .filter(|n| !n.is_empty())
        .collect()
}

#[test]
fn every_fio_option_is_known_to_flexio() {
    let Some(fio) = fio_bin() else { return };
    let d = tempfile::tempdir().unwrap();
    let f = run_in(&fio, &["--cmdhelp=all"], d.path());
    assert_eq!(f.code, 0, "{}", f.stderr);
    let fio_names = names(&f.stdout);
    assert!(
        fio_names.len() > 200,
        "fio lists {} options",
        fio_names.len()
    );
    let x = flexio(&["--cmdhelp=all"], d.path());
    assert_eq!(x.code, 0, "{}", x.stderr);
    let flexio_names = names(&x.stdout);
    let listed: BTreeSet<&str> = NOT_SUPPORTED
        .iter()
        .flat_map(|(_, n)| n.iter().copied())
        .collect();
    let mut problems = Vec::new();
    for n in &fio_names {
        if flexio_names.contains(n) {
            if listed.contains(n.as_str()) {
                problems.push(format!(
                    "{n}: flexio lists it now; remove it from NOT_SUPPORTED"
                ));
            }
            continue;
        }
        if !listed.contains(n.as_str()) {
            // Known under a newer name (fio renamed it; the old one is an alias).
            let r = flexio(&[&format!("--cmdhelp={n}")], d.path());
            if r.code == 0 && !r.stdout.is_empty() {
                continue;
            }
            problems.push(format!(
                "{n}: in fio's --cmdhelp=all, neither listed by flexio nor in NOT_SUPPORTED"
            ));
            continue;
        }
        let r = flexio(&[&format!("--cmdhelp={n}")], d.path());
        if r.code == 0 || !r.stderr.contains("not supported by flexio") {
            problems.push(format!(
                "{n}: flexio --cmdhelp={n} does not say it is not supported: {}{}",
                r.stdout, r.stderr
            ));
        }
        // In a job, it is rejected with the same words, never ignored.
        let r = flexio(&["--parse-only", "--name=x", &format!("--{n}=1")], d.path());
        if r.code == 0 || !r.stderr.contains("not supported by flexio") {
            problems.push(format!(
                "{n}: --{n}=1 is not rejected as not supported: {}",
                r.stderr
            ));
        }
    }
    for n in &listed {
        if !fio_names.contains(*n) {
            problems.push(format!(
                "{n}: listed as not supported but fio 3.33 has no such option"
            ));
        }
    }
    eprintln!(
        "fio 3.33 --cmdhelp=all: {} options; flexio lists {} of them, {} not supported",
        fio_names.len(),
        fio_names.len() - listed.len(),
        listed.len()
    );
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// Did-you-mean on an engine name proposes only engines flexio runs (never one it would
/// then reject, such as netsplice for splice).
#[test]
fn engine_suggestions_are_engines_flexio_has() {
    let d = tempfile::tempdir().unwrap();
    let engines = flexio(&["--enghelp"], d.path());
    let have: BTreeSet<String> = engines
        .stdout
        .lines()
        .skip(1)
        .map(|l| l.trim().to_string())
        .collect();
    assert!(have.contains("psync"), "{}", engines.stdout);
    let re = regex::Regex::new(r"did you mean '([^']+)'").unwrap();
    let mut seen = 0;
    for bad in [
        "splcie",
        "netsplise",
        "cpuioo",
        "e4defrg",
        "gfapi",
        "libhdfs",
        "pmemblk",
        "io_uring_cmd",
        "psycn",
        "libaoi",
        "iouring",
        "mmapp",
        "nul",
        "posix",
        "sg",
        "rdma",
        "windowsaio",
    ] {
        let r = flexio(
            &["--parse-only", "--name=x", &format!("--ioengine={bad}")],
            d.path(),
        );
        assert_eq!(r.code, 1, "{bad}: {}", r.stderr);
        if let Some(c) = re.captures(&r.stderr) {
            seen += 1;
            assert!(
                have.contains(&c[1]),
                "{bad}: suggests '{}', which flexio does not have",
                &c[1]
            );
        }
    }
    assert!(seen >= 3, "too few suggestions to check ({seen})");
}
