//! Stage three of the configuration: turn job definitions into one plan per job thread
//! (numjobs clones), with resolved files, sizes, regions and the workload spec.
//!
//! This is where fio's size rules live (`filesetup.c`): total size from `size`, from
//! `filesize`, or from the existing files; per-file share; `offset`/`offset_increment`
//! regions; `io_size` as the per-loop budget.

use flexio_engine::Caps;
use flexio_job::options::{FileService, JobOptions, RandGenOpt, RwKind, Sequencer, ZoneMode};
use flexio_job::value::{split_colon_escaped, SizeVal};
use flexio_job::{JobDef, JobSet, Origin};
use flexio_workload::gen::{RandGen, Strided};
use flexio_workload::{BsPolicy, FileSelect, Region, Spec};
use std::path::{Path, PathBuf};

/// A file a thread uses.
#[derive(Clone, Debug)]
pub struct FilePlan {
    pub path: PathBuf,
    /// Size the file must have for this thread (region end).
    pub need: u64,
    pub region: Region,
    /// Set when the target is a block device (never laid out, never truncated).
    pub block: Option<crate::blockdev::BlockInfo>,
}

/// Everything one job thread needs to run.
#[derive(Clone, Debug)]
pub struct ThreadPlan {
    pub name: String,
    pub groupid: u32,
    /// 1-based thread number over the whole run.
    pub thread_number: u32,
    /// Stonewall segment: threads of one segment run together.
    pub segment: usize,
    pub opts: JobOptions,
    pub echo: Vec<(String, String)>,
    pub caps: Caps,
    pub files: Vec<FilePlan>,
    /// Bytes to transfer per loop (u64::MAX when time based).
    pub io_budget: u64,
    /// Effective queue depth.
    pub depth: u32,
    pub spec: Spec,
    /// Print fio's "queue depth will be capped at 1" note.
    pub depth_note: bool,
}

/// A plan error: what is wrong and, where known, which job definition.
#[derive(Debug)]
pub struct PlanError {
    pub job: String,
    pub origin: Origin,
    pub msg: String,
}

impl std::fmt::Display for PlanError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: job '{}': {}", self.origin, self.job, self.msg)
    }
}

fn err(def: &JobDef, msg: impl Into<String>) -> PlanError {
    PlanError {
        job: def.opts.name.clone(),
        origin: def.origin.clone(),
        msg: msg.into(),
    }
}

/// Expand `filename_format` for one file.
pub fn format_name(fmt: &str, jobname: &str, jobnum: u32, filenum: u32) -> String {
    fmt.replace("$jobname", jobname)
        .replace("$jobnum", &jobnum.to_string())
        .replace("$filenum", &filenum.to_string())
        .replace("$clientuid", "0")
}

/// Current size of a regular file (None if missing).
fn existing_size(p: &Path) -> Option<u64> {
    std::fs::metadata(p)
        .ok()
        .filter(|m| m.is_file())
        .map(|m| m.len())
}

fn bs_policy(o: &JobOptions, d: usize) -> BsPolicy {
    if let Some(split) = &o.bssplit {
        if !split[d].is_empty() {
            // fio sorts the entries by percentage (stable for equal ones) before drawing.
            let mut v: Vec<(u64, u32)> = split[d].iter().map(|e| (e.bs, e.perc)).collect();
            v.sort_by_key(|e| e.1);
            return BsPolicy::Split(v);
        }
    }
    if let Some(r) = &o.bsrange {
        if r[d].0 != r[d].1 {
            return BsPolicy::Range {
                min: r[d].0,
                max: r[d].1,
                unaligned: o.bs_unaligned,
            };
        }
        return BsPolicy::Fixed(r[d].0);
    }
    BsPolicy::Fixed(o.bs[d])
}

/// Whether blockalign differs from the smallest block size in some direction (fio then
/// turns the random map off).
pub fn blockalign_differs(o: &JobOptions) -> bool {
    o.blockalign
        .is_some_and(|b| (0..3).any(|d| b[d] != 0 && b[d] != o.min_bs_dir(d)))
}

/// Directions a job performs.
pub fn job_dirs(rw: RwKind) -> [bool; 3] {
    [rw.reads(), rw.writes(), rw.trims()]
}

