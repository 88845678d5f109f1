//! The per-I/O features a job uses, computed once from its resolved plan ([`Features::of`],
//! kept in `ThreadPlan::features`). They alone decide which job loop runs:
//!
//! * the **plain loop** (`worker/io_loop/plain.rs`: draw, one system call, count) when the
//!   job uses none of them, or none but [`Feature::Replay`] (the plain loop takes a trace's
//!   requests in place of the generator's) or [`Feature::FileOps`] (the plain loop does the
//!   file's timed operation at its first request);
//! * the general loop's **lean copy** when it uses none of the [`Feature::gated`] ones (each
//!   check of such a feature in the general loop is written `!LEAN && ...`, so the lean
//!   copy is compiled without it);
//! * the general loop's **full copy** otherwise.
//!
//! A feature the plan does not name here but a loop would need is a wrong result, not a
//! slow one: `tests/features.rs` goes over every option of the catalog and requires each
//! option that changes what happens per I/O to turn on its feature here.

use super::ThreadPlan;

/// One thing a job does per I/O that not every job loop does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Feature {
    // ---- gated: the general loop's lean copy leaves these out ----
    /// `--debug=io`: a line per request.
    DebugIo,
    /// An engine whose requests are file operations (`Caps::file_op`).
    FileOps,
    /// An engine with untimed work before each request (`Caps::untimed`).
    Untimed,
    /// `read_iolog`: requests come from a trace.
    Replay,
    /// `write_iolog` / `iolog` capture: each request is written to a trace.
    Capture,
    /// `fsync`, `fdatasync`, `sync_file_range`: syncs every N writes, or a replayed
    /// trace's sync entries.
    Syncs,
    /// `rate`, `rate_iops`, `rate_process`: requests are paced.
    Rate,
    /// `thinktime`, `thinkcycles`: pauses or busy loops between requests.
    ThinkTime,
    /// `zonemode=zbd`: requests go to zones' write pointers.
    Zones,
    /// `verify`: writes carry headers, reads are checked.
    Verify,
    /// `latency_target`: the depth follows the latency.
    LatencyTarget,
    /// `max_latency`: a request over it fails the job.
    LatencyMax,
    /// `flow`: requests are shared out between the jobs of a flow.
    Flow,
    /// `lockfile`: each request takes a file lock.
    Lockfile,
    /// `trim_mode=punch`: trims punch holes.
    TrimPunch,
    /// `serialize_overlap`: overlapping requests wait for each other.
    SerializeOverlap,
    /// `iodepth_low`: the queue drains to a low-water mark.
    LowWater,
    /// `io_submit_mode=offload`: requests are issued by other threads.
    Offload,
    /// `block_error_percentiles`: each block's trim/write history.
    BlockStates,
    // ---- not gated: the general loop handles them, the plain loop does not ----
    /// Per-I/O logs (`write_lat_log`, `write_bw_log`, `write_iops_log`, ...).
    Logs,
    /// Per-request priorities (`cmdprio_percentage`, `cmdprio_bssplit`, ...).
    Priorities,
    /// `number_ios`: the job stops after N requests.
    NumberIos,
    /// Requests are queued: a depth above 1, or an engine that is not synchronous at
    /// depth 1 (a commit step, requests of several kinds, no I/O at all).
    Queue,
}

impl Feature {
    /// Every feature, in bit order.
    pub const ALL: [Feature; 23] = [
        Feature::DebugIo,
        Feature::FileOps,
        Feature::Untimed,
        Feature::Replay,
        Feature::Capture,
        Feature::Syncs,
        Feature::Rate,
        Feature::ThinkTime,
        Feature::Zones,
        Feature::Verify,
        Feature::LatencyTarget,
        Feature::LatencyMax,
        Feature::Flow,
        Feature::Lockfile,
        Feature::TrimPunch,
        Feature::SerializeOverlap,
        Feature::LowWater,
        Feature::Offload,
        Feature::BlockStates,
        Feature::Logs,
        Feature::Priorities,
        Feature::NumberIos,
        Feature::Queue,
    ];

    /// Whether the general loop's lean copy leaves this feature's checks out.
    pub const fn gated(self) -> bool {
        (self as u8) < Feature::Logs as u8
    }

    const fn bit(self) -> u32 {
        1 << self as u8
    }
}

/// A set of [`Feature`]s.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Features(u32);

