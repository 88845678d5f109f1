//! The hostile-input corpus (tests/corpus): malformed job files (`*.fio`) and command
//! lines (`*.args`, one argument per line). Every entry must end with a clear message and
//! a non-zero exit, never a panic or a hang. `*.inc` files are include targets, not
//! entries. Two entries with 1 MiB lines are generated here rather than stored.

mod common;
use common::*;
use std::path::Path;

fn run_entry(dir: &Path, name: &str) -> (i32, String, String) {
    let path = dir.join(name);
    let args: Vec<String> = if name.ends_with(".args") {
        std::fs::read_to_string(&path)
            .unwrap()
            .lines()
            .map(|l| l.to_string())
            .collect()
    } else {
        vec![name.to_string()]
    };
    let argv: Vec<&str> = args.iter().map(String::as_str).collect();
    // The corpus names an unset variable: make sure it is unset.
    std::env::remove_var("FLEXIO_CORPUS_UNSET_VARIABLE");
    let r = run_bounded(&flexio_bin(), &argv, dir, &[], 30);
    (r.code, r.stdout, r.stderr)
}

#[test]
fn every_hostile_input_gets_a_clear_error_and_a_nonzero_exit() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus");
    let d = tempfile::tempdir().unwrap();
    let mut entries = Vec::new();
    for e in std::fs::read_dir(&src).unwrap() {
        let e = e.unwrap();
        let name = e.file_name().to_string_lossy().into_owned();
        std::fs::copy(e.path(), d.path().join(&name)).unwrap();
        if name.ends_with(".fio") || name.ends_with(".args") {
            entries.push(name);
        }
    }
    std::fs::write(
        d.path().join("long-line-1mb.fio"),
        format!(
            "[job]\nfilename=corpus.tmp\nsize=1m\nbs={}\n",
            "9".repeat(1 << 20)
        ),
    )
    .unwrap();
    std::fs::write(
        d.path().join("long-garbage-line-1mb.fio"),
        format!("[job]\n{}=1\n", "x".repeat(1 << 20)),
    )
    .unwrap();
    entries.push("long-line-1mb.fio".into());
    entries.push("long-garbage-line-1mb.fio".into());
    // A file the jobs may name (so no entry fails only for want of it).
    std::fs::write(d.path().join("corpus.tmp"), vec![0u8; 1 << 20]).unwrap();
    entries.sort();
    assert!(
        entries.len() >= 100,
        "the corpus has {} entries",
        entries.len()
    );
    let mut bad = Vec::new();
    for name in &entries {
        let (code, stdout, stderr) = run_entry(d.path(), name);
        let all = format!("{stdout}{stderr}");
        let problem = if all.contains("panicked") || code == 101 {
            Some("panicked")
        } else if code == 0 {
            Some("exit status 0")
        } else if code < 0 {
            Some("killed by a signal")
        } else if stderr.trim().is_empty() {
            Some("no message on stderr")
        } else {
            None
        };
        if let Some(p) = problem {
            bad.push(format!(
                "{name}: {p} (exit {code})\n{}",
                all.chars().take(600).collect::<String>()
            ));
        }
        if std::env::var_os("FLEXIO_CORPUS_SHOW").is_some() {
            println!(
                "== {name} (exit {code})\n{}",
                stderr.chars().take(400).collect::<String>()
            );
        }
    }
    assert!(
        bad.is_empty(),
        "{} entries misbehaved:\n{}",
        bad.len(),
        bad.join("\n")
    );
}
