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
//! | `dedupe` | the repeat/unique draws, the latest and next content | the content seed of the next write |
//! | `syncs` | writes since the last fsync / sync_file_range, written ranges | which sync is due before the next write |
//! | `ramp` | when the ramp began, bytes moved in it, the next look | whether the ramp ends now |
//! | `offload` | the submitter threads of io_submit_mode=offload, each with its own engine | — (an engine to the loop: requests complete in `reap`, with the submitters' stamps) |
//! | `zones` | the thread's side of its files' zone tables (zonemode=zbd), its reset count | which direction and where each I/O goes; quiesce or reset a device zone first |

#[cfg(feature = "shared_loop")]
mod any_engine;
mod capture;
mod cgroup;
mod dedupe;
mod exec;
mod file_table;
pub(crate) mod flow;
mod io_loop;
mod lat_target;
mod lockfile;
mod logs;
mod metering;
mod offload;
mod pacing;
mod placement;
mod prio;
mod ramp;
mod replay;
mod syncs;
mod sysio;
mod trims;
mod verify;
mod verify_async;
mod zones;

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
        if let Some(threads) = self.plan.io.offload {
            // io_submit_mode=offload: the requests go to submitter threads (one loop for
            // every engine: the engines are boxed behind the part).
            let build: offload::Build = |c| Box::new(E::build(c));
            let p = self.plan;
            return match offload::Offload::new(
                Box::new(engine),
                build,
                &p.engine.cfg,
                threads,
                p.io.depth as usize,
                self.ctx.clock,
            ) {
                Ok(o) => {
                    // The small builds' one loop (see any_engine.rs) runs this one too.
                    #[cfg(feature = "shared_loop")]
                    let o = any_engine::AnyEngine(Box::new(o));
                    let mut w = io_loop::Worker::new(o, p, self.ctx, self.progress);
                    w.run();
                    w.stats
                }
                Err(e) => {
                    let mut s = ThreadStats::default();
                    s.set_error(
                        e.raw_os_error().unwrap_or(libc::EAGAIN),
                        format!("file:worker.rs, func=offload submitters, error={e}"),
                    );
                    s
                }
            };
        }
        // One loop for every engine in the small builds (see any_engine.rs).
        #[cfg(feature = "shared_loop")]
        let engine = any_engine::AnyEngine(Box::new(engine));
        let mut w = io_loop::Worker::new(engine, self.plan, self.ctx, self.progress);
        w.run();
        w.stats
    }
}

