//! The job loop: fio's `do_io` (request slots, submit/commit/reap/complete) and the plain
//! synchronous loop side by side, generic over the engine. The loop owns the waiting; the
//! parts (`pacing`, `metering`, `file_table`, `verify`, `lat_target`, `prio`) own their state
//! and answer with decisions.
//!
//! Hot-path invariants (per I/O): no allocation (request slots, buffers and the completion
//! vector are sized once), no locking (statistics are thread-local; progress for the status
//! line is published with relaxed atomic stores at most every 100 ms), no formatting.

use super::dedupe::Dedupe;
use super::file_table::{FileTable, Room};
use super::lat_target::{LatStep, LatTarget};
use super::metering::Meter;
use super::pacing::{Next, Pacer};
use super::prio::Prio;
use super::ramp::Ramp;
use super::syncs::{Due, Syncs};
use super::verify::{CheckNext, VerState, WriteTag, VF_FSYNC, VF_PHASE, VF_TRIMMED, VF_WRITE};
use super::{verror, RunCtx};
use crate::clock::Clock;
use crate::files;
use crate::plan::{err_class, ThreadPlan, Timing};
use crate::progress::{Progress, RunState};
use flexio_engine::buffer::IoBuffers;
use flexio_engine::{Caps, Completion, Engine, IoReq, Op, Queued};
use flexio_stats::ThreadStats;
use flexio_workload::fill::{fill, scramble};
use flexio_workload::{Generator, Taus88};
use requests::fresh_stats;
use std::sync::atomic::Ordering;

mod job_files;
mod periodic;
mod plain;
mod replay_io;
mod requests;
mod verify_io;

/// Per-request state.
#[derive(Clone, Copy, Default)]
struct Slot {
    op: u8,
    ddir: u8,
    file: u32,
    offset: u64,
    len: u64,
    done: u64,
    start_ns: u64,
    issue_ns: u64,
    /// I/O priority of the request (0 = the thread's).
    prio: u16,
    /// Rate-limited I/O: when it was due (0 = not rate limited).
    sched_ns: u64,
    /// Verification: VF_* flags, and the block's write number and seed.
    vflags: u8,
    vnum: u64,
    vseed: u64,
    /// The engine queued the request (not completed inside `queue`): only such a request
    /// has a submission latency, so only it gets a slat log entry (fio logs no slat for
    /// the trims that libaio and io_uring complete synchronously).
    queued: bool,
}

const OP_SYNC: u8 = 3;
const OP_DSYNC: u8 = 4;
/// sync_file_range (accounted as a sync, like the other two).
const OP_SFR: u8 = 5;

fn op_of(code: u8) -> Op {
    match code {
        0 => Op::Read,
        1 => Op::Write,
        2 => Op::Trim,
        OP_SYNC => Op::Sync,
        OP_SFR => Op::SyncRange,
        _ => Op::Datasync,
    }
}

/// Why do_io stopped.
#[derive(PartialEq, Eq, Clone, Copy)]
enum End {
    /// The loop's work is done.
    Done,
    /// Runtime over, terminated, number_ios reached, or error: no further loops.
    Stop,
}

pub struct Worker<'a, E: Engine> {
    engine: E,
    caps: Caps,
    plan: &'a ThreadPlan,
    ctx: &'a RunCtx,
    progress: &'a Progress,
    clock: Clock,
    pub stats: ThreadStats,
    gen: Generator,
    bufs: IoBuffers,
    fill_rng: Taus88,
    /// dedupe: which content each write's data comes from.
    dedupe: Option<Dedupe>,
    slots: Vec<Slot>,
    free: Vec<u32>,
    /// Slots queued and not yet submitted to the engine.
    uncommitted: Vec<u32>,
    /// Requests queued since the last commit ([`Self::commit`]; fio's io_u_queued): a
    /// reap's own submission ([`Self::commit_for_reap`]) leaves it, so the next batch
    /// commits after fewer new requests, as in fio.
    queued_count: u32,
    /// The clock when the engine's last commit returned (a submission whose commit
    /// completes its requests hands this on as the loop's time).
    commit_ns: u64,
    comps: Vec<Completion>,
    inflight: u32,
    files: FileTable,
    pace: Pacer,
    meter: Meter,
    prio: Prio,
    ver: Option<Box<VerState>>,
    /// verify_async: the verifier threads.
    vasync: Option<super::verify_async::AsyncVerifier>,
    /// The verification state could not be set up (verify_state_load).
    ver_err: Option<String>,
    /// The I/O buffers could not be had as asked (mem=, hugepage-size): errno and why.
    buf_err: Option<(i32, String)>,
    lat_target: Option<LatTarget>,
    /// A latency-target search converged: drain, reset statistics, run a final window.
    lat_quiesce: bool,
    /// Requests allowed in flight (latency_target lowers it).
    depth_limit: usize,
    timing: Timing,
    /// Measuring (false during ramp_time).
    accounting: bool,
    epoch_ns: u64,
    /// ramp_time / ramp_size: when the warm-up ends.
    ramp: Ramp,
    runtime_end_ns: u64,
    next_event_ns: u64,
    /// Per-direction elapsed µs over loops (fio's update_runtime).
    elapsed_us: [u64; 3],
    /// Completed bytes / I/Os per direction since accounting started.
    bytes: [u64; 3],
    ios: [u64; 3],
    /// Of those, the reads of logged blocks (the read-back, verify_backlog), which fio's
    /// bw/IOPS samples and averaged logs leave out (its this_io_bytes does not count them).
    listed: ([u64; 3], [u64; 3]),
    /// Set when ramp ends inside a loop: that loop's runtime counts from here.
    loop_reset_start: Option<u64>,
    /// Start of the current loop.
    loop_start_ns: u64,
    /// fsync/fdatasync and sync_file_range between writes.
    syncs: Syncs,
    completed_total: u64,
    issued_total: u64,
    /// The last completed request was a trim (trim verification starts no batch then).
    last_done_trim: bool,
    usage_start: flexio_engine::sys::Usage,
    stop: bool,
    /// The engine ended this loop's work (`Queued::LoopDone`).
    loop_done: bool,
    /// number_ios ended the last loop's I/O: fio's further loops still run, empty (their
    /// end syncs), and the first of them ends the job.
    ios_cap_hit: bool,
    /// The I/O count the job stops at (number_ios × loops; 0: none), doubled at every
    /// loop's start for trimwrite ([`crate::plan::IoPlan::number_ios_doubles`]).
    ios_cap: u64,
    /// The read-back after a loop is on: fio's get_next_verify opens a file beside the
    /// open ones, whatever `openfiles` says.
    reading_back: bool,
    first_direct_error_noted: bool,
    /// read_iolog: requests come from the trace.
    replay: Option<Box<super::replay::Replay>>,
    /// write_iolog: requests are logged as they are queued.
    capture: Option<Box<super::capture::Capture>>,
    /// The files the generator last reported closed ([`Self::close_done_files`]).
    closed_buf: Vec<u32>,
    /// This loop's end synced every file (end_fsync, fsync_on_close): closing them does
    /// not sync again.
    end_synced: bool,
    /// Another loop follows this one.
    more_loops: bool,
    /// The latency_target search found its depth (fio's td->done): the loop's I/O stops,
    /// its read-back still runs, and no loop follows.
    searched: bool,
    /// Passes ended so far ([`crate::plan::PassEnd`]), and whether the last one ended the
    /// job.
    passes_done: u64,
    passes_over: bool,
    /// The bytes the current loop may issue, and what the last loop issued (its budget's
    /// share spent, for loops that share one: [`crate::plan::IoPlan::shared_budget`]).
    loop_budget: u64,
    last_issued: u64,
    /// flow/flow_id: the job's membership in its flow group.
    flow: Option<super::flow::Member>,
    /// lockfile: each file's lock (shared with other jobs by path).
    locks: Vec<std::sync::Arc<super::lockfile::FileLock>>,
    /// zonemode=zbd: the thread's side of its files' zones.
    zones: Option<Box<super::zones::Zones>>,
}

