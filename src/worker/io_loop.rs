//! The job loop: fio's `do_io` (request slots, submit/commit/reap/complete) and the plain
//! synchronous loop side by side, generic over the engine. The loop owns the waiting; the
//! parts (`pacing`, `metering`, `file_table`, `verify`, `lat_target`, `prio`) own their state
//! and answer with decisions.
//!
//! Hot-path invariants (per I/O): no allocation (request slots, buffers and the completion
//! vector are sized once), no locking (statistics are thread-local; progress for the status
//! line is published with relaxed atomic stores at most every 100 ms), no formatting.

use super::file_table::{FileTable, Room};
use super::lat_target::{LatStep, LatTarget};
use super::metering::Meter;
use super::pacing::{Next, Pacer};
use super::prio::Prio;
use super::verify::{VerState, WriteTag, VF_PHASE, VF_WRITE};
use super::{verror, RunCtx};
use crate::clock::Clock;
use crate::files;
use crate::plan::{ThreadPlan, Timing};
use crate::progress::{Progress, RunState};
use flexio_engine::buffer::IoBuffers;
use flexio_engine::{Caps, Completion, EngineDef, IoReq, Op, Queued};
use flexio_job::options::err_class;
use flexio_stats::ThreadStats;
use flexio_workload::fill::{fill, scramble};
use flexio_workload::{Generator, Taus88};
use std::sync::atomic::Ordering;

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
}

const OP_SYNC: u8 = 3;
const OP_DSYNC: u8 = 4;

