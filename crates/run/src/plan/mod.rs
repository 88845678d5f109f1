//! Stage three of the configuration: turn job definitions into one resolved plan per job
//! thread (numjobs clones): files, sizes, regions, the workload spec, and every setting the
//! worker, the headers and the report need, typed (`resolved.rs`). Nothing after this stage
//! reads the raw job options.
//!
//! fio's size rules (`filesetup.c`) live in `files.rs`.

pub mod features;
pub mod files;
pub mod meter;
pub mod newest;
pub mod numa;
pub mod replay;
pub mod resolved;
pub mod rtems;
pub mod sysio;
pub mod zones;

pub use files::{device_key, device_keys, format_name, one_per_device, DeviceKey, FilePlan, Seen};
pub use meter::*;
pub use replay::{CapturePlan, ReplayPlan};
pub use resolved::*;

use flexio_engine::{Caps, EngineConfig};
use flexio_job::options::{FileService, JobOptions, RandGenOpt, Sequencer, ZoneMode};
use flexio_job::{Compat, JobDef, JobSet, Origin};
use flexio_stats::report::ReportParams;
use flexio_stats::StatsConfig;
use flexio_workload::gen::{RandGen, Strided};
use flexio_workload::{BsPolicy, FileSelect, Spec};

/// Everything one job thread needs to run, resolved.
#[derive(Clone, Debug)]
pub struct ThreadPlan {
    pub name: String,
    pub description: Option<String>,
    pub groupid: u32,
    /// 1-based thread number over the whole run.
    pub thread_number: u32,
    /// Which fio's behaviour this thread reproduces where fio versions differ.
    pub compat: Compat,
    /// Stonewall segment: threads of one segment run together.
    pub segment: usize,
    /// The job's own options as given (JSON `job options`).
    pub echo: Vec<(String, String)>,
    /// The engine: its name, configuration and capabilities, resolved once (the worker
    /// builds the engine from these and reads its capabilities here).
    pub engine: EnginePlan,
    /// The per-I/O features the job uses: which job loop runs ([`features::Features`]).
    pub features: features::Features,
    pub files: Vec<FilePlan>,
    pub spec: Spec,
    pub io: IoPlan,
    pub buffers: BufferPlan,
    pub open: OpenPlan,
    pub layout: LayoutPlan,
    pub pace: PacePlan,
    pub meter: MeterPlan,
    pub verify: Option<VerifyPlan>,
    pub latency: LatencyPlan,
    pub prio: PrioPlan,
    pub placement: Placement,
    pub errors: ErrorPolicy,
    pub timing: Timing,
    pub stats_cfg: StatsConfig,
    pub report: ReportParams,
    /// Include the job in the final statistics (fio's `stats`).
    pub stats_enabled: bool,
    pub control: Control,
    /// Print fio's "queue depth will be capped at 1" note.
    pub depth_note: bool,
    /// Print fio's "Any use of blockalign= turns off randommap" (on the first thread of its
    /// job definition).
    pub blockalign_note: bool,
    /// fio's lines about a file beyond the 32-bit tausworthe generator (and the switch to
    /// tausworthe64), printed when the job starts.
    pub gen_notes: Vec<String>,
    /// fio's informational lines about the job's options (the newest fio's `fio: sprandom
    /// sets ...`), printed once per job definition.
    pub info_notes: Vec<&'static str>,
    /// The job's header line in the normal output (printed once per job definition).
    pub header: JobHeader,
    /// read_iolog: the trace the job replays instead of generating I/O.
    pub replay: Option<ReplayPlan>,
    /// write_iolog: where the job's I/O is captured.
    pub capture: Option<CapturePlan>,
    /// Buffer memory, lockmem, write_hint, ioscheduler, sync_file_range, softrandommap.
    pub sysio: sysio::SysIoPlan,
    /// zonemode=zbd: the zones of the thread's files.
    pub zbd: Option<zones::ZbdPlan>,
}

/// What the normal output's job header line shows (`name: (g=0): rw=..., bs=..., ioengine=...,
/// iodepth=...`).
#[derive(Clone, Debug)]
pub struct JobHeader {
    /// The first thread of its job definition (the header is printed once, then `...`).
    pub first: bool,
    pub numjobs: u32,
    pub rw: &'static str,
    /// Smallest and largest block size per direction.
    pub bs: [(u64, u64); 3],
    pub bs_by_pattern: bool,
    /// The configured depth (fio's header shows it before the "capped at 1" rule).
    pub iodepth: u32,
}

/// How the job's files are laid out before the run (fio's `extend_file`).
#[derive(Clone, Debug)]
pub struct LayoutPlan {
    /// Write real data (read jobs, overwrite, engines that cannot extend files); else
    /// allocate with `fallocate`.
    pub write_data: bool,
    pub fallocate: flexio_job::options::Fallocate,
    pub create_fsync: bool,
    pub allow_create: bool,
    /// create_on_open: files are created when opened, not laid out.
    pub on_open: bool,
    /// fill_device: files have no size of their own; a write job's are only created, a
    /// read job's are written until the file system is full (then read as far as they got).
    pub fill: bool,
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

/// `numa_cpu_nodes` (its CPUs replace the job's, as fio binds to the nodes after applying
/// cpus_allowed) and `numa_mem_policy`, resolved against the machine's nodes.
fn numa_placement(def: &JobDef, o: &JobOptions, mut p: Placement) -> Result<Placement, PlanError> {
    let text = |key: &str| {
        def.echo
            .iter()
            .rev()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.clone())
            .unwrap_or_default()
    };
    if let Some(n) = &o.numa_cpu_nodes {
        p.cpus = Some(numa::cpus_of(n, &text("numa_cpu_nodes")).map_err(|e| err(def, e))?);
    }
    if let Some(m) = &o.numa_mem_policy {
        p.mem_policy = Some(numa::policy(m, &text("numa_mem_policy")).map_err(|e| err(def, e))?);
    }
    Ok(p)
}

