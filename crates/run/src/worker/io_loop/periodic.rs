//! Periodic work and runtime accounting: ramp end, samples, logs, progress, snapshots,
//! and fio's per-direction runtime.

use super::*;

impl<E: Engine> Worker<'_, E> {
    /// Add the time since `start` to direction `d`'s runtime (if it moved data).
    pub(super) fn add_runtime(&mut self, d: usize, start: u64) {
        if self.accounting {
            let el_ns = self.clock.now().saturating_sub(start);
            self.add_elapsed(d, el_ns);
        }
    }

    /// fio's update_runtime: µs accumulate, the reported runtime is their ceiling in ms
    /// (`runtime_ns` keeps the exact sum beside it).
    pub(super) fn add_elapsed(&mut self, d: usize, el_ns: u64) {
        if self.stats.dirs[d].io_bytes == 0 {
            return;
        }
        self.stats.dirs[d].runtime_ns += el_ns;
        let el_us = el_ns / 1000;
        let before = self.elapsed_us[d].div_ceil(1000);
        self.elapsed_us[d] += el_us;
        let after = self.elapsed_us[d].div_ceil(1000);
        self.stats.dirs[d].runtime_ms =
            self.stats.dirs[d].runtime_ms - before.min(self.stats.dirs[d].runtime_ms) + after;
    }

    pub(super) fn end_of_loop(&mut self, loop_start: u64) {
        // Each loop is one phase of every operation kind (mdtree's phase rates).
        self.stats.close_op_phases();
        let start = self
            .loop_reset_start
            .take()
            .unwrap_or(loop_start)
            .max(loop_start);
        // A loop that ends while the job ramps gets its time as in fio (update_runtime
        // after each loop): a job that ends within its ramp reports it; the ramp's end
        // zeroes it with the rest.
        let now = self.clock.now();
        let el_ns = now.saturating_sub(start);
        // The newest fio (3.34) also gives a writing job's verify_backlog reads the loop's
        // time; fio 3.33 only the read-back's (none for a time-based job: no read line).
        let backlog_reads = !self.plan.compat.is_fio333()
            && self
                .plan
                .verify
                .as_ref()
                .is_some_and(|v| v.backlog > 0 && v.writes);
        // fio 3.33 gives verify_only's phantom writes no runtime (no write line; the JSON
        // has their bytes and a runtime of 0); the newest fio reports the direction.
        let phantom_333 = self.plan.compat.is_fio333()
            && self.plan.verify.as_ref().is_some_and(|v| v.verify_only);
        for d in 0..3 {
            if (self.plan.io.dirs[d] && !(d == 1 && phantom_333)) || (d == 0 && backlog_reads) {
                self.add_elapsed(d, el_ns);
            }
        }
    }

    /// Fold the clat samples that stand for lat into lat (see `Timing::lat_from_clat`), in
    /// the job's statistics or a copy of them.
    pub(super) fn fold_lat_into(&self, s: &mut ThreadStats) {
        if !self.timing.lat_from_clat {
            return;
        }
        for d in &mut s.dirs {
            d.lat.merge(&d.clat);
            if self.plan.stats_cfg.lat_hist {
                let h = d.clat_hist.clone();
                d.lat_hist.merge(&h);
            }
        }
    }

    pub(super) fn fold_lat(&mut self) {
        let mut s = std::mem::take(&mut self.stats);
        self.fold_lat_into(&mut s);
        self.stats = s;
        self.timing.lat_from_clat = false;
    }

    /// The statistics as they would be reported if the job ended now.
    pub(super) fn snapshot(&self, now: u64) -> ThreadStats {
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

    pub(super) fn publish(&mut self) {
        for d in 0..3 {
            self.progress.bytes[d].store(self.bytes[d], Ordering::Relaxed);
            self.progress.ios[d].store(self.ios[d], Ordering::Relaxed);
        }
    }

    /// Periodic work: ramp end, samples, logs, progress.
    #[inline]
    pub(super) fn periodic(&mut self, now: u64) {
        if now >= self.next_event_ns {
            self.periodic_slow(now);
        }
    }

    pub(super) fn next_event(&self) -> u64 {
        self.meter.next_event().min(self.ramp.next_look())
    }

    #[cold]
    pub(super) fn periodic_slow(&mut self, now: u64) {
        self.periodic_work(now);
        self.next_event_ns = self.next_event();
    }

    pub(super) fn periodic_work(&mut self, now: u64) {
        if self.ramp.ends(now) {
            self.end_ramp(now);
        }
        if self.accounting {
            let clat = self.stats.dirs.iter().fold((0u64, 0u64), |(s, n), d| {
                (s.wrapping_add(d.clat.sum as u64), n + d.clat.samples)
            });
            self.meter
                .steady_state(now, &self.bytes, &self.ios, clat, self.progress);
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
            if let Some(Err(e)) = self.ver.as_mut().and_then(|v| v.checkpoint(now)) {
                self.ctx.notes.err(&e);
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
        let (b, i) = self.sampled();
        self.meter
            .logs_tick(now, self.epoch_ns, &self.stats, (&b, &i));
        if !self.meter.check_due(now) {
            return;
        }
        if self.pace.has_minimum() {
            if let Err(e) = self
                .pace
                .check_minimum(now, self.epoch_ns, self.bytes, self.ios)
            {
                self.ctx.notes.err(&format!("{}: {e}", self.plan.name));
                self.fail(libc::EIO, "check_min_rate");
                return;
            }
        }
        // A job whose runtime is up is no longer running when fio's helper thread looks:
        // no sample at the very end (the newest fio's finishing sample comes at the end).
        if now < self.runtime_end_ns {
            self.meter.sample(now, &mut self.stats, &b, &i);
        }
    }

    /// The bytes and I/Os the periodic samples and averaged logs see: the reads of logged
    /// blocks left out, as fio's samples leave them.
    pub(super) fn sampled(&self) -> ([u64; 3], [u64; 3]) {
        let (lb, li) = self.listed;
        (
            std::array::from_fn(|d| self.bytes[d] - lb[d]),
            std::array::from_fn(|d| self.ios[d] - li[d]),
        )
    }

    #[inline]
    pub(super) fn should_stop(&self, now: u64) -> bool {
        // A termination request (signal, exitall, another rank's stonewall) ends the job at
        // once, like its runtime running out: one relaxed load of a flag that rarely changes.
        self.stop || now >= self.runtime_end_ns || self.terminated()
    }
}
