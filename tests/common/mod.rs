//! Shared helpers for the black-box tests: run flexio (and fio, the oracle), and compare
//! output structure the way scripts that read fio's output would see it.
#![allow(dead_code)]

pub mod certs;
pub mod chromium;
pub mod faultfs;
pub mod fstargets;
pub mod loopdev;

use regex::Regex;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// A TCP port on 127.0.0.1 that was free a moment ago.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

pub fn flexio_bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_flexio"))
}

/// The fault-injecting FUSE file system, built by `cargo test --workspace` next to flexio
/// (it is its own package, so `cargo install` of flexio does not build it). `None` (with a
/// visible SKIP) when it was not built, unless the CI's FLEXIO_REQUIRE_FIO=1 asks for every
/// test to run.
pub fn faultfs_bin() -> Option<PathBuf> {
    let p = flexio_bin().with_file_name("flexio-faultfs");
    if p.is_file() {
        return Some(p);
    }
    if std::env::var("FLEXIO_REQUIRE_FIO").as_deref() == Ok("1") {
        panic!("{} is missing: run the tests with --workspace", p.display());
    }
    eprintln!("SKIP: flexio-faultfs is not built (run cargo test --workspace)");
    None
}

/// The fio binary, if installed. With FLEXIO_REQUIRE_FIO=1 (set by .ci/run) a missing fio is
/// a failure, so CI can never skip the oracle comparisons silently.
pub fn fio_bin() -> Option<PathBuf> {
    let found = std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|d| d.join("fio"))
            .find(|p| p.is_file())
    });
    if found.is_none() {
        if std::env::var("FLEXIO_REQUIRE_FIO").as_deref() == Ok("1") {
            panic!("fio is required (FLEXIO_REQUIRE_FIO=1) but not installed");
        }
        eprintln!("SKIP: fio is not installed; oracle comparison skipped");
    }
    found
}

#[derive(Debug)]
pub struct Run {
    pub stdout: String,
    pub stderr: String,
    pub code: i32,
}

pub fn run_in(bin: &Path, args: &[&str], dir: &Path) -> Run {
    run_in_env(bin, args, dir, &[])
}

/// [`run_in`] with extra environment variables.
///
/// No run of a test may hang the suite: one still running after [`RUN_LIMIT_SECS`] (or
/// FLEXIO_TEST_RUN_SECS) is killed with every process it started, and the test fails with
/// what each of their threads was waiting in.
pub fn run_in_env(bin: &Path, args: &[&str], dir: &Path, env: &[(&str, &str)]) -> Run {
    let child = Command::new(bin)
        .args(args)
        .current_dir(dir)
        .env("TZ", "UTC")
        .envs(env.iter().copied())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}", bin.display()));
    let secs = std::env::var("FLEXIO_TEST_RUN_SECS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(RUN_LIMIT_SECS);
    let mut report = String::new();
    match wait_within(child, secs, |pid| report = kill_tree(pid)) {
        Some(out) => out.into(),
        None => panic!(
            "{} {args:?} (in {}) did not end within {secs} s; killed. Its processes:\n{report}",
            bin.display(),
            dir.display()
        ),
    }
}

/// How long one program run of a test may take before it counts as hung.
pub const RUN_LIMIT_SECS: u64 = 300;

/// `pid` and every process below it, parents first (from /proc).
fn process_tree(pid: u32) -> Vec<u32> {
    let mut parent_of = Vec::new();
    for e in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Ok(p) = e.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let stat = std::fs::read_to_string(e.path().join("stat")).unwrap_or_default();
        // "pid (comm) state ppid ...": the name may hold spaces and parentheses.
        let after = stat.rsplit_once(") ").map_or("", |(_, r)| r);
        if let Some(pp) = after.split(' ').nth(1).and_then(|s| s.parse::<u32>().ok()) {
            parent_of.push((p, pp));
        }
    }
    let mut tree = vec![pid];
    let mut i = 0;
    while i < tree.len() {
        let p = tree[i];
        tree.extend(parent_of.iter().filter(|(_, pp)| *pp == p).map(|(c, _)| *c));
        i += 1;
    }
    tree
}

