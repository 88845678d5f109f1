//! The plain synchronous loop: one request at a time, none of the per-request features,
//! the same requests and statistics as the general loop.

use super::*;
use crate::plan::features::Loop;
use flexio_workload::gen::NextIo;

/// FLEXIO_GENERAL_PATH (tests compare the paths): 1 keeps every job off the plain loop, 2
/// also off the general loop's lean copy; anything else, 0: each job takes the fastest.
fn forced_path() -> u8 {
    static FORCED: std::sync::OnceLock<u8> = std::sync::OnceLock::new();
    *FORCED.get_or_init(|| match std::env::var("FLEXIO_GENERAL_PATH").as_deref() {
        Ok("1") => 1,
        Ok("2") => 2,
        _ => 0,
    })
}

impl<E: Engine> Worker<'_, E> {
    /// Whether a loop can take the plain synchronous path: the plan's features
    /// ([`crate::plan::features`]) are none at all (one request at a time on an engine that
    /// completes it in the call, none of the gated features, no logs, priorities or
    /// number_ios).
    pub(super) fn plain_sync(&self) -> bool {
        forced_path() == 0 && self.plan.features.job_loop() == Loop::Plain
    }

    /// Whether this loop may run the general loop's lean copy: the plan's features
    /// ([`crate::plan::features`]) include none of those its checks are compiled out of.
    pub(super) fn lean(&self) -> bool {
        forced_path() < 2 && self.plan.features.lean()
    }

    /// [`Self::do_io`] for [`Self::plain_sync`] jobs: the same requests, statistics and
    /// stopping rules with none of the queue bookkeeping. A request that does not move all
    /// its bytes (error, short transfer) or is not a read or write goes through the
    /// general completion.
    ///
    /// `REPLAY`: the requests are a trace's ([`Self::next_replayed`]), not the generator's.
    /// `FILE_OP`: a file-operation engine, whose measured operation (the timed system call
    /// on the file's name) comes at the file's first request of the loop, and whose
    /// requests then complete without I/O.
    pub(super) fn plain_loop<const REPLAY: bool, const FILE_OP: bool>(&mut self) -> End {
        let budget = self.loop_budget;
        let budget_dirs = self.plan.io.budget_dirs;
        let invalidate = self.plan.io.invalidate_on_wrap;
        let timed = self.timing.lat || self.timing.clat;
        let lat_too = self.timing.lat && !self.timing.lat_from_clat;
        let clat_on = self.timing.clat;
        let mut now = self.clock.now();
        let mut issued: u64 = 0;
        let first = self.issued_total;
        // Requests submitted and completed one at a time at depth 1 since the submission,
        // completion and depth counts were last brought up to date (before periodic work
        // reads the statistics, and at the end).
        let mut unmarked: u64 = 0;
        let end = loop {
            if now >= self.next_event_ns {
                self.mark_plain(std::mem::take(&mut unmarked));
                self.periodic_slow(now);
            }
            if self.should_stop(now) {
                break End::Stop;
            }
            if issued >= budget {
                break End::Done;
            }
            let next = if REPLAY {
                self.next_replayed(&mut unmarked)
            } else {
                self.gen.next_io()
            };
            let Some(n) = next else {
                break End::Done;
            };
            if (n.closed | n.wrapped) && self.plain_events(&n, invalidate) {
                // The pass that just ended was the job's last: this I/O is not done.
                break End::Done;
            }
            let d = n.ddir;
            if budget_dirs[d] {
                issued += n.len;
            }
            if d == 1 {
                // No periodic syncs here (plain_sync requires none): nothing to count.
                self.fill_write(0, n.offset, n.len);
            }
            if !self.ensure_open(n.file) {
                continue;
            }
            if FILE_OP && !self.file_op_at(n.file, d) {
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
                sync_flags: 0,
            };
            if timed {
                now = self.clock.now();
            }
            if REPLAY {
                self.replay_stamp(now);
            }
            let r = self.engine.queue(&req);
            let t = self.clock.now();
            self.stats.engine_ns += t.saturating_sub(now);
            if r == Queued::Finished {
                // The engine is done (a net peer closed the connection): the job ends.
                self.stop = true;
                break End::Stop;
            }
            if r == Queued::LoopDone {
                break End::Done;
            }
            unmarked += 1;
            self.stats.dirs[d].total_ios += 1;
            self.issued_total += 1;
            match r {
                Queued::Completed(res) if d < 2 && res as u64 == n.len => {
                    self.completed_total += 1;
                    if !self.accounting {
                        self.ramp_moved(d, n.len);
                    } else {
                        self.bytes[d] += n.len;
                        self.ios[d] += 1;
                        self.stats.dirs[d].io_bytes += n.len;
                        // A file operation's clat is its operation's, counted there.
                        if clat_on && !FILE_OP {
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
                    // The general completion may do periodic work (it reads the counts).
                    self.mark_plain(std::mem::take(&mut unmarked));
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
                    self.complete::<false>(slot, res, t);
                }
            }
            now = t;
        };
        self.mark_plain(unmarked);
        self.stats.plain_ios += self.issued_since(first);
        self.last_issued = issued;
        end
    }

    /// Files closed or a pass ended before this I/O, or its file started over (its cache
    /// dropped again with `invalidate`). Whether the pass that ended was the job's last.
    #[cold]
    fn plain_events(&mut self, n: &NextIo, invalidate: bool) -> bool {
        if n.closed {
            self.close_done_files();
            if self.passes_over {
                return true;
            }
        }
        if n.wrapped && invalidate {
            let t0 = self.clock.now();
            self.files.invalidate(n.file, &self.plan.files[n.file]);
            self.target_since(t0);
        }
        false
    }

    /// Replay on the plain loop: the trace's next read, write or trim. The common entry (one
    /// without a delay) is an index into the parsed batch; file actions, waits, delays and
    /// the next batch go through [`Self::replay_next`], with the counts brought up to date
    /// first (its waits do periodic work). The plan keeps traces with syncs off this loop.
    #[inline]
    fn next_replayed(&mut self, unmarked: &mut u64) -> Option<NextIo> {
        let e = match self.replay.as_mut()?.next_plain_io() {
            Some(e) => e,
            None => {
                self.mark_plain(std::mem::take(unmarked));
                self.replay_next()?
            }
        };
        let Some(ddir) = e.act.ddir() else {
            // The trace changed since the plan read it (it had no syncs then).
            self.ctx.notes.err(&format!(
                "fio: {}: iolog: a sync entry the plan did not see (the trace changed while \
                 the job ran)",
                self.plan.name
            ));
            self.fail(libc::EINVAL, "iolog read");
            return None;
        };
        Some(NextIo {
            file: e.file as usize,
            ddir,
            offset: e.offset,
            len: e.len,
            wrapped: false,
            closed: false,
        })
    }

    /// `n` requests submitted and completed one at a time at depth 1 (an engine with a
    /// commit step keeps its submit/complete distributions, as in the general loop).
    #[inline]
    fn mark_plain(&mut self, n: u64) {
        if n > 0 {
            if !self.caps.has_commit {
                self.stats.mark_submit_n(1, n);
                self.stats.mark_complete_n(1, n);
            }
            self.stats.mark_depth(1, n);
        }
    }
}