/// The path of the job's file `file`, for messages (borrowed where it is UTF-8: no
/// allocation on the verify path).
pub(super) fn path_of(plan: &ThreadPlan, file: u32) -> std::borrow::Cow<'_, str> {
    plan.files
        .get(file as usize)
        .map(|f| f.path.to_string_lossy())
        .unwrap_or_default()
}

impl<'a, E: Engine> Worker<'a, E> {
    pub fn new(e: E, p: &'a ThreadPlan, ctx: &'a RunCtx, progress: &'a Progress) -> Self {
        let b = &p.buffers;
        let depth = p.io.depth as usize;
        let mut buf_err = None;
        let mut bufs = match IoBuffers::with_memory(
            b.slots,
            b.slot_size,
            b.align,
            b.thp,
            &p.sysio.memory,
            p.sysio.huge_page,
        ) {
            Ok(bufs) => bufs,
            Err(e) => {
                // The job fails in its set-up with this error, before any I/O.
                buf_err = Some((e.raw_os_error().unwrap_or(libc::ENOMEM), e.to_string()));
                IoBuffers::new(1, 4096, 4096, false).expect("a 4 KiB buffer can be allocated")
            }
        };
        crate::debug_log!(
            crate::debug::Cat::Mem,
            "Alloc {} for buffers",
            b.slots * b.slot_size
        );
        let mut fill_rng = Taus88::new(b.fill_seed);
        if b.prefill {
            // The data writes carry (before any refill or scramble): the buffers start
            // zeroed, and zeros are not what a storage benchmark should write unless asked.
            for i in 0..bufs.count() {
                fill(bufs.slot_mut(i), &b.fill, &mut fill_rng);
            }
        }
        let (ver, mut ver_err) = match p.verify.as_ref().map(|v| VerState::new(v, depth)) {
            None => (None, None),
            Some(Ok(v)) => (Some(Box::new(v)), None),
            Some(Err(e)) => (None, Some(e)),
        };
        let vasync = match (p.verify.as_ref(), ver.as_ref()) {
            (Some(vp), Some(vs)) if vp.async_threads > 0 => {
                let paths = p
                    .files
                    .iter()
                    .map(|f| f.path.to_string_lossy().into_owned())
                    .collect();
                let a = super::verify_async::AsyncVerifier::new(
                    vp.async_threads,
                    vp.async_cpus.as_deref(),
                    vs.format(),
                    paths,
                    depth * 2,
                );
                match a {
                    Ok(a) => Some(a),
                    Err(e) => {
                        ver_err = Some(format!("fio: verify_async threads: {e}"));
                        None
                    }
                }
            }
            _ => None,
        };
        let nfiles = p.files.len();
        // The plan's, as the planner resolved them; with io_submit_mode=offload, as the
        // submitter threads make them.
        let caps = match p.io.offload {
            Some(_) => super::offload::loop_caps(p.engine.caps),
            None => p.engine.caps,
        };
        Worker {
            caps,
            plan: p,
            ctx,
            progress,
            clock: ctx.clock,
            stats: fresh_stats(p),
            gen: Generator::new(p.spec.clone()),
            bufs,
            fill_rng,
            dedupe: b.dedupe.as_ref().map(Dedupe::new),
            slots: vec![Slot::default(); depth],
            free: (0..depth as u32).rev().collect(),
            uncommitted: Vec::with_capacity(depth),
            queued_count: 0,
            commit_ns: 0,
            comps: Vec::with_capacity(depth),
            inflight: 0,
            files: FileTable::new(nfiles),
            pace: Pacer::new(&p.pace),
            meter: Meter::new(&p.meter, &p.name, p.thread_number),
            prio: Prio::new(p.prio.clone()),
            ver,
            vasync,
            ver_err,
            buf_err,
            lat_target: p.latency.target.map(|t| LatTarget::new(depth as u32, &t)),
            lat_quiesce: false,
            depth_limit: if p.latency.target.is_some() { 1 } else { depth },
            timing: p.timing,
            accounting: true,
            epoch_ns: 0,
            ramp: Ramp::new(p.io.ramp_ns, p.io.ramp_bytes, p.io.ramp_tick_ns)
                .shared(p.io.ramp_group.clone()),
            runtime_end_ns: u64::MAX,
            next_event_ns: 0,
            elapsed_us: [0; 3],
            bytes: [0; 3],
            ios: [0; 3],
            listed: ([0; 3], [0; 3]),
            loop_reset_start: None,
            loop_start_ns: 0,
            // Engines without a disk skip syncs, except those whose target has its own
            // flush (nbd's NBD_CMD_FLUSH; the net engines complete it at once, as fio's do)
            // and those that take them as no-ops (page_fault, null). fio 3.33 lets
            // trimwrite's choice of trim or write replace every sync: none (fio 3.38 issues
            // them between the pairs).
            syncs: Syncs::new(
                (p.io.fsync_every, p.io.fdatasync_every),
                p.sysio.sync_range.map(|(_, every)| every),
                nfiles,
                (!caps.diskless || caps.pipe || caps.diskless_syncs)
                    && !(p.compat.is_fio333() && p.spec.dirs == [false, true, true]),
            )
            .repeating(p.compat.is_fio333())
            // fio 3.33's libaio runs its syncs at once ([`EngineConfig::inline_syncs`]).
            .reaped(p.engine.cfg.inline_syncs && p.engine.name == "libaio"),
            completed_total: 0,
            issued_total: 0,
            last_done_trim: false,
            usage_start: Default::default(),
            stop: false,
            loop_done: false,
            ios_cap_hit: false,
            ios_cap: p.io.number_ios,
            reading_back: false,
            first_direct_error_noted: false,
            replay: None,
            capture: None,
            closed_buf: Vec::new(),
            end_synced: false,
            more_loops: false,
            searched: false,
            passes_done: 0,
            passes_over: false,
            loop_budget: p.io.budget,
            last_issued: 0,
            flow: p
                .control
                .flow
                .map(|(id, w, _)| super::flow::Member::join(id, w)),
            locks: if p.control.lockfile.is_some() {
                p.files
                    .iter()
                    .map(|f| super::lockfile::of(&f.path))
                    .collect()
            } else {
                Vec::new()
            },
            zones: p
                .zbd
                .as_ref()
                .map(|z| Box::new(super::zones::Zones::new(z))),
            engine: e,
        }
    }

