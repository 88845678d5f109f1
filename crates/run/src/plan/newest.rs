//! The options fio added from 3.34 to 3.42: their checks (with fio's messages where fio
//! has one) and the parts of the plan that depend on the compatibility level.

use super::{err, PlanError};
use flexio_engine::Caps;
use flexio_job::newest::{DataPlacement, PlidSelect};
use flexio_job::options::RandGenOpt;
use flexio_job::{Compat, JobDef, JobSet};
use flexio_workload::dist::Dist;
use flexio_workload::sprandom::{physical_bytes, SprSpec};

/// ramp_size with group_reporting: fio adds the bytes of all the group's members and ends
/// their ramp together, so the members of each reporting group share one counter.
pub(super) fn share_ramp_counters(plans: &mut [super::ThreadPlan]) {
    use crate::progress::AtomicU64;
    use std::sync::Arc;
    let mut groups: Vec<(u32, Arc<AtomicU64>)> = Vec::new();
    for t in plans.iter_mut() {
        if t.io.ramp_bytes == 0 || !t.control.group_reporting {
            continue;
        }
        let c = match groups.iter().find(|(g, _)| *g == t.groupid) {
            Some((_, c)) => c.clone(),
            None => {
                let c = Arc::new(AtomicU64::new(0));
                groups.push((t.groupid, c.clone()));
                c
            }
        };
        t.io.ramp_group = Some(c);
    }
}

/// The newest fio ends its ramp on a helper-thread tick, once a second (§6.5).
pub const RAMP_TICK_NS: u64 = 1_000_000_000;

/// `atomic` in fio 3.33: files opened with O_ATOMIC (fio's value, which Linux ignores) and
/// O_DIRECT, which it implies.
pub fn atomic_open_flags(
    o: &flexio_job::JobOptions,
    compat: Compat,
) -> flexio_engine::os::fs::OFlags {
    use flexio_engine::os::fs::OFlags;
    const O_ATOMIC: u32 = 0o40000000;
    if o.extra.atomic && compat.is_fio333() {
        OFlags::DIRECT | OFlags::from_bits_retain(O_ATOMIC)
    } else {
        OFlags::empty()
    }
}

/// `atomic` in newer fio (3.38+): the job's writes carry RWF_ATOMIC; for a job that does not
/// write it is cleared, and it no longer implies O_DIRECT.
pub fn atomic_writes(o: &flexio_job::JobOptions, compat: Compat) -> bool {
    o.extra.atomic && !compat.is_fio333() && o.rw.writes()
}