/// Kill `pid` and the processes below it (fio's job processes start sessions of their
/// own); first say, for each of their threads, its name, state, wait channel and kernel
/// stack, so a hang can be told apart from a slow run.
fn kill_tree(pid: u32) -> String {
    let tree = process_tree(pid);
    let mut report = String::new();
    for p in &tree {
        let tasks = std::fs::read_dir(format!("/proc/{p}/task"));
        for t in tasks.into_iter().flatten().flatten() {
            let read = |f: &str| std::fs::read_to_string(t.path().join(f)).unwrap_or_default();
            let stat = read("stat");
            let state = stat
                .rsplit_once(") ")
                .and_then(|(_, r)| r.get(..1))
                .unwrap_or("?");
            report.push_str(&format!(
                "pid {p} task {} ({}) state {state} wchan {}\n{}",
                t.file_name().to_string_lossy(),
                read("comm").trim(),
                read("wchan"),
                read("stack")
            ));
        }
    }
    for p in tree.iter().rev() {
        let _ = Command::new("kill")
            .arg("-KILL")
            .arg(p.to_string())
            .status();
    }
    report
}

pub fn flexio(args: &[&str], dir: &Path) -> Run {
    run_in(&flexio_bin(), args, dir)
}

/// flexio as fio 3.33 ([`ORACLE_COMPAT`]): for every result compared with the installed
/// fio 3.33 or with fixtures it produced.
pub fn flexio_oracle(args: &[&str], dir: &Path) -> Run {
    run_in_env(&flexio_bin(), args, dir, ORACLE_COMPAT)
}

/// Replace `@D@` in arguments with a directory.
pub fn subst(args: &[&str], dir: &Path) -> Vec<String> {
    args.iter()
        .map(|a| a.replace("@D@", &dir.display().to_string()))
        .collect()
}

/// Oracle comparisons run one at a time: whether a run lasts longer than fio's 500 ms
/// sampling interval (and so prints bw/iops sample lines) must not depend on what other
/// tests do to the two CPUs at the same moment.
pub static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// The environment that makes flexio reproduce the installed oracle (fio 3.33) where fio
/// versions differ; every comparison with fio 3.33 runs flexio with it.
pub const ORACLE_COMPAT: &[(&str, &str)] = &[("FLEXIO_COMPAT", "3.33")];

/// Run fio, or flexio as fio 3.33 (the oracle's version: [`ORACLE_COMPAT`]), requiring
/// success.
pub fn oracle_run(bin: &Path, args: &[&str], dir: &Path) -> Run {
    let env = if bin == flexio_bin() {
        ORACLE_COMPAT
    } else {
        &[]
    };
    let r = run_in_env(bin, args, dir, env);
    assert_eq!(
        r.code,
        0,
        "{} {args:?}: {}{}",
        bin.display(),
        r.stdout,
        r.stderr
    );
    r
}

/// The files several-file comparisons run on (sparse): two of 1 MiB, one of 512 KiB and
/// one of 256 KiB, so files of different sizes end at different times.
pub const MIXED_FILES: &[(&str, u64)] = &[
    ("f", 1 << 20),
    ("f2", 1 << 20),
    ("g", 512 << 10),
    ("h", 256 << 10),
];

/// fio, then flexio as fio 3.33 ([`ORACLE_COMPAT`]), each in a fresh directory holding
/// `files` (name, length: sparse) with `args`, the run required to succeed; `look` reads
/// what each left there. The results in that order (fio's first).
pub fn both_on_files<T>(
    fio: &Path,
    files: &[(&str, u64)],
    args: &[String],
    look: impl Fn(&Path) -> T,
) -> (T, T) {
    let mut got = Vec::new();
    for bin in [fio.to_path_buf(), flexio_bin()] {
        let d = tempfile::tempdir().unwrap();
        for (name, len) in files {
            std::fs::File::create(d.path().join(name))
                .unwrap()
                .set_len(*len)
                .unwrap();
        }
        let a: Vec<&str> = args.iter().map(String::as_str).collect();
        oracle_run(&bin, &a, d.path());
        got.push(look(d.path()));
    }
    let x = got.pop().unwrap();
    (got.pop().unwrap(), x)
}