    fn terminated(&self) -> bool {
        self.ctx.terminate.load(Ordering::Relaxed)
    }

    /// Record a fatal error, named like fio's `file:<source>:<line>, func=..., error=...`
    /// with flexio's own source location of the failing step.
    #[track_caller]
    fn fail(&mut self, errno: i32, func: &str) {
        self.stats.set_error(errno, verror(errno, func));
        self.stop = true;
    }

    /// Sleep in small steps so termination is noticed.
    fn sleep_us(&self, us: u64) {
        self.ctx.sleep_us(us);
    }

    /// Time since `t0` spent on the target outside an engine call (opening and closing
    /// files, fsync on close, cache invalidation, unlinking between loops): the target's
    /// time in the self-measurement, not flexio's own.
    #[inline]
    fn target_since(&mut self, t0: u64) {
        self.stats.engine_ns += self.clock.now().saturating_sub(t0);
    }

    /// Set-up before the first loop; false when the job cannot run.
    fn setup(&mut self) -> bool {
        // startdelay has passed already (super::start_delay, before the job's placement).
        if self.terminated() {
            return false;
        }
        self.progress.set_state(RunState::Initialized);
        let plan = self.plan;
        // fio 3.33's sync rule looks again at the start of each pass (a loop in fio): the
        // generator stops at a pass's end so the worker asks it there.
        let pause = plan.compat.is_fio333()
            && self.syncs.periodic()
            && !self.pace.limited()
            && self.zones.is_none()
            && self.replay.is_none();
        self.gen.pause_at_passes(pause);
        // A file found done with requests in flight closes after them; the next pick must
        // know it is closing.
        self.gen.pause_at_closes(
            self.slots.len() > 1
                && plan.files.len() > 1
                && !self.pace.limited()
                && self.zones.is_none()
                && self.replay.is_none(),
        );
        let paths: Vec<&std::path::Path> = plan.files.iter().map(|f| f.path.as_path()).collect();
        // The random map of a file could not be allocated: fio's messages, and the job
        // goes on without it only with softrandommap.
        let lost: Vec<usize> = self.gen.maps_lost().collect();
        for i in lost {
            let path = plan.files[i].path.display();
            if plan.sysio.softrandommap {
                self.ctx.notes.err(&format!(
                    "fio: file {path} failed allocating random map. Running job without."
                ));
            } else {
                self.ctx.notes.err(
                    "fio: failed allocating random map. If running a large number of jobs, try the 'norandommap' option or set 'softrandommap'. Or give a larger --alloc-size to fio.",
                );
                self.fail(libc::ENOMEM, "random map");
                return false;
            }
        }
        if self.gen.lfsrs_lost() {
            // fio 3.33: the job goes on, doing no I/O on that file (error 0).
            self.ctx.notes.err("fio: failed initializing LFSR");
        }
        if let Some((errno, why)) = self.buf_err.take() {
            self.ctx.notes.err(&format!("fio: {}: {why}", plan.name));
            self.fail(errno, "I/O buffer allocation");
            return false;
        }
        if let Some(name) = &plan.sysio.ioscheduler {
            match super::sysio::switch_scheduler(&plan.files, name) {
                Ok(None) => {}
                Ok(Some(note)) => self.ctx.notes.err(note),
                Err((errno, why)) => {
                    self.ctx.notes.err(&why);
                    self.fail(errno, "iosched_switch");
                    return false;
                }
            }
        }
        let mut ready = self.engine.init();
        if ready.is_ok() {
            // Before setup, which may wait (a net listener for its peer).
            for line in self.engine.init_notes() {
                self.ctx.notes.info(&line);
            }
            ready = self
                .engine
                .setup(&paths)
                .and_then(|_| self.engine.post_init(&self.bufs));
        }
        if let Err(e) = ready {
            if let Some(why) = e
                .get_ref()
                .and_then(|r| r.downcast_ref::<flexio_engine::InitRefused>())
            {
                // fio's words, and its error 1 without a text.
                self.ctx.notes.err(&why.0);
                self.ctx.notes.err(&format!(
                    "fio: io engine {} init failed.",
                    self.plan.engine.name
                ));
                self.stats.set_error(1, String::new());
                self.stop = true;
                return false;
            }
            let errno = e.raw_os_error().unwrap_or(libc::EIO);
            let extra = if self.plan.io.depth > 1 && errno == libc::ENOMEM {
                " Perhaps try reducing io depth?"
            } else {
                ""
            };
            // One clear line: which engine, and why.
            self.ctx.notes.err(&format!(
                "fio: io engine {} init failed: {e}.{extra}",
                self.plan.engine.name
            ));
            self.fail(errno, "io engine init");
            return false;
        }
        if self.plan.io.layout_in_thread {
            // create_serialize=0: every job lays out its own files, in parallel.
            let which = files::files_to_lay_out(self.plan);
            if !which.is_empty() {
                self.ctx
                    .notes
                    .info(&files::layout_message(self.plan, &which));
                if let Err(e) = files::lay_out(self.plan, &which, self.ctx.readonly) {
                    self.ctx.notes.err(&format!(
                        "flexio: {}: file layout failed: {e}",
                        self.plan.name
                    ));
                    self.fail(e.raw_os_error().unwrap_or(libc::EIO), "file layout");
                    return false;
                }
            }
        }
        if !self.setup_trace() {
            return false;
        }
        if self.plan.layout.fill && self.plan.layout.write_data {
            // fill_device, reading: the layout wrote until the file system was full; the
            // files are read as far as they got.
            let mut spec = self.plan.spec.clone();
            for (r, f) in spec.files.iter_mut().zip(&self.plan.files) {
                let size = std::fs::metadata(&f.path).map_or(0, |m| m.len());
                r.len = size.saturating_sub(r.start).min(r.len);
            }
            self.gen = Generator::new(spec);
        }
        if let Some(cmd) = &self.plan.control.exec_prerun {
            // fio: a prerun that fails keeps the job from doing any I/O (no error).
            if !super::exec::run_hook(self.ctx, &self.plan.name, "prerun", cmd) {
                return false;
            }
        }
        if let Some(e) = self.ver_err.take() {
            self.ctx.notes.err(&e);
            self.fail(libc::ENOENT, "verify_state_load");
            return false;
        }
        if let Err((errno, what, func)) = self.open_files() {
            self.ctx.notes.err(&format!("fio: {what}"));
            self.fail(errno, &func);
            self.close_files();
            return false;
        }
        if self.plan.io.create_only {
            self.close_files();
            return false;
        }
        true
    }