/// Build the per-thread plans. `readonly` refuses every writing job.
pub fn plan(set: &JobSet, readonly: bool) -> Result<Vec<ThreadPlan>, PlanError> {
    plan_with(set, readonly, true)
}

/// [`plan`], optionally without asking the kernel whether the engines work (the fuzzer
/// plans thousands of job sets a second).
pub fn plan_with(
    set: &JobSet,
    readonly: bool,
    probe_engines: bool,
) -> Result<Vec<ThreadPlan>, PlanError> {
    let mut out = Vec::new();
    let mut thread_number = 0u32;
    let mut segment = 0usize;
    for (ji, def) in set.jobs.iter().enumerate() {
        let o = &def.opts;
        if ji > 0 && o.stonewall {
            segment += 1;
        }
        let caps = flexio_engine::caps_of(&o.ioengine, o.iodepth)
            .ok_or_else(|| err(def, format!("unknown ioengine '{}'", o.ioengine)))?;
        validate(def, &caps, readonly)?;
        if o.group_reporting && o.ss_dur_us > 0 {
            // fio: a reporting group is judged as one, so its members must agree.
            let other = set.jobs[..ji].iter().find(|j| {
                j.groupid == def.groupid
                    && j.opts.group_reporting
                    && (j.opts.ss != o.ss
                        || j.opts.ss_dur_us != o.ss_dur_us
                        || j.opts.ss_ramp_us != o.ss_ramp_us
                        || j.opts.ss_interval_us != o.ss_interval_us)
            });
            if let Some(j) = other {
                return Err(err(
                    def,
                    format!(
                        "job rejected: steadystate options must be consistent within reporting groups (job '{}' differs)",
                        j.opts.name
                    ),
                ));
            }
        }
        let probe_cfg = flexio_engine::EngineConfig {
            iodepth: o.iodepth,
            hipri: o.hipri,
            sqthread_poll: o.sqthread_poll,
            sqthread_poll_cpu: o.sqthread_poll_cpu,
            ..Default::default()
        };
        if probe_engines {
            flexio_engine::probe(&o.ioengine, &probe_cfg).map_err(|m| err(def, m))?;
        }
        for sub in 0..o.numjobs {
            thread_number += 1;
            let t = plan_thread(def, sub, thread_number, segment, caps)?;
            out.push(t);
        }
    }
    Ok(out)
}

fn validate(def: &JobDef, caps: &Caps, readonly: bool) -> Result<(), PlanError> {
    let o = &def.opts;
    let rw = o.rw;
    if rw.trims() && !caps.trim {
        return Err(err(
            def,
            format!(
                "rw={} needs trim support, which ioengine {} does not have in flexio",
                rw.as_str(),
                o.ioengine
            ),
        ));
    }
    if readonly
        && ((rw.writes() && !o.verify_only)
            || rw.trims()
            || o.ioengine == "filecreate"
            || o.ioengine == "filedelete")
    {
        return Err(err(def, "the job writes, but --readonly is set"));
    }
    if o.verify_state_load && !(o.verify_only && o.verify != 0) {
        // The saved state says which writes completed; flexio uses it to limit a
        // verify_only replay, nowhere else.
        return Err(err(
            def,
            "verify_state_load=1 applies to verify_only jobs with verify= set in flexio",
        ));
    }
    if o.ioengine == "ftruncate" && rw.reads() {
        return Err(err(
            def,
            "ioengine ftruncate only does writes (use rw=write or rw=randwrite)",
        ));
    }
    if o.filename.as_deref() == Some("-") {
        return Err(err(
            def,
            "filename=- (stdin/stdout) is not supported by flexio",
        ));
    }
    if o.fill_device {
        return Err(err(def, "fill_device is not supported by flexio yet"));
    }
    if o.time_based && o.runtime_us == 0 {
        // fio warns and ignores time_based; flexio does the same, loudly.
    }
    if let Some(cpus) = &o.cpus_allowed {
        let allowed = rustix::thread::sched_getaffinity(None).ok();
        if let Some(set) = allowed {
            let usable: Vec<usize> = (0..rustix::thread::CpuSet::MAX_CPU)
                .filter(|c| set.is_set(*c))
                .collect();
            if let Some(bad) = cpus.iter().find(|c| !usable.contains(c)) {
                return Err(err(
                    def,
                    format!("cannot set CPU affinity: CPU {bad} is not available to flexio (usable CPUs: {usable:?})"),
                ));
            }
        }
    }
    if o.min_bs() == 0 {
        return Err(err(def, "block size must be at least 1"));
    }
    for d in 0..3 {
        let name = ["read", "write", "trim"][d];
        if o.rate[d] > 0 && o.rate_min[d] > o.rate[d] {
            return Err(err(def, format!("minimum rate exceeds rate ({name})")));
        }
        if o.rate_iops[d] > 0 && o.rate_iops_min[d] > o.rate_iops[d] {
            return Err(err(
                def,
                format!("minimum IOPS rate exceeds rate_iops ({name})"),
            ));
        }
        if o.rate[d] > 0 && o.rate_iops[d] > 0 {
            return Err(err(
                def,
                format!("rate and rate_iops are mutually exclusive ({name})"),
            ));
        }
    }

    if o.direct && o.iomem_align != 0 && o.iomem_align < 512 {
        return Err(err(def, "iomem_align below 512 cannot work with direct=1"));
    }
    Ok(())
}