/// Run the same arguments through fio and flexio (as fio 3.33: [`ORACLE_COMPAT`]), each in its own fresh directory.
pub fn both(args: &[&str]) -> Option<(Run, Run)> {
    let fio = fio_bin()?;
    let _guard = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let d1 = tempfile::tempdir().unwrap();
    let d2 = tempfile::tempdir().unwrap();
    let a1 = subst(args, d1.path());
    let a2 = subst(args, d2.path());
    let r1 = run_in(
        &fio,
        &a1.iter().map(String::as_str).collect::<Vec<_>>(),
        d1.path(),
    );
    let r2 = run_in_env(
        &flexio_bin(),
        &a2.iter().map(String::as_str).collect::<Vec<_>>(),
        d2.path(),
        ORACLE_COMPAT,
    );
    Some((r1, r2))
}

/// The shape of a normal-output line: numbers, units, dates and pids abstracted; lines
/// whose count depends on the data (percentile rows, latency buckets) become one token.
pub fn line_shape(l: &str) -> Option<String> {
    thread_local! {
        static RES: Vec<(Regex, &'static str)> = vec![
            (Regex::new(r"pid=\d+").unwrap(), "pid=N"),
            // The failing source location (fio: io_u.c:1876; flexio: its own file:line).
            (Regex::new(r"file:[\w.]+:\d+").unwrap(), "file:SRC"),
            (Regex::new(r"\w{3} \w{3} [ \d]\d \d\d:\d\d:\d\d \d{4}").unwrap(), "DATE"),
            (Regex::new(r"\((nsec|usec|msec)\)").unwrap(), "(U)"),
            (Regex::new(r"\(\s*(KiB|MiB|kB|MB)/s\)").unwrap(), "(U/s)"),
            (Regex::new(r"\d+(\.\d+)?(Ki|Mi|Gi|Ti|Pi|k|M|G|T|P)?(B/s|B|bit/s)?").unwrap(), "N"),
            (Regex::new(r"=\s+N").unwrap(), "=N"),
            (Regex::new(r"\[\s+").unwrap(), "["),
        ];
    }
    if Regex::new(r"^(fio|flexio)-[\d.]+$").unwrap().is_match(l) {
        return Some("VERSION".into());
    }
    // Notes are advisory and engine-specific (fio prints a depth note for vsync that does
    // not apply); they are compared by dedicated tests, not by shape.
    if l.starts_with("note: ") {
        return None;
    }
    // flexio's own lines beside fio's latency lines (RMS, percentiles resting on too few
    // samples): fio has no counterpart; tests/report_compare.rs checks them.
    if l.starts_with("    rms: ") || l.starts_with("    few samples: ") {
        return None;
    }
    if Regex::new(r"^\s+\|").unwrap().is_match(l) {
        return Some("PCT_ROW".into());
    }
    if Regex::new(r"^  lat \((nsec|usec|msec)\)\s+:")
        .unwrap()
        .is_match(l)
    {
        return Some("LAT_DIST".into());
    }
    Some(RES.with(|res| {
        let mut s = l.to_string();
        for (re, rep) in res {
            s = re.replace_all(&s, *rep).into_owned();
        }
        s
    }))
}

pub fn shapes(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for l in text.lines() {
        let Some(s) = line_shape(l) else { continue };
        if (s == "PCT_ROW" || s == "LAT_DIST") && out.last() == Some(&s) {
            continue;
        }
        out.push(s);
    }
    out
}

/// Assert two normal outputs have the same line structure.
pub fn assert_same_shape(fio: &str, flexio: &str, what: &str) {
    let a = shapes(fio);
    let b = shapes(flexio);
    if a != b {
        let mut msg = format!("{what}: normal output structure differs\n--- fio\n");
        for l in &a {
            msg.push_str(&format!("  {l}\n"));
        }
        msg.push_str("--- flexio\n");
        for l in &b {
            msg.push_str(&format!("  {l}\n"));
        }
        msg.push_str(&format!(
            "--- raw fio output\n{fio}\n--- raw flexio output\n{flexio}\n"
        ));
        panic!("{msg}");
    }
}

/// Parse the JSON document of an output (fio may print notes before it).
pub fn json_of(text: &str) -> serde_json::Value {
    let i = text
        .find('{')
        .unwrap_or_else(|| panic!("no JSON in output:\n{text}"));
    serde_json::from_str(&text[i..]).unwrap_or_else(|e| panic!("invalid JSON ({e}):\n{text}"))
}

