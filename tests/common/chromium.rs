//! Headless Chromium for the tests that check HTML pages as a person sees them: find it
//! (a visible `SKIP:` without it, a failure under `FLEXIO_REQUIRE_CHROMIUM=1`), load a
//! page and return the DOM after its scripts ran with the console messages, or take a
//! screenshot; artifacts go under target/test-artifacts/.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

/// The Chromium binary, or `None` with a `SKIP:` line saying `what` is not checked.
pub fn find(what: &str) -> Option<PathBuf> {
    let p = ["/usr/bin/chromium", "/usr/bin/chromium-browser"]
        .iter()
        .map(PathBuf::from)
        .find(|p| p.is_file());
    if p.is_none() {
        if std::env::var("FLEXIO_REQUIRE_CHROMIUM").as_deref() == Ok("1") {
            panic!("chromium is required (FLEXIO_REQUIRE_CHROMIUM=1) but not installed");
        }
        eprintln!("SKIP: chromium is not installed; {what} not checked");
    }
    p
}

/// Load a page in headless Chromium: (DOM after scripts ran, console messages); with
/// `shot`, a screenshot is taken instead of the DOM.
pub fn render(
    chrome: &Path,
    page: &Path,
    profile: &Path,
    shot: Option<&Path>,
) -> (String, Vec<String>) {
    let mut cmd = Command::new(chrome);
    cmd.args([
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--enable-logging=stderr",
        "--v=0",
        "--virtual-time-budget=3000",
        "--window-size=1400,2200",
    ])
    .arg(format!("--user-data-dir={}", profile.display()));
    match shot {
        Some(s) => cmd.arg(format!("--screenshot={}", s.display())),
        None => cmd.arg("--dump-dom"),
    };
    let out = cmd
        .arg(format!("file://{}", page.display()))
        .output()
        .expect("run chromium");
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    let console = err
        .lines()
        .filter(|l| l.contains(":CONSOLE"))
        .map(str::to_string)
        .collect();
    (String::from_utf8_lossy(&out.stdout).into_owned(), console)
}

/// target/test-artifacts/ (screenshots and pages kept for a person to look at).
pub fn artifacts() -> PathBuf {
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("target"));
    let d = target.join("test-artifacts");
    std::fs::create_dir_all(&d).unwrap();
    d
}