/// Which job loop a job runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Loop {
    Plain,
    Lean,
    Full,
}

impl Features {
    /// What the plan `p` uses. `p` is complete (zones applied); `--debug` is set up.
    pub fn of(p: &ThreadPlan) -> Features {
        let c = &p.engine.caps;
        let on = [
            (Feature::DebugIo, crate::debug::on(crate::debug::Cat::Io)),
            (Feature::FileOps, c.file_op),
            (Feature::Untimed, c.untimed),
            (Feature::Replay, p.replay.is_some()),
            (Feature::Capture, p.capture.is_some()),
            (
                Feature::Syncs,
                p.io.fsync_every != 0
                    || p.io.fdatasync_every != 0
                    || p.sysio.sync_range.is_some()
                    || p.replay.as_ref().is_some_and(|r| r.syncs),
            ),
            (Feature::Rate, p.pace.schedule.is_some()),
            (
                Feature::ThinkTime,
                p.pace.think.is_some() || p.pace.thinkcycles != 0,
            ),
            (Feature::Zones, p.zbd.is_some()),
            (Feature::Verify, p.verify.is_some()),
            (Feature::LatencyTarget, p.latency.target.is_some()),
            (Feature::LatencyMax, p.latency.max_ns != [0; 3]),
            (Feature::Flow, p.control.flow.is_some()),
            (Feature::Lockfile, p.control.lockfile.is_some()),
            (Feature::TrimPunch, p.sysio.trim_punch),
            (Feature::SerializeOverlap, p.control.serialize_overlap),
            (Feature::LowWater, p.io.low.is_some()),
            (Feature::Offload, p.io.offload.is_some()),
            (Feature::BlockStates, p.io.block_errors.is_some()),
            (Feature::Logs, p.meter.logs.is_some()),
            (Feature::Priorities, p.prio.track),
            (Feature::NumberIos, p.io.number_ios != 0),
            (
                Feature::Queue,
                p.io.depth != 1
                    || !c.syncio
                    || (c.has_commit && !c.queue_completes)
                    || c.noio
                    || !c.op_kinds.is_empty(),
            ),
        ];
        let mut f = Features::default();
        for (feature, used) in on {
            if used {
                f.0 |= feature.bit();
            }
        }
        f
    }

    pub fn contains(self, f: Feature) -> bool {
        self.0 & f.bit() != 0
    }

    pub fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// The features in the set.
    pub fn iter(self) -> impl Iterator<Item = Feature> {
        Feature::ALL.into_iter().filter(move |f| self.contains(*f))
    }

    /// Whether none of the gated features is in the set: the general loop's lean copy
    /// does all the job asks.
    pub fn lean(self) -> bool {
        !self.iter().any(Feature::gated)
    }

    /// The loop that does all the job asks with the least work per I/O.
    pub fn job_loop(self) -> Loop {
        if self.is_empty() || self.0 == Feature::Replay.bit() || self.0 == Feature::FileOps.bit() {
            Loop::Plain
        } else if self.lean() {
            Loop::Lean
        } else {
            Loop::Full
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn all_lists_every_feature_once_in_bit_order() {
        for (i, f) in Feature::ALL.iter().enumerate() {
            assert_eq!(*f as usize, i, "{f:?}");
        }
        assert_eq!(Feature::ALL.iter().filter(|f| f.gated()).count(), 19);
    }

    #[test]
    fn the_loop_follows_the_set() {
        let mut f = Features::default();
        assert_eq!(f.job_loop(), Loop::Plain);
        f.0 |= Feature::Replay.bit();
        assert_eq!(f.job_loop(), Loop::Plain);
        f.0 |= Feature::Syncs.bit();
        assert_eq!(f.job_loop(), Loop::Full);
        f.0 = Feature::FileOps.bit();
        assert_eq!(f.job_loop(), Loop::Plain);
        f.0 |= Feature::Replay.bit();
        assert_eq!(f.job_loop(), Loop::Full);
        f.0 = Feature::Logs.bit();
        assert_eq!(f.job_loop(), Loop::Lean);
        f.0 |= Feature::Verify.bit();
        assert_eq!(f.job_loop(), Loop::Full);
        assert_eq!(
            f.iter().collect::<Vec<_>>(),
            [Feature::Verify, Feature::Logs]
        );
    }
}