fn kind(v: &serde_json::Value) -> &'static str {
    use serde_json::Value::*;
    match v {
        Null => "null",
        Bool(_) => "bool",
        Number(n) if n.is_f64() => "float",
        Number(_) => "int",
        String(_) => "string",
        Array(_) => "array",
        Object(_) => "object",
    }
}

/// Differences in keys (order included) and value types between two JSON documents.
/// Keys of `percentile` and `bins` objects are data, not structure; flexio's own `flexio`
/// section is allowed in addition.
pub fn json_shape_diffs(
    a: &serde_json::Value,
    b: &serde_json::Value,
    path: &str,
    out: &mut Vec<String>,
) {
    use serde_json::Value;
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            let data_keys = path.ends_with("/percentile") || path.ends_with("/bins");
            if !data_keys {
                let kx: Vec<&String> = x.keys().collect();
                let ky: Vec<&String> = y
                    .keys()
                    // flexio's own sections: at the root and in job objects.
                    .filter(|k| {
                        !(k.as_str() == "flexio"
                            && (path.is_empty()
                                || (path.starts_with("/jobs[") && !path[1..].contains('/'))))
                    })
                    .collect();
                if kx != ky {
                    out.push(format!("{path}: keys {kx:?} vs {ky:?}"));
                }
            }
            for (k, v) in x {
                if let Some(w) = y.get(k) {
                    json_shape_diffs(v, w, &format!("{path}/{k}"), out);
                }
            }
        }
        (Value::Array(x), Value::Array(y)) => {
            if x.len() != y.len() {
                out.push(format!("{path}: {} vs {} elements", x.len(), y.len()));
            }
            for (i, (v, w)) in x.iter().zip(y).enumerate() {
                json_shape_diffs(v, w, &format!("{path}[{i}]"), out);
            }
        }
        _ => {
            if kind(a) != kind(b) {
                out.push(format!("{path}: {} {a} vs {} {b}", kind(a), kind(b)));
            }
        }
    }
}

pub fn assert_same_json_shape(fio: &str, flexio: &str, what: &str) {
    let a = json_of(fio);
    let b = json_of(flexio);
    let mut d = Vec::new();
    json_shape_diffs(&a, &b, "", &mut d);
    assert!(
        d.is_empty(),
        "{what}: JSON structure differs:\n{}",
        d.join("\n")
    );
}

/// Kind of a terse field.
pub fn terse_kind(f: &str) -> &'static str {
    let pats: [(&str, &str); 6] = [
        (r"^-?\d+$", "int"),
        (r"^-?\d+\.\d{6}$", "float"),
        (r"^\d+\.\d%$", "pct1"),
        (r"^\d+\.\d\d%$", "pct2"),
        (r"^\d+\.\d{6}%$", "pct6"),
        (r"^(\d+\.\d{6}%=\d+|0%=0)$", "pctval"),
    ];
    for (p, k) in pats {
        if Regex::new(p).unwrap().is_match(f) {
            return k;
        }
    }
    "string"
}

pub fn terse_lines(text: &str) -> Vec<Vec<String>> {
    text.lines()
        .filter(|l| Regex::new(r"^\d;").unwrap().is_match(l))
        .map(|l| l.split(';').map(str::to_string).collect())
        .collect()
}

pub fn assert_same_terse_shape(fio: &str, flexio: &str, what: &str) {
    let a = terse_lines(fio);
    let b = terse_lines(flexio);
    assert_eq!(
        a.len(),
        b.len(),
        "{what}: terse line count\n{fio}\n{flexio}"
    );
    for (la, lb) in a.iter().zip(&b) {
        assert_eq!(
            la.len(),
            lb.len(),
            "{what}: terse field count\n{fio}\n{flexio}"
        );
        for (i, (x, y)) in la.iter().zip(lb).enumerate() {
            if i == 1 {
                continue; // version string
            }
            assert_eq!(
                terse_kind(x),
                terse_kind(y),
                "{what}: terse field {} differs: {x:?} vs {y:?}",
                i + 1
            );
        }
    }
}