/// Job-level checks of the new options (before any thread is planned).
pub(super) fn validate(set: &JobSet, ji: usize, caps: &Caps) -> Result<(), PlanError> {
    let def = &set.jobs[ji];
    let o = &def.opts;
    let n = &o.newest;
    // ---- atomic (fio 3.38+): only engines that can write atomically.
    if atomic_writes(o, set.compat) && !caps.atomic_writes {
        return Err(err(def, "fio: engine does not support atomic writes"));
    }
    // ---- ramp_size
    if let Some(rs) = n.ramp_size {
        if o.ramp_time_us > 0 {
            return Err(err(def, "cannot specify both ramp_time and ramp_size"));
        }
        if o.group_reporting {
            let group: Vec<&JobDef> = set
                .jobs
                .iter()
                .filter(|j| j.groupid == def.groupid && j.opts.group_reporting)
                .collect();
            if group.iter().any(|j| j.opts.newest.ramp_size != Some(rs)) {
                return Err(err(def, "inconsistent ramp_size within reporting group"));
            }
        }
    }
    // ---- steady state (fio 3.35+): one check interval for all, ss_dur a multiple of it.
    if !set.compat.is_fio333() {
        if let Some(j) = set.jobs[..ji]
            .iter()
            .find(|j| j.opts.ss_interval_us != o.ss_interval_us)
        {
            return Err(err(
                def,
                format!(
                    "conflicting ss_check_interval: {} and {}, must be globally equal",
                    j.opts.ss_interval_us, o.ss_interval_us
                ),
            ));
        }
        // Both in whole seconds, as fio compares them.
        let (dur, iv) = (
            o.ss_dur_us / 1_000_000 * 1_000_000,
            o.ss_interval_us / 1_000_000 * 1_000_000,
        );
        if o.ss_dur_us > 0 && (iv == 0 || dur % iv != 0 || dur <= iv) {
            return Err(err(
                def,
                format!(
                    "ss_duration {}us must be multiple of ss_check_interval {}us",
                    o.ss_dur_us, o.ss_interval_us
                ),
            ));
        }
    }
    // ---- flexio's steady-state additions need steady state.
    if o.ss_dur_us == 0 {
        for (given, name) in [
            (o.ss_ramp_auto, "ss_ramp=auto"),
            (o.ss_departure.is_some(), "ss_departure"),
            (o.ss_departure_window_us > 0, "ss_departure_window"),
            (
                o.ss_direction != flexio_job::options::SsDirection::All,
                "ss_direction",
            ),
        ] {
            if given {
                return Err(err(
                    def,
                    format!("{name} works on steady state: give ss_dur (the window) as well"),
                ));
            }
        }
    }
    // ---- num_range: only engines with multi-range trims (io_uring_cmd) take more than one.
    if n.num_range > 1 {
        if o.rw == flexio_job::options::RwKind::TrimWrite {
            return Err(err(def, "trimwrite cannot be used with multiple ranges."));
        }
        return Err(err(
            def,
            format!("can't use multiple ranges with IO engine {}", o.ioengine),
        ));
    }
    // ---- data placement
    if n.fdp
        && matches!(
            n.dataplacement,
            Some(DataPlacement::Streams | DataPlacement::None)
        )
    {
        return Err(err(
            def,
            "fdp=1 is not compatible with dataplacement={streams, none}",
        ));
    }
    let placement = n.placement();
    if placement == DataPlacement::Streams && n.plids.is_none() {
        return Err(err(
            def,
            "stream IDs must be provided for dataplacement=streams",
        ));
    }
    if let Some(s) = &n.dp_scheme {
        let ok = std::fs::metadata(s).map(|m| m.is_file()).unwrap_or(false);
        if !ok {
            return Err(err(
                def,
                format!("dp_scheme '{s}' does not exist or is not a regular file"),
            ));
        }
    }
    if n.plid_select == PlidSelect::Scheme
        && n.dp_scheme.is_none()
        && placement != DataPlacement::None
    {
        return Err(err(def, "plid_select=scheme needs dp_scheme"));
    }
    // ---- zoned block devices (zonemode=zbd itself is rejected at parse time)
    if n.recover_zbd_write_error && o.continue_on_error == 0 {
        return Err(err(
            def,
            "recover_zbd_write_error works only when continue_on_error is set",
        ));
    }
    if n.write_zone_remainder && n.norandommap_set && !o.norandommap {
        return Err(err(def, "write_zone_remainder=1 requires norandommap=1"));
    }
    // ---- end_syncfs: engines that have files to sync.
    if n.end_syncfs && (caps.diskless || caps.no_fd) {
        return Err(err(
            def,
            format!("{}: I/O engine does not support syncfs", o.name),
        ));
    }
    // ---- sprandom
    if n.sprandom {
        if !(o.rw.writes() && o.rw.is_random() && !o.rw.reads()) {
            return Err(err(
                def,
                "sprandom requires random write, random_generator=lfsr, norandommap=1",
            ));
        }
        if n.random_generator_set && o.random_generator != RandGenOpt::Lfsr {
            return Err(err(def, "sprandom requires random_generator=lfsr"));
        }
        if n.norandommap_set && !o.norandommap {
            return Err(err(def, "sprandom requires norandommap=1"));
        }
        let nfiles = match &o.filename {
            Some(f) => f.split(':').filter(|s| !s.is_empty()).count().max(1) as u32,
            None => o.nrfiles,
        };
        if nfiles != 1 {
            return Err(err(def, "SPRandom supports only one file"));
        }
    }
    Ok(())
}

/// The newest fio's informational lines about a job's options: sprandom forcing the
/// generator and the random map when they were not given.
pub fn info_notes(o: &flexio_job::JobOptions) -> Vec<&'static str> {
    let n = &o.newest;
    let mut v = Vec::new();
    if n.sprandom {
        if !n.random_generator_set {
            v.push("fio: sprandom sets random_generator=lfsr");
        }
        if !n.norandommap_set {
            v.push("fio: sprandom sets norandommap=1");
        }
    }
    v
}

