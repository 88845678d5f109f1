//! Records the git commit the crate is built from (`FLEXIO_GIT_COMMIT`, for the provenance
//! of every result), where the sources are a git checkout; a build from a source archive
//! has none and the provenance leaves it out.

use std::process::Command;

fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git").args(args).output().ok()?;
    if !out.status.success() {
        return None;
    }
    let s = String::from_utf8(out.stdout).ok()?.trim().to_string();
    (!s.is_empty()).then_some(s)
}

fn main() {
    println!("cargo:rerun-if-env-changed=FLEXIO_GIT_COMMIT");
    if let Some(dir) = git(&["rev-parse", "--absolute-git-dir"]) {
        for f in ["HEAD", "packed-refs"] {
            println!("cargo:rerun-if-changed={dir}/{f}");
        }
        if let Some(r) = git(&["symbolic-ref", "-q", "HEAD"]) {
            println!("cargo:rerun-if-changed={dir}/{r}");
        }
    }
    let commit = std::env::var("FLEXIO_GIT_COMMIT")
        .ok()
        .or_else(|| git(&["rev-parse", "HEAD"]));
    if let Some(c) = commit {
        println!("cargo:rustc-env=FLEXIO_GIT_COMMIT={c}");
    }
}
