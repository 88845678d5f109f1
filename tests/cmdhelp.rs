//! `flexio --cmdhelp=all` against fio 3.33's: every option fio lists is either listed by
//! flexio (it parses and runs it) or named below as not supported, with the reason, and
//! flexio's `--cmdhelp=<name>` says so ("not supported by flexio"). Nothing of fio's is
//! unknown to flexio.

use crate::common;
use common::*;
use std::collections::BTreeSet;

/// fio 3.33 options flexio rejects as "not supported by flexio", by group, with the reason.
/// Remove a name when flexio implements it (the test fails on a stale entry).
const NOT_SUPPORTED: &[(&str, &[&str])] = &[];

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
        "io_uring_cmdd",
        "psycn",
        "libaoi",
        "iouring",
        "mmapp",
        "nul",
        "posix",
        "sgg",
        "rdma",
        "windowsaio",
    ] {
        // (engines flexio knows but does not run parse; the run refuses them)
        let r = flexio(
            &["--name=x", "--size=1M", &format!("--ioengine={bad}")],
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

/// flexio's own options (not fio's): known at every compatibility level.
const FLEXIO_OWN: &[&str] = &[
    "interval_log",
    "interval_log_msec",
    "iomem_thp",
    "trim_mode",
];

/// Options the newest fio renamed: the 3.33 name is an alias, the new name is listed.
/// (`log_window_value` was `log_max_value` in fio 3.33; flexio keeps one row for both, so
/// the new name stays accepted under `--compat=3.33`.)
const RENAMED: &[&str] = &["log_window_value"];

/// Every option flexio lists that fio 3.33 rejects in a job file is unknown under
/// `--compat=3.33` too (with a did-you-mean where a name is near), and accepted by default (the newest
/// fio); what fio 3.33 accepts without listing it is accepted under `--compat=3.33`.
#[test]
fn options_newer_than_fio_3_33_are_unknown_under_compat() {
    let Some(fio) = fio_bin() else { return };
    let d = tempfile::tempdir().unwrap();
    let f = run_in(&fio, &["--cmdhelp=all"], d.path());
    let fio_names = names(&f.stdout);
    let x = flexio(&["--cmdhelp=all"], d.path());
    let mut problems = Vec::new();
    let mut newer = 0;
    let job = d.path().join("j.fio");
    for n in names(&x.stdout).difference(&fio_names) {
        if FLEXIO_OWN.contains(&n.as_str()) || RENAMED.contains(&n.as_str()) {
            continue;
        }
        std::fs::write(&job, format!("[j]\n{n}=1\n")).unwrap();
        let j = job.display().to_string();
        let rf = run_in(&fio, &["--parse-only", &j], d.path());
        let fio_rejects = rf.code != 0 && rf.stderr.contains(&format!("Bad option <{n}=1>"));
        let old = flexio(&["--compat=3.33", "--parse-only", &j], d.path());
        let unknown = old.code == 1
            && old
                .stderr
                .contains(&format!("j.fio:2: '{n}=1': unknown option '{n}'"));
        if fio_rejects != unknown {
            problems.push(format!(
                "{n}: fio 3.33 {}, flexio --compat=3.33 says: {}",
                if fio_rejects {
                    "rejects it"
                } else {
                    "accepts it"
                },
                old.stderr.trim()
            ));
        }
        if fio_rejects {
            newer += 1;
            let new = flexio(&["--parse-only", &j], d.path());
            if new.stderr.contains("unknown option") {
                problems.push(format!("{n}: unknown by default: {}", new.stderr.trim()));
            }
            // The command line too, with the command line's words.
            let cli = flexio(
                &[
                    "--compat=3.33",
                    "--parse-only",
                    "--name=j",
                    &format!("--{n}=1"),
                ],
                d.path(),
            );
            if cli.code != 1 || !cli.stderr.contains(&format!("unrecognized option '--{n}'")) {
                problems.push(format!(
                    "--{n}=1 under --compat=3.33: {}",
                    cli.stderr.trim()
                ));
            }
        }
    }
    eprintln!("{newer} options of fio 3.34 and later are unknown under --compat=3.33");
    assert!(newer >= 20, "only {newer} newer options found");
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// fio 3.33's engines flexio rejects by name (cluster and hardware engines, documented in
/// the README): their options are fio's business. Every other engine fio 3.33 has here
/// must take all of fio's options for it.
const FIO_ONLY_ENGINES: &[&str] = &[
    "gfapi",
    "gfapi_async",
    "rdma",
    "rados",
    "rbd",
    "pmemblk",
    "dev-dax",
    "libpmem",
];

/// Option names of an `--enghelp=<engine>` listing.
fn engine_option_names(listing: &str) -> BTreeSet<String> {
    listing
        .lines()
        .filter(|l| !l.starts_with("IO engine ") && !l.starts_with("fio:"))
        .filter_map(|l| l.split_once(':'))
        .map(|(n, _)| n.trim().to_string())
        .filter(|n| !n.is_empty())
        .collect()
}

/// Every engine option of fio 3.33 (`fio --enghelp=<engine>`, for each engine fio lists)
/// is an option of the same engine in flexio under `--compat=3.33`; fio's cluster and
/// hardware engines are refused by name, with the reason.
#[test]
fn every_fio_engine_option_is_known_to_flexio() {
    let Some(fio) = fio_bin() else { return };
    let d = tempfile::tempdir().unwrap();
    let list = run_in(&fio, &["--enghelp"], d.path());
    let engines: Vec<String> = list
        .stdout
        .lines()
        .skip(1)
        .map(|l| l.trim().to_string())
        .filter(|l| !l.is_empty())
        .collect();
    assert!(engines.len() >= 30, "fio lists {} engines", engines.len());
    let mut problems = Vec::new();
    let mut checked = 0;
    for e in &engines {
        let f = run_in(&fio, &[&format!("--enghelp={e}")], d.path());
        let want = engine_option_names(&f.stdout);
        let x = flexio(&["--compat=3.33", &format!("--enghelp={e}")], d.path());
        if FIO_ONLY_ENGINES.contains(&e.as_str()) {
            if x.code == 0 || !x.stderr.contains("not supported by flexio") {
                problems.push(format!(
                    "{e}: flexio --enghelp does not refuse it: {}",
                    x.stderr
                ));
            }
            continue;
        }
        if x.code != 0 {
            problems.push(format!("{e}: flexio --enghelp fails: {}", x.stderr));
            continue;
        }
        let have = engine_option_names(&x.stdout);
        for n in want.difference(&have) {
            problems.push(format!(
                "{e}: fio 3.33 has option {n}, flexio's {e} does not"
            ));
        }
        // Each is accepted in a job of that engine.
        for n in &want {
            let detail = flexio(&["--compat=3.33", &format!("--enghelp={e},{n}")], d.path());
            if detail.code != 0 {
                problems.push(format!("{e},{n}: {}", detail.stderr));
            }
            checked += 1;
        }
    }
    for n in FIO_ONLY_ENGINES {
        assert!(
            engines.iter().any(|e| e == n),
            "{n} is not among fio's engines"
        );
    }
    eprintln!(
        "fio 3.33 engines: {}, engine options checked: {checked}",
        engines.len()
    );
    assert!(checked >= 60, "only {checked} engine options");
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// Options fio 3.33 has but leaves out of `--cmdhelp=all` (answered by `--cmdhelp=<name>`).
/// Found by asking fio 3.33's `--cmdhelp` for every word in its binary that could be an
/// option name and keeping those it answers with that very name and does not list.
const HIDDEN: &[&str] = &[
    "bs_is_seq_rand",
    "iomem_align",
    "softrandommap",
    "verify_async_cpus",
];

#[test]
fn fios_hidden_options_are_known_to_flexio() {
    let Some(fio) = fio_bin() else { return };
    let d = tempfile::tempdir().unwrap();
    let all = names(&run_in(&fio, &["--cmdhelp=all"], d.path()).stdout);
    let mut problems = Vec::new();
    for n in HIDDEN {
        let f = run_in(&fio, &[&format!("--cmdhelp={n}")], d.path());
        let first = f.stdout.lines().next().unwrap_or("").trim();
        assert!(
            first.starts_with(&format!("{n}:")),
            "fio 3.33 does not answer --cmdhelp={n}: {}",
            f.stdout
        );
        assert!(!all.contains(*n), "{n} is listed by fio's --cmdhelp=all");
        let x = flexio(&["--compat=3.33", &format!("--cmdhelp={n}")], d.path());
        let known = x.code == 0 && x.stdout.trim_start().starts_with(&format!("{n}:"));
        if !known {
            problems.push(format!("{n}: {}{}", x.stdout, x.stderr));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