fn err(def: &JobDef, msg: impl Into<String>) -> PlanError {
    PlanError {
        job: def.opts.name.clone(),
        origin: def.origin.clone(),
        msg: msg.into(),
    }
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

/// The bytes after which fio's loop on an engine that queues stops queueing: `size`, or
/// io_size where larger for random writes without a map (fio's total_bytes in do_io).
fn queued_loop_bytes(o: &JobOptions, sized: u64, io_size: u64) -> u64 {
    if o.rw.is_random() && o.rw.writes() && no_random_map(o) {
        sized.max(io_size)
    } else {
        sized
    }
}

/// fio's norandommap as its checks set it: asked for, or turned on by a block alignment
/// other than the block size or by a non-uniform random distribution.
fn no_random_map(o: &JobOptions) -> bool {
    o.norandommap
        || blockalign_differs(o)
        || o.random_distribution
            .iter()
            .any(|d| *d != flexio_workload::dist::Dist::Uniform)
}

/// Whether blockalign differs from the smallest block size in some direction (fio then
/// turns the random map off).
pub fn blockalign_differs(o: &JobOptions) -> bool {
    o.blockalign
        .is_some_and(|b| (0..3).any(|d| b[d] != 0 && b[d] != o.min_bs_dir(d)))
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
    let mut out: Vec<ThreadPlan> = Vec::new();
    let mut thread_number = 0u32;
    let mut segment = 0usize;
    // The thread plans of each job definition so far (wait_for names a job defined before).
    let mut threads_of: Vec<(String, std::ops::Range<usize>)> = Vec::new();
    // zonemode=zbd: one zone table per file, shared by the threads that use it.
    let mut zone_tables = zones::Registry::default();
    for (ji, def) in set.jobs.iter().enumerate() {
        let o = &def.opts;
        let waitees = match &o.wait_for {
            None => Vec::new(),
            Some(w) => threads_of
                .iter()
                .filter(|(n, _)| n == w)
                .flat_map(|(_, r)| r.clone())
                .collect::<Vec<usize>>(),
        };
        if let Some(w) = &o.wait_for {
            if waitees.is_empty() && !threads_of.iter().any(|(n, _)| n == w) {
                return Err(err(def, format!("waitee job {w} unknown")));
            }
        }
        let first = out.len();
        if ji > 0 && o.stonewall {
            segment += 1;
        }
        // The job's engine, once: its configuration from the job's options (the file count
        // as they give it) and its capabilities, which every thread of the job shares.
        let engine = EnginePlan::of_job(o, files::count_of(o)).map_err(|m| err(def, m))?;
        let caps = &engine.caps;
        validate(def, caps, readonly)?;
        newest::validate(set, ji, caps)?;
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
        if o.group_reporting && o.stats {
            // fio's verify_per_group_options: a reported group pools its jobs' latency
            // histograms, so a job that joins a group must agree on lat_percentiles (as its
            // option check leaves it: off under disable_lat).
            let lat_pct = |o: &JobOptions| o.lat_percentiles && !o.disable_lat;
            let other = set.jobs[..ji]
                .iter()
                .find(|j| j.groupid == def.groupid && lat_pct(&j.opts) != lat_pct(o));
            if let Some(j) = other {
                return Err(err(
                    def,
                    format!(
                        "lat_percentiles in job: {} differs from group (job '{}' has lat_percentiles={}, this one {}); fio refuses it too",
                        o.name,
                        j.opts.name,
                        u8::from(lat_pct(&j.opts)),
                        u8::from(lat_pct(o))
                    ),
                ));
            }
        }
        if probe_engines {
            flexio_engine::probe(&engine.name, &engine.cfg).map_err(|m| err(def, m))?;
        }
        for k in 0..o.numjobs {
            thread_number += 1;
            // fio numbers its clones backwards: the job is subjob 0, the clone after it
            // (the next thread) numjobs-1, the last 1. The number names the clone's files
            // and moves its offset_increment.
            let sub = if k == 0 { 0 } else { o.numjobs - k };
            if crate::debug::on(crate::debug::Cat::Random) && !set.compat.is_fio333() {
                let system = set.seeds_drawn.contains(&ji);
                for l in rand_seed_lines(o.randseed.unwrap_or(0x89), thread_number, system) {
                    crate::debug::log(crate::debug::Cat::Random, &l);
                }
            }
            let mut t = plan_thread(
                def,
                sub,
                thread_number,
                segment,
                &engine,
                RunWide {
                    readonly,
                    compat: set.compat,
                    probe_engines,
                },
            )?;
            t.control.wait_for = waitees.clone();
            zones::apply(def, &mut t, &mut zone_tables)?;
            out.push(t);
        }
        threads_of.push((o.name.clone(), first..out.len()));
    }
    newest::share_ramp_counters(&mut out);
    // Last, once each plan is complete: which loop each thread runs.
    for t in &mut out {
        t.features = features::Features::of(t);
    }
    // gtod_cpu: the CPU is set aside for the timekeeper; fio clears it from every job's
    // CPU mask (a job whose mask is that CPU alone keeps it).
    if let Some(cpu) = out.iter().find_map(|t| t.control.gtod_cpu) {
        for t in &mut out {
            if let Some(cpus) = t.placement.cpus.as_mut() {
                if cpus.iter().any(|c| *c != cpu as usize) {
                    cpus.retain(|c| *c != cpu as usize);
                }
            }
        }
    }
    Ok(out)
}

fn validate(def: &JobDef, caps: &Caps, readonly: bool) -> Result<(), PlanError> {
    let o = &def.opts;
    if cfg!(target_os = "rtems") {
        if let Some(why) = rtems::refusal(o) {
            return Err(err(def, why));
        }
    }
    // fio 3.33 refuses zonesize under zonemode=none, its default too: strided zones need
    // zonemode=strided (zonerange and zoneskip alone are ignored).
    if o.zonemode == flexio_job::options::ZoneMode::None && o.zonesize > 0 {
        return Err(err(
            def,
            "--zonemode=none and --zonesize are not compatible.",
        ));
    }
    if o.zonemode == flexio_job::options::ZoneMode::Strided && o.zonesize == 0 {
        return Err(err(
            def,
            "--zonesize must be specified when using --zonemode=strided.",
        ));
    }
    let rw = o.rw;
    // zonemode=zbd: a trim of a write-pointer zone resets it, without the engine.
    let zbd_trims = o.zonemode == flexio_job::options::ZoneMode::Zbd;
    if rw.trims() && !caps.trim && !zbd_trims {
        return Err(err(
            def,
            format!(
                "rw={} needs trim support, which ioengine {} does not have in flexio",
                rw.as_str(),
                o.ioengine
            ),
        ));
    }
    // Trim verification: trims of written blocks (fio's td->trim_verify).
    let trim_verify = o.verify != flexio_job::options::verify_code::NONE
        && o.trim_backlog > 0
        && o.trim_percentage > 0;
    if trim_verify && !caps.trim {
        return Err(err(
            def,
            format!(
                "trim_percentage with trim_backlog trims written blocks, which ioengine {} \
                 cannot do in flexio",
                o.ioengine
            ),
        ));
    }
    if readonly
        && ((rw.writes() && !o.verify_only) || rw.trims() || trim_verify || caps.changes_names)
    {
        return Err(err(def, "the job writes, but --readonly is set"));
    }
    if caps.write_only && rw.reads() {
        return Err(err(
            def,
            format!(
                "ioengine {} only does writes (use rw=write or rw=randwrite)",
                o.ioengine
            ),
        ));
    }
    if o.filename.as_deref() == Some("-") {
        return Err(err(
            def,
            "filename=- (stdin/stdout) is not supported by flexio",
        ));
    }
    if o.time_based && o.runtime_us == 0 {
        // fio warns and ignores time_based; flexio does the same, loudly.
    }
    if let Some(cpus) = &o.cpus_allowed {
        let allowed = flexio_engine::os::thread::sched_getaffinity(None).ok();
        if let Some(set) = allowed {
            let usable: Vec<usize> = (0..flexio_engine::os::thread::CpuSet::MAX_CPU)
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

    validate_logs(def)?;
    if o.direct && o.iomem_align != 0 && o.iomem_align < 512 {
        return Err(err(def, "iomem_align below 512 cannot work with direct=1"));
    }
    Ok(())
}

/// The log options that cannot go together (fio's checks, and what flexio does not do).
fn validate_logs(def: &JobDef) -> Result<(), PlanError> {
    use flexio_job::options::LogWindow;
    let o = &def.opts;
    if o.log_issue_time && !(o.write_lat_log.is_some() && o.log_offset) {
        return Err(err(
            def,
            "log_issue_time option requires write_lat_log and log_offset options",
        ));
    }
    if o.log_unix_epoch || o.log_alternate_epoch {
        crate::clock::clock_ms(o.log_alternate_epoch_clock_id)
            .map_err(|e| err(def, format!("log_alternate_epoch_clock_id: {e}")))?;
    }
    if o.log_store_compressed
        && o.compat.is_fio333()
        && (o.log_issue_time || o.log_window == LogWindow::Both)
    {
        // (log_issue_time is unknown to fio 3.33 in the first place.)
        return Err(err(
            def,
            "log_store_compressed with log_window_value=both is not supported under --compat=3.33: fio 3.33's compressed records hold one value (the newest fio's, flexio's default, hold both)",
        ));
    }
    Ok(())
}

/// What holds for every thread of a run.
#[derive(Clone, Copy)]
struct RunWide {
    /// `--readonly`: every writing job is refused.
    readonly: bool,
    compat: Compat,
    /// Ask the kernel / the target (engine probes, an NBD export's size); off when fuzzing.
    probe_engines: bool,
}

fn plan_thread(
    def: &JobDef,
    sub: u32,
    thread_number: u32,
    segment: usize,
    engine: &EnginePlan,
    run: RunWide,
) -> Result<ThreadPlan, PlanError> {
    let compat = run.compat;
    let caps = engine.caps;
    check_before_files(def)?;
    let replayed = replay::load(def, sub, run.readonly, compat)?;
    let (o, files) = match &replayed {
        Some(l) => (&l.opts, l.files.clone()),
        None => (
            &def.opts,
            files::resolve(def, sub, engine, run.probe_engines)?,
        ),
    };
    check_files(def, o, &files, replayed.as_ref(), &caps)?;
    // ---- budget and depth
    let region_total: u64 = files.iter().map(|f| f.region.len).sum();
    // With filesize= the regions are the files' (offset to end); a `size` given beside
    // it bounds the job's I/O, as in fio.
    let sized = match (o.filesize, o.size) {
        (Some(_), Some(flexio_job::value::SizeVal::Bytes(s))) if replayed.is_none() => {
            s.min(region_total)
        }
        _ => region_total,
    };
    let io_size = o.io_size.map(|v| v.resolve(region_total)).unwrap_or(sized);
    let time_based = o.time_based && o.runtime_us > 0;
    let spr = newest::sprandom(def, &files, io_size, thread_number)?;
    // fio's loops on an engine that completes each request as it is queued share one
    // budget: a loop issues I/O until size × loops bytes are issued in all (its issue
    // counts go on across loops), ending early only where the files are done, and the job
    // ends with the budget or the loops. So a mixed job's first loop runs on past `size`
    // until one direction reaches the end, and random I/O without a map is one loop. On
    // an engine that queues (libaio, io_uring, posixaio, null deeper than 1) fio's loop
    // stops at `size` bytes queued. Jobs with work of their own per loop (verify, trims,
    // zones) keep a budget per loop. On an engine that queues the loops also stop once
    // they issued size × loops in all (`issue_cap`).
    let loops_share = o.loops > 1
        && !time_based
        && replayed.is_none()
        && spr.is_none()
        && o.verify == flexio_job::options::verify_code::NONE
        && !o.experimental_verify
        && !o.rw.trims()
        && o.zonemode != ZoneMode::Zbd;
    let completes_in_call = caps.syncio || caps.queue_completes;
    let shared_budget = loops_share && completes_in_call;
    let budget = match (time_based || replayed.is_some(), spr) {
        // A replay ends with its trace.
        (true, _) => u64::MAX,
        // sprandom writes the physical capacity: io_size becomes it.
        (false, Some((_, phys))) => phys,
        (false, None) if shared_budget => io_size.saturating_mul(o.loops as u64),
        (false, None) => io_size,
    };
    let (depth, depth_note) = thread_depth(def, o, &caps, compat)?;
    let seeds = job_seeds(o, thread_number, sub, compat);
    // fio's job goes on in passes while an io_size given is not reached (keep_running),
    // also where one pass over the files moves less than it (holed I/O, `rw=write:8k`; a
    // random block that does not fit the file ends the pass).
    let wrap = time_based || io_size > region_total || o.io_size.is_some();
    let mut spec = thread_spec(o, &files, &seeds, wrap, &caps, spr.map(|(s, _)| s), compat);
    spec.dist_seeds = dist_seeds(o, &files, &seeds, thread_number, compat);
    if replayed.is_none() {
        spec.start_later = later_starts(o, &files, sub, &caps);
    }
    let gen_notes = taus64_switch(o, &files, &mut spec, compat);
    if compat.is_fio333() && crate::debug::on(crate::debug::Cat::Random) {
        spec.trace = Some(crate::debug::rand_event);
    }
    let mut io = io_plan(o, &caps, depth, budget, &seeds);
    io.shared_budget = shared_budget;
    // fio's write pass of a time-based job that verifies ends at `size` bytes queued, so
    // that the read-back runs (do_io counts only requests an engine queues; on one that
    // completes each in the call the writes take the whole runtime): on an engine that
    // queues, the job alternates passes of `size` written and their read-back until its
    // time is up.
    if time_based
        && !completes_in_call
        && o.rw.writes()
        && o.verify != flexio_job::options::verify_code::NONE
        && o.do_verify
        && !o.experimental_verify
        && o.verify_backlog == 0
        && !o.rw.trims()
        && o.zonemode != ZoneMode::Zbd
        && replayed.is_none()
        && spr.is_none()
    {
        io.budget = queued_loop_bytes(o, sized, io_size);
    }
    if loops_share && !completes_in_call {
        io.issue_cap = io_size.saturating_mul(o.loops as u64);
        // fio's loop on an engine that queues stops at `size` queued (io_size for random
        // writes without a map, where larger), io_size only bounding all loops together.
        if io_size <= sized && budget == io_size {
            io.budget = queued_loop_bytes(o, sized, io_size);
        }
    }
    // io_size beyond the files, in passes (each a loop in fio): the job ends at a pass's
    // end by fio's rule ([`PassEnd`]); its loops are its first passes.
    let in_passes = spec.wrap
        && !time_based
        && replayed.is_none()
        && spr.is_none()
        // Strided zones restart their passes in the generator where it completes each
        // request in the call; on an engine that queues each pass is a loop as without.
        && (spec.strided.is_none() || !completes_in_call)
        // A non-uniform file service starts files over rather than passing: in passes
        // only where each is a loop of the worker (an engine that queues).
        && (!matches!(spec.select, FileSelect::Dist(_))
            || !completes_in_call)
        && o.zonemode != ZoneMode::Zbd
        // number_ios counts over the worker's loops: with passes inside one loop (an
        // engine that completes in the call) the generator's passes would not see it.
        && (o.number_ios == 0 || !completes_in_call)
        && !o.rw.trims()
        && o.verify == flexio_job::options::verify_code::NONE
        && !o.experimental_verify;
    if in_passes {
        io.pass_end = Some(PassEnd {
            loops: o.loops.max(1) as u64,
            io_size,
            max_bs: spec.bs.iter().map(|b| b.max()).max().unwrap_or(1),
        });
        if completes_in_call {
            // The generator's passes, inside one loop of the worker; the budget (io_size
            // × loops) ends only the last pass of loops=1.
            io.loops = 1;
        } else {
            // On an engine that queues, fio's pass (a loop) also stops at `size` bytes
            // queued (io_size for random writes without a map): the worker's loops are
            // the passes, each over the files once, as many as the rule lets.
            spec.wrap = false;
            io.budget = queued_loop_bytes(o, sized, io_size);
            io.pass_loops = true;
            // As many as the rule lets: a pass ends early where a block does not fit (a
            // random block past a file's end), and each moves at least one block.
            let min_bs = spec.bs.iter().map(|b| b.min()).min().unwrap_or(1).max(1);
            io.loops = (io_size.div_ceil(min_bs) + 1)
                .max(o.loops as u64)
                .min(u32::MAX as u64 - 1) as u32;
        }
    }
    let (meter, pace) = compat_sections(o, &caps, &seeds, thread_number, compat, &mut io);
    // fio 3.33 runs a verifying write job whose offsets end before io_size as loops of one
    // pass each (see fio333_verify_passes): no block is written twice within a loop.
    let mut passes = false;
    if compat.is_fio333() && !time_based && replayed.is_none() && spr.is_none() {
        let mut pass_spec = spec.clone();
        pass_spec.wrap = false;
        if let Some((pass, loops)) = fio333_verify_passes(o, &pass_spec, region_total, io_size) {
            spec = pass_spec;
            io.budget = pass;
            io.loops = loops;
            passes = true;
        }
    }
    let vctx = VerifyCtx {
        thread_number,
        depth,
        nfiles: files.len() as u32,
        async_engine: !caps.syncio,
        io_size_over_size: io_size > region_total && !passes,
        rate_limited: o.rate.iter().chain(&o.rate_iops).any(|r| *r > 0),
        gen: verify_generation(compat),
    };
    let verify = verify_plan(o, &seeds, &vctx).map_err(|e| err(def, e))?;
    if verify.as_ref().is_some_and(|v| v.trim.is_some()) {
        // Trim verification: the trims' runtime is the loop's, as for the job's writes.
        io.dirs[2] = true;
    }
    let (layout_on_open, capture) = iolog_sections(o, replayed.as_ref(), &mut io);
    let stats_cfg = stats_config(o);
    let mut report = report_params(o, &caps);
    let mut latency = latency_plan(o);
    if compat.is_fio333() && sub > 0 {
        // fio 3.33 turns latency_target and max_latency into ns again in each clone (fixed
        // in 3.36): a clone's target and ceilings are 1000 times the job's, in its search,
        // its checks and its report (`target=10000000000` for 10ms).
        report.latency_target_ns = report.latency_target_ns.saturating_mul(1000);
        if let Some(t) = latency.target.as_mut() {
            t.target_ns = t.target_ns.saturating_mul(1000);
        }
        latency.max_ns = latency.max_ns.map(|ns| ns.saturating_mul(1000));
    }
    Ok(ThreadPlan {
        name: o.name.clone(),
        description: o.description.clone(),
        groupid: def.groupid,
        thread_number,
        compat,
        segment,
        echo: def.echo.clone(),
        // The job's engine with what is this thread's; its capabilities stay the job's.
        engine: EnginePlan {
            cfg: EngineConfig {
                iodepth: depth,
                nfiles: files.len() as u32,
                seed: seeds[flexio_workload::rng::slot::PRIO] as u32,
                // A replayed trace's directions (the job's otherwise).
                reads: o.rw.reads(),
                writes: o.rw.writes(),
                random: o.rw.is_random(),
                subjob: sub,
                atomic: newest::atomic_writes(o, compat),
                inline_syncs: compat.is_fio333(),
                size: files
                    .iter()
                    .map(|f| f.region.start.saturating_add(f.region.len))
                    .max()
                    .unwrap_or(0),
                ..engine.cfg.clone()
            },
            ..engine.clone()
        },
        io,
        buffers: buffer_plan(o, depth, &seeds, verify.is_some(), region_total),
        open: {
            let p = open_plan(o, files.len());
            OpenPlan {
                // fio 3.33 opened every character device read-write; newer fio only for
                // engines that need it (sg's RO_NEEDS_RW_OPEN).
                char_rdwr: compat.is_fio333() || caps.rw_open,
                write_hint: sysio::write_hint(def, &caps),
                flags: p.flags | newest::atomic_open_flags(o, compat),
                ..p
            }
        },
        layout: LayoutPlan {
            write_data: o.rw.reads() || o.overwrite || caps.no_extend || caps.file_op,
            fallocate: o.fallocate,
            create_fsync: o.create_fsync,
            allow_create: o.allow_file_create,
            on_open: layout_on_open,
            fill: o.fill_device,
        },
        pace,
        meter,
        verify,
        latency,
        prio: prio_plan(o, &seeds),
        placement: numa_placement(def, o, placement(o, thread_number))?,
        errors: error_policy(o),
        timing: Timing {
            // Offloaded requests have no submission latency (fio's have none either).
            slat: timing(o, &caps, &stats_cfg).slat && !o.submit_offload,
            ..timing(o, &caps, &stats_cfg)
        },
        stats_cfg,
        report,
        stats_enabled: o.stats,
        control: control(o),
        files,
        spec,
        depth_note,
        // fio notes it for random jobs (td_random: the rw kind, not percentage_random).
        blockalign_note: sub == 0
            && def.opts.rw.is_random()
            && blockalign_differs(&def.opts)
            && !def.opts.norandommap,
        gen_notes,
        info_notes: {
            let mut v = if sub == 0 {
                newest::info_notes(o)
            } else {
                Vec::new()
            };
            // fio's check of every thread's options: a job that only writes, verifies
            // afterwards and runs for its whole runtime never gets to the verify phase.
            if o.rw.writes()
                && !o.rw.reads()
                && o.verify != 0
                && o.do_verify
                && o.time_based
                && o.runtime_us > 0
                && o.verify_backlog == 0
            {
                v.push("fio: verification read phase will never start because write phase uses all of runtime");
            }
            v
        },
        header: JobHeader {
            first: sub == 0,
            numjobs: o.numjobs,
            // fio prints the header from the options as given, before a trace is read.
            rw: def.opts.rw.as_str(),
            bs: [0, 1, 2].map(|d| (def.opts.min_bs_dir(d), def.opts.max_bs_dir(d))),
            bs_by_pattern: o.bs_is_seq_rand,
            iodepth: o.iodepth,
        },
        replay: replayed.map(|l| l.plan),
        capture,
        sysio: sysio::resolve(def, &caps)?,
        zbd: None,
        features: features::Features::default(),
    })
}

/// The seed of each file's zipf, pareto or normal offset generator, as fio derives it
/// (none when the job has no such distribution). fio 3.33: the jhash of the file's name
/// times the thread number for a repeatable job without a `randseed`, else the
/// block-offset seed (found against fio 3.33's offsets: `randseed=1234` alone gives
/// 0xb1899bed, with `randrepeat=0` the slot's own seed); the newest fio multiplies the
/// name's hash by the thread number and the block-offset seed.
fn dist_seeds(
    o: &JobOptions,
    files: &[FilePlan],
    seeds: &[u64; flexio_workload::rng::slot::COUNT],
    thread_number: u32,
    compat: Compat,
) -> Vec<u32> {
    use flexio_workload::rng::{fio_jhash, slot};
    if !o.random_distribution.iter().any(|d| d.is_fio_gen()) {
        return Vec::new();
    }
    let block = seeds[slot::BLOCK] as u32;
    files
        .iter()
        .map(|f| {
            let name = fio_jhash(f.path.as_os_str().as_encoded_bytes()).wrapping_mul(thread_number);
            if !compat.is_fio333() {
                name.wrapping_mul(block)
            } else if repeatable(o, compat) && o.randseed.is_none() {
                name
            } else {
                block
            }
        })
        .collect()
}

/// The thread's workload: the job's, adjusted for engines without offsets and for
/// sprandom.
fn thread_spec(
    o: &JobOptions,
    files: &[FilePlan],
    seeds: &[u64; flexio_workload::rng::slot::COUNT],
    wrap: bool,
    caps: &Caps,
    sprandom: Option<flexio_workload::sprandom::SprSpec>,
    compat: Compat,
) -> Spec {
    let mut spec = workload_spec(o, files, seeds, wrap);
    // fio 3.33 refuses an LFSR seed outside the register's period; flexio moves it in.
    spec.lfsr_usable_seed = !compat.is_fio333();
    if caps.noio {
        // The pseudo-file has no end; offsets mean nothing there.
        spec.random_map = false;
    }
    spec.seq_stride = o.newest.random_sequence_stride;
    if compat.is_fio333()
        && o.verify != flexio_job::options::verify_code::NONE
        && o.rw.writes()
        && !o.rw.reads()
    {
        // fio 3.33: a verifying write job draws its block sizes from the reads' generator.
        let bs = flexio_workload::rng::slot::BS;
        spec.seeds[bs + 1] = spec.seeds[bs];
    }
    if let Some(s) = sprandom {
        // sprandom sets random_generator=lfsr and norandommap=1.
        spec.sprandom = Some(s);
        spec.gen = RandGen::Lfsr;
        spec.random_map = false;
    }
    spec
}

/// fio's check of a random job's files against the 32-bit tausworthe generator: a file of
/// more blocks than it covers is announced; without an explicit `random_generator` the job
/// switches to tausworthe64, which the newest fio really does for the offsets (fio 3.33
/// announces it and keeps drawing 32-bit offsets), once for the job; with an explicit
/// `random_generator=tausworthe` each such file gets the advice. Returns the lines.
fn taus64_switch(
    o: &JobOptions,
    files: &[FilePlan],
    spec: &mut Spec,
    compat: Compat,
) -> Vec<String> {
    let mut out = Vec::new();
    if spec.gen != RandGen::Tausworthe {
        return out;
    }
    for i in flexio_workload::gen::taus32_exceeded(spec) {
        out.push(format!(
            "fio: file {} exceeds 32-bit tausworthe random generator.",
            files[i].path.display()
        ));
        if !o.newest.random_generator_set {
            out.push(
                "fio: Switching to tausworthe64. Use the random_generator= option to get rid of this warning."
                    .into(),
            );
            spec.off64 = !compat.is_fio333();
            break;
        }
        out.push("fio: Use the random_generator= option to switch to lfsr or tausworthe64.".into());
    }
    out
}

/// read_iolog and write_iolog: a replay takes its directions from the trace, runs once and
/// creates files when it opens them; a job that is not replayed may be captured. Returns
/// (files laid out on open, the capture).
fn iolog_sections(
    o: &JobOptions,
    replayed: Option<&replay::Loaded>,
    io: &mut IoPlan,
) -> (bool, Option<CapturePlan>) {
    let mut layout_on_open = o.create_on_open;
    if let Some(info) = replayed.map(|l| &l.info) {
        io.dirs = info.dirs();
        // fio replays once: later loops find the trace used up.
        io.loops = 1;
        layout_on_open = true;
    }
    let capture = match (&o.iolog.write, replayed) {
        (Some(p), None) => Some(CapturePlan {
            path: std::path::PathBuf::from(p),
        }),
        _ => None,
    };
    (layout_on_open, capture)
}

fn verify_generation(compat: Compat) -> crate::verify::Generation {
    match compat {
        Compat::Fio333 => crate::verify::Generation::Fio333,
        Compat::Latest => crate::verify::Generation::Latest,
    }
}

/// What fio checks before anything looks at files, in its words.
fn check_before_files(def: &JobDef) -> Result<(), PlanError> {
    let o = &def.opts;
    if o.dedupe_percentage > 0 && o.dedupe_working_set && o.rw.writes() && o.size.is_none() {
        return Err(err(
            def,
            "fio: pregenerated dedupe working set requires size to be set",
        ));
    }
    replay::check_replay_options(def)
}

/// Checks of a thread's files and of the options that depend on them (`o`: the job's
/// options, or a replayed trace's).
fn check_files(
    def: &JobDef,
    o: &JobOptions,
    files: &[FilePlan],
    replayed: Option<&replay::Loaded>,
    caps: &Caps,
) -> Result<(), PlanError> {
    if let Some(info) = replayed.map(|l| &l.info) {
        if info.ios[2] > 0 && !caps.trim {
            return Err(err(
                def,
                format!(
                    "the trace has trims, which ioengine {} does not do in flexio",
                    o.ioengine
                ),
            ));
        }
    }
    newest::validate_files(def, files)?;
    let cmd = flexio_engine::cmdprio::CmdprioOpts::from_values(&o.engine);
    if cmd.cmdprio_percentage.iter().any(|p| *p > 0)
        && cmd.cmdprio_bssplit.iter().any(|l| !l.is_empty())
    {
        return Err(err(
            def,
            format!(
                "{}: cmdprio_percentage and cmdprio_bssplit options are mutually exclusive",
                def.opts.name
            ),
        ));
    }
    if o.dedupe_percentage > 0 && o.dedupe_working_set && o.rw.writes() && files.len() > 1 {
        return Err(err(
            def,
            format!(
                "fio: dedupe working set mode supported with single file per job, but {} files provided",
                files.len()
            ),
        ));
    }
    Ok(())
}

/// The thread's queue depth ("capped at 1" on synchronous engines without a commit step,
/// and whether to say so), refused where its buffers cannot be addressed.
fn thread_depth(
    def: &JobDef,
    o: &JobOptions,
    caps: &Caps,
    compat: Compat,
) -> Result<(u32, bool), PlanError> {
    if o.submit_offload && !caps.offload {
        // fio's words for engines that cannot be offloaded.
        return Err(err(
            def,
            format!(
                "{}: can't be used with offloaded submit. Use a sync engine (io_submit_mode=offload needs an engine whose requests complete in the call: psync, pvsync, pvsync2, sync, vsync or null)",
                o.ioengine
            ),
        ));
    }
    // fio 3.33 prints the note with offload too (its submitters are one per iodepth even
    // so); the newest fio does not.
    let depth_note = caps.syncio
        && o.iodepth > 1
        && !caps.has_commit
        && (!o.submit_offload || compat.is_fio333());
    if o.submit_offload {
        return Ok((o.iodepth, depth_note));
    }
    let depth = capped_depth(caps, o.iodepth);
    // Every request slot holds the largest block; on 32-bit targets that can exceed the
    // address space (a 4 GiB block would become 0 bytes if narrowed unchecked).
    let slots = u64::from(depth.max(1));
    if o.max_bs()
        .checked_mul(slots)
        .map_or(true, |b| b > isize::MAX as u64)
    {
        return Err(err(
            def,
            format!(
                "block size {} with iodepth {} needs more buffer memory than this {}-bit \
                 system can address",
                o.max_bs(),
                slots,
                usize::BITS
            ),
        ));
    }
    Ok((depth, depth_note))
}

/// fio's "queue depth will be capped at 1": an engine whose requests complete in the call,
/// without a commit step, has one request in flight whatever the job's iodepth.
fn capped_depth(caps: &Caps, iodepth: u32) -> u32 {
    if caps.syncio && !caps.has_commit {
        1
    } else {
        iodepth
    }
}

/// The metering and pacing sections, and the loop's ramp, with the differences between
/// fio versions applied.
fn compat_sections(
    o: &JobOptions,
    caps: &Caps,
    seeds: &[u64; flexio_workload::rng::slot::COUNT],
    thread_number: u32,
    compat: Compat,
    io: &mut IoPlan,
) -> (MeterPlan, PacePlan) {
    io.ramp_ns = newest::ramp_ns(io.ramp_ns, compat);
    if !compat.is_fio333() {
        io.ramp_tick_ns = newest::RAMP_TICK_NS;
    }
    let mut meter = meter_plan(o, caps, thread_number);
    if let Some(ss) = &mut meter.ss {
        ss.scaled_samples = !compat.is_fio333();
    }
    let mut pace = engine_pace(pace_plan(o, seeds), caps);
    if let Some(t) = &mut pace.think {
        newest::think_compat(t, compat);
    }
    if !compat.is_fio333() {
        // fio 3.42: rate_iops spaces I/Os by count, whatever their sizes.
        pace.schedule = pace.schedule.take().map(|s| s.count_ios(o.rate_iops));
    }
    (meter, pace)
}

/// Engines that pace themselves (cpuio, exec) set the job's think time, as fio's do.
fn engine_pace(mut pace: PacePlan, caps: &Caps) -> PacePlan {
    if caps.think_us > 0 {
        pace.think = Some(ThinkPlan {
            think_us: caps.think_us,
            spin_us: 0,
            blocks: Some(1),
            blocks_issue: false,
            iotime_us: 0,
            shift_rate: false,
            clip_to_runtime: true,
        });
    }
    pace
}

/// The workload generator's specification.
fn workload_spec(
    o: &JobOptions,
    files: &[FilePlan],
    seeds: &[u64; flexio_workload::rng::slot::COUNT],
    wrap: bool,
) -> Spec {
    let dirs_on = job_dirs(o);
    // fio's ba[ddir]: blockalign, by default each direction's smallest block size.
    let align = [0, 1, 2].map(|d| {
        o.blockalign
            .map(|b| b[d])
            .filter(|b| *b > 0)
            .unwrap_or_else(|| o.min_bs_dir(d))
            .max(1)
    });
    // fio's rw_min_bs: the smallest block size of any direction, used or not (a
    // random write job with bs=4k,8k keeps its map in 4 KiB units).
    let rw_min_bs = (0..3).map(|d| o.min_bs_dir(d)).min().unwrap_or(o.min_bs());
    let strided = (o.zonemode == ZoneMode::Strided).then(|| {
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
    Spec {
        dirs: dirs_on,
        random: o.rw.is_random(),
        rwmixread: o.rwmixread,
        rw_nr: o.rw_nr,
        rw_back: o.rw_back,
        identical: o.rw_sequencer == Sequencer::Identical,
        bs: [bs_policy(o, 0), bs_policy(o, 1), bs_policy(o, 2)],
        bs_by_pattern: o.bs_is_seq_rand,
        align,
        // fio: a block alignment other than the block size, or a non-uniform
        // distribution, turns the random map off.
        random_map: !no_random_map(o),
        files: files.iter().map(|f| f.region).collect(),
        select: match o.file_service {
            FileService::RoundRobin => FileSelect::RoundRobin,
            FileService::Random => FileSelect::Random,
            FileService::Sequential => FileSelect::Sequential,
            // One file read or written in order: nothing to choose, and passes go as with
            // any other service (random I/O still starts the file over in place, as fio's
            // non-uniform service does).
            FileService::Dist(_) if files.len() == 1 && !o.rw.is_random() => FileSelect::RoundRobin,
            FileService::Dist(d) => FileSelect::Dist(d),
        },
        select_nr: o.file_service_nr,
        open_limit: o
            .openfiles
            .filter(|n| (*n as usize) < files.len())
            .map_or(0, |n| n.max(1) as usize),
        wrap,
        // fio goes on to io_size (given) or the end of the time with another pass; a
        // verifying writer's pass ends there, its read-back follows (then another loop).
        zone_eof_pass: o.zonemode == ZoneMode::Zbd
            && (o.time_based || o.io_size.is_some())
            && !(o.verify != flexio_job::options::verify_code::NONE && o.rw.writes()),
        // Set by the zones' plan (zones::apply), which knows the files' zones.
        zbd_last_file_ends: false,
        seeds: *seeds,
        gen: match o.random_generator {
            RandGenOpt::Tausworthe => RandGen::Tausworthe,
            RandGenOpt::Tausworthe64 => RandGen::Tausworthe64,
            RandGenOpt::Lfsr => RandGen::Lfsr,
        },
        lfsr_usable_seed: true,
        dist: o.random_distribution.clone(),
        dist_seeds: Vec::new(),
        pct_random: o.percentage_random,
        strided,
        rw_min_bs,
        seq_stride: false,
        trace: None,
        off64: false,
        sprandom: None,
        file_sizes: files
            .iter()
            .map(|f| f.need.max(f.seen.as_ref().and_then(|s| s.len).unwrap_or(0)))
            .collect(),
        start_later: Vec::new(),
        // fio clears randrepeat where a randseed is given: each pass then continues the
        // streams instead of seeding them again.
        repeatable: o.randrepeat && o.randseed.is_none(),
        time_based: o.time_based && o.runtime_us > 0,
    }
}

/// Where fio starts each file's region once the job has laid it out ([`Spec::start_later`]):
/// a percentage offset taken again of the file's size then. Empty where no file moves.
fn later_starts(o: &JobOptions, files: &[FilePlan], sub: u32, caps: &Caps) -> Vec<u64> {
    let pct = matches!(o.offset, flexio_job::value::SizeVal::Percent(_))
        || matches!(o.offset_increment, flexio_job::value::SizeVal::Percent(_));
    if !pct || o.file_append {
        return Vec::new();
    }
    let later: Vec<u64> = files
        .iter()
        .map(|f| match (&f.block, &f.seen) {
            // A diskless engine's file is as long as its region's end (fio's real_file_size
            // there is the first start plus the file's share of the size).
            _ if caps.diskless => {
                files::start_offset(o, f.region.start.saturating_add(f.region.len), sub)
            }
            (Some(_), _) => f.region.start,
            (None, seen) => {
                let existing = seen.as_ref().and_then(|s| s.len).unwrap_or(0);
                files::start_offset(o, f.need.max(existing), sub)
            }
        })
        .collect();
    if later.iter().zip(files).all(|(s, f)| *s == f.region.start) {
        return Vec::new();
    }
    later
}

/// Give every job whose random numbers are not repeatable (`randrepeat=0` without a
/// `randseed`) a `randseed` drawn from the system's entropy, once per job definition, so
/// that the seeds a run used are known (the result's provenance records them) and a rerun
/// with that `randseed` draws the same numbers. Each thread of the job stirs its thread
/// number into it, as with a given `randseed`. The jobs given a seed are listed in
/// `set.seeds_drawn`.
pub fn draw_seeds(set: &mut flexio_job::JobSet) {
    let mut drawn = Vec::new();
    for (i, def) in set.jobs.iter_mut().enumerate() {
        let o = &mut def.opts;
        if !repeatable(o, set.compat) && o.randseed.is_none() {
            let e = entropy()
                .wrapping_add(i as u64)
                .wrapping_mul(0x9e37_79b9_7f4a_7c15)
                .rotate_left(29);
            o.randseed = Some(e >> 1);
            drawn.push(i);
        }
    }
    set.seeds_drawn.extend(drawn);
}

/// Whether a job asked for repeatable random numbers: `randrepeat`, or in the newest fio
/// `allrandrepeat` where it was given last (an alias there).
fn repeatable(o: &JobOptions, compat: Compat) -> bool {
    if compat.is_fio333() || !o.allrandrepeat_last {
        o.randrepeat
    } else {
        o.allrandrepeat
    }
}

/// The seeds of a thread's random streams.
///
/// Both fio versions: randseed (default 0x89) stirred into one seed per slot, unless
/// `randrepeat=0` without a `randseed` (then from the system's entropy). The newest fio uses
/// those for every stream, the block offsets included, and `allrandrepeat` is an alias of
/// `randrepeat`. fio 3.33 replaces the block-offset seed of repeatable jobs by
/// `0xb1899bed * thread_number` (so `randseed` alone does not move the offsets), and
/// `allrandrepeat=1` replaces every other slot `i` by `0xb1899bed * thread_number + i`.
/// A `randseed` clears randrepeat before fio 3.33 copies a job into its numjobs clones:
/// the first thread of a job (`sub` 0) keeps the replaced block-offset seed, the others
/// take theirs from the `randseed`.
pub fn job_seeds(
    o: &JobOptions,
    thread_number: u32,
    sub: u32,
    compat: Compat,
) -> [u64; flexio_workload::rng::slot::COUNT] {
    use flexio_workload::rng::{fio_seeds, slot, FIO_RANDSEED};
    let mut s = if !repeatable(o, compat) && o.randseed.is_none() {
        let mut s = [0u64; slot::COUNT];
        let mut e = entropy();
        for x in &mut s {
            e = e.wrapping_mul(0x9e37_79b9_7f4a_7c15).rotate_left(17) ^ 0xbf58_476d_1ce4_e5b9;
            *x = e;
        }
        s
    } else {
        fio_seeds(o.randseed.unwrap_or(0x89), thread_number, false)
    };
    if compat.is_fio333() {
        if o.allrandrepeat {
            for (i, x) in s.iter_mut().enumerate() {
                *x = FIO_RANDSEED
                    .wrapping_mul(thread_number as u64)
                    .wrapping_add(i as u64);
            }
        }
        if o.randrepeat && (o.randseed.is_none() || sub == 0) {
            s[slot::BLOCK] = FIO_RANDSEED.wrapping_mul(thread_number as u64);
        }
    }
    s
}

/// The newest fio's `--debug=random` lines of a thread's seeds: the slot count, then every
/// slot's seed (fio 3.33 prints none). `system`: the job asked for unrepeatable numbers
/// (`randrepeat=0` without `randseed`); flexio drew its `randseed` from the system's entropy,
/// which fio announces.
pub fn rand_seed_lines(randseed: u64, thread_number: u32, system: bool) -> Vec<String> {
    use flexio_workload::rng::{fio_seed_list, NEWEST_SLOTS};
    let mut out = Vec::with_capacity(NEWEST_SLOTS + 2);
    if system {
        out.push("using system RNG for random seeds".to_string());
    }
    out.push(format!("FIO_RAND_NR_OFFS={NEWEST_SLOTS}"));
    for (i, s) in fio_seed_list(randseed, thread_number, NEWEST_SLOTS)
        .iter()
        .enumerate()
    {
        out.push(format!("rand_seeds[{i}]={s}"));
    }
    out
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

    fn plan_args(args: &[&str]) -> Result<Vec<ThreadPlan>, String> {
        let args: Vec<String> = args.iter().map(|a| a.to_string()).collect();
        crate::session::prepare(&args, &|p| std::fs::read(p)).map(|p| p.plans)
    }

    #[test]
    fn write_only_engines_refuse_reads_by_capability() {
        let e = plan_args(&[
            "--name=j",
            "--ioengine=ftruncate",
            "--rw=randrw",
            "--size=4k",
        ])
        .unwrap_err();
        assert!(
            e.contains("ioengine ftruncate only does writes (use rw=write or rw=randwrite)"),
            "{e}"
        );
        // The null engine reads (and measures flexio itself: no self-measurement warning).
        let p = plan_args(&["--name=j", "--ioengine=null", "--rw=randrw", "--size=4k"]).unwrap();
        assert!(p[0].engine.caps.measures_tool && !p[0].engine.caps.write_only);
    }

    /// The planner asks an engine for its capabilities once per job, with the job's
    /// options, and every thread keeps them: so no engine's capabilities may change with
    /// what a thread adds (its depth after the "capped at 1" rule, its files, seeds, clone
    /// number, size). Each engine of this build is built both ways and compared.
    #[test]
    fn caps_hold_at_the_thread_depth() {
        let mut engines = 0;
        for e in flexio_engine::registry::CATALOG.engines {
            for iodepth in [1, 2, 16] {
                let o = JobOptions {
                    ioengine: e.engine.to_string(),
                    iodepth,
                    ..JobOptions::default()
                };
                let job = EnginePlan::of_job(&o, 1).unwrap();
                let thread = EngineConfig {
                    iodepth: capped_depth(&job.caps, iodepth),
                    nfiles: 3,
                    seed: 77,
                    subjob: 2,
                    size: 1 << 30,
                    ..job.cfg.clone()
                };
                let caps = flexio_engine::caps_of(e.engine, &thread).unwrap();
                assert_eq!(caps, job.caps, "{} at iodepth={iodepth}", e.engine);
            }
            engines += 1;
        }
        assert!(engines > 20, "{engines} engines");
    }

    /// A thread's engine configuration is the job's with the thread's own facts.
    #[test]
    fn thread_engine_config_adds_the_threads_facts() {
        let p = plan_args(&[
            "--name=j",
            "--ioengine=psync",
            "--iodepth=8",
            "--rw=randwrite",
            "--size=64k",
            "--numjobs=2",
            "--offset=4k",
        ])
        .unwrap();
        for (i, t) in p.iter().enumerate() {
            let c = &t.engine.cfg;
            assert_eq!(t.engine.name, "psync");
            // psync completes in the call: capped at 1.
            assert_eq!((c.iodepth, t.io.depth, t.depth_note), (1, 1, true));
            assert_eq!((c.nfiles, c.subjob), (1, i as u32));
            assert!(c.writes && !c.reads && c.random);
            assert_eq!((c.offset, c.size), (4096, 4096 + 64 * 1024));
            assert_eq!(c.job_name, "j");
        }
        assert_ne!(p[0].engine.cfg.seed, p[1].engine.cfg.seed);
    }

    #[test]
    fn blockalign_note_once_per_job_and_clocksource_in_the_plan() {
        let a = [
            "--name=j",
            "--ioengine=null",
            "--rw=randread",
            "--size=64k",
            "--bs=4k",
        ];
        let with = |extra: &[&str]| {
            let mut v = a.to_vec();
            v.extend_from_slice(extra);
            plan_args(&v).unwrap()
        };
        let p = with(&[
            "--blockalign=2k",
            "--numjobs=2",
            "--clocksource=gettimeofday",
        ]);
        assert_eq!(
            p.iter().map(|t| t.blockalign_note).collect::<Vec<_>>(),
            [true, false]
        );
        assert!(p
            .iter()
            .all(|t| t.control.clocksource
                == Some(flexio_job::options::ClockSourceOpt::Gettimeofday)));
        assert!(!with(&["--blockalign=2k", "--norandommap"])[0].blockalign_note);
        assert!(!with(&["--blockalign=4k"])[0].blockalign_note);
        // Only random jobs get it (fio 3.33: none for rw=write or percentage_random).
        for rw in ["--rw=write", "--rw=rw", "--rw=trimwrite"] {
            assert!(!with(&["--blockalign=2k", rw])[0].blockalign_note, "{rw}");
        }
        assert!(
            !with(&["--blockalign=2k", "--rw=write", "--percentage_random=50"])[0].blockalign_note
        );
        assert!(with(&["--blockalign=2k", "--rw=randtrim"])[0].blockalign_note);
        assert_eq!(with(&[])[0].control.clocksource, None);
    }
}