/// Start flexio in `dir` with piped stdout and stderr (and TZ=UTC), for tests that signal
/// it or watch it while it runs. Collect it with `wait_with_output` (or [`collect`]).
pub fn spawn_flexio(args: &[&str], dir: &Path, env: &[(&str, &str)]) -> std::process::Child {
    spawn_in(&flexio_bin(), args, dir, env)
}

/// [`spawn_flexio`] for any program (flexio or fio, e.g. one side of a transfer).
pub fn spawn_in(
    bin: &Path,
    args: &[&str],
    dir: &Path,
    env: &[(&str, &str)],
) -> std::process::Child {
    Command::new(bin)
        .args(args)
        .current_dir(dir)
        .env("TZ", "UTC")
        .envs(env.iter().copied())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}", bin.display()))
}

/// [`spawn_in`] with stdout a pipe whose reader is gone before the program starts: its
/// first write to stdout fails (EPIPE, SIGPIPE) however the processes are scheduled.
pub fn spawn_into_closed_pipe(
    bin: &Path,
    args: &[&str],
    dir: &Path,
    env: &[(&str, &str)],
) -> std::process::Child {
    let (reader, writer) = rustix::pipe::pipe().expect("pipe");
    drop(reader);
    Command::new(bin)
        .args(args)
        .current_dir(dir)
        .env("TZ", "UTC")
        .envs(env.iter().copied())
        .stdout(std::process::Stdio::from(writer))
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}", bin.display()))
}

/// ETXTBSY on Linux (the tests do not link libc).
fn libc_etxtbsy() -> i32 {
    26
}

/// [`spawn_in`] for a binary the test has just copied: another test thread's child may
/// still hold the copy's write descriptor between its fork and its exec, and the kernel
/// then refuses to run the file (ETXTBSY, "Text file busy") for that moment; retried.
pub fn spawn_copied(bin: &Path, args: &[&str], dir: &Path) -> std::process::Child {
    for _ in 0..100 {
        match Command::new(bin)
            .args(args)
            .current_dir(dir)
            .env("TZ", "UTC")
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
        {
            Ok(c) => return c,
            Err(e) if e.raw_os_error() == Some(libc_etxtbsy()) => {
                std::thread::sleep(std::time::Duration::from_millis(20))
            }
            Err(e) => panic!("cannot run {}: {e}", bin.display()),
        }
    }
    panic!("{} stayed busy (ETXTBSY)", bin.display())
}

/// Start a program in the background (a server) in `dir`, no input, its stdout and stderr
/// both to the file `log`.
pub fn spawn_logged(bin: &Path, args: &[&str], dir: &Path, log: &Path) -> std::process::Child {
    spawn_logged_env(bin, args, dir, log, &[])
}

/// [`spawn_logged`] with extra environment variables.
pub fn spawn_logged_env(
    bin: &Path,
    args: &[&str],
    dir: &Path,
    log: &Path,
    env: &[(&str, &str)],
) -> std::process::Child {
    let log = std::fs::File::create(log).unwrap();
    Command::new(bin)
        .args(args)
        .current_dir(dir)
        .env("TZ", "UTC")
        .envs(env.iter().copied())
        .stdin(std::process::Stdio::null())
        .stdout(log.try_clone().unwrap())
        .stderr(log)
        .spawn()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}", bin.display()))
}

/// Wait for a child started with piped output ([`spawn_in`]) and take its result.
pub fn collect(child: std::process::Child) -> Run {
    child.wait_with_output().unwrap().into()
}

impl From<Output> for Run {
    fn from(out: Output) -> Run {
        Run {
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
            code: out.status.code().unwrap_or(-1),
        }
    }
}

/// A started program's output, drained while it runs, if it ends within `secs`; else
/// `kill(pid)` is called and, once the program is gone (10 s at most), `None` returned.
fn wait_within(child: std::process::Child, secs: u64, kill: impl FnOnce(u32)) -> Option<Output> {
    let pid = child.id();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    match rx.recv_timeout(std::time::Duration::from_secs(secs)) {
        Ok(o) => Some(o.unwrap()),
        Err(_) => {
            kill(pid);
            let _ = rx.recv_timeout(std::time::Duration::from_secs(10));
            None
        }
    }
}