/// Package a thread's statistics as a job result.
pub fn result_of(plan: &ThreadPlan, pid: i32, mut stats: ThreadStats) -> JobResult {
    // Zone resets are a zonemode=zbd job's (`Some` even when none happened: the newest fio
    // reports them for those jobs only; fio 3.33's layout shows 0 for every other job).
    if plan.zbd.is_some() {
        stats.zone_resets.get_or_insert(0);
    }
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

/// The result of a job that failed before its first I/O: error `errno` in fio's form, with
/// the function fio names (`setuid`, `cgroup open tasks`, `lockmem`, ...).
fn failed_before_io(
    plan: &ThreadPlan,
    progress: &Progress,
    tid: i32,
    errno: i32,
    func: &str,
) -> JobResult {
    let mut s = ThreadStats::default();
    s.set_error(
        errno,
        format!(
            "file:worker.rs, func={func}, error={}",
            crate::notes::strerror(errno)
        ),
    );
    progress.set_state(RunState::Exited);
    result_of(plan, tid, s)
}

impl RunCtx {
    /// Sleep `us` µs in small steps so termination is noticed. As fio's usec_sleep, the
    /// last stretch shorter than the system's sleep granularity is spun: a sleep of a few
    /// µs takes tens, so `thinktime=20` would pause 57 µs instead of 20.
    pub fn sleep_us(&self, us: u64) {
        let end = self.clock.now() + us * 1000;
        let gran = sleep_granularity_ns();
        while !self.terminate.load(Ordering::Relaxed) {
            let now = self.clock.now();
            if now >= end {
                break;
            }
            let left = end - now;
            if left <= gran {
                std::hint::spin_loop();
                continue;
            }
            std::thread::sleep(std::time::Duration::from_nanos(
                (left - gran).min(50_000_000),
            ));
        }
    }
}

/// How long a sleep of 1 µs takes on this system, in ns: the longest of ten, measured once
/// per process (fio's ns_granularity). The last stretch of a wait shorter than this is
/// spun where the wait must be exact (think time, a trace's gaps).
///
/// Measured on a thread of its own, with the default timer slack: the job thread that
/// asks first may have set a tight slack (paced jobs do), and the measure would then
/// depend on which job asked first. With the default slack it also covers a wake-up that
/// comes late: 3,000 trace entries 100 µs apart ended at 319-321 ms with a 10 µs margin,
/// at 302-306 ms with this one (about 60 µs here), as fio's did.
pub(crate) fn sleep_granularity_ns() -> u64 {
    static GRAN: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
    *GRAN.get_or_init(|| {
        let measure = || {
            (0..10)
                .map(|_| {
                    let t = std::time::Instant::now();
                    std::thread::sleep(std::time::Duration::from_micros(1));
                    t.elapsed().as_nanos() as u64
                })
                .max()
                .unwrap_or(0)
                .min(10_000_000)
        };
        // A thread that cannot be started: the caller's own sleeps.
        std::thread::Builder::new()
            .name("flexio-gran".into())
            .spawn(measure)
            .ok()
            .and_then(|h| h.join().ok())
            .unwrap_or_else(measure)
    })
}

/// startdelay: fio starts a delayed job only once its delay has passed, so the job joins
/// its cgroup, takes its CPUs and user and builds its engine after it (a job that starts
/// later must not take the process into its cgroup v2 before the jobs already running).
/// Termination during the delay ends the wait; the job then stops in its set-up.
fn start_delay(plan: &ThreadPlan, ctx: &RunCtx, progress: &Progress) {
    let (d0, d1) = plan.io.startdelay_us;
    if d1 == 0 {
        return;
    }
    let us = if d1 > d0 {
        d0 + flexio_workload::Taus88::new(plan.io.startdelay_seed).below(d1 - d0 + 1)
    } else {
        d0
    };
    progress.set_state(RunState::NotStarted);
    ctx.sleep_us(us);
}

/// Run a whole thread plan and package its result.
pub fn run_thread(
    plan: &ThreadPlan,
    ctx: &RunCtx,
    progress: &Progress,
    gate: Option<&StartGate>,
) -> JobResult {
    let _io_job = IoJobDone(!plan.engine.caps.noio);
    let tid = flexio_engine::platform::thread_id();
    // A private descriptor table makes every system call on the job's files cheaper; a
    // kernel that refuses only costs that speed. Engines whose I/O runs on threads the
    // process shares (posixaio) keep the process's table.
    if !plan.engine.caps.shared_fd_table {
        let _ = flexio_engine::sys::private_fd_table();
    }
    progress.tid.store(tid, Ordering::Relaxed);
    crate::debug_log!(crate::debug::Cat::Process, "jobs pid={tid} started");
    if let Some(g) = gate {
        g.arrive_and_wait();
    }
    start_delay(plan, ctx, progress);
    // The cgroup first, while the thread may still join it (before uid/gid).
    let joined = match plan.placement.cgroup.as_ref().map(|c| cgroup::join(c, tid)) {
        Some(Ok(j)) => Ok(Some(j)),
        Some(Err(e)) => Err(e),
        None => Ok(None),
    };
    let placed = joined
        .as_ref()
        .map_err(Clone::clone)
        .and_then(|_| placement::apply(&plan.placement));
    if let Ok(Some(warning)) = &placed {
        ctx.notes.err(warning);
    }
    if let Err((errno, what, func)) = placed {
        if let Ok(Some(j)) = &joined {
            j.leave(true);
        }
        if errno == 0 {
            // fio's cgroup v2 weight case: the message, and the job ends without I/O and
            // without an error.
            ctx.notes.err(&what);
            progress.set_state(RunState::Exited);
            return result_of(plan, tid, ThreadStats::default());
        }
        ctx.notes.err(&format!("fio: {}: {what}", plan.name));
        return failed_before_io(plan, progress, tid, errno, func);
    }
    // lockmem: pinned for the whole run of the job, released when it ends.
    let _locked = if plan.sysio.lockmem > 0 {
        match sysio::lock_memory(plan.sysio.lockmem, &plan.name) {
            Ok((m, note)) => {
                if let Some(n) = note {
                    ctx.notes.info(&n);
                }
                Some(m)
            }
            Err((errno, why)) => {
                ctx.notes.err(&why);
                return failed_before_io(plan, progress, tid, errno, "lockmem");
            }
        }
    } else {
        None
    };
    let stats = match flexio_engine::with_engine(
        &plan.engine.name,
        &plan.engine.cfg,
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
    if let Ok(Some(j)) = &joined {
        j.leave(true);
    }
    progress.set_state(RunState::Exited);
    result_of(plan, tid, stats)
}

/// The threads a segment starts at once wait here, each as soon as it runs, until every
/// one of them has been created; then all go on together (fio's `td->sem`: the main
/// thread creates each job, waits until it is initialized, and releases them all at
/// once). Without it, the first threads of a large job set do their setup and I/O while
/// the later ones are still being created, and on a machine with fewer cores than jobs
/// the creating thread gets its small share of the CPU: a job set's start stretches over
/// seconds and its summed rates overstate what the jobs did together.
pub struct StartGate {
    expected: usize,
    arrived: std::sync::atomic::AtomicUsize,
    /// 0 until the set is complete (or [`StartGate::open`]): every waiter sleeps on this
    /// one word and the last arrival wakes them all in one call. Threads woken one by one,
    /// or woken to take a lock again, would each wait a scheduler time slice behind the
    /// threads already doing I/O.
    open: std::sync::atomic::AtomicU32,
}

impl StartGate {
    pub fn new(expected: usize) -> Self {
        Self {
            expected,
            arrived: std::sync::atomic::AtomicUsize::new(0),
            open: std::sync::atomic::AtomicU32::new(0),
        }
    }

    /// Let every thread go now (the set will not be complete).
    pub fn open(&self) {
        flexio_engine::platform::wake_all(&self.open);
    }

    /// Count this thread in and wait for the rest of the set.
    pub fn arrive_and_wait(&self) {
        if self.arrived.fetch_add(1, Ordering::AcqRel) + 1 >= self.expected {
            self.open();
        } else {
            flexio_engine::platform::wait_while_zero(&self.open);
        }
    }
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

#[cfg(test)]
mod tests {
    use super::StartGate;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[test]
    fn start_gate_holds_every_thread_until_the_last_arrives() {
        for n in [1, 2, 64] {
            let gate = StartGate::new(n);
            let passed = AtomicUsize::new(0);
            std::thread::scope(|s| {
                for _ in 0..n - 1 {
                    s.spawn(|| {
                        gate.arrive_and_wait();
                        passed.fetch_add(1, Ordering::SeqCst);
                    });
                }
                std::thread::sleep(std::time::Duration::from_millis(50));
                assert_eq!(
                    passed.load(Ordering::SeqCst),
                    0,
                    "{n}: went before the last"
                );
                gate.arrive_and_wait();
            });
            assert_eq!(passed.load(Ordering::SeqCst), n - 1);
        }
    }

    #[test]
    fn an_opened_gate_lets_an_incomplete_set_go() {
        let gate = StartGate::new(10);
        std::thread::scope(|s| {
            let waiters: Vec<_> = (0..3).map(|_| s.spawn(|| gate.arrive_and_wait())).collect();
            std::thread::sleep(std::time::Duration::from_millis(20));
            gate.open();
            for w in waiters {
                w.join().unwrap();
            }
        });
        // Later arrivals do not wait either.
        gate.arrive_and_wait();
    }
}
