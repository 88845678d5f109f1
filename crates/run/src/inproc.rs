//! Running a generated fio job inside this process, through the same seam a remote session
//! uses ([`crate::prepare_job_text`] + [`crate::run_prepared`]): parsing, planning, the engine and the job
//! loop are flexio's own, nothing is printed, and the results come back as numbers. The
//! study subcommands (`flexio matrix`, `flexio writemodes`) are built on it.

use crate::session::{interrupt, prepare_job_text, run_prepared, Quiet};
use flexio_stats::report::{DiskReport, JobReport, JobResult};
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
    let (term, sigs) = interrupt().clone();
    let out = run_prepared(prepared, &Quiet, term, sigs);
    if interrupted() {
        return Err("interrupted".into());
    }
    let report = out
        .report
        .ok_or_else(|| format!("the job did not run (exit status {})", out.code))?;
    let (Some(result), Some(rep)) = (
        out.results.into_iter().next(),
        report.jobs.into_iter().next(),
    ) else {
        return Err("the job produced no result".into());
    };
    if rep.error != 0 {
        return Err(format!(
            "the job failed: {} (error {})",
            rep.verror, rep.error
        ));
    }
    if out.code != 0 {
        return Err(format!("the job failed (exit status {})", out.code));
    }
    Ok(JobRun {
        result,
        report: rep,
        disks: report.disks,
    })
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