    /// The whole job: set-up, the loops (each followed by its verification read-back),
    /// and the end.
    pub fn run(&mut self) {
        if !self.setup() {
            return;
        }
        if self.pace.limited() || self.pace.thinks() {
            // Sleeps end on schedule, not up to 50 µs late (the default timer slack).
            flexio_engine::platform::tight_timer_slack();
        }
        let now = self.clock.now();
        self.start_epoch(now);
        if self.ramp.wanted() {
            self.accounting = false;
            // Steady-state sampling starts with the measured part (end_ramp restarts it).
            self.meter.ramp();
            self.ramp.begin(now);
            self.runtime_end_ns = u64::MAX;
            self.next_event_ns = self.next_event();
            self.progress.set_state(RunState::Ramp);
        }
        let loops = self.plan.io.loops;
        let shared = self.plan.io.shared_budget;
        let mut left = self.plan.io.budget;
        let mut l = 0;
        // Passes as loops: each also within what is left of io_size × loops in all.
        let mut pass_left = self
            .plan
            .io
            .pass_end
            .filter(|_| self.plan.io.pass_loops)
            .map_or(u64::MAX, |pe| pe.io_size.saturating_mul(pe.loops));
        let mut cap_left = self.plan.io.issue_cap;
        while l < loops {
            self.loop_budget = left.min(pass_left).min(cap_left);
            let loop_start = self.clock.now();
            let ios_before = self.completed_total;
            self.loop_start_ns = loop_start;
            self.pace.restart(loop_start, self.bytes, self.ios);
            if l == 0 {
                let done = self.completed_total;
                if let Some(lt) = &mut self.lat_target {
                    lt.new_window(loop_start, done);
                }
            }
            self.progress.set_state(self.plan.io.state);
            if let Some(z) = &mut self.zones {
                z.loop_start();
                // A verifying writer's zones with data are reset before it writes.
                let resets = z.take_device_resets();
                self.stats.zone_resets = Some(z.resets());
                if !resets
                    .into_iter()
                    .all(|(f, off, len)| self.reset_device_zone(f, off, len))
                {
                    break;
                }
            }
            if let Some(vs) = self.ver.as_mut() {
                vs.loop_begins(&self.gen);
            }
            self.more_loops = l + 1 < loops;
            if self.plan.io.number_ios_doubles {
                self.ios_cap = self.ios_cap.saturating_mul(2);
            }
            let end = self.do_io();
            // The search's end stopped the loop; a failure after it (an error that is not
            // tolerated) still stops the job, read-back and all.
            let searched = std::mem::take(&mut self.searched)
                && (self.stats.error == 0 || self.stats.error_soft);
            if searched {
                self.stop = false;
            }
            if shared {
                left = left.saturating_sub(self.last_issued);
            }
            pass_left = pass_left.saturating_sub(self.last_issued);
            cap_left = cap_left.saturating_sub(self.last_issued);
            self.end_of_loop(loop_start);
            // fio: a time-based job whose time is up ends without the read-back.
            let time_up = end == End::Stop && self.plan.io.time_based && !searched;
            if self.ver.is_some() && !self.stop && !self.terminated() && !time_up {
                // fio: the read-back's time is the job's read runtime. fio closes the
                // files first (its clear_io_state), so the reads open them again (their
                // cache dropped then with `invalidate`), and the log shows it.
                let t0 = self.clock.now();
                self.close_files();
                self.verify_phase();
                self.add_runtime(0, t0);
            }
            if searched {
                self.stop = true;
            }
            // A loop after the shared budget is spent still runs, empty, as fio's does: its
            // end syncs (end_fsync, opening the files for it). A loop that moved nothing
            // ends the job (fio terminates a job whose loop did no I/O; verify_only's loops
            // are dry runs, which it does not judge so).
            let moved_nothing = self.completed_total == ios_before
                && !self.ver.as_ref().is_some_and(|v| v.verify_only());
            // number_ios: the loops the job asks for go on, empty; passes for io_size
            // beyond the files (loops of the worker on an engine that queues) do not.
            let asked = self
                .plan
                .io
                .pass_end
                .filter(|_| self.plan.io.pass_loops)
                .map_or(loops as u64, |pe| pe.loops);
            let stopped = end == End::Stop && !(self.ios_cap_hit && (l as u64) + 1 < asked);
            if stopped || self.stop || self.terminated() || pass_left == 0 || moved_nothing {
                break;
            }
            if let Some(pe) = self.plan.io.pass_end.filter(|_| self.plan.io.pass_loops) {
                // Each loop is a pass: fio's keep_running decides on another.
                self.passes_done += 1;
                if pe.ends(self.passes_done, self.bytes.iter().sum()) {
                    break;
                }
            }
            // zonemode=zbd: a time-based job whose zones have nothing more (a verifying
            // writer's zones all full) goes on with another loop, as fio's does, while its
            // loops do I/O.
            let again = end == End::Done
                && self.plan.io.time_based
                && self.zones.is_some()
                && self.completed_total > ios_before;
            if !again {
                l += 1;
            }
            if l < loops {
                // Inside the measured run: the fsyncs, cache drops and unlinks between
                // loops are the target's time.
                let t0 = self.clock.now();
                // fio closes the files between loops (fsync_on_close syncing them unless
                // the loop's end did) and opens them again at their next use (invalidate
                // dropping their cache then); with unlink_each_loop it unlinks them first,
                // so a write job's next loop makes them anew.
                self.close_files();
                self.files.next_loop();
                self.gen.reset();
                self.syncs.reset();
                if self.plan.io.unlink_each_loop && !self.unlink_files(true) {
                    break;
                }
                self.target_since(t0);
            }
        }
        if !self.stop && !self.terminated() {
            self.empty_loop_after_passes();
        }
        self.finish();
    }