fn op_of(code: u8) -> Op {
    match code {
        0 => Op::Read,
        1 => Op::Write,
        2 => Op::Trim,
        OP_SYNC => Op::Sync,
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

pub struct Worker<'a, E: EngineDef> {
    e: E,
    caps: Caps,
    p: &'a ThreadPlan,
    ctx: &'a RunCtx,
    progress: &'a Progress,
    clock: Clock,
    pub stats: ThreadStats,
    gen: Generator,
    bufs: IoBuffers,
    fill_rng: Taus88,
    slots: Vec<Slot>,
    free: Vec<u32>,
    /// Slots queued since the last commit.
    uncommitted: Vec<u32>,
    comps: Vec<Completion>,
    inflight: u32,
    files: FileTable,
    pace: Pacer,
    meter: Meter,
    prio: Prio,
    ver: Option<Box<VerState>>,
    /// The verification state could not be set up (verify_state_load).
    ver_err: Option<String>,
    lat_target: Option<LatTarget>,
    /// A latency-target search converged: drain, reset statistics, run a final window.
    lat_quiesce: bool,
    /// Requests allowed in flight (latency_target lowers it).
    depth_limit: usize,
    timing: Timing,
    /// Measuring (false during ramp_time).
    accounting: bool,
    epoch_ns: u64,
    ramp_end_ns: u64,
    runtime_end_ns: u64,
    next_event_ns: u64,
    /// Per-direction elapsed µs over loops (fio's update_runtime).
    elapsed_us: [u64; 3],
    /// Completed bytes / I/Os per direction since accounting started.
    bytes: [u64; 3],
    ios: [u64; 3],
    /// Set when ramp ends inside a loop: that loop's runtime counts from here.
    loop_reset_start: Option<u64>,
    /// Start of the current loop.
    loop_start_ns: u64,
    writes_since_sync: u64,
    last_write_file: u32,
    completed_total: u64,
    issued_total: u64,
    usage_start: flexio_engine::sys::Usage,
    stop: bool,
    first_direct_error_noted: bool,
}

impl<'a, E: EngineDef> Worker<'a, E> {
    pub fn new(e: E, p: &'a ThreadPlan, ctx: &'a RunCtx, progress: &'a Progress) -> Self {
        let b = &p.buffers;
        let depth = p.io.depth as usize;
        let bufs = match IoBuffers::new(b.slots, b.slot_size, b.align, b.thp) {
            Ok(bufs) => bufs,
            Err(_) => {
                IoBuffers::new(1, 4096, 4096, false).expect("a 4 KiB buffer can be allocated")
            }
        };
        let (ver, ver_err) = match p.verify.as_ref().map(VerState::new) {
            None => (None, None),
            Some(Ok(v)) => (Some(Box::new(v)), None),
            Some(Err(e)) => (None, Some(e)),
        };
        let nfiles = p.files.len();
        Worker {
            caps: e.caps(),
            p,
            ctx,
            progress,
            clock: ctx.clock,
            stats: ThreadStats::new(p.stats_cfg),
            gen: Generator::new(p.spec.clone()),
            bufs,
            fill_rng: Taus88::new(b.fill_seed),
            slots: vec![Slot::default(); depth],
            free: (0..depth as u32).rev().collect(),
            uncommitted: Vec::with_capacity(depth),
            comps: Vec::with_capacity(depth),
            inflight: 0,
            files: FileTable::new(nfiles),
            pace: Pacer::new(&p.pace),
            meter: Meter::new(&p.meter, &p.name, p.thread_number),
            prio: Prio::new(p.prio),
            ver,
            ver_err,
            lat_target: p.latency.target.map(|t| LatTarget::new(depth as u32, &t)),
            lat_quiesce: false,
            depth_limit: if p.latency.target.is_some() { 1 } else { depth },
            timing: p.timing,
            accounting: true,
            epoch_ns: 0,
            ramp_end_ns: 0,
            runtime_end_ns: u64::MAX,
            next_event_ns: 0,
            elapsed_us: [0; 3],
            bytes: [0; 3],
            ios: [0; 3],
            loop_reset_start: None,
            loop_start_ns: 0,
            writes_since_sync: 0,
            last_write_file: 0,
            completed_total: 0,
            issued_total: 0,
            usage_start: Default::default(),
            stop: false,
            first_direct_error_noted: false,
            e,
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
        let end = self.clock.now() + us * 1000;
        while !self.terminated() {
            let now = self.clock.now();
            if now >= end {
                break;
            }
            std::thread::sleep(std::time::Duration::from_nanos((end - now).min(50_000_000)));
        }
    }

    fn publish_files(&self) {
        self.progress
            .files
            .store(self.files.open_count(), Ordering::Relaxed);
    }

    /// Open file `i`, or fail the job.
    fn open_file(&mut self, i: usize) -> Result<(), (i32, String)> {
        let p = self.p;
        let w = self
            .files
            .open(i, &p.files[i], &p.open, &mut self.e, &p.engine)?;
        if let Some(w) = w {
            self.ctx.notes.warn(&w);
        }
        self.publish_files();
        Ok(())
    }

    fn open_files(&mut self) -> Result<(), (i32, String)> {
        if self.caps.no_fd || self.caps.diskless {
            // fio counts a diskless job's files as open in the status line.
            self.progress
                .files
                .store(self.p.files.len() as u32, Ordering::Relaxed);
            return Ok(());
        }
        if self.p.open.limit.is_some() {
            // Opened on demand.
            return Ok(());
        }
        for i in 0..self.p.files.len() {
            self.open_file(i)?;
        }
        Ok(())
    }

    /// With `openfiles` below the number of files: make sure file `i` is open, closing the
    /// longest-open idle file when the limit is reached (waiting for its I/O if needed).
    fn ensure_open(&mut self, i: usize) -> bool {
        if self.caps.no_fd || self.caps.diskless || self.files.is_open(i) {
            return true;
        }
        let limit = self.p.open.limit.unwrap_or(u32::MAX);
        loop {
            match self.files.room(limit) {
                Room::Free => break,
                Room::Close(v) => {
                    self.files.close(v, &mut self.e, self.p.open.fsync_on_close);
                    self.publish_files();
                }
                Room::Wait if self.inflight > 0 => {
                    self.commit();
                    self.reap(1);
                }
                Room::Wait => break,
            }
        }
        match self.open_file(i) {
            Ok(()) => true,
            Err((errno, what)) => {
                self.ctx.notes.err(&format!("fio: {what}"));
                self.fail(errno, "open file");
                false
            }
        }
    }

    fn close_files(&mut self) {
        self.files
            .close_all(&mut self.e, self.p.open.fsync_on_close);
        self.progress.files.store(0, Ordering::Relaxed);
    }

    fn unlink_files(&self) {
        if self.caps.diskless && !self.caps.file_op {
            return;
        }
        for f in self.p.files.iter().filter(|f| f.block.is_none()) {
            let _ = if self.caps.dirs {
                std::fs::remove_dir(&f.path)
            } else {
                std::fs::remove_file(&f.path)
            };
        }
    }

    /// Set-up before the first loop; false when the job cannot run.
    fn setup(&mut self) -> bool {
        let io = &self.p.io;
        let (d0, d1) = io.startdelay_us;
        if d1 > 0 {
            let d = if d1 > d0 {
                d0 + Taus88::new(io.startdelay_seed).below(d1 - d0 + 1)
            } else {
                d0
            };
            self.progress.set_state(RunState::NotStarted);
            self.sleep_us(d);
        }
        if self.terminated() {
            return false;
        }
        self.progress.set_state(RunState::Initialized);
        let plan = self.p;
        let paths: Vec<&std::path::Path> = plan.files.iter().map(|f| f.path.as_path()).collect();
        let ready = self
            .e
            .init()
            .and_then(|_| self.e.setup(&paths))
            .and_then(|_| self.e.post_init(&self.bufs));
        if let Err(e) = ready {
            let errno = e.raw_os_error().unwrap_or(libc::EIO);
            let extra = if self.p.io.depth > 1 && errno == libc::ENOMEM {
                " Perhaps try reducing io depth?"
            } else {
                ""
            };
            // One clear line: which engine, and why.
            self.ctx.notes.err(&format!(
                "fio: io engine {} init failed: {e}.{extra}",
                self.p.engine
            ));
            self.fail(errno, "io engine init");
            return false;
        }
        if self.p.io.layout_in_thread {
            // create_serialize=0: every job lays out its own files, in parallel.
            let which = files::files_to_lay_out(self.p);
            if !which.is_empty() {
                self.ctx.notes.info(&files::layout_message(self.p, &which));
                if let Err(e) = files::lay_out(self.p, &which, self.ctx.readonly) {
                    self.ctx
                        .notes
                        .err(&format!("flexio: {}: file layout failed: {e}", self.p.name));
                    self.fail(e.raw_os_error().unwrap_or(libc::EIO), "file layout");
                    return false;
                }
            }
        }
        if let Some(e) = self.ver_err.take() {
            self.ctx.notes.err(&format!("fio: {e}"));
            self.fail(libc::ENOENT, "verify_state_load");
            return false;
        }
        if let Err((errno, what)) = self.open_files() {
            self.ctx.notes.err(&format!("fio: {what}"));
            self.fail(errno, "open file");
            self.close_files();
            return false;
        }
        if self.p.io.create_only {
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
            let _ = rustix::thread::set_current_timer_slack(std::num::NonZeroU64::new(1));
        }
        let now = self.clock.now();
        self.start_epoch(now);
        if self.p.io.ramp_ns > 0 {
            self.accounting = false;
            // Steady-state sampling starts with the measured part (end_ramp restarts it).
            self.meter.ramp();
            self.ramp_end_ns = now + self.p.io.ramp_ns;
            self.runtime_end_ns = u64::MAX;
            self.next_event_ns = self.next_event();
            self.progress.set_state(RunState::Ramp);
        }
        let loops = self.p.io.loops;
        for l in 0..loops {
            let loop_start = self.clock.now();
            self.loop_start_ns = loop_start;
            self.pace.restart(loop_start, self.bytes, self.ios);
            if l == 0 {
                let done = self.completed_total;
                if let Some(lt) = &mut self.lat_target {
                    lt.new_window(loop_start, done);
                }
            }
            self.progress.set_state(self.p.io.state);
            let end = self.do_io();
            self.end_of_loop(loop_start);
            if self.ver.is_some() && !self.stop && !self.terminated() {
                // fio: the read-back's time is the job's read runtime.
                let t0 = self.clock.now();
                self.verify_phase();
                self.add_runtime(0, t0);
            }
            if end == End::Stop || self.stop || self.terminated() {
                break;
            }
            if l + 1 < loops {
                self.files.next_loop(&self.p.files, &self.p.open);
                self.gen.reset();
                if self.p.io.unlink_each_loop {
                    self.unlink_files();
                }
            }
        }
        self.finish();
    }

    /// The end of the job: state file, final statistics, logs, files.
    fn finish(&mut self) {
        let stopped = self.terminated() || self.stop;
        if let Some(Err(e)) = self.ver.as_ref().and_then(|v| v.save_state(stopped)) {
            self.ctx.notes.err(&e);
        }
        let now = self.clock.now();
        self.fold_lat();
        self.stats.total_run_time_ms = (now.saturating_sub(self.epoch_ns)) / 1_000_000;
        if let Some(lt) = &self.lat_target {
            self.stats.latency_depth = Some(lt.qd);
        }
        self.take_usage();
        self.progress.set_state(RunState::Finishing);
        let ms = now.saturating_sub(self.epoch_ns) / 1_000_000;
        for e in self.meter.finish(ms, &self.stats, (&self.bytes, &self.ios)) {
            self.ctx.notes.err(&format!("flexio: {e}"));
        }
        self.close_files();
        if self.p.io.unlink || self.p.io.unlink_each_loop {
            self.unlink_files();
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
        self.runtime_end_ns = if self.p.io.runtime_ns > 0 {
            now + self.p.io.runtime_ns
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
        self.stats = ThreadStats::new(self.p.stats_cfg);
        self.bytes = [0; 3];
        self.ios = [0; 3];
        self.elapsed_us = [0; 3];
        self.issued_total = 0;
        self.accounting = true;
        self.ramp_end_ns = 0;
        self.start_epoch(now);
        self.loop_reset_start = Some(now);
        self.pace.restart(now, self.bytes, self.ios);
        self.progress.set_state(self.p.io.state);
    }

    /// Wait for in-flight requests to finish (before sleeping: fio's io_u_quiesce).
    fn quiesce(&mut self) {
        self.commit();
        while self.inflight > 0 && !self.stop {
            let n = self.inflight as usize;
            self.reap(n);
        }
    }

    /// Sleep until `due` (rate limit), keeping periodic work going; false when the job
    /// should stop instead.
    fn wait_until(&mut self, due: u64) -> bool {
        self.quiesce();
        let start = self.clock.now();
        let r = loop {
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
        self.stats.wait_ns += self.clock.now().saturating_sub(start);
        r
    }

    /// The next I/O of a rate-limited job: file, then direction, where the rate may switch
    /// a mixed job to the other direction or wait until one is due (fio's rate_ddir).
    /// `None` when the files are done or the job must stop while waiting.
    fn next_io_rated(&mut self) -> Option<flexio_workload::NextIo> {
        for _ in 0..(self.gen.nfiles() * 2 + 2) {
            let fi = self.gen.pick_file()?;
            let mut d = self.gen.next_ddir();
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
        while self.clock.now() < t0 + pause.spin_us * 1000 && !self.terminated() {
            std::hint::spin_loop();
        }
        if pause.sleep_us > 0 {
            self.sleep_us(pause.sleep_us);
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
            LatStep::Done => self.stop = true,
            LatStep::Fatal => {
                let target = self.p.latency.target.map_or(0, |t| t.target_ns);
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
        let path = self
            .p
            .files
            .get(s.file as usize)
            .map(|f| f.path.display().to_string())
            .unwrap_or_default();
        let dir = ["read", "write", "trim"][(s.ddir as usize).min(2)];
        self.ctx.notes.err(&format!(
            "fio: latency of {lat} nsec exceeds specified max ({max} nsec): {path} {dir} {} {}",
            s.offset, s.len
        ));
        self.fail(libc::ETIMEDOUT, "max latency exceeded");
    }

    /// Add the time since `start` to direction `d`'s runtime (if it moved data).
    fn add_runtime(&mut self, d: usize, start: u64) {
        if self.accounting {
            let el_us = self.clock.now().saturating_sub(start) / 1000;
            self.add_elapsed(d, el_us);
        }
    }

    /// fio's update_runtime: µs accumulate, the reported runtime is their ceiling in ms.
    fn add_elapsed(&mut self, d: usize, el_us: u64) {
        if self.stats.dirs[d].io_bytes == 0 {
            return;
        }
        let before = self.elapsed_us[d].div_ceil(1000);
        self.elapsed_us[d] += el_us;
        let after = self.elapsed_us[d].div_ceil(1000);
        self.stats.dirs[d].runtime_ms =
            self.stats.dirs[d].runtime_ms - before.min(self.stats.dirs[d].runtime_ms) + after;
    }

    fn end_of_loop(&mut self, loop_start: u64) {
        let start = self
            .loop_reset_start
            .take()
            .unwrap_or(loop_start)
            .max(loop_start);
        if !self.accounting {
            return;
        }
        let now = self.clock.now();
        let el_us = now.saturating_sub(start) / 1000;
        for d in 0..3 {
            if self.p.io.dirs[d] {
                self.add_elapsed(d, el_us);
            }
        }
    }

    /// Fold the clat samples that stand for lat into lat (see `Timing::lat_from_clat`), in
    /// the job's statistics or a copy of them.
    fn fold_lat_into(&self, s: &mut ThreadStats) {
        if !self.timing.lat_from_clat {
            return;
        }
        for d in &mut s.dirs {
            d.lat.merge(&d.clat);
            if self.p.stats_cfg.lat_hist {
                let h = d.clat_hist.clone();
                d.lat_hist.merge(&h);
            }
        }
    }

    fn fold_lat(&mut self) {
        let mut s = std::mem::take(&mut self.stats);
        self.fold_lat_into(&mut s);
        self.stats = s;
        self.timing.lat_from_clat = false;
    }

    /// The statistics as they would be reported if the job ended now.
    fn snapshot(&self, now: u64) -> ThreadStats {
        let mut s = self.stats.clone();
        self.fold_lat_into(&mut s);
        if self.accounting {
            let start = self
                .loop_reset_start
                .unwrap_or(self.loop_start_ns)
                .max(self.loop_start_ns);
            let el_us = now.saturating_sub(start) / 1000;
            for d in 0..3 {
                if s.dirs[d].io_bytes > 0 {
                    let before = self.elapsed_us[d].div_ceil(1000);
                    let after = (self.elapsed_us[d] + el_us).div_ceil(1000);
                    s.dirs[d].runtime_ms =
                        s.dirs[d].runtime_ms - before.min(s.dirs[d].runtime_ms) + after;
                }
            }
        }
        s.total_run_time_ms = now.saturating_sub(self.epoch_ns) / 1_000_000;
        if let Ok(u) = flexio_engine::sys::thread_usage() {
            let d = u.delta(&self.usage_start);
            s.usr_time_us = d.utime_us;
            s.sys_time_us = d.stime_us;
            s.ctx = d.ctx;
            s.majf = d.majflt;
            s.minf = d.minflt;
        }
        s
    }

    fn publish(&mut self) {
        for d in 0..3 {
            self.progress.bytes[d].store(self.bytes[d], Ordering::Relaxed);
            self.progress.ios[d].store(self.ios[d], Ordering::Relaxed);
        }
    }

    /// Periodic work: ramp end, samples, logs, progress.
    #[inline]
    fn periodic(&mut self, now: u64) {
        if now >= self.next_event_ns {
            self.periodic_slow(now);
        }
    }

    fn next_event(&self) -> u64 {
        let ramp = if self.ramp_end_ns != 0 {
            self.ramp_end_ns
        } else {
            u64::MAX
        };
        self.meter.next_event().min(ramp)
    }

    #[cold]
    fn periodic_slow(&mut self, now: u64) {
        self.periodic_work(now);
        self.next_event_ns = self.next_event();
    }

    fn periodic_work(&mut self, now: u64) {
        if self.ramp_end_ns != 0 && now >= self.ramp_end_ns {
            self.end_ramp(now);
        }
        if self.accounting {
            self.meter
                .steady_state(now, &self.bytes, &self.ios, self.progress);
        }
        if self.meter.publish_due(now) {
            self.publish();
            if self.terminated() {
                self.stop = true;
            }
            if self.meter.steady_state_on() && self.progress.ss_stop.load(Ordering::Relaxed) {
                // Steady state attained: end the job normally.
                self.stop = true;
            }
            let req = self.ctx.snapshot_req.load(Ordering::Acquire);
            if req != self.progress.snap_gen.load(Ordering::Relaxed) {
                let snap = self.snapshot(now);
                if let Ok(mut slot) = self.progress.snapshot.lock() {
                    *slot = Some(snap);
                }
                self.progress.snap_gen.store(req, Ordering::Release);
            }
        }
        if !self.accounting {
            return;
        }
        self.meter
            .logs_tick(now, self.epoch_ns, &self.stats, (&self.bytes, &self.ios));
        if !self.meter.check_due(now) {
            return;
        }
        if self.pace.has_minimum() {
            if let Err(e) = self
                .pace
                .check_minimum(now, self.epoch_ns, self.bytes, self.ios)
            {
                self.ctx.notes.err(&format!("{}: {e}", self.p.name));
                self.fail(libc::EIO, "check_min_rate");
                return;
            }
        }
        self.meter
            .sample(now, &mut self.stats, &self.bytes, &self.ios);
    }

    #[inline]
    fn should_stop(&self, now: u64) -> bool {
        // Termination requests are picked up by the periodic work (at least every 100 ms).
        self.stop || now >= self.runtime_end_ns
    }

    /// Pick the next request into `slot`; `None` when the loop's work is done.
    #[inline]
    fn prepare(&mut self, slot: u32) -> Option<u8> {
        let io = &self.p.io;
        if io.sync_every > 0 && self.writes_since_sync >= io.sync_every && !self.caps.diskless {
            self.writes_since_sync = 0;
            let file = self.last_write_file;
            let s = &mut self.slots[slot as usize];
            *s = Slot {
                op: if io.sync_is_fdatasync {
                    OP_DSYNC
                } else {
                    OP_SYNC
                },
                ddir: OP_SYNC,
                file,
                ..Slot::default()
            };
            return Some(s.op);
        }
        let n = if self.pace.limited() {
            self.next_io_rated()?
        } else {
            self.gen.next_io()?
        };
        let ddir = n.ddir;
        if n.wrapped && self.p.io.invalidate_on_wrap {
            self.files.invalidate(n.file, &self.p.files[n.file]);
        }
        if ddir == 1 {
            self.writes_since_sync += 1;
            self.last_write_file = n.file as u32;
        }
        let prio = self.prio.pick(ddir);
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
        if ddir == 1 && self.ver.is_some() {
            self.prepare_verified_write(slot);
        } else if ddir == 1 {
            self.fill_write(slot, n.offset, n.len);
        }
        Some(ddir as u8)
    }

    /// The data of a (non-verifying) write: refilled or scrambled as the job asks.
    #[inline]
    fn fill_write(&mut self, slot: u32, offset: u64, len: u64) {
        let buf = &mut self.bufs.slot_mut(slot as usize)[..len as usize];
        let b = &self.p.buffers;
        if b.refill {
            fill(buf, &b.fill, &mut self.fill_rng);
        } else if b.scramble {
            scramble(buf, offset, self.issued_total);
        }
    }

    /// A write of a verifying job: number it, seed it, fill data and headers.
    #[cold]
    fn prepare_verified_write(&mut self, slot: u32) {
        let since = self.clock.now().saturating_sub(self.epoch_ns);
        let Some(vs) = self.ver.as_mut() else { return };
        let s = &mut self.slots[slot as usize];
        let buf = &mut self.bufs.slot_mut(slot as usize)[..s.len as usize];
        let t = vs.next_write(buf, s.offset, since);
        s.vflags = VF_WRITE;
        s.vnum = t.numberio;
        s.vseed = t.seed;
    }

    /// Log a verified block (its write completed, or verify_only replays it).
    #[cold]
    fn log_written(&mut self, slot: u32) {
        let s = self.slots[slot as usize];
        if let Some(vs) = self.ver.as_mut() {
            vs.written(crate::verify::Piece {
                file: s.file,
                offset: s.offset,
                len: s.len,
                seed: s.vseed,
                numberio: s.vnum,
            });
        }
    }

    /// Re-read and check up to `max` logged blocks (the verify phase, or a backlog batch).
    fn verify_blocks(&mut self, max: u64) {
        let mut left = max;
        let mut now = self.clock.now();
        while left > 0 && !self.stop && !self.terminated() {
            let Some(piece) = self.ver.as_mut().and_then(|v| v.next_check()) else {
                break;
            };
            left -= 1;
            let slot = loop {
                if let Some(s) = self.free.pop() {
                    break Some(s);
                }
                self.commit();
                self.reap(1);
                if self.stop {
                    break None;
                }
            };
            let Some(slot) = slot else { break };
            self.slots[slot as usize] = Slot {
                op: 0,
                ddir: 0,
                file: piece.file,
                offset: piece.offset,
                len: piece.len,
                prio: self.prio.default(),
                vflags: VF_PHASE,
                vnum: piece.numberio,
                vseed: piece.seed,
                ..Slot::default()
            };
            now = self.submit(slot, now);
            self.periodic(now);
        }
        self.quiesce();
    }

    /// After a loop's writes: read back everything logged (fio's do_verify).
    fn verify_phase(&mut self) {
        let Some(vs) = self.ver.as_mut() else { return };
        if !vs.begin_phase() {
            return;
        }
        self.progress.set_state(RunState::Verifying);
        self.verify_blocks(u64::MAX);
        if let Some(vs) = self.ver.as_mut() {
            vs.end_phase();
        }
    }

    /// Check a completed read of a verifying job; a failure is EILSEQ in the verify class.
    #[cold]
    fn verify_read(&mut self, slot: u32) {
        let s = self.slots[slot as usize];
        let Some(vs) = self.ver.as_ref() else { return };
        let tag = (s.vflags & VF_PHASE != 0).then_some(WriteTag {
            numberio: s.vnum,
            seed: s.vseed,
        });
        // No allocation per verified read: a UTF-8 path is borrowed.
        let plan = self.p;
        let path = plan
            .files
            .get(s.file as usize)
            .map(|f| f.path.to_string_lossy())
            .unwrap_or_default();
        let buf = &mut self.bufs.slot_mut(slot as usize)[..s.len as usize];
        let Err(f) = vs.check(buf, s.offset, tag, &path) else {
            return;
        };
        for l in &f.lines {
            self.ctx.notes.err(l);
        }
        let (fatal, dump) = (vs.fatal, vs.dump);
        if dump {
            let received = &self.bufs.slot_mut(slot as usize)[..s.len as usize];
            for l in super::verify::dump(&f, s.offset, received, &path) {
                self.ctx.notes.err(&l);
            }
        }
        let func = if self.caps.syncio {
            "io_u_sync_complete"
        } else {
            "io_u_queued_complete"
        };
        if self.p.errors.tolerates(err_class::VERIFY, libc::EILSEQ) {
            self.stats.count_error(libc::EILSEQ);
            self.stats.set_soft_error(libc::EILSEQ, String::new());
            if fatal {
                self.stop = true;
            }
            return;
        }
        self.fail(libc::EILSEQ, func);
    }

    fn request(&self, slot: u32) -> IoReq {
        let s = &self.slots[slot as usize];
        IoReq {
            idx: slot,
            op: op_of(s.op),
            file: s.file,
            fd: self.files.raw(s.file as usize),
            offset: s.offset + s.done,
            // Past the bytes already moved by a short transfer (pointer arithmetic only).
            buf: self.bufs.ptr(slot as usize).wrapping_add(s.done as usize),
            len: (s.len - s.done) as usize,
            ioprio: s.prio,
        }
    }

    /// File-op engines: the measured operation happens at a file's first use per loop.
    fn file_op(&mut self, slot: u32) -> bool {
        let file = self.slots[slot as usize].file as usize;
        if !self.files.first_use(file) {
            return true;
        }
        let path = &self.p.files[file].path;
        let t0 = self.clock.now();
        let r = self.e.file_op(path);
        let t1 = self.clock.now();
        self.stats.engine_ns += t1 - t0;
        match r {
            Ok(()) => {
                if self.accounting {
                    let d = &mut self.stats.dirs[self.slots[slot as usize].ddir as usize];
                    d.clat.add(t1 - t0);
                    d.clat_hist.add(t1 - t0);
                }
                true
            }
            Err(e) => {
                let errno = e.raw_os_error().unwrap_or(libc::EIO);
                self.ctx.notes.err(&format!(
                    "fio: {} of {} failed: {e}",
                    E::NAME,
                    path.display()
                ));
                self.fail(errno, "file operation");
                false
            }
        }
    }

    /// Submit a prepared request; returns the time after submission.
    #[inline]
    fn submit(&mut self, slot: u32, mut now: u64) -> u64 {
        if self.caps.file_op && !self.file_op(slot) {
            self.free.push(slot);
            return self.clock.now();
        }
        let s = self.slots[slot as usize];
        if !self.ensure_open(s.file as usize) {
            self.free.push(slot);
            return self.clock.now();
        }
        let is_sync = s.op >= OP_SYNC;
        let t = self.timing;
        if t.lat || (self.caps.syncio && (t.clat || is_sync)) {
            now = self.clock.now();
        }
        self.slots[slot as usize].start_ns = now;
        loop {
            let req = self.request(slot);
            // Synchronous engines: the start stamp, taken just before the system call, is
            // also the issue time: one clock reading per request instead of two (lat then
            // equals clat; fio's lat adds its own preparation time). Engines that queue get
            // their issue time at submission.
            let issue = now;
            self.slots[slot as usize].issue_ns = issue;
            let r = self.e.queue(&req);
            match r {
                Queued::Completed(res) => {
                    let t = self.clock.now();
                    self.stats.engine_ns += t.saturating_sub(issue);
                    if !self.caps.has_commit {
                        self.stats.mark_submit(1);
                        self.stats.mark_complete(1);
                    }
                    self.count_issue(s.ddir, is_sync);
                    let depth = self.inflight as u64 + 1;
                    self.stats.mark_depth(depth, 1);
                    self.complete(slot, res, t);
                    return t;
                }
                Queued::Queued => {
                    self.count_issue(s.ddir, is_sync);
                    self.inflight += 1;
                    self.files.started(s.file as usize);
                    self.uncommitted.push(slot);
                    if !self.caps.has_commit {
                        self.stats.mark_submit(1);
                        let t = self.clock.now();
                        self.stats.engine_ns += t.saturating_sub(issue);
                        self.slots[slot as usize].issue_ns = t;
                        if self.timing.slat && self.accounting && !is_sync {
                            self.stats.add_slat(
                                s.ddir as usize,
                                t.saturating_sub(self.slots[slot as usize].start_ns),
                            );
                        }
                    }
                    if self.uncommitted.len() as u32 >= self.p.io.submit_batch {
                        self.commit();
                    }
                    return now;
                }
                Queued::Busy => {
                    if self.inflight == 0 && self.uncommitted.is_empty() {
                        self.fail(libc::EBUSY, "io_u queue");
                        self.free.push(slot);
                        return now;
                    }
                    self.commit();
                    self.reap(1);
                    if self.stop {
                        self.free.push(slot);
                        return now;
                    }
                }
            }
        }
    }

    #[inline]
    fn count_issue(&mut self, ddir: u8, is_sync: bool) {
        if is_sync {
            self.stats.sync_total += 1;
        } else {
            self.stats.dirs[ddir as usize].total_ios += 1;
            self.issued_total += 1;
        }
    }

    fn commit(&mut self) {
        if self.uncommitted.is_empty() {
            return;
        }
        let cur_depth = (self.slots.len() - self.free.len()) as u64;
        self.stats
            .mark_depth(cur_depth, self.uncommitted.len() as u64);
        let t0 = self.clock.now();
        let r = self.e.commit();
        let t = self.clock.now();
        self.stats.engine_ns += t - t0;
        match r {
            Ok(n) => {
                if self.caps.has_commit {
                    self.stats.mark_submit(n as u64);
                }
                // Engines that complete synchronously keep the issue time taken before queue()
                // and have no submission latency (fio's FIO_SYNCIO).
                if self.caps.has_commit && !self.caps.syncio {
                    for i in 0..self.uncommitted.len() {
                        let slot = self.uncommitted[i] as usize;
                        self.slots[slot].issue_ns = t;
                        let s = self.slots[slot];
                        if self.timing.slat && self.accounting && s.op < OP_SYNC {
                            self.stats
                                .add_slat(s.ddir as usize, t.saturating_sub(s.start_ns));
                        }
                    }
                }
            }
            Err(e) => {
                let errno = e.raw_os_error().unwrap_or(libc::EIO);
                self.fail(errno, "io commit");
            }
        }
        self.uncommitted.clear();
    }

    /// Reap at least `min` completions.
    fn reap(&mut self, min: usize) {
        if self.inflight == 0 {
            return;
        }
        let io = &self.p.io;
        let max = io
            .complete_max
            .map(|m| m as usize)
            // fio: the maximum defaults to the minimum, so completions are taken a few at a
            // time and the queue stays full.
            .unwrap_or(io.complete_min as usize)
            .max(min)
            .max(1);
        self.comps.clear();
        let t0 = self.clock.now();
        let r = self
            .e
            .reap(min.min(self.inflight as usize), max, &mut self.comps);
        let t = self.clock.now();
        self.stats.engine_ns += t.saturating_sub(t0);
        match r {
            Ok(n) => {
                self.stats.mark_complete(n as u64);
                for i in 0..self.comps.len() {
                    let c = self.comps[i];
                    self.inflight -= 1;
                    let f = self.slots[c.idx as usize].file as usize;
                    self.files.finished(f);
                    self.complete(c.idx, c.res, t);
                }
            }
            Err(e) => {
                let errno = e.raw_os_error().unwrap_or(libc::EIO);
                self.fail(errno, "io getevents");
                self.inflight = 0;
            }
        }
        self.periodic(t);
    }

    /// Account a finished request (or requeue its remainder after a short transfer).
    #[inline]
    fn complete(&mut self, slot: u32, res: i64, t: u64) {
        let s = self.slots[slot as usize];
        if s.op >= OP_SYNC {
            if res < 0 {
                self.io_error(slot, (-res) as i32);
            } else if self.accounting && self.timing.clat {
                self.stats.add_sync(t.saturating_sub(s.issue_ns));
            }
            self.free.push(slot);
            return;
        }
        let want = s.len - s.done;
        let mut failed = false;
        if res < 0 || (res == 0 && want > 0) {
            let errno = if res < 0 { (-res) as i32 } else { libc::EIO };
            if !self.io_error(slot, errno) {
                self.free.push(slot);
                return;
            }
            // Non-fatal (continue_on_error): the I/O counts as done.
            failed = true;
        } else if (res as u64) < want {
            // Short transfer: requeue the remainder.
            self.slots[slot as usize].done += res as u64;
            if self.accounting {
                self.stats.dirs[s.ddir as usize].short_ios += 1;
            }
            self.resubmit(slot);
            return;
        }
        let d = s.ddir as usize;
        self.completed_total += 1;
        if self.timing.lat && (self.lat_target.is_some() || self.p.latency.max_ns[d] > 0) {
            self.check_latency(slot, d, t.saturating_sub(s.start_ns), t);
        }
        if self.accounting && !failed {
            self.account(&s, t);
        }
        if failed && s.vflags & VF_WRITE != 0 {
            if let Some(vs) = self.ver.as_mut() {
                vs.write_failed(s.vnum);
            }
        }
        if self.ver.is_some() && !failed {
            if s.vflags & VF_WRITE != 0 {
                self.log_written(slot);
            } else if d == 0
                && (s.vflags & VF_PHASE != 0 || self.ver.as_ref().is_some_and(|v| v.checks_reads()))
            {
                self.verify_read(slot);
            }
        }
        self.free.push(slot);
    }

    /// The statistics of a completed request.
    #[inline]
    fn account(&mut self, s: &Slot, t: u64) {
        let d = s.ddir as usize;
        if s.sched_ns != 0 {
            self.stats.add_sched(
                d,
                t.saturating_sub(s.sched_ns),
                s.start_ns.saturating_sub(s.sched_ns),
            );
        }
        self.bytes[d] += s.len;
        self.ios[d] += 1;
        self.stats.dirs[d].io_bytes += s.len;
        let clat = t.saturating_sub(s.issue_ns);
        let lat = t.saturating_sub(s.start_ns);
        if self.timing.clat && !self.caps.file_op {
            self.stats.add_clat(d, clat);
        }
        if self.timing.lat && !(self.timing.lat_from_clat && s.issue_ns == s.start_ns) {
            self.stats.add_lat(d, lat);
        }
        if self.meter.logs.is_some() {
            let ms = t.saturating_sub(self.epoch_ns) / 1_000_000;
            let slat = (!self.caps.syncio && self.timing.slat)
                .then(|| s.issue_ns.saturating_sub(s.start_ns));
            self.meter.io(
                &mut self.stats,
                ms,
                (s.ddir, s.len, s.offset, s.prio),
                lat,
                clat,
                slat,
            );
        }
        self.meter.last_bs[d] = s.len;
        if self.prio.varies() {
            let v = if self.prio.by_total_lat() { lat } else { clat };
            let hist = self.prio.hist();
            self.stats.dirs[d].add_prio(s.prio, v, hist);
        }
    }

    /// max_latency and latency_target checks of one completion (total latency `lat`).
    #[cold]
    fn check_latency(&mut self, slot: u32, d: usize, lat: u64, t: u64) {
        let max = self.p.latency.max_ns[d];
        if max > 0 && lat > max {
            self.lat_fatal(lat, max, slot);
            return;
        }
        let done = self.completed_total;
        if let Some(lt) = &mut self.lat_target {
            let step = lt.on_complete(lat, t, done);
            self.lat_step(step, lat, slot);
        }
    }

    /// Re-issue the rest of a short request (same slot, start time kept).
    fn resubmit(&mut self, slot: u32) {
        let req = self.request(slot);
        // fio counts the requeued remainder as another issued request.
        let ddir = self.slots[slot as usize].ddir;
        self.count_issue(ddir, false);
        self.slots[slot as usize].issue_ns = self.clock.now();
        match self.e.queue(&req) {
            Queued::Completed(res) => {
                let t = self.clock.now();
                self.complete(slot, res, t);
            }
            Queued::Queued => {
                self.inflight += 1;
                self.files.started(self.slots[slot as usize].file as usize);
                self.uncommitted.push(slot);
                self.commit();
            }
            Queued::Busy => {
                self.fail(libc::EBUSY, "io_u requeue");
                self.free.push(slot);
            }
        }
    }

    /// Handle an I/O error; returns true if it is non-fatal (continue_on_error).
    fn io_error(&mut self, slot: u32, errno: i32) -> bool {
        let s = self.slots[slot as usize];
        // fio's td_error.c: EILSEQ is a verify error; trims and syncs count as writes.
        let class = if errno == libc::EILSEQ {
            err_class::VERIFY
        } else if s.ddir == 0 {
            err_class::READ
        } else {
            err_class::WRITE
        };
        let plan = self.p;
        // Formatted only when printed: an error continue_on_error counts costs no message.
        let line = || {
            let path = plan
                .files
                .get(s.file as usize)
                .map(|f| f.path.display().to_string())
                .unwrap_or_default();
            format!(
                "fio: io_u error on file {path}: {}: {} offset={}, buflen={}",
                crate::notes::strerror(errno),
                op_of(s.op).name(),
                s.offset + s.done,
                s.len - s.done
            )
        };
        let policy = &self.p.errors;
        if policy.tolerates(class, errno) {
            if policy.dump {
                self.ctx.notes.err(&line());
            }
            self.stats.count_error(errno);
            // fio: a synchronous engine's transfer error is recorded by its xfer step.
            let func = if self.caps.syncio {
                "xfer"
            } else {
                "io_u error"
            };
            self.stats.set_soft_error(errno, verror(errno, func));
            return true;
        }
        if errno == libc::EINVAL
            && policy.direct
            && !self.first_direct_error_noted
            && self.issued_total <= 1
        {
            self.first_direct_error_noted = true;
            self.ctx.notes.info(
                "fio: first direct IO errored. File system may not support direct IO, or iomem_align= is bad, or invalid block size. Try setting direct=0.",
            );
        }
        if self.stats.error != 0 {
            // Only the first fatal error is reported; the requests still in flight when the
            // job stops fail the same way.
            return false;
        }
        if errno == libc::EOPNOTSUPP && policy.hipri {
            self.ctx.notes.info("flexio: hipri asks for polled completions, which this file or device does not support (it needs a block device with poll queues, e.g. nvme poll_queues)");
        }
        self.ctx.notes.err(&line());
        self.fail(errno, "io_u error");
        false
    }

    /// fio's do_io for one loop.
    fn do_io(&mut self) -> End {
        if self.plain_sync() {
            let end = self.plain_loop();
            return self.finish_io(end);
        }
        let budget = self.p.io.budget;
        let number_ios = self.p.io.number_ios;
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
                break;
            }
            if self.lat_quiesce {
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
            if let Some(batch) = self.ver.as_mut().and_then(|v| v.backlog_due()) {
                // verify_backlog: check the oldest written blocks before writing on.
                self.quiesce();
                self.verify_blocks(batch);
                self.progress.set_state(self.p.io.state);
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
                // Queue full (or at the latency target's depth): commit what is pending and
                // wait for completions.
                self.commit();
                let min = self.p.io.complete_min as usize;
                self.reap(min);
                now = self.clock.now();
                continue;
            };
            let Some(op) = self.prepare(slot) else {
                self.free.push(slot);
                break;
            };
            if op < OP_SYNC {
                let len = self.slots[slot as usize].len;
                if self.p.io.budget_dirs[op as usize] {
                    issued += len;
                }
                if op == 1 && self.ver.as_ref().is_some_and(|v| v.verify_only()) {
                    // verify_only: the write is not done, only remembered for the check.
                    self.log_written(slot);
                    self.free.push(slot);
                    continue;
                }
                let d = op as usize;
                if let Some(due) = self.pace.due(d) {
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
            now = self.submit(slot, now);
            if self.pace.thinks() && op < OP_SYNC {
                now = self.think(now);
            }
            if let Some(low) = self.p.io.low {
                if self.free.is_empty() {
                    // Drain down to the low-water mark before refilling.
                    let low = low as usize;
                    while self.slots.len() - self.free.len() > low
                        && self.inflight > 0
                        && !self.stop
                    {
                        self.commit();
                        self.reap(1);
                    }
                    now = self.clock.now();
                }
            }
        }
        self.finish_io(end)
    }

    /// The end of a loop's I/O: drain what is in flight, end_fsync, a last periodic pass.
    fn finish_io(&mut self, end: End) -> End {
        self.commit();
        while self.inflight > 0 {
            let n = self.inflight as usize;
            self.reap(n);
            if self.stop && self.inflight > 0 && self.comps.is_empty() {
                break;
            }
        }
        if self.p.io.end_fsync {
            // The target's time, not flexio's.
            let t0 = self.clock.now();
            self.files.fsync_all();
            self.stats.engine_ns += self.clock.now().saturating_sub(t0);
        }
        self.periodic(self.clock.now());
        end
    }

    /// Whether a loop can take the plain synchronous path: one request at a time on an
    /// engine that completes it in the call, and none of the per-request features (rate,
    /// think time, verify, logs, latency checks, priorities, periodic syncs).
    fn plain_sync(&self) -> bool {
        // FLEXIO_GENERAL_PATH=1 keeps every job on the general loop (tests compare the two).
        static FORCED_GENERAL: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
        let forced = *FORCED_GENERAL
            .get_or_init(|| std::env::var("FLEXIO_GENERAL_PATH").as_deref() == Ok("1"));
        let p = self.p;
        !forced
            && self.caps.syncio
            && !self.caps.has_commit
            && !self.caps.file_op
            && self.slots.len() == 1
            && self.depth_limit == 1
            && !self.pace.limited()
            && !self.pace.thinks()
            && p.io.low.is_none()
            && p.io.number_ios == 0
            && self.ver.is_none()
            && self.lat_target.is_none()
            && !self.lat_quiesce
            && p.latency.max_ns == [0; 3]
            && self.meter.logs.is_none()
            && !self.prio.varies()
            && p.io.sync_every == 0
    }

    /// [`Self::do_io`] for [`Self::plain_sync`] jobs: the same requests, statistics and
    /// stopping rules with none of the queue bookkeeping. A request that does not move all
    /// its bytes (error, short transfer) or is not a read or write goes through the
    /// general completion.
    fn plain_loop(&mut self) -> End {
        let budget = self.p.io.budget;
        let invalidate = self.p.io.invalidate_on_wrap;
        let timed = self.timing.lat || self.timing.clat;
        let lat_too = self.timing.lat && !self.timing.lat_from_clat;
        let clat_on = self.timing.clat;
        let mut now = self.clock.now();
        let mut issued: u64 = 0;
        let first = self.issued_total;
        let end = loop {
            self.periodic(now);
            if self.should_stop(now) {
                break End::Stop;
            }
            if issued >= budget {
                break End::Done;
            }
            let Some(n) = self.gen.next_io() else {
                break End::Done;
            };
            if n.wrapped && invalidate {
                self.files.invalidate(n.file, &self.p.files[n.file]);
            }
            let d = n.ddir;
            if self.p.io.budget_dirs[d] {
                issued += n.len;
            }
            if d == 1 {
                self.writes_since_sync += 1;
                self.last_write_file = n.file as u32;
                self.fill_write(0, n.offset, n.len);
            }
            if !self.ensure_open(n.file) {
                continue;
            }
            let prio = self.prio.default();
            let req = IoReq {
                idx: 0,
                op: op_of(d as u8),
                file: n.file as u32,
                fd: self.files.raw(n.file),
                offset: n.offset,
                buf: self.bufs.ptr(0),
                len: n.len as usize,
                ioprio: prio,
            };
            if timed {
                now = self.clock.now();
            }
            let r = self.e.queue(&req);
            let t = self.clock.now();
            self.stats.engine_ns += t.saturating_sub(now);
            self.stats.mark_submit(1);
            self.stats.mark_complete(1);
            self.stats.dirs[d].total_ios += 1;
            self.issued_total += 1;
            self.stats.mark_depth(1, 1);
            match r {
                Queued::Completed(res) if d < 2 && res as u64 == n.len => {
                    self.completed_total += 1;
                    if self.accounting {
                        self.bytes[d] += n.len;
                        self.ios[d] += 1;
                        self.stats.dirs[d].io_bytes += n.len;
                        if clat_on {
                            self.stats.add_clat(d, t.saturating_sub(now));
                        }
                        if lat_too {
                            self.stats.add_lat(d, t.saturating_sub(now));
                        }
                        self.meter.last_bs[d] = n.len;
                    }
                }
                r => {
                    let res = match r {
                        Queued::Completed(res) => res,
                        // Engines with `syncio` complete every request in the call; one
                        // that does not breaks that contract.
                        _ => -(libc::EINVAL as i64),
                    };
                    let Some(slot) = self.free.pop() else {
                        break End::Stop;
                    };
                    self.slots[slot as usize] = Slot {
                        op: d as u8,
                        ddir: d as u8,
                        file: n.file as u32,
                        offset: n.offset,
                        len: n.len,
                        prio,
                        start_ns: now,
                        issue_ns: now,
                        ..Slot::default()
                    };
                    self.complete(slot, res, t);
                }
            }
            now = t;
        };
        self.stats.plain_ios += self.issued_total - first;
        end
    }
}
