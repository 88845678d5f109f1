//! The job thread: places itself, builds its engine, runs the job loop and packages the
//! result.
//!
//! The loop (`io_loop/`) does the waiting and owns the request slots; everything else is
//! a part with its own state that answers with decisions and never calls back into the
//! loop:
//!
//! | part | owns | answers |
//! |---|---|---|
//! | `pacing` | rate schedule, think-time period, rate_min cycle | which direction and from when; pause now; below minimum |
//! | `metering` | bw/IOPS samples, logs, interval stream, steady-state samples | deadlines; samples taken when due |
//! | `file_table` | descriptors, openfiles limit, in-flight per file | which file to close to open another |
//! | `verify` | write numbering, written-block log, backlog, state file | what to check and whether it is good |
//! | `lat_target` | the queue-depth search | continue / quiesce / done / fatal |
//! | `prio` | per-request priority draws | the priority of the next request |
//! | `placement` | — | CPU affinity, nice, ioprio of the thread |
//! | `replay` | the trace being replayed, its pacing state | the next entry; how long to wait before it |
//! | `capture` | the write_iolog writer | — (records file actions and queued requests) |
//! | `exec` | — | exec_prerun / exec_postrun ran (and succeeded) |
//! | `flow` | the job's share of its flow group | hold back before this I/O or not |
//! | `lockfile` | the per-path locks shared by jobs | — (lock/unlock around queueing) |

mod capture;
mod exec;
mod file_table;
mod flow;
mod io_loop;
mod lat_target;
mod lockfile;
mod logs;
mod metering;
mod pacing;
mod placement;
mod prio;
mod replay;
mod verify;
mod verify_async;

pub use logs::create_all as create_log_files;

use crate::clock::Clock;
use crate::plan::ThreadPlan;
use crate::progress::{Progress, RunState};
use flexio_engine::{EngineDef, EngineVisitor};
use flexio_stats::{JobResult, ThreadStats};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// What every job thread shares with the main thread.
pub struct RunCtx {
    /// Set on SIGINT/SIGTERM or exitall: stop as soon as possible.
    pub terminate: Arc<AtomicBool>,
    pub clock: Clock,
    /// Where notes ("fio: io_u error ...") go.
    pub notes: crate::notes::Notes,
    /// --readonly: no layout writes either.
    pub readonly: bool,
    /// Raised by the main thread to ask every job for a copy of its statistics so far
    /// (--status-interval); answered at the next periodic check.
    pub snapshot_req: Arc<crate::progress::AtomicU64>,
}

/// fio's error description `file:<source>:<line>, func=..., error=...`, with flexio's own
/// source location of the caller.
#[track_caller]
fn verror(errno: i32, func: &str) -> String {
    let at = std::panic::Location::caller();
    let file = at.file().rsplit('/').next().unwrap_or("worker.rs");
    let text = crate::notes::strerror(errno);
    format!("file:{file}:{}, func={func}, error={text}", at.line())
}

/// Runs one thread plan with a concrete engine.
struct Runner<'a> {
    plan: &'a ThreadPlan,
    ctx: &'a RunCtx,
    progress: &'a Progress,
}

impl EngineVisitor for Runner<'_> {
    type Out = ThreadStats;
    fn visit<E: EngineDef>(self, engine: E) -> ThreadStats {
        let mut w = io_loop::Worker::new(engine, self.plan, self.ctx, self.progress);
        w.run();
        w.stats
    }
}

/// Package a thread's statistics as a job result.
pub fn result_of(plan: &ThreadPlan, pid: i32, stats: ThreadStats) -> JobResult {
    let mut params = plan.report.clone();
    if let Some(d) = stats.latency_depth {
        // The depth a latency_target search found.
        params.latency_depth = d;
    }
    JobResult {
        name: plan.name.clone(),
        groupid: plan.groupid,
        pid,
        description: plan.description.clone(),
        echo: plan.echo.clone(),
        group_reporting: plan.control.group_reporting,
        stats_enabled: plan.stats_enabled,
        params,
        stats,
        steadystate: None,
    }
}

/// Run a whole thread plan and package its result.
pub fn run_thread(plan: &ThreadPlan, ctx: &RunCtx, progress: &Progress) -> JobResult {
    let _io_job = IoJobDone(!plan.caps.noio);
    let tid = flexio_engine::platform::thread_id();
    // A private descriptor table makes every system call on the job's files cheaper; a
    // kernel that refuses only costs that speed.
    let _ = flexio_engine::sys::private_fd_table();
    progress.tid.store(tid, Ordering::Relaxed);
    if let Err((errno, what)) = placement::apply(&plan.placement) {
        ctx.notes.err(&format!("fio: {}: {what}", plan.name));
        let mut s = ThreadStats::default();
        s.set_error(
            errno,
            format!(
                "file:worker.rs, func=thread placement, error={}",
                crate::notes::strerror(errno)
            ),
        );
        progress.set_state(RunState::Exited);
        return result_of(plan, tid, s);
    }
    let stats = match flexio_engine::with_engine(
        &plan.engine,
        &plan.engine_cfg,
        Runner {
            plan,
            ctx,
            progress,
        },
    ) {
        Ok(s) => s,
        Err(m) => {
            let mut s = ThreadStats::default();
            s.set_error(libc::EINVAL, m);
            s
        }
    };
    progress.set_state(RunState::Exited);
    result_of(plan, tid, stats)
}

/// Counts an I/O job thread out of [`flexio_engine::api::IO_JOBS_PENDING`] when it ends,
/// however it ends.
struct IoJobDone(bool);

impl Drop for IoJobDone {
    fn drop(&mut self) {
        if self.0 {
            let _ = flexio_engine::api::IO_JOBS_PENDING.fetch_update(
                Ordering::Relaxed,
                Ordering::Relaxed,
                |n| n.checked_sub(1),
            );
        }
    }
}
