//! `exec_prerun` / `exec_postrun`: a shell command before and after the job, its output in
//! `<job>.<prerun|postrun>.txt` in the working directory, as fio runs them (`system()` of
//! `<cmd> > <job>.<mode>.txt 2>&1`).

use super::RunCtx;
use crate::notes::Notes;
use std::path::Path;

/// Run one hook; false when it could not run or exited non-zero (a failed prerun keeps the
/// job from running, as in fio).
pub fn run_hook(ctx: &RunCtx, job: &str, mode: &str, cmd: &str) -> bool {
    run_in(&ctx.notes, None, job, mode, cmd)
}

/// [`run_hook`] in directory `dir` (the working directory when `None`).
fn run_in(notes: &Notes, dir: Option<&Path>, job: &str, mode: &str, cmd: &str) -> bool {
    let out = format!("{job}.{mode}.txt");
    notes.info(&format!("{job} : Saving output of {mode} in {out}"));
    let line = format!("{cmd} > {out} 2>&1");
    let mut sh = std::process::Command::new("/bin/sh");
    sh.arg("-c").arg(&line);
    if let Some(d) = dir {
        sh.current_dir(d);
    }
    match sh.status() {
        Ok(s) => s.success(),
        Err(e) => {
            notes.err(&format!("fio: exec of cmd <{line}> failed: {e}"));
            false
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOTES: Notes = Notes {
        info_to_stdout: false,
        output: None,
    };

    #[test]
    fn output_goes_to_the_jobs_file_and_status_decides() {
        let d = tempfile::tempdir().unwrap();
        // The redirection is appended to the command as given, as fio's system() line.
        let cmd = "{ echo out; echo err >&2; }";
        let ok = run_in(&NOTES, Some(d.path()), "j1", "prerun", cmd);
        assert!(ok);
        let text = std::fs::read_to_string(d.path().join("j1.prerun.txt")).unwrap();
        assert_eq!(text, "out\nerr\n");
        assert!(!run_in(
            &NOTES,
            Some(d.path()),
            "j1",
            "postrun",
            "{ echo late; exit 3; }"
        ));
        let text = std::fs::read_to_string(d.path().join("j1.postrun.txt")).unwrap();
        assert_eq!(text, "late\n", "a failing hook's output is kept too");
    }

    #[test]
    fn a_hook_that_cannot_start_fails() {
        let d = tempfile::tempdir().unwrap();
        let gone = d.path().join("gone");
        assert!(!run_in(&NOTES, Some(&gone), "j", "prerun", "true"));
        assert!(!gone.exists());
    }
}
