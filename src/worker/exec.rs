//! `exec_prerun` / `exec_postrun`: a shell command the job thread runs before its I/O
//! (after its files are laid out and opened) and after it (before they are closed), with
//! the command's standard output and error in `<job>.prerun.txt` / `<job>.postrun.txt` in
//! the current directory, as fio does. A typical use is a readahead sweep:
//! `exec_prerun=blockdev --setra 256 /dev/sda` (docs/embedded.md).

use std::fs::File;
use std::process::{Command, Stdio};

/// The file that receives the output of `mode` ("prerun" or "postrun") for job `job`.
pub fn output_file(job: &str, mode: &str) -> String {
    format!("{job}.{mode}.txt")
}

/// Run `cmd` with `/bin/sh -c`, its output in [`output_file`]; an error says why it failed
/// (cannot start, killed, non-zero exit status).
pub fn run(job: &str, mode: &str, cmd: &str) -> Result<(), String> {
    let out = output_file(job, mode);
    let f = File::create(&out).map_err(|e| format!("exec_{mode}: cannot create {out}: {e}"))?;
    let f2 = f
        .try_clone()
        .map_err(|e| format!("exec_{mode}: cannot share {out}: {e}"))?;
    let status = Command::new("/bin/sh")
        .arg("-c")
        .arg(cmd)
        .stdin(Stdio::null())
        .stdout(f)
        .stderr(f2)
        .status()
        .map_err(|e| format!("exec_{mode}: cannot run /bin/sh: {e}"))?;
    match status.code() {
        Some(0) => Ok(()),
        Some(c) => Err(format!(
            "exec_{mode} command <{cmd}> exited with status {c} (its output is in {out})"
        )),
        None => Err(format!(
            "exec_{mode} command <{cmd}> was killed by a signal (its output is in {out})"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn output_and_status() {
        let d = tempfile::tempdir().unwrap();
        let job = d.path().join("j").display().to_string();
        run(&job, "prerun", "echo out; echo err >&2").unwrap();
        let text = std::fs::read_to_string(output_file(&job, "prerun")).unwrap();
        assert_eq!(text, "out\nerr\n");
        let e = run(&job, "postrun", "echo no; exit 3").unwrap_err();
        assert!(e.contains("exited with status 3"), "{e}");
        assert_eq!(
            std::fs::read_to_string(output_file(&job, "postrun")).unwrap(),
            "no\n"
        );
        let e = run(
            &d.path().join("missing/j").display().to_string(),
            "prerun",
            "true",
        )
        .unwrap_err();
        assert!(e.contains("cannot create"), "{e}");
    }
}
