//! `--parse-only` against fio 3.33: options and values are parsed and checked, nothing on
//! disk is looked at, and every one of fio's own example job files that fio accepts this way
//! is accepted by flexio too, except those using what flexio does not support (listed below,
//! each with its reason, and rejected with a message naming it).

use crate::common;
use common::*;
use std::path::{Path, PathBuf};

/// fio 3.33's example job files: `$FLEXIO_FIO_EXAMPLES`, else where `.ci/fio-examples`
/// puts them. `None` (with a visible SKIP) when absent, unless FLEXIO_REQUIRE_FIO=1.
fn examples_dir() -> Option<PathBuf> {
    let dir = std::env::var_os("FLEXIO_FIO_EXAMPLES")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/var/cache/flexio/fio-3.33-examples"));
    if dir.join("fio-seq-read.fio").is_file() {
        return Some(dir);
    }
    if std::env::var("FLEXIO_REQUIRE_FIO").as_deref() == Ok("1") {
        panic!(
            "fio's example job files are required (FLEXIO_REQUIRE_FIO=1) but not in {} (run .ci/fio-examples)",
            dir.display()
        );
    }
    eprintln!(
        "SKIP: fio's example job files are not in {} (run .ci/fio-examples)",
        dir.display()
    );
    None
}

/// Example files whose engine flexio does not run: (file, the word flexio's message names,
/// why). They parse as in fio (`--parse-only` accepts them, as fio 3.33's does, which
/// loads no engine either); running one is refused, naming the engine. Remove a line
/// when flexio learns what it names.
const NOT_SUPPORTED: &[(&str, &str, &str)] = &[
    ("libzbc-rand-write.fio", "libzbc", "engine not implemented (zoned devices through libzbc; zonemode=zbd itself runs on other engines)"),
    ("libzbc-seq-read.fio", "libzbc", "engine not implemented (zoned devices through libzbc; zonemode=zbd itself runs on other engines)"),
    ("dev-dax.fio", "dev-dax", "persistent-memory engine: needs libpmem hardware, not run"),
    ("libpmem.fio", "libpmem", "persistent-memory engine: needs libpmem hardware, not run"),
    ("pmemblk.fio", "pmemblk", "persistent-memory engine: needs libpmem hardware, not run"),
    ("gfapi.fio", "gfapi", "cluster engine (GlusterFS): needs an external cluster"),
    ("rados.fio", "rados", "cluster engine (Ceph): needs an external cluster"),
    ("rbd.fio", "rbd", "cluster engine (Ceph): needs an external cluster"),
    ("libhdfs.fio", "libhdfs", "cluster engine (HDFS): needs an external cluster"),
    ("libiscsi.fio", "libiscsi", "an external engine fio loads as a plug-in (fio 3.33 is not built with it either; its --parse-only does not load engines); it needs an iSCSI target"),
    ("ime.fio", "ime_psync", "DDN IME engine: needs the vendor library"),
    ("cpp_null.fio", "cpp_null", "fio's example of an external engine in C++, loaded as a plug-in (fio's --parse-only does not load engines); flexio loads no plug-ins"),
];

/// The names in a directory, sorted.
fn listing(d: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(d)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

#[test]
fn fio_examples_fio_accepts_flexio_accepts() {
    let Some(fio) = fio_bin() else { return };
    let Some(dir) = examples_dir() else { return };
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "fio"))
        .collect();
    files.sort();
    assert!(
        files.len() >= 80,
        "only {} example files in {}",
        files.len(),
        dir.display()
    );
    let (mut fio_ok, mut flexio_ok) = (0, 0);
    let mut problems = Vec::new();
    for f in &files {
        let name = f.file_name().unwrap().to_string_lossy().into_owned();
        let path = f.to_string_lossy().into_owned();
        let args = ["--parse-only", path.as_str()];
        // Each tool in an empty directory that must stay empty: nothing is created.
        let d1 = tempfile::tempdir().unwrap();
        let d2 = tempfile::tempdir().unwrap();
        let rf = run_in(&fio, &args, d1.path());
        let rx = run_bounded(&flexio_bin(), &args, d2.path(), ORACLE_COMPAT, 30);
        assert!(
            listing(d2.path()).is_empty(),
            "{name}: --parse-only created {:?}",
            listing(d2.path())
        );
        assert!(!rx.stderr.contains("panicked"), "{name}: {}", rx.stderr);
        fio_ok += (rf.code == 0) as usize;
        flexio_ok += (rx.code == 0) as usize;
        let listed = NOT_SUPPORTED.iter().find(|(n, _, _)| *n == name);
        match (rf.code == 0, rx.code == 0, listed) {
            (true, true, Some((_, word, why))) => {
                // Parsed as fio parses it; a run must refuse the engine before any I/O.
                let d3 = tempfile::tempdir().unwrap();
                let run = run_bounded(
                    &flexio_bin(),
                    &[path.as_str()],
                    d3.path(),
                    ORACLE_COMPAT,
                    30,
                );
                let e = &run.stderr;
                let named = e.contains(&format!("'{word}")) || e.contains(&format!("={word}"));
                if run.code == 0 || !named || !e.contains("not supported by flexio") {
                    problems.push(format!(
                        "{name}: listed as not run ({word}: {why}), but a run gave {}: {}",
                        run.code,
                        e.trim()
                    ));
                }
            }
            (true, false, None) => problems.push(format!(
                "{name}: fio accepts it, flexio says: {}",
                rx.stderr.trim()
            )),
            (true, false, Some((_, word, why))) => {
                let e = &rx.stderr;
                let named = e.contains(&format!("'{word}")) || e.contains(&format!("={word}"));
                let clear = e.contains("not supported by flexio");
                if !named || !clear {
                    problems.push(format!(
                        "{name}: listed as not supported ({word}: {why}), but flexio says: {}",
                        e.trim()
                    ));
                }
            }
            _ => {}
        }
        // flexio prints nothing on success, as fio.
        if rx.code == 0 {
            assert_eq!(rx.stdout, rf.stdout, "{name}: stdout differs");
        }
    }
    eprintln!(
        "fio 3.33 examples: {} files, fio --parse-only accepts {fio_ok}, flexio accepts {flexio_ok}",
        files.len()
    );
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    for (n, _, _) in NOT_SUPPORTED {
        assert!(
            files.iter().any(|f| f.ends_with(n)),
            "{n} is listed but not among fio's examples"
        );
    }
}