    /// The end of the job: state file, final statistics, logs, files.
    fn finish(&mut self) {
        self.drain_async(true);
        if let Some(Err(e)) = self.ver.as_ref().and_then(|v| v.save_state()) {
            self.ctx.notes.err(&e);
        }
        if self.accounting {
            for (d, n) in self.engine.lost().into_iter().enumerate() {
                self.stats.dirs[d].drop_ios += n;
            }
        }
        let now = self.clock.now();
        if self.accounting && !self.plan.compat.is_fio333() {
            // The newest fio (3.37) samples finishing jobs too: a bw/IOPS sample (and log
            // window) that has come due since the last I/O is still taken.
            let (b, i) = self.sampled();
            self.meter.sample(now, &mut self.stats, &b, &i);
            self.meter
                .logs_tick(now, self.epoch_ns, &self.stats, (&b, &i));
        }
        self.fold_lat();
        self.stats.total_run_time_ms = (now.saturating_sub(self.epoch_ns)) / 1_000_000;
        self.stats.total_run_time_ns = now.saturating_sub(self.epoch_ns);
        if let Some(lt) = &self.lat_target {
            self.stats.latency_depth = Some(lt.qd);
        }
        self.take_usage();
        self.progress.set_state(RunState::Finishing);
        let ms = now.saturating_sub(self.epoch_ns) / 1_000_000;
        let (b, i) = self.sampled();
        for e in self.meter.finish(ms, &self.stats, (&b, &i)) {
            self.ctx.notes.err(&format!("flexio: {e}"));
        }
        if let Err(e) = self.engine.wrap_up() {
            self.ctx.notes.err(&format!(
                "flexio: {}: {}: {e}",
                self.plan.name, self.plan.engine.name
            ));
            self.fail(e.raw_os_error().unwrap_or(libc::EIO), "engine wrap-up");
        }
        self.close_files();
        self.finish_trace();
        if let Some(cmd) = &self.plan.control.exec_postrun {
            super::exec::run_hook(self.ctx, &self.plan.name, "postrun", cmd);
        }
        // unlink_each_loop unlinks before each further loop, not after the last: the
        // last loop's files stay, as fio's do, unless `unlink` is set too.
        if self.plan.io.unlink {
            self.unlink_files(false);
        }
        self.publish();
    }

    fn take_usage(&mut self) {
        if let Ok(u) = flexio_engine::sys::thread_usage() {
            let d = u.delta(&self.usage_start);
            self.stats.usr_time_us = d.utime_us;
            self.stats.sys_time_us = d.stime_us;
            self.stats.ctx = d.ctx;
            self.stats.majf = d.majflt;
            self.stats.minf = d.minflt;
        }
    }

    fn start_epoch(&mut self, now: u64) {
        self.epoch_ns = now;
        // The newest fio's JSON job_start: stamped with the epoch (again at ramp end).
        let (id, fallback) = self.timing.job_start_clock;
        self.stats.job_start_ms = crate::clock::clock_ms(id)
            .or_else(|_| crate::clock::clock_ms(fallback))
            .unwrap_or(0);
        self.runtime_end_ns = if self.plan.io.runtime_ns > 0 {
            now + self.plan.io.runtime_ns
        } else {
            u64::MAX
        };
        self.meter.start(now);
        self.next_event_ns = now;
        if let Ok(u) = flexio_engine::sys::thread_usage() {
            self.usage_start = u;
        }
    }

    /// End of ramp_time: discard everything measured so far and restart the clock.
    fn end_ramp(&mut self, now: u64) {
        self.stats = fresh_stats(self.plan);
        self.bytes = [0; 3];
        self.ios = [0; 3];
        self.listed = ([0; 3], [0; 3]);
        self.elapsed_us = [0; 3];
        self.issued_total = 0;
        self.accounting = true;
        self.ramp.over();
        if let Some(z) = &mut self.zones {
            z.restart_count();
        }
        self.start_epoch(now);
        self.loop_reset_start = Some(now);
        self.pace.restart(now, self.bytes, self.ios);
        self.progress.set_state(self.plan.io.state);
    }

    /// Requests issued in this loop since the count stood at `first`; if the ramp ended
    /// in the loop (the count restarted with the statistics), since then.
    fn issued_since(&self, first: u64) -> u64 {
        if self.loop_reset_start.is_some() {
            self.issued_total
        } else {
            self.issued_total - first
        }
    }

    /// Wait for in-flight requests to finish (before sleeping: fio's io_u_quiesce).
    fn quiesce(&mut self) {
        self.commit();
        self.drain();
    }

    /// Complete what is in flight at a loop's or pass's end, submitting what is not yet
    /// (fio's reap there: no commit counted, so its count of requests to commit goes on
    /// into the next loop).
    fn drain(&mut self) {
        self.commit_for_reap();
        while self.inflight > 0 && !self.stop {
            let n = self.inflight as usize;
            self.reap::<false>(n);
        }
    }

    /// Sleep until `due` (rate limit), keeping periodic work going; false when the job
    /// should stop instead.
    fn wait_until(&mut self, due: u64) -> bool {
        // Offloaded requests keep going while the job waits for the next one's time (fio
        // quiesces inline submission only: offload submits at the rate, whatever the
        // completions do).
        if self.plan.io.offload.is_none() {
            self.quiesce();
        }
        let start = self.clock.now();
        crate::debug_log!(
            crate::debug::Cat::Rate,
            "rate: sleeping {} usec until the next I/O is due",
            due.saturating_sub(start) / 1000
        );
        self.sleep_until(start, due).0
    }