fn plan_thread(
    def: &JobDef,
    sub: u32,
    thread_number: u32,
    segment: usize,
    caps: Caps,
) -> Result<ThreadPlan, PlanError> {
    let o = &def.opts;
    let name = o.name.clone();
    // ---- file names
    let dirs: Vec<String> = o
        .directory
        .as_deref()
        .map(split_colon_escaped)
        .unwrap_or_default();
    if let Some(d) = dirs.iter().find(|d| !Path::new(d).is_dir()) {
        return Err(err(def, format!("directory '{d}' is not a directory")));
    }
    let in_dir = |n: &str, filenum: u32| -> PathBuf {
        let p = PathBuf::from(n);
        if p.is_absolute() || dirs.is_empty() {
            p
        } else {
            let d = &dirs[(sub as usize + filenum as usize) % dirs.len()];
            Path::new(d).join(p)
        }
    };
    let names: Vec<PathBuf> = match &o.filename {
        Some(list) => {
            let v = split_colon_escaped(list);
            if v.is_empty() {
                return Err(err(def, "filename is empty"));
            }
            v.iter()
                .enumerate()
                .map(|(i, n)| in_dir(n, i as u32))
                .collect()
        }
        None => (0..o.nrfiles)
            .map(|i| in_dir(&format_name(&o.filename_format, &name, sub, i), i))
            .collect(),
    };
    let mut blocks: Vec<Option<crate::blockdev::BlockInfo>> = Vec::new();
    for n in &names {
        let b = crate::blockdev::probe(n).map_err(|e| {
            err(
                def,
                format!("cannot open block device '{}': {e}", n.display()),
            )
        })?;
        if b.is_none() {
            if let Ok(m) = std::fs::metadata(n) {
                if !m.is_file() {
                    let what = if m.is_dir() {
                        "a directory"
                    } else {
                        "a character device or special file"
                    };
                    return Err(err(
                        def,
                        format!(
                            "'{}' is {what}; flexio runs on regular files and block devices",
                            n.display()
                        ),
                    ));
                }
            }
        }
        blocks.push(b);
    }
    let nfiles = names.len() as u64;
    let min_bs = o.min_bs();
    // ---- sizes
    let existing: Vec<Option<u64>> = names
        .iter()
        .zip(&blocks)
        .map(|(p, b)| b.as_ref().map(|b| b.size).or_else(|| existing_size(p)))
        .collect();
    let per_file: Vec<u64> = match (o.size, o.filesize) {
        (_, Some((lo, hi))) => {
            // Deterministic per file: spread over the range by file number.
            (0..nfiles)
                .map(|i| {
                    if hi > lo {
                        lo + ((hi - lo) / nfiles.max(1)) * i / min_bs * min_bs
                    } else {
                        lo
                    }
                })
                .collect()
        }
        (Some(SizeVal::Bytes(total)), None) => vec![total / nfiles; nfiles as usize],
        (Some(SizeVal::Percent(p)), None) => {
            let mut v = Vec::new();
            for (n, e) in names.iter().zip(&existing) {
                match e {
                    Some(s) => v.push(SizeVal::Percent(p).resolve(*s)),
                    None => {
                        return Err(err(
                            def,
                            format!(
                                "size={p}% needs an existing file, and '{}' does not exist",
                                n.display()
                            ),
                        ))
                    }
                }
            }
            v
        }
        (None, None) => {
            if caps.file_op && o.ioengine == "filecreate" {
                vec![o.bs[0]; nfiles as usize]
            } else {
                let mut v = Vec::new();
                for (n, e) in names.iter().zip(&existing) {
                    match e {
                        Some(s) if *s > 0 => v.push(*s),
                        _ => {
                            return Err(err(
                                def,
                                format!(
                                    "you need to specify size= ('{}' does not exist or is empty)",
                                    n.display()
                                ),
                            ))
                        }
                    }
                }
                v
            }
        }
    };
    let total: u64 = per_file.iter().sum();
    if total < min_bs && !caps.file_op {
        return Err(err(
            def,
            format!("size too small, must not be less than minimum block size: {total} < {min_bs}"),
        ));
    }
    // ---- regions
    let mut files = Vec::new();
    for (i, path) in names.iter().enumerate() {
        let share = per_file[i];
        let full = existing[i].unwrap_or(0).max(share);
        // file_append: I/O starts at the file's current end.
        let mut start = if o.file_append {
            existing[i].unwrap_or(0)
        } else {
            o.offset.resolve(full)
        };
        if let SizeVal::Percent(_) = o.offset {
            let align = if o.offset_align > 0 {
                o.offset_align
            } else {
                min_bs
            };
            start = start / align * align;
        }
        start += o.offset_increment.resolve(full) * sub as u64;
        let len = match o.size {
            Some(SizeVal::Percent(_)) | None
                if existing[i].is_some() && o.filesize.is_none() && !o.file_append =>
            {
                share.min(existing[i].unwrap_or(0).saturating_sub(start))
            }
            _ => share,
        };
        if len == 0 && !caps.file_op {
            return Err(err(
                def,
                format!(
                    "offset {start} leaves nothing to do in '{}'",
                    path.display()
                ),
            ));
        }
        if let Some(b) = &blocks[i] {
            check_block(def, path, b, start, len)?;
        }
        files.push(FilePlan {
            path: path.clone(),
            need: start + len,
            region: Region { start, len },
            block: blocks[i].clone(),
        });
    }
    // ---- budget and depth
    let region_total: u64 = files.iter().map(|f| f.region.len).sum();
    let io_size = o
        .io_size
        .map(|v| v.resolve(region_total))
        .unwrap_or(region_total);
    let time_based = o.time_based && o.runtime_us > 0;
    let io_budget = if time_based { u64::MAX } else { io_size };
    let depth_note = caps.syncio && o.iodepth > 1 && !caps.has_commit;
    let depth = if caps.syncio && !caps.has_commit {
        1
    } else {
        o.iodepth
    };
    let dirs_on = job_dirs(o.rw);
    // fio's ba[ddir]: blockalign, by default each direction's smallest block size.
    let align = [0, 1, 2].map(|d| {
        o.blockalign
            .map(|b| b[d])
            .filter(|b| *b > 0)
            .unwrap_or_else(|| o.min_bs_dir(d))
            .max(1)
    });
    let seeds = job_seeds(o, thread_number);
    let rw_min_bs = (0..3)
        .filter(|d| dirs_on[*d])
        .map(|d| o.min_bs_dir(d))
        .min()
        .unwrap_or(min_bs);
    let strided = (o.zonemode == ZoneMode::Strided || o.zonesize > 0).then(|| {
        let range = if o.zonerange > 0 {
            o.zonerange
        } else {
            o.zonesize
        };
        Strided {
            size: o.zonesize.max(1),
            range: range.max(1),
            skip: o.zoneskip,
        }
    });
    let spec = Spec {
        dirs: dirs_on,
        random: o.rw.is_random(),
        rwmixread: o.rwmixread,
        rw_nr: o.rw_nr,
        identical: o.rw_sequencer == Sequencer::Identical,
        bs: [bs_policy(o, 0), bs_policy(o, 1), bs_policy(o, 2)],
        bs_by_pattern: o.bs_is_seq_rand,
        align,
        // fio: a block alignment other than the block size turns the random map off.
        random_map: !o.norandommap && !blockalign_differs(o),
        files: files.iter().map(|f| f.region).collect(),
        select: match o.file_service {
            FileService::RoundRobin => FileSelect::RoundRobin,
            FileService::Random => FileSelect::Random,
            FileService::Sequential => FileSelect::Sequential,
        },
        select_nr: o.file_service_nr,
        wrap: time_based || io_size > region_total,
        seeds,
        gen: match o.random_generator {
            RandGenOpt::Tausworthe => RandGen::Tausworthe,
            RandGenOpt::Tausworthe64 => RandGen::Tausworthe64,
            RandGenOpt::Lfsr => RandGen::Lfsr,
        },
        dist: o.random_distribution.clone(),
        pct_random: o.percentage_random,
        strided,
        rw_min_bs,
    };
    Ok(ThreadPlan {
        name,
        groupid: def.groupid,
        thread_number,
        segment,
        opts: o.clone(),
        echo: def.echo.clone(),
        caps,
        files,
        io_budget,
        depth,
        spec,
        depth_note,
    })
}

