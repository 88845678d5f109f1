//! `--parse-only`, as fio: every option and value of the command line and the job files
//! (includes and variables resolved) is parsed and checked, and nothing else happens. No
//! file, directory or device is looked at (no size lookups, no layout), no job runs.
//!
//! fio stops after parsing the options too: the checks that need the files or combine
//! several options (its `fixup_options`) belong to a run, so a job file fio's `--parse-only`
//! accepts is accepted here unless it uses something flexio does not support.

use flexio_job::{cli::Cli, load, LoadEnv};

/// Parse and check; print warnings as a run would. Returns the exit status.
pub fn run(cli: &Cli, env: &LoadEnv) -> i32 {
    let set = match load::load(cli, env) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("flexio: {e}");
            return 1;
        }
    };
    flexio_run::debug::parse_lines(&set);
    for w in &set.warnings {
        eprintln!("flexio: warning: {w}");
    }
    if cli.switches.warnings_fatal && !set.warnings.is_empty() {
        eprintln!("flexio: warnings are fatal (--warnings-fatal)");
        return 1;
    }
    0
}