    /// Sleep from `start` until `due`, doing the periodic work (status, logs, runtime) on
    /// time meanwhile; the time slept counts as the job's wait time. Returns false when the
    /// job should stop instead, and the nanoseconds slept.
    pub(super) fn sleep_until(&mut self, start: u64, due: u64) -> (bool, u64) {
        let go_on = loop {
            let now = self.clock.now();
            self.periodic(now);
            if self.should_stop(now) {
                break false;
            }
            if now >= due {
                break true;
            }
            let step = (due - now)
                .min(self.next_event_ns.saturating_sub(now).max(20_000))
                .min(50_000_000);
            std::thread::sleep(std::time::Duration::from_nanos(step));
        };
        let slept = self.clock.now().saturating_sub(start);
        self.stats.wait_ns += slept;
        (go_on, slept)
    }

    /// The next I/O of a rate-limited job: file, then direction, where the rate may switch
    /// a mixed job to the other direction or wait until one is due (fio's rate_ddir).
    /// `None` when the files are done or the job must stop while waiting.
    fn next_io_rated(&mut self) -> Option<flexio_workload::NextIo> {
        for _ in 0..(self.gen.nfiles() * 2 + 2) {
            let fi = self.gen.pick_file()?;
            let mut d = self.gen.next_ddir(fi);
            if d < 2 {
                d = match self.pace.next(d, self.clock.now()) {
                    Next::Go(d) => d,
                    Next::WaitUntil(t, d) => {
                        if !self.wait_until(t) {
                            return None;
                        }
                        d
                    }
                };
                self.gen.set_mix_ddir(d);
            }
            if let Some(z) = self.zones.as_deref_mut() {
                let d = flexio_workload::Zoned::ddir(z, fi, d);
                if let Some(io) = self.gen.attempt_zoned(fi, d, z) {
                    return Some(io);
                }
                continue;
            }
            if let Some(io) = self.gen.attempt(fi, d) {
                return Some(io);
            }
        }
        None
    }

    /// Think time after an I/O, if a pause is due; returns the time after it.
    fn think(&mut self, now: u64) -> u64 {
        let Some(pause) = self
            .pace
            .pause(now, self.issued_total, self.completed_total)
        else {
            return now;
        };
        self.quiesce();
        let t0 = self.clock.now();
        let (mut spin_us, mut sleep_us) = (pause.spin_us, pause.sleep_us);
        if self.pace.clips_think() && self.runtime_end_ns != u64::MAX {
            // The newest fio: no pause outlasts the runtime.
            let left = self.runtime_end_ns.saturating_sub(t0) / 1000;
            spin_us = spin_us.min(left);
            sleep_us = sleep_us.min(left - spin_us);
        }
        while self.clock.now() < t0 + spin_us * 1000 && !self.terminated() {
            std::hint::spin_loop();
        }
        if sleep_us > 0 {
            self.sleep_us(sleep_us);
        }
        let t1 = self.clock.now();
        self.stats.wait_ns += t1 - t0;
        self.pace.paused(pause, t0, t1);
        t1
    }

    /// Apply a latency-target decision.
    #[cold]
    fn lat_step(&mut self, step: LatStep, lat: u64, slot: u32) {
        match step {
            LatStep::Continue => {}
            LatStep::Quiesce => self.lat_quiesce = true,
            LatStep::Done => {
                self.stop = true;
                self.searched = true;
            }
            LatStep::Fatal => {
                let target = self.plan.latency.target.map_or(0, |t| t.target_ns);
                self.lat_fatal(lat, target, slot);
            }
        }
        if let Some(lt) = &self.lat_target {
            self.depth_limit = lt.qd as usize;
        }
    }

    /// A request's total latency exceeded max_latency (or an unattainable latency_target).
    #[cold]
    fn lat_fatal(&mut self, lat: u64, max: u64, slot: u32) {
        if self.stats.error != 0 {
            return;
        }
        let s = self.slots[slot as usize];
        let path = path_of(self.plan, s.file);
        let dir = ["read", "write", "trim"][(s.ddir as usize).min(2)];
        self.ctx.notes.err(&format!(
            "fio: latency of {lat} nsec exceeds specified max ({max} nsec): {path} {dir} {} {}",
            s.offset, s.len
        ));
        self.fail(libc::ETIMEDOUT, "max latency exceeded");
    }

    /// Pick the next request into `slot`; `None` when the loop's work is done (`LEAN`: see
    /// [`Self::submit`]).
    #[inline]
    fn prepare<const LEAN: bool>(&mut self, slot: u32) -> Option<u8> {
        if !LEAN && self.replay.is_some() {
            return self.prepare_replay(slot);
        }
        let due = if LEAN {
            None
        } else {
            let gen = &mut self.gen;
            self.syncs.due(|last| {
                if gen.nfiles() > 1 {
                    gen.pick_file().map_or(last, |f| f as u32)
                } else {
                    last
                }
            })
        };
        if let Some(due) = due {
            // verify_policy=fsynced: the fsync covers the writes prepared before it.
            let (vflags, vnum) = match self.ver.as_deref() {
                Some(v) if v.fsync_policy() => (VF_FSYNC, v.sync_mark()),
                _ => (0, 0),
            };
            let s = &mut self.slots[slot as usize];
            *s = match due {
                Due::Sync { file, data } => Slot {
                    op: if data { OP_DSYNC } else { OP_SYNC },
                    ddir: OP_SYNC,
                    file,
                    vflags,
                    vnum,
                    ..Slot::default()
                },
                Due::Range { file, offset, len } => Slot {
                    op: OP_SFR,
                    ddir: OP_SYNC,
                    file,
                    offset,
                    len,
                    ..Slot::default()
                },
            };
            return Some(s.op);
        }
        let n = loop {
            let n = if !LEAN && self.pace.limited() {
                let n = self.next_io_rated();
                if self.zones.is_some() && !self.zoned_before() {
                    return None;
                }
                n?
            } else if !LEAN && self.zones.is_some() {
                self.next_io_zoned()?
            } else {
                self.gen.next_io()?
            };
            if n.closed {
                self.close_done_files_holding(slot);
                if self.passes_over {
                    // The pass that just ended was the job's last: this I/O is not done.
                    return None;
                }
                if n.is_pass_end() {
                    return self.prepare_after_pass::<LEAN>(slot);
                }
                if n.is_pause() {
                    // Files were closed (or marked closing): the generator goes on.
                    continue;
                }
            }
            break n;
        };
        let ddir = n.ddir;
        if n.wrapped && self.plan.io.invalidate_on_wrap {
            let t0 = self.clock.now();
            self.files.invalidate(n.file, &self.plan.files[n.file]);
            self.target_since(t0);
        }
        if !LEAN {
            if ddir == 1 {
                self.syncs.wrote(n.file, n.offset, n.len);
            } else {
                self.syncs.other();
            }
        }

        let prio = self.prio.pick(ddir, n.len);
        let s = &mut self.slots[slot as usize];
        *s = Slot {
            op: ddir as u8,
            ddir: ddir as u8,
            file: n.file as u32,
            offset: n.offset,
            len: n.len,
            prio,
            ..Slot::default()
        };
        if !LEAN && ddir == 1 && self.ver.is_some() {
            self.prepare_verified_write(slot);
        } else if ddir == 1 {
            self.fill_write(slot, n.offset, n.len);
        }
        Some(ddir as u8)
    }

