//! Running a generated fio job inside this process, through the same seam a remote session
//! uses ([`crate::prepare_job_text`] + [`crate::run_prepared`]): parsing, planning, the engine and the job
//! loop are flexio's own, nothing is printed, and the results come back as numbers. The
//! study subcommands (`flexio matrix`, `flexio writemodes`, `flexio rt-study`) are built on it.

use crate::session::{interrupt, prepare_job_text, run_prepared, Prepared, Quiet};
use flexio_stats::report::{DiskReport, JobReport, JobResult, RunReport};
use std::path::PathBuf;
use std::sync::atomic::Ordering;

/// Whether the user interrupted the study.
pub fn interrupted() -> bool {
    interrupt().0.load(Ordering::Relaxed)
}

/// What one in-process job run gives back.
pub struct JobRun {
    /// The job's raw statistics (exact byte counts, `runtime_ns`, CPU times).
    pub result: JobResult,
    /// The job as the report computes it (latency summaries with percentiles, usr/sys CPU
    /// in percent, sync statistics).
    pub report: JobReport,
    /// Disk statistics of the devices under the job's files (empty with `disk_util=0`).
    pub disks: Vec<DiskReport>,
}

/// Run `job` (the text of a job file with one job) in this process. An error names the job
/// and carries flexio's message (a bad option, a failed open, an I/O error).
pub fn run_job(job: &str) -> Result<JobRun, String> {
    let prepared = prepare_job_text(job, &["--output-format=json"])?;
    if prepared.plans.len() != 1 {
        return Err(format!(
            "internal: a study job must plan to one thread, not {}",
            prepared.plans.len()
        ));
    }
    let (report, results) = run_checked(prepared)?;
    let (Some(result), Some(rep)) = (results.into_iter().next(), report.jobs.into_iter().next())
    else {
        return Err("the job produced no result".into());
    };
    Ok(JobRun {
        result,
        report: rep,
        disks: report.disks,
    })
}

/// Run the job text `job` (any number of jobs; `args` as on flexio's command line, e.g.
/// `--output-format=json+`) in this process: its report, or an error when it was
/// interrupted, did not run, or a job failed.
pub fn run_text(job: &str, args: &[&str]) -> Result<RunReport, String> {
    run_checked(prepare_job_text(job, args)?).map(|(report, _)| report)
}

/// Run a prepared job quietly; a job's error or a failing exit status is an error naming
/// the jobs that failed.
fn run_checked(prepared: Prepared) -> Result<(RunReport, Vec<JobResult>), String> {
    let (term, sigs) = interrupt().clone();
    let out = run_prepared(prepared, &Quiet, term, sigs);
    if interrupted() {
        return Err("interrupted".into());
    }
    let report = out
        .report
        .ok_or_else(|| format!("the job did not run (exit status {})", out.code))?;
    let failed: Vec<String> = report
        .jobs
        .iter()
        .filter(|j| j.error != 0)
        .map(|j| format!("{}: {} (error {})", j.name, j.verror, j.error))
        .collect();
    if !failed.is_empty() {
        return Err(format!("the job failed: {}", failed.join("; ")));
    }
    if out.code != 0 {
        return Err(format!("the job failed (exit status {})", out.code));
    }
    Ok((report, out.results))
}

/// The scratch file of a study: `--file` as given, else `<--dir or .>/flexio-<study>.<pid>.tmp`.
/// It must not exist (the study writes and removes it), its folder must, and its path must
/// be usable as a fio file name.
pub fn scratch_file(
    dir: Option<PathBuf>,
    file: Option<PathBuf>,
    study: &str,
) -> Result<PathBuf, String> {
    let f = match (dir, file) {
        (Some(_), Some(_)) => return Err("give --dir or --file, not both".into()),
        (_, Some(f)) => f,
        (d, None) => d
            .unwrap_or_else(|| PathBuf::from("."))
            .join(format!("flexio-{study}.{}.tmp", std::process::id())),
    };
    let name = f.display().to_string();
    if name.contains(':') || name.contains('\n') {
        return Err(format!(
            "{name}: the scratch file's path may not contain ':' or a newline (fio's file-name separator)"
        ));
    }
    if let Some(p) = f.parent().filter(|p| !p.as_os_str().is_empty()) {
        if !p.is_dir() {
            return Err(format!("{}: no such directory", p.display()));
        }
    }
    if f.exists() {
        return Err(format!(
            "{name}: exists; flexio {study} writes and removes its own scratch file"
        ));
    }
    Ok(f)
}