/// Run a program with a deadline: a run that does not end within `secs` is killed and the
/// test fails saying so (no input may make flexio hang). Output is drained while it runs.
pub fn run_bounded(bin: &Path, args: &[&str], dir: &Path, env: &[(&str, &str)], secs: u64) -> Run {
    let child = Command::new(bin)
        .args(args)
        .current_dir(dir)
        .env("TZ", "UTC")
        .env("RUST_BACKTRACE", "0")
        .envs(env.iter().copied())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}", bin.display()));
    let start = std::time::Instant::now();
    match wait_within(child, secs, |pid| send_signal(pid, "KILL")) {
        Some(out) => out.into(),
        None => panic!("{} {args:?} hung for {:?}", bin.display(), start.elapsed()),
    }
}

/// fio run with a time bound, for runs that fio 3.33 itself can hang in (its offloaded jobs,
/// some verify error paths, a `log_store_compressed` job with `rate_iops` whose job process
/// waited on a futex for good). On a hang fio's job processes (each in a session of its
/// own) and its process group are killed and `None` returned, so the caller can try again
/// or say why it skipped that part.
pub fn run_fio_bounded<S: AsRef<std::ffi::OsStr>>(
    fio: &Path,
    args: &[S],
    dir: &Path,
    secs: u64,
) -> Option<Run> {
    use std::os::unix::process::CommandExt;
    let child = Command::new(fio)
        .args(args)
        .current_dir(dir)
        .env("TZ", "UTC")
        .process_group(0)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}", fio.display()));
    let kill_group = |pid: u32| {
        // fio's job processes start sessions of their own (setsid), out of the group:
        // they are killed as the main process's children first, so none is left behind.
        let _ = Command::new("pkill")
            .args(["-KILL", "-P"])
            .arg(pid.to_string())
            .status();
        let _ = Command::new("kill")
            .arg("-KILL")
            .arg("--")
            .arg(format!("-{pid}"))
            .status();
    };
    wait_within(child, secs, kill_group).map(Run::from)
}

/// fio 3.33 on a job whose logs it compresses (`log_compression`, `log_store_compressed`):
/// fio can hang there for good, its job process waiting on a futex (seen in CI: a whole run
/// lost to it). Up to three tries of 60 s, each after removing the log files a killed try
/// left; `None` (with a visible note) when all three hung.
pub fn fio_compressing_logs(fio: &Path, args: &[&str], dir: &Path) -> Option<Run> {
    for _ in 0..3 {
        if let Some(r) = run_fio_bounded(fio, args, dir, 60) {
            return Some(r);
        }
        for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            if e.file_name().to_string_lossy().contains(".log") {
                let _ = std::fs::remove_file(e.path());
            }
        }
    }
    eprintln!("SKIP: fio 3.33 hung three times compressing logs for {args:?} (killed)");
    None
}

/// Send signal `sig` (a name such as "INT" or a number such as "9") to process `pid`
/// (through kill(1): no unsafe in the tests).
pub fn send_signal(pid: u32, sig: &str) {
    let s = Command::new("kill")
        .arg(format!("-{sig}"))
        .arg(pid.to_string())
        .status()
        .unwrap();
    assert!(s.success(), "kill -{sig} {pid}");
}

/// A write_iolog's lines without their times (version 3 logs' first field).
pub fn iolog_lines(p: &Path) -> Vec<String> {
    std::fs::read_to_string(p)
        .unwrap_or_else(|e| panic!("{}: {e}", p.display()))
        .lines()
        .map(|l| match l.split_once(' ') {
            Some((t, rest)) if t.parse::<u64>().is_ok() => rest.to_string(),
            _ => l.to_string(),
        })
        .collect()
}

/// fio's and flexio's logs ([`iolog_lines`]) line for line; the first line that differs
/// and both logs on failure.
pub fn assert_same_iologs(what: &str, fio: &[String], flexio: &[String]) {
    if let Some(k) = fio.iter().zip(flexio).position(|(p, q)| p != q) {
        panic!(
            "{what}: line {} differs: fio {:?}, flexio {:?}\nfio:\n{}\nflexio:\n{}",
            k + 1,
            fio[k],
            flexio[k],
            fio.join("\n"),
            flexio.join("\n")
        );
    }
    assert_eq!(
        fio.len(),
        flexio.len(),
        "{what}: lines\nfio:\n{}\nflexio:\n{}",
        fio.join("\n"),
        flexio.join("\n")
    );
}