    /// The first request of the next pass, after [`NextIo::PASS_END`].
    #[cold]
    #[inline(never)]
    fn prepare_after_pass<const LEAN: bool>(&mut self, slot: u32) -> Option<u8> {
        self.prepare::<LEAN>(slot)
    }

    /// zonemode=zbd: the next I/O, drawn with the zones, and what they ask for before it.
    #[cold]
    fn next_io_zoned(&mut self) -> Option<flexio_workload::NextIo> {
        let n = match self.zones.as_deref_mut() {
            Some(z) => self.gen.next_io_zoned(z),
            None => self.gen.next_io(),
        };
        if !self.zoned_before() {
            return None;
        }
        n
    }

    /// zonemode=zbd, after an I/O was drawn: end the job on a zone failure (fio's message
    /// and error), else drain the queue and reset a device zone if the zones ask for it.
    /// False when the job must stop.
    #[cold]
    fn zoned_before(&mut self) -> bool {
        let Some(z) = self.zones.as_deref_mut() else {
            return true;
        };
        let failure = z.take_failure();
        let before = z.take_before();
        let resets = z.resets();
        self.stats.zone_resets = Some(resets);
        if let Some(f) = failure {
            if let Some(line) = &f.log {
                self.ctx.notes.err(line);
            }
            self.fail(f.errno, f.func);
            return false;
        }
        if before.quiesce {
            self.quiesce();
        }
        if let Some((file, off, len)) = before.reset {
            if !self.reset_device_zone(file, off, len) {
                return false;
            }
        }
        !self.stop
    }

    /// zonemode=zbd on a zoned device: reset the zone at `off` (`len` bytes) of `file`.
    /// False (the job failed, with fio's message) when the device refuses.
    #[cold]
    fn reset_device_zone(&mut self, file: usize, off: u64, len: u64) -> bool {
        if !self.ensure_open(file) {
            return false;
        }
        let r = match self.files.borrow(file) {
            Some(fd) => flexio_engine::platform::reset_zones(fd, off, len),
            None => Err(std::io::Error::from_raw_os_error(libc::EBADF)),
        };
        if let Err(e) = r {
            let errno = e.raw_os_error().unwrap_or(libc::EIO);
            self.ctx.notes.err(&format!(
                "{}: resetting wp for {} sectors at sector {} failed ({errno}).",
                self.plan.files[file].path.display(),
                len >> 9,
                off >> 9
            ));
            self.fail(errno, "resetting wp failed");
            return false;
        }
        true
    }

    /// serialize_overlap: reap until no request in flight overlaps the one in `slot`.
    #[cold]
    fn wait_for_overlaps(&mut self, slot: u32) {
        loop {
            let s = self.slots[slot as usize];
            let overlap = (0..self.slots.len() as u32).any(|k| {
                let o = &self.slots[k as usize];
                k != slot
                    && !self.free.contains(&k)
                    && o.op < OP_SYNC
                    && o.file == s.file
                    && o.offset < s.offset + s.len
                    && s.offset < o.offset + o.len
            });
            if !overlap || self.inflight == 0 && self.uncommitted.is_empty() || self.stop {
                return;
            }
            self.commit();
            self.reap::<false>(1);
        }
    }

    /// The data of a (non-verifying) write: refilled or scrambled as the job asks; with
    /// dedupe, from a seed chosen as [`crate::plan::Dedupe`] says.
    #[inline]
    fn fill_write(&mut self, slot: u32, offset: u64, len: u64) {
        let buf = &mut self.bufs.slot_mut(slot as usize)[..len as usize];
        let b = &self.plan.buffers;
        if let Some(d) = &mut self.dedupe {
            fill(buf, &b.fill, &mut Taus88::new(d.next_seed()));
        } else if b.refill {
            fill(buf, &b.fill, &mut self.fill_rng);
        } else if b.scramble {
            scramble(buf, offset, self.issued_total);
        }
    }

    /// fio's do_io for one loop.
    fn do_io(&mut self) -> End {
        if self.plain_sync() {
            let end = if self.replay.is_some() {
                self.plain_loop::<true, false>()
            } else if self.caps.file_op {
                self.plain_loop::<false, true>()
            } else {
                self.plain_loop::<false, false>()
            };
            return self.finish_io(end);
        }
        // The small static builds (one shared loop, for size) keep a single copy.
        let end = if !cfg!(feature = "shared_loop") && self.lean() {
            self.general_loop::<true>()
        } else {
            self.general_loop::<false>()
        };
        self.finish_io(end)
    }

    /// The general loop of [`Self::do_io`]: any depth, any engine, every feature. `LEAN`
    /// (chosen once per loop by [`Self::lean`]) compiles a copy without the checks of the
    /// features the job does not use; both copies run the same code.
    fn general_loop<const LEAN: bool>(&mut self) -> End {
        let first = self.issued_total;
        let end = self.general_loop_body::<LEAN>();
        if LEAN {
            self.stats.lean_ios += self.issued_since(first);
        }
        end
    }

