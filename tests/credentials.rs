//! `uid` / `gid`: the job thread runs as that user and group, as fio's worker does after
//! setgid/setuid; files laid out before the job belong to the invoking user (root), files
//! the job creates itself to the job's user. Compared with fio 3.33.

use crate::common;
use common::*;
use serde_json::Value;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

fn which(name: &str) -> Option<PathBuf> {
    std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|d| d.join(name))
        .find(|p| p.is_file())
}

const NOBODY: u32 = 65534;

fn root() -> bool {
    if rustix::process::geteuid().is_root() {
        return true;
    }
    eprintln!("SKIP: uid/gid tests need root (changing ids needs CAP_SETUID)");
    false
}

/// (exit code, the job's error, bytes read + written) of one tool's run.
fn outcome(bin: &Path, args: &[&str], dir: &Path) -> (i32, i64, u64) {
    let mut a = vec!["--output-format=json"];
    a.extend_from_slice(args);
    let r = run_bounded(bin, &a, dir, &[], 60);
    let j: Value = json_of(&r.stdout);
    let job = &j["jobs"][0];
    let bytes =
        job["read"]["io_bytes"].as_u64().unwrap() + job["write"]["io_bytes"].as_u64().unwrap();
    (r.code, job["error"].as_i64().unwrap(), bytes)
}

#[test]
fn jobs_run_as_the_given_user_and_group() {
    if !root() {
        return;
    }
    let fio = fio_bin();
    let d = tempfile::tempdir().unwrap();
    let dir = d.path();
    std::fs::set_permissions(dir, std::os::unix::fs::PermissionsExt::from_mode(0o777)).unwrap();
    let ids = ["--uid=65534", "--gid=65534"];
    type Case<'a> = (&'a str, &'a [&'a str], (i32, i64, u64));
    let cases: [Case; 3] = [
        // Laid out by root (0644): readable by nobody.
        ("r", &["--rw=read"], (0, 0, 64 << 10)),
        // Laid out by root, then opened for writing as nobody: EACCES at open.
        ("w", &["--rw=write"], (1, 13, 0)),
        // Created by the job itself: nobody's file.
        ("c", &["--rw=write", "--create_on_open=1"], (0, 0, 64 << 10)),
    ];
    for (name, extra, want) in cases {
        let mut tools = vec![("flexio", flexio_bin())];
        if let Some(f) = &fio {
            tools.push(("fio", f.clone()));
        }
        for (tool, bin) in &tools {
            let file = dir.join(format!("{tool}.{name}"));
            let _ = std::fs::remove_file(&file);
            let fname = format!("--filename={}", file.display());
            let mut args = vec![
                "--name=j",
                "--ioengine=psync",
                "--bs=4k",
                "--size=64k",
                fname.as_str(),
            ];
            args.extend_from_slice(&ids);
            args.extend_from_slice(extra);
            let got = outcome(bin, &args, dir);
            assert_eq!(got, want, "{tool} {name}: (exit, error, bytes)");
            let m = std::fs::metadata(&file).unwrap();
            let owner = if name == "c" { NOBODY } else { 0 };
            assert_eq!((m.uid(), m.gid()), (owner, owner), "{tool} {name}: owner");
            if name == "c" {
                assert_eq!(
                    m.mode() & 0o777,
                    0o600,
                    "{tool}: the job's own file is 0600"
                );
            }
        }
    }
}

/// fio names the file in the error's function: `func=open(<file>)`.
#[test]
fn an_open_that_fails_names_the_file_as_fio() {
    if !root() {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let mut tools = vec![("flexio", flexio_bin())];
    if let Some(f) = fio_bin() {
        tools.push(("fio", f));
    }
    for (tool, bin) in &tools {
        let name = format!("{tool}.w");
        let fname = format!("--filename={name}");
        let r = run_bounded(
            bin,
            &[
                "--name=j",
                "--rw=write",
                "--size=64k",
                fname.as_str(),
                "--uid=65534",
            ],
            d.path(),
            &[],
            60,
        );
        let all = format!("{}{}", r.stdout, r.stderr);
        assert!(all.contains("err=13/file:"), "{tool}: {all}");
        assert!(
            all.contains(&format!("func=open({name}), error=Permission denied")),
            "{tool}: {all}"
        );
    }
}

#[test]
fn a_user_that_cannot_change_ids_gets_fios_error() {
    if !root() {
        return;
    }
    // flexio itself started unprivileged (setpriv), asked to become root: setuid fails with
    // EPERM, the job ends with error 1 before any I/O, and says what it could not do.
    if which("setpriv").is_none() {
        eprintln!("SKIP: setpriv (util-linux) is not installed");
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let dir = d.path();
    let r = run_bounded(
        Path::new("setpriv"),
        &[
            "--reuid=65534",
            "--regid=65534",
            "--clear-groups",
            flexio_bin().to_str().unwrap(),
            "--name=j",
            "--ioengine=null",
            "--size=4k",
            "--uid=0",
            "--output-format=json",
        ],
        dir,
        &[],
        30,
    );
    let j: Value = json_of(&r.stdout);
    assert_eq!(j["jobs"][0]["error"].as_i64(), Some(1), "{}", r.stderr);
    assert!(r.stderr.contains("cannot set user id 0"), "{}", r.stderr);
}
