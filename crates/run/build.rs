//! Records the git commit the crate is built from (`FLEXIO_GIT_COMMIT`, for the provenance
//! of every result), where the sources are a git checkout; a build from a source archive
//! has none and the provenance leaves it out.

use std::path::PathBuf;
use std::process::Command;

fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git").args(args).output().ok()?;
    if !out.status.success() {
        return None;
    }
    let s = String::from_utf8(out.stdout).ok()?.trim().to_string();
    (!s.is_empty()).then_some(s)
}

/// Where git keeps `name` (`HEAD`, `packed-refs`, `refs/heads/main`): in a linked worktree
/// HEAD is the worktree's own and the refs are the main repository's.
fn git_path(name: &str) -> Option<PathBuf> {
    git(&["rev-parse", "--path-format=absolute", "--git-path", name]).map(PathBuf::from)
}

fn main() {
    println!("cargo:rerun-if-env-changed=FLEXIO_GIT_COMMIT");
    // Only files that exist are watched: cargo reruns a build script whose watched file is
    // missing at every build, and rebuilds every crate depending on this one with it. A
    // branch without a loose ref file (its ref is packed) is watched through the folder
    // the file appears in at the branch's next commit.
    for name in ["HEAD", "packed-refs"] {
        if let Some(p) = git_path(name).filter(|p| p.exists()) {
            println!("cargo:rerun-if-changed={}", p.display());
        }
    }
    if let Some(p) = git(&["symbolic-ref", "-q", "HEAD"]).and_then(|r| git_path(&r)) {
        let p = if p.exists() {
            Some(p.as_path())
        } else {
            p.parent().filter(|d| d.is_dir())
        };
        if let Some(p) = p {
            println!("cargo:rerun-if-changed={}", p.display());
        }
    }
    let commit = std::env::var("FLEXIO_GIT_COMMIT")
        .ok()
        .or_else(|| git(&["rev-parse", "HEAD"]));
    if let Some(c) = commit {
        println!("cargo:rustc-env=FLEXIO_GIT_COMMIT={c}");
    }
}