    #[inline(always)]
    fn general_loop_body<const LEAN: bool>(&mut self) -> End {
        let budget = self.loop_budget;
        let number_ios = self.ios_cap;
        let mut issued: u64 = 0;
        let mut now = self.clock.now();
        let mut end = End::Done;
        loop {
            self.periodic(now);
            if self.should_stop(now) {
                end = End::Stop;
                break;
            }
            if issued >= budget {
                break;
            }
            if number_ios > 0 && self.issued_total >= number_ios {
                end = End::Stop;
                self.ios_cap_hit = true;
                break;
            }
            if self.loop_done {
                self.loop_done = false;
                // The engine's life cycle ended: its operation kinds' phases end with it.
                self.stats.close_op_phases();
                break;
            }
            if !LEAN && self.lat_quiesce {
                // latency_target converged: measure a clean window at the found depth.
                self.lat_quiesce = false;
                self.quiesce();
                now = self.clock.now();
                if self.accounting {
                    self.end_ramp(now);
                }
                let done = self.completed_total;
                if let Some(lt) = &mut self.lat_target {
                    lt.new_window(now, done);
                }
                continue;
            }
            if let Some(batch) = self
                .ver
                .as_mut()
                .filter(|_| !LEAN)
                .and_then(|v| v.backlog_due())
            {
                // verify_backlog: check the oldest written blocks before writing on.
                self.quiesce();
                self.verify_blocks(batch);
                self.progress.set_state(self.plan.io.state);
                now = self.clock.now();
                continue;
            }
            if let Some(len) = if LEAN { None } else { self.issue_due_trim() } {
                // Trim verification: fio counts a trim's bytes as issued by the loop.
                issued += len;
                now = self.clock.now();
                continue;
            }
            if !LEAN && self.flow.as_mut().is_some_and(|f| f.exceeded()) {
                // Held back by flow control until the group catches up.
                let sleep = self.plan.control.flow.map_or(0, |f| f.2);
                if sleep > 0 {
                    self.quiesce();
                    let t0 = self.clock.now();
                    self.sleep_us(sleep);
                    self.stats.wait_ns += self.clock.now().saturating_sub(t0);
                }
                now = self.clock.now();
                continue;
            }
            let in_use = self.slots.len() - self.free.len();
            let slot = if in_use < self.depth_limit {
                self.free.pop()
            } else {
                None
            };
            let Some(slot) = slot else {
                // Queue full (or at the latency target's depth): submit what is pending and
                // wait for completions.
                self.commit_for_reap();
                let min = self.plan.io.complete_min as usize;
                self.reap::<LEAN>(min);
                now = self.clock.now();
                continue;
            };
            let Some(op) = self.prepare::<LEAN>(slot) else {
                if !LEAN && self.capture.is_some() {
                    self.capture_failed_attempt(slot);
                }
                self.free.push(slot);
                break;
            };
            if op < OP_SYNC {
                let len = self.slots[slot as usize].len;
                if self.plan.io.budget_dirs[op as usize] {
                    issued += len;
                }
                if !LEAN && op == 1 && self.ver.as_ref().is_some_and(|v| v.verify_only()) {
                    // verify_only: the write is not done, only remembered for the check.
                    self.log_written(slot);
                    self.phantom_write(slot);
                    self.free.push(slot);
                    continue;
                }
                let d = op as usize;
                if let Some(due) = if LEAN { None } else { self.pace.due(d) } {
                    // Normally already waited for in next_io_rated.
                    if due > now && due > self.clock.now() {
                        if !self.wait_until(due) {
                            self.free.push(slot);
                            end = End::Stop;
                            break;
                        }
                        now = self.clock.now();
                    }
                    self.slots[slot as usize].sched_ns = due.max(1);
                    self.pace.issued(d, len);
                }
            }
            if !LEAN && self.plan.control.serialize_overlap && op < OP_SYNC {
                self.wait_for_overlaps(slot);
                if self.stop {
                    self.free.push(slot);
                    break;
                }
                now = self.clock.now();
            }
            now = self.submit::<LEAN>(slot, now);
            if !LEAN && op < OP_SYNC {
                let cycles = self.pace.cycles();
                if cycles > 0 {
                    // Not think time: the CPU is busy, the time is the job's own.
                    Pacer::spin_cycles(cycles);
                    now = self.clock.now();
                }
                if self.pace.thinks() {
                    now = self.think(now);
                }
            }
            if let Some(low) = self.plan.io.low.filter(|_| !LEAN) {
                if self.free.is_empty() {
                    // Drain down to the low-water mark before refilling.
                    let low = low as usize;
                    while self.slots.len() - self.free.len() > low
                        && self.inflight > 0
                        && !self.stop
                    {
                        self.commit_for_reap();
                        self.reap::<false>(1);
                    }
                    now = self.clock.now();
                }
            }
        }
        self.last_issued = issued;
        end
    }

    /// The end of a loop's I/O: drain what is in flight, end_fsync, a last periodic pass.
    fn finish_io(&mut self, end: End) -> End {
        self.commit_for_reap();
        while self.inflight > 0 {
            let n = self.inflight as usize;
            self.reap::<false>(n);
            if self.stop && self.inflight > 0 && self.comps.is_empty() {
                break;
            }
        }
        // Files the last attempts found done are closed now, as fio closes a file when it
        // finds it done. fio counts a job's bytes over all its loops: a loop before the
        // last ends when its files are found done, not on its bytes, so the generator is
        // asked once more here (not after a loop that ended on its bytes: an engine that
        // queues); the last loop ends on the bytes and never looks at the files again
        // (they stay open until the end).
        if self.more_loops
            && end == End::Done
            && self.last_issued < self.loop_budget
            && !self.stop
            && self.replay.is_none()
            && self.zones.is_none()
            && !self.plan.spec.wrap
        {
            let _ = self.gen.next_io();
        }
        self.close_done_files();
        self.end_synced = false;
        // A job that failed ends without them, as in fio.
        let failed = self.stats.error != 0 && !self.stats.error_soft;
        // A job that ended with its last pass synced and closed its files there. fio's
        // should_fsync: no end sync (nor syncfs) right after a periodic sync.
        let after_sync = self.syncs.last_was_sync();
        if (self.plan.io.end_fsync || self.plan.open.fsync_on_close)
            && !self.passes_over
            && !failed
            && !after_sync
        {
            // The target's time, not flexio's.
            let t0 = self.clock.now();
            let synced = self.end_sync_pass();
            self.stats.engine_ns += self.clock.now().saturating_sub(t0);
            self.end_synced = synced;
            // verify_policy=fsynced: an end sync that synced every file covers every
            // write (none is in flight any more).
            let all = synced && self.inflight == 0 && !self.caps.diskless;
            if let Some(v) = self.ver.as_deref_mut().filter(|_| all) {
                let mark = v.sync_mark();
                v.synced(mark);
            }
        }
        if self.plan.io.end_syncfs && !failed && !after_sync {
            let t0 = self.clock.now();
            self.files.syncfs_all();
            self.stats.engine_ns += self.clock.now().saturating_sub(t0);
        }
        self.periodic(self.clock.now());
        end
    }
}
