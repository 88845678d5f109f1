//! The subcommands' clap command lines as a user meets them: every subcommand's `--help`
//! (stdout, status 0) lists its switches, a bad switch is refused by name with the usage
//! line (and clap's did-you-mean), `flexio completions bash|zsh|fish` gives scripts bash
//! accepts and completes with, and `flexio man` gives roff pages that man (or groff)
//! renders with every switch.
#![cfg(feature = "tools")]

use crate::common;
use common::{flexio, Run};
use std::path::Path;
use std::process::Command;

/// Each subcommand and the switches it has always had (besides `--help`).
const SWITCHES: &[(&str, &[&str])] = &[
    ("report", &["--output", "-o", "--title", "--no-logs"]),
    (
        "compare",
        &[
            "--output-format",
            "--html",
            "--fail-if-worse",
            "--trials",
            "--keep",
            "--resume",
            "--alpha",
            "--min-effect",
            "--resamples",
            "--seed",
            "--no-logs",
            "--save",
            "--store",
        ],
    ),
    (
        "matrix",
        &[
            "--dir",
            "--file",
            "--min-file",
            "--max-file",
            "--min-record",
            "--max-record",
            "--all-records",
            "--tests",
            "--direct",
            "--fsync",
            "--cold",
            "--stride",
            "--ioengine",
            "--repeat",
            "--json",
            "--html",
            "--output-format",
        ],
    ),
    (
        "writemodes",
        &[
            "--dir",
            "--file",
            "--size",
            "--bs",
            "--every",
            "--bg-interval",
            "--runtime",
            "--modes",
            "--repeat",
            "--ioengine",
            "--json",
            "--html",
            "--output-format",
        ],
    ),
    (
        "sweep",
        &[
            "--opt",
            "--knob",
            "--repeat",
            "--seed",
            "--baseline",
            "--metric",
            "--drop-caches",
            "--settle",
            "--json",
            "--html",
            "--keep",
            "--resume",
            "--save",
            "--store",
            "--restore",
        ],
    ),
    (
        "rt-study",
        &[
            "--requests",
            "--bs",
            "--pattern",
            "--rw",
            "--think",
            "--classes",
            "--prio",
            "--engine",
            "--bg",
            "--bg-bs",
            "--bg-rw",
            "--bg-engine",
            "--bg-depth",
            "--cpuio",
            "--warmup",
            "--size",
            "--direct",
            "--max-case-seconds",
            "--repeat",
            "--no-warmup-run",
            "--alpha",
            "--json",
            "--html",
            "--keep",
            "--resume",
            "--save",
            "--store",
        ],
    ),
    (
        "pts",
        &[
            "--test",
            "--round-time",
            "--max-rounds",
            "--passes",
            "--bs",
            "--mixes",
            "--iodepth",
            "--ioengine",
            "--json",
            "--output-format",
            "--i-understand-this-erases",
        ],
    ),
    ("import", &["--store", "--label"]),
    (
        "history",
        &[
            "--store",
            "--label",
            "--job",
            "--metric",
            "--since",
            "--min-shift",
            "--html",
            "--runs",
        ],
    ),
    (
        "check",
        &[
            "--baseline",
            "--store",
            "--trials",
            "--max-regression",
            "--metrics",
            "--alpha",
            "--seed",
            "--junit",
            "--markdown",
            "--update-baseline",
            "--save",
        ],
    ),
    ("diff", &["--store"]),
    ("rerun", &["--store", "--set"]),
    ("completions", &[]),
    ("man", &["--out-dir"]),
];

/// The subcommands `flexio --help` lists.
fn listed() -> Vec<String> {
    let d = tempfile::tempdir().unwrap();
    let r = flexio(&["--help"], d.path());
    assert_eq!(r.code, 0);
    let after = r
        .stdout
        .split("flexio's own subcommands:\n")
        .nth(1)
        .unwrap();
    after
        .lines()
        .filter_map(|l| l.strip_prefix("  flexio "))
        .map(|l| l.split_whitespace().next().unwrap().to_string())
        .collect()
}

/// The switches a help text names (`--name` words, and `-o` style short ones).
fn named_switches(help: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for w in help.split(|c: char| c.is_whitespace() || matches!(c, ',' | '[' | ']' | '=')) {
        let short = w.len() == 2 && w.starts_with('-') && w.as_bytes()[1].is_ascii_alphabetic();
        let long = w.starts_with("--")
            && w.len() > 2
            && w[2..]
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-');
        if (short || long) && !out.iter().any(|o| o == w) {
            out.push(w.to_string());
        }
    }
    out
}

#[test]
fn the_table_covers_every_subcommand() {
    let mut names = listed();
    names.sort();
    let mut ours: Vec<String> = SWITCHES.iter().map(|s| s.0.to_string()).collect();
    ours.sort();
    assert_eq!(names, ours);
}