/// fio's `--parse-only` does not look at files, directories or devices: neither does
/// flexio's (the same job without it would fail on each of these).
#[test]
fn parse_only_touches_nothing_on_disk() {
    for args in [
        &[
            "--parse-only",
            "--name=x",
            "--rw=write",
            "--size=1M",
            "--filename=/nonexistent/d/f",
        ][..],
        &[
            "--parse-only",
            "--name=x",
            "--rw=read",
            "--directory=/nonexistent",
        ],
        &[
            "--parse-only",
            "--name=x",
            "--rw=read",
            "--filename=/dev/flexio-nonexistent",
        ],
        &[
            "--parse-only",
            "--name=x",
            "--rw=read",
            "--directory=@D@",
            "--nrfiles=3",
            "--size=1M",
        ],
        &["--parse-only", "--size=1M", "--rw=read"],
        &["--parse-only"],
    ] {
        let Some((f, x)) = both(args) else { return };
        assert_eq!((f.code, x.code), (0, 0), "{args:?}: {}", x.stderr);
        assert_eq!(f.stdout, x.stdout, "{args:?}");
    }
    let d = tempfile::tempdir().unwrap();
    let r = flexio(
        &["--parse-only", "--name=x", "--size=1M", "--rw=write"],
        d.path(),
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(listing(d.path()).is_empty(), "{:?}", listing(d.path()));
}

/// Bad options and values are still errors, in both tools.
#[test]
fn parse_only_still_checks_options_and_values() {
    for args in [
        &["--parse-only", "--name=x", "--rw=foo"][..],
        &["--parse-only", "--name=x", "--foo=1"],
        &["--parse-only", "--name=x", "--rwmixread=120"],
        &[
            "--parse-only",
            "--name=x",
            "--ioengine=libaio",
            "--iodepth=0",
        ],
        &["--parse-only", "/nonexistent/job.fio"],
    ] {
        let Some((f, x)) = both(args) else { return };
        assert_eq!((f.code, x.code), (1, 1), "{args:?}: {}", x.stderr);
    }
}

/// Includes and `${VAR}`s are resolved before the values are checked, in both tools.
#[test]
fn parse_only_resolves_includes_and_variables() {
    let Some(fio) = fio_bin() else { return };
    let d = tempfile::tempdir().unwrap();
    std::fs::write(
        d.path().join("v.fio"),
        "[global]\nbs=${BS}\ninclude inc.fio\n[a]\nsize=${SZ}\n",
    )
    .unwrap();
    std::fs::write(d.path().join("inc.fio"), "rw=randread\nioengine=${ENG}\n").unwrap();
    let args = ["--parse-only", "v.fio"];
    let good = [("BS", "8k"), ("SZ", "1m"), ("ENG", "libaio")];
    let bad_size = [("BS", "8k"), ("SZ", "lots"), ("ENG", "libaio")];
    for (env, want) in [(&good, 0), (&bad_size, 1)] {
        let f = run_in_env(&fio, &args, d.path(), env);
        let x = run_in_env(&flexio_bin(), &args, d.path(), env);
        assert_eq!((f.code, x.code), (want, want), "{env:?}: {}", x.stderr);
    }
    let x = run_in_env(&flexio_bin(), &args, d.path(), &bad_size);
    assert!(
        x.stderr.contains("v.fio:5: 'size=${SZ}'") && x.stderr.contains("'lots'"),
        "{}",
        x.stderr
    );
}
