//! A command line that defines no job: fio's "No job(s) defined" (exit status 1, the usage
//! on stdout). Only a bare `flexio` (no job option, no job file) runs the built-in default
//! benchmark; job options without a `--name` define no job, as in fio.

use flexio_job::cli::Cli;

/// Whether the command line asks for the default benchmark: no job file and no job option
/// at all (program switches such as `--output-format` are allowed).
pub fn wants_default_benchmark(cli: &Cli) -> bool {
    cli.job_files.is_empty() && cli.sections.iter().all(|s| s.global && s.opts.is_empty())
}

/// Whether options were given but no job (`flexio --size=1M --rw=read`).
pub fn options_without_job(cli: &Cli) -> bool {
    cli.job_files.is_empty()
        && cli.sections.iter().all(|s| s.global)
        && cli.sections.iter().any(|s| !s.opts.is_empty())
        // `--profile=NAME` brings its own jobs.
        && flexio_job::load::cli_profile(cli).is_none()
}

/// Print fio's message (and flexio's hint) and return the exit status.
pub fn no_jobs_defined(hint: &str) -> i32 {
    out!("{}\n{}", flexio_run::VERSION, flexio_job::cli::usage());
    eprintln!("No job(s) defined\nflexio: {hint}\n");
    1
}