#[test]
fn every_subcommand_help_lists_its_switches() {
    let d = tempfile::tempdir().unwrap();
    for (sub, switches) in SWITCHES {
        for h in ["--help", "-h"] {
            let r = flexio(&[sub, h], d.path());
            assert_eq!(r.code, 0, "{sub} {h}: {}", r.stderr);
            assert_eq!(r.stderr, "", "{sub} {h}");
            assert!(
                r.stdout.contains(&format!("Usage: flexio {sub} ")),
                "{sub} {h}: {}",
                r.stdout
            );
            let named = named_switches(&r.stdout);
            for s in switches.iter().copied().chain(["--help"]) {
                assert!(
                    named.iter().any(|n| n == s),
                    "{sub} {h}: no {s} in\n{}",
                    r.stdout
                );
            }
        }
    }
    // The help comes before anything is checked or run.
    let r = flexio(&["pts", "/nonexistent", "--help"], d.path());
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(std::fs::read_dir(d.path()).unwrap().count(), 0);
}

#[test]
fn a_bad_switch_is_named_with_the_usage() {
    let d = tempfile::tempdir().unwrap();
    for (sub, _) in SWITCHES {
        let r = flexio(&[sub, "--no-such-switch", "x"], d.path());
        // sweep's bad arguments have always exited 1, the others' 2.
        let want = if *sub == "sweep" { 1 } else { 2 };
        assert_eq!(r.code, want, "{sub}: {}", r.stderr);
        assert!(
            r.stderr
                .contains("error: unexpected argument '--no-such-switch' found"),
            "{sub}: {}",
            r.stderr
        );
        assert!(
            r.stderr.contains(&format!("Usage: flexio {sub}")),
            "{sub}: {}",
            r.stderr
        );
        assert_eq!(r.stdout, "", "{sub}");
    }
    // A near miss gets clap's did-you-mean.
    for (args, near) in [
        (&["report", "--titel", "T", "a.json"][..], "--title"),
        (&["rt-study", "--clases=rt", "f"], "--classes"),
        (&["matrix", "--max-files=1m"], "--max-file"),
        (&["history", "--metrik=bw"], "--metric"),
        (&["sweep", "--knobs=nomerges=0,1", "j.fio"], "--knob"),
    ] {
        let r = flexio(args, d.path());
        assert_ne!(r.code, 0, "{args:?}");
        assert!(
            r.stderr
                .contains(&format!("tip: a similar argument exists: '{near}'")),
            "{args:?}: {}",
            r.stderr
        );
    }
    // A bad value names the switch, a missing argument its name.
    let r = flexio(&["compare", "--alpha=2", "a.json", "b.json"], d.path());
    assert_eq!(r.code, 2);
    assert!(
        r.stderr.contains("invalid value '2' for '--alpha <A>'"),
        "{}",
        r.stderr
    );
    let r = flexio(&["diff", "1"], d.path());
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("<RUN_B>"), "{}", r.stderr);
    let r = flexio(&["completions", "tcsh"], d.path());
    assert_eq!(r.code, 2);
    assert!(
        r.stderr.contains("[possible values: bash, zsh, fish]"),
        "{}",
        r.stderr
    );
    assert_eq!(std::fs::read_dir(d.path()).unwrap().count(), 0);
}

fn have(tool: &str) -> bool {
    Command::new("sh")
        .args(["-c", &format!("command -v {tool}")])
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false)
}

fn bash(script: &str, dir: &Path) -> Run {
    let o = Command::new("bash")
        .args(["--norc", "--noprofile", "-c", script])
        .current_dir(dir)
        .output()
        .unwrap();
    Run {
        stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
        code: o.status.code().unwrap_or(-1),
    }
}

#[test]
fn bash_completions_load_and_complete() {
    let d = tempfile::tempdir().unwrap();
    let r = flexio(&["completions", "bash"], d.path());
    assert_eq!(r.code, 0, "{}", r.stderr);
    for (sub, _) in SWITCHES {
        assert!(r.stdout.contains(sub), "no {sub} in the bash script");
    }
    let script = d.path().join("flexio.bash");
    std::fs::write(&script, &r.stdout).unwrap();
    let s = script.display();
    let syntax = bash(&format!("bash -n '{s}'"), d.path());
    assert_eq!(syntax.code, 0, "bash -n: {}", syntax.stderr);
    let loaded = bash(&format!("source '{s}' && complete -p flexio"), d.path());
    assert_eq!(loaded.code, 0, "{}", loaded.stderr);
    assert!(
        loaded.stdout.contains("-F _flexio") && loaded.stdout.trim_end().ends_with(" flexio"),
        "{}",
        loaded.stdout
    );
    // What the completion function offers (bash calls it with the command, the word
    // under the cursor and the word before it).
    let complete = |words: &[&str]| -> Vec<String> {
        let cword = words.len() - 1;
        let quoted: Vec<String> = words.iter().map(|w| format!("'{w}'")).collect();
        let r = bash(
            &format!(
                "source '{s}'; COMP_WORDS=({}); COMP_CWORD={cword}; COMP_LINE='{}'; \
                 COMP_POINT=${{#COMP_LINE}}; _flexio flexio '{}' '{}'; \
                 printf '%s\\n' \"${{COMPREPLY[@]}}\"",
                quoted.join(" "),
                words.join(" "),
                words[cword],
                words[cword - 1]
            ),
            d.path(),
        );
        assert_eq!(r.code, 0, "{}", r.stderr);
        r.stdout.lines().map(String::from).collect()
    };
    assert_eq!(complete(&["flexio", "writem"]), ["writemodes"]);
    assert_eq!(complete(&["flexio", "rt-study", "--cla"]), ["--classes"]);
    assert_eq!(complete(&["flexio", "completions", "fi"]), ["fish"]);
    // The main command's switches and job options, with the values of a choice.
    assert!(complete(&["flexio", "--output-f"]).contains(&"--output-format".to_string()));
    let rw = complete(&["flexio", "--rw", ""]);
    assert!(rw.contains(&"randread".to_string()), "{rw:?}");
}