/// Checks for a block-device target: the region fits, O_DIRECT I/O is aligned to the
/// logical block size, and nothing else uses a device the job would write to.
fn check_block(
    def: &JobDef,
    path: &Path,
    b: &crate::blockdev::BlockInfo,
    start: u64,
    len: u64,
) -> Result<(), PlanError> {
    let o = &def.opts;
    if start + len > b.size {
        return Err(err(
            def,
            format!(
                "'{}' has {} bytes; offset {start} + size {len} goes beyond its end",
                path.display(),
                b.size
            ),
        ));
    }
    if o.direct {
        let lbs = b.lbs as u64;
        let mut sizes: Vec<u64> = (0..3)
            .flat_map(|d| [o.min_bs_dir(d), o.max_bs_dir(d)])
            .collect();
        if let Some(split) = &o.bssplit {
            sizes.extend(split.iter().flatten().map(|e| e.bs));
        }
        if let Some(bad) = sizes.into_iter().find(|s| s % lbs != 0) {
            return Err(err(
                def,
                format!("block size {bad} is not a multiple of the logical block size {lbs} of {} (required by direct=1)", b.name),
            ));
        }
        if start % lbs != 0 {
            return Err(err(
                def,
                format!("offset {start} is not a multiple of the logical block size {lbs} of {} (required by direct=1)", b.name),
            ));
        }
        if let Some(ba) = o.blockalign {
            if let Some(bad) = ba.iter().find(|a| *a % lbs != 0) {
                return Err(err(
                    def,
                    format!(
                        "blockalign {bad} is not a multiple of the logical block size {lbs} of {}",
                        b.name
                    ),
                ));
            }
        }
    }
    // verify_only replays a write job without writing.
    let writes = (o.rw.writes() && !o.verify_only) || o.rw.trims();
    if writes && !o.allow_mounted_write {
        if let Some(why) = crate::blockdev::in_use(path) {
            return Err(err(
                def,
                format!("refusing to write to {}: {why}; set allow_mounted_write=1 if you really mean it", path.display()),
            ));
        }
    }
    Ok(())
}