/// sprandom's resolved parameters and the physical capacity in bytes (the job's new
/// io_size): logical size L = min(file region, io_size), P = L + ceil(L * spr_op) rounded
/// down to the write block size.
pub(super) fn sprandom(
    def: &JobDef,
    files: &[super::FilePlan],
    io_size: u64,
    thread_number: u32,
) -> Result<Option<(SprSpec, u64)>, PlanError> {
    let o = &def.opts;
    let n = &o.newest;
    if !n.sprandom {
        return Ok(None);
    }
    let Some(f) = files.first() else {
        return Ok(None);
    };
    let bs = o.min_bs_dir(1).max(1);
    let logical = f.region.len.min(io_size);
    let phys = physical_bytes(logical, n.spr_op, bs);
    let regions = n.spr_num_regions.max(1) as u64;
    if regions > phys / bs {
        return Err(err(
            def,
            format!(
                "sprandom: spr_num_regions={regions} exceeds the {} blocks of the physical capacity",
                phys / bs
            ),
        ));
    }
    let region_sz = phys / regions;
    if n.spr_cs > region_sz {
        return Err(err(
            def,
            format!(
                "sprandom: spr_cs [{}] must be smaller than region_sz [{region_sz}] which means [{}] regions allowed",
                n.spr_cs,
                phys / n.spr_cs.max(1)
            ),
        ));
    }
    Ok(Some((
        SprSpec {
            phys_blocks: phys / bs,
            regions: n.spr_num_regions.max(1),
            op: n.spr_op,
            defer: n.spr_cs > 0,
            seed: sprandom_seed(o.randseed.unwrap_or(0x89), thread_number),
        },
        phys,
    )))
}

/// The newest fio's seed slot 22 (sprandom), stirred like the 21 older slots.
fn sprandom_seed(rand_seed: u64, thread_number: u32) -> u64 {
    let mut seed = rand_seed;
    for _ in 0..4 {
        seed = seed.wrapping_mul(0x9e370001);
    }
    for _ in 0..22 {
        seed = seed.wrapping_mul(0x9e370001);
    }
    seed.wrapping_mul(thread_number as u64).wrapping_add(22)
}

/// Checks that need the thread's files: a `sequence` distribution whose base pattern does
/// not fit a file (fio: a run-time job error, EINVAL).
pub(super) fn validate_files(def: &JobDef, files: &[super::FilePlan]) -> Result<(), PlanError> {
    let o = &def.opts;
    let placement = o.newest.placement();
    if placement != DataPlacement::None {
        // Parsed like fio; acting on it needs an NVMe device driven by io_uring_cmd or
        // xnvme (placement directives on its writes).
        let target = files
            .first()
            .map(|f| f.path.display().to_string())
            .unwrap_or_default();
        return Err(err(
            def,
            format!(
                "dataplacement={} needs an NVMe device with {} driven through ioengine=io_uring_cmd or xnvme: '{target}' is not one, and flexio has neither engine",
                placement.name(),
                if placement == DataPlacement::Fdp {
                    "Flexible Data Placement (FDP)"
                } else {
                    "Streams"
                },
            ),
        ));
    }
    for d in 0..3 {
        let Dist::Sequence(seq) = &o.random_distribution[d] else {
            continue;
        };
        if !o.rw.is_random() {
            continue;
        }
        let bs = o.min_bs_dir(d).max(1);
        let Some(&max) = seq.iter().max() else {
            continue;
        };
        for f in files {
            let blocks = f.region.len / bs;
            if max >= blocks {
                return Err(err(
                    def,
                    format!(
                        "sequence access block {max} in base pattern out of bounds (max {}) for file {}",
                        blocks.saturating_sub(1),
                        f.path.display()
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// When the ramp ends: fio 3.33 checks `ramp_time` on every I/O; the newest fio decides on a
/// helper tick once a second, so a ramp lasts until the first whole second after its end.
pub fn ramp_ns(ramp_ns: u64, compat: Compat) -> u64 {
    if ramp_ns == 0 || compat.is_fio333() {
        return ramp_ns;
    }
    ramp_ns.div_ceil(RAMP_TICK_NS).saturating_mul(RAMP_TICK_NS)
}

/// Think time: the newest fio stalls after `thinktime_iotime` of I/O and clips its pauses to
/// the remaining runtime; fio 3.33 stalls after `thinktime_iotime + thinktime` since the
/// last pause and thinks out every pause.
pub fn think_compat(t: &mut super::ThinkPlan, compat: Compat) {
    if compat.is_fio333() {
        if t.iotime_us > 0 {
            t.iotime_us += t.think_us;
        }
        t.clip_to_runtime = false;
    } else {
        t.clip_to_runtime = true;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ramp_ends_on_whole_seconds_in_the_newest_fio() {
        assert_eq!(ramp_ns(1_500_000_000, Compat::Latest), 2_000_000_000);
        assert_eq!(ramp_ns(2_000_000_000, Compat::Latest), 2_000_000_000);
        assert_eq!(ramp_ns(1, Compat::Latest), 1_000_000_000);
        assert_eq!(ramp_ns(1_500_000_000, Compat::Fio333), 1_500_000_000);
        assert_eq!(ramp_ns(0, Compat::Latest), 0);
    }
}