#[test]
fn zsh_and_fish_completions_name_every_subcommand() {
    let d = tempfile::tempdir().unwrap();
    for shell in ["zsh", "fish"] {
        let r = flexio(&["completions", shell], d.path());
        assert_eq!(r.code, 0, "{shell}: {}", r.stderr);
        assert!(r.stdout.len() > 1000, "{shell}: {}", r.stdout);
        for (sub, switches) in SWITCHES {
            assert!(r.stdout.contains(sub), "{shell}: no {sub}");
            for sw in switches.iter().filter(|s| s.starts_with("--")) {
                assert!(r.stdout.contains(&sw[2..]), "{shell}: no {sw} ({sub})");
            }
        }
        if have(shell) {
            let f = d.path().join(format!("flexio.{shell}"));
            std::fs::write(&f, &r.stdout).unwrap();
            let o = Command::new(shell).arg("-n").arg(&f).output().unwrap();
            assert!(
                o.status.success(),
                "{shell} -n: {}",
                String::from_utf8_lossy(&o.stderr)
            );
        } else {
            eprintln!("SKIP: {shell} is not installed; its script's syntax is not checked");
        }
    }
}

/// A roff page as text: through `man -l`, else groff; `None` (said) with neither.
fn render(page: &Path) -> Option<String> {
    let o = if have("man") {
        Command::new("man")
            .arg("-l")
            .arg(page)
            .env("MANWIDTH", "300")
            .env("MANPAGER", "cat")
            .env("PAGER", "cat")
            .env("LC_ALL", "C")
            .output()
            .unwrap()
    } else if have("groff") {
        Command::new("groff")
            .args(["-man", "-Tascii", "-P-c"])
            .arg(page)
            .output()
            .unwrap()
    } else {
        eprintln!("SKIP: neither man nor groff is installed; the man pages are not rendered");
        return None;
    };
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    Some(String::from_utf8_lossy(&o.stdout).into_owned())
}

#[test]
fn man_pages_render_with_every_switch() {
    let d = tempfile::tempdir().unwrap();
    let pages = d.path().join("man1");
    std::fs::create_dir(&pages).unwrap();
    let r = flexio(&["man", "--out-dir", pages.to_str().unwrap()], d.path());
    assert_eq!(r.code, 0, "{}", r.stderr);
    let mut files: Vec<String> = std::fs::read_dir(&pages)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    files.sort();
    let mut want: Vec<String> = SWITCHES
        .iter()
        .map(|(s, _)| format!("flexio-{s}.1"))
        .chain(["flexio.1".to_string()])
        .collect();
    want.sort();
    assert_eq!(files, want);
    // `flexio man [SUBCOMMAND]` prints the same page.
    let one = flexio(&["man", "rt-study"], d.path());
    assert_eq!(one.code, 0, "{}", one.stderr);
    assert_eq!(
        one.stdout,
        std::fs::read_to_string(pages.join("flexio-rt-study.1")).unwrap()
    );
    let main = std::fs::read_to_string(pages.join("flexio.1")).unwrap();
    assert_eq!(flexio(&["man"], d.path()).stdout, main);
    assert!(
        main.starts_with(".ie") && main.contains(".TH flexio 1"),
        "{main}"
    );
    for (sub, switches) in SWITCHES {
        let f = pages.join(format!("flexio-{sub}.1"));
        let roff = std::fs::read_to_string(&f).unwrap();
        assert!(roff.contains(&format!(".TH flexio-{sub} 1")), "{sub}");
        let Some(text) = render(&f) else { return };
        assert!(text.contains(&format!("flexio {sub}")), "{sub}: {text}");
        let named = named_switches(&text);
        for s in *switches {
            assert!(named.iter().any(|n| n == s), "{sub}: no {s} in\n{text}");
        }
    }
    let Some(text) = render(&pages.join("flexio.1")) else {
        return;
    };
    for w in ["--output-format", "--cmdhelp", "--client", "SUBCOMMAND"] {
        assert!(text.contains(w), "no {w} in flexio(1):\n{text}");
    }
    for (sub, _) in SWITCHES {
        assert!(
            text.contains(&format!("flexio-{sub}")),
            "flexio(1) does not name {sub}"
        );
    }
    let r = flexio(&["man", "nosuch"], d.path());
    assert_eq!(r.code, 2);
    assert!(
        r.stderr.contains("'nosuch' is not a flexio subcommand"),
        "{}",
        r.stderr
    );
}