/// fio 3.33's seeds for a thread: deterministic from randseed (default 0x89) unless
/// randrepeat=0 without a randseed (then from the system's entropy).
pub fn job_seeds(o: &JobOptions, thread_number: u32) -> [u64; flexio_workload::rng::slot::COUNT] {
    use flexio_workload::rng::{fio_seeds, slot, FIO_RANDSEED};
    if o.allrandrepeat {
        let mut s = [0u64; slot::COUNT];
        for (i, x) in s.iter_mut().enumerate() {
            *x = FIO_RANDSEED
                .wrapping_mul(thread_number as u64)
                .wrapping_add(i as u64);
        }
        return s;
    }
    if !o.randrepeat && o.randseed.is_none() {
        let mut s = [0u64; slot::COUNT];
        let mut e = entropy();
        for x in &mut s {
            e = e.wrapping_mul(0x9e37_79b9_7f4a_7c15).rotate_left(17) ^ 0xbf58_476d_1ce4_e5b9;
            *x = e;
        }
        return s;
    }
    fio_seeds(o.randseed.unwrap_or(0x89), thread_number, o.randrepeat)
}

fn entropy() -> u64 {
    let t = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(1);
    t ^ (std::process::id() as u64) << 32
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        assert_eq!(
            format_name("$jobname.$jobnum.$filenum", "job1", 0, 0),
            "job1.0.0"
        );
        assert_eq!(format_name("x-$filenum", "j", 2, 7), "x-7");
    }
}
