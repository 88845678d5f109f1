//! `exec_prerun` / `exec_postrun`: a shell command before and after the job, its output in
//! `<job>.<prerun|postrun>.txt` in the working directory, as fio runs them (`system()` of
//! `<cmd> > <job>.<mode>.txt 2>&1`).

use super::RunCtx;

/// Run one hook; false when it could not run or exited non-zero (a failed prerun keeps the
/// job from running, as in fio).
pub fn run_hook(ctx: &RunCtx, job: &str, mode: &str, cmd: &str) -> bool {
    let out = format!("{job}.{mode}.txt");
    ctx.notes
        .info(&format!("{job} : Saving output of {mode} in {out}"));
    let line = format!("{cmd} > {out} 2>&1");
    match std::process::Command::new("/bin/sh")
        .arg("-c")
        .arg(&line)
        .status()
    {
        Ok(s) => s.success(),
        Err(e) => {
            ctx.notes
                .err(&format!("fio: exec of cmd <{line}> failed: {e}"));
            false
        }
    }
}
