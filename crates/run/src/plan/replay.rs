//! Trace replay and capture in the plan: a job with `read_iolog` takes its files,
//! directions and block sizes from the trace (fio's `init_iolog`), not from its options.

use super::{err, FilePlan, PlanError};
use crate::iolog::{self, Format, ReplayOpts, TraceInfo};
use flexio_job::options::{JobOptions, RwKind};
use flexio_job::JobDef;
use flexio_workload::Region;
use std::path::PathBuf;

/// A job thread replaying a trace.
#[derive(Clone, Debug)]
pub struct ReplayPlan {
    pub trace: PathBuf,
    pub opts: ReplayOpts,
    /// The trace's files, in the order its entries index them.
    pub files: Vec<PathBuf>,
    pub format: Format,
    /// Messages fio prints while loading the trace.
    pub notes: Vec<String>,
    /// The trace has sync entries (`fsync`, `fdatasync`, `sync_file_range`): only the
    /// general loop issues those ([`crate::plan::features::Feature::Syncs`]).
    pub syncs: bool,
}

/// A job thread writing its I/O as a version-3 iolog (`write_iolog`).
#[derive(Clone, Debug)]
pub struct CapturePlan {
    pub path: PathBuf,
}

/// fio's `get_name_by_idx`: entry `sub` (modulo their number) of a `:`-separated list.
pub fn name_by_idx(list: &str, sub: u32) -> String {
    let v = flexio_job::value::split_colon_escaped(list);
    if v.is_empty() {
        return list.to_string();
    }
    v[sub as usize % v.len()].clone()
}

/// The replay options of a job.
pub fn replay_opts(o: &JobOptions, readonly: bool, compat: flexio_job::Compat) -> ReplayOpts {
    let i = &o.iolog;
    ReplayOpts {
        no_stall: i.no_stall,
        time_scale: i.time_scale.max(1),
        scale: i.scale,
        align: i.align,
        skip: i.skip,
        redirect: i.redirect.as_ref().map(PathBuf::from),
        readonly,
        skip_in_iologs: !compat.is_fio333(),
    }
}

/// A loaded trace: the replay, the options the rest of the plan is built from, the files,
/// and what the trace holds.
pub struct Loaded {
    pub plan: ReplayPlan,
    pub opts: JobOptions,
    pub files: Vec<FilePlan>,
    pub info: TraceInfo,
}

/// Load the trace of clone `sub`: its plan, the options the rest of the plan is built from
/// (directions and block sizes of the trace) and the files.
pub fn load(
    def: &JobDef,
    sub: u32,
    readonly: bool,
    compat: flexio_job::Compat,
) -> Result<Option<Loaded>, PlanError> {
    let o = &def.opts;
    let Some(list) = &o.iolog.read else {
        return Ok(None);
    };
    let opts = replay_opts(o, readonly, compat);
    // With merge_blktrace_file the job replays the merged trace (see [`merge`]).
    let trace = match &o.iolog.merge_file {
        Some(m) => PathBuf::from(m),
        None => PathBuf::from(name_by_idx(list, sub)),
    };
    let info = iolog::scan(&trace, &opts).map_err(|m| err(def, format!("read_iolog: {m}")))?;
    let format = info.format.unwrap_or(Format::Text(2));
    let [r, w, t] = info.dirs();
    if !r && !w && !t && info.waits == 0 && info.syncs == 0 {
        let what = match format {
            Format::Blktrace { .. } => "found no ios in blktrace data",
            Format::Text(_) => "the iolog has no I/O to replay",
        };
        return Err(err(
            def,
            format!("read_iolog '{}': {what}", trace.display()),
        ));
    }
    let mut ro = o.clone();
    ro.rw = match (r, w, t) {
        (true, false, false) => RwKind::Read,
        (false, true, false) => RwKind::Write,
        (false, false, true) => RwKind::Trim,
        (false, true, true) => RwKind::TrimWrite,
        (false, false, false) => RwKind::Read,
        _ => RwKind::ReadWrite,
    };
    if ro.verify != 0 && ro.verify_interval == 0 {
        // fio: the verify interval defaults to the job's own write block size; the trace
        // only raises the largest block size.
        ro.verify_interval = o.min_bs_dir(1);
    }
    for d in 0..3 {
        if info.max_bs[d] > 0 {
            ro.bs[d] = info.max_bs[d].max(ro.bs[d]);
        }
    }
    ro.bssplit = None;
    ro.bsrange = None;
    let mut files = Vec::with_capacity(info.files.len());
    for (i, path) in info.files.iter().enumerate() {
        let block = crate::blockdev::probe(path).map_err(|e| {
            err(
                def,
                format!("cannot open block device '{}': {e}", path.display()),
            )
        })?;
        let end = info.max_end.get(i).copied().unwrap_or(0);
        let len = block.as_ref().map_or(end, |b| b.size.max(end));
        files.push(FilePlan {
            path: path.clone(),
            // Replayed files are used as they are (created on open when a write needs one).
            need: 0,
            region: Region { start: 0, len },
            block,
            seen: None,
        });
    }
    Ok(Some(Loaded {
        plan: ReplayPlan {
            trace,
            opts,
            files: info.files.clone(),
            format,
            notes: info.notes.clone(),
            syncs: info.syncs > 0,
        },
        opts: ro,
        files,
        info,
    }))
}

/// `merge_blktrace_file`: merge the job's traces (all of `read_iolog`'s list) into one
/// before the job set is planned (the planner only reads), once per job definition as fio
/// does.
pub fn merge(def: &JobDef) -> Result<(), PlanError> {
    let o = &def.opts;
    let (Some(out), Some(list)) = (&o.iolog.merge_file, &o.iolog.read) else {
        return Ok(());
    };
    let inputs: Vec<PathBuf> = flexio_job::value::split_colon_escaped(list)
        .into_iter()
        .map(PathBuf::from)
        .collect();
    iolog::blktrace::merge(
        &inputs,
        &o.iolog.merge_scalars,
        &o.iolog.merge_iters,
        std::path::Path::new(out),
    )
    .map_err(|m| err(def, format!("merge_blktrace_file: {m}")))?;
    Ok(())
}

/// Options flexio does not combine with replay (rejected, never ignored).
pub fn check_replay_options(def: &JobDef) -> Result<(), PlanError> {
    let o = &def.opts;
    if o.iolog.read.is_none() {
        if o.iolog.redirect.is_some() {
            // fio ignores replay options without a trace; so does flexio.
        }
        return Ok(());
    }
    if o.verify != 0 && o.experimental_verify {
        // The trace, not a generator, chose the writes: there is nothing to replay.
        return Err(err(
            def,
            "experimental_verify with read_iolog is not supported by flexio",
        ));
    }
    if o.iolog.write.is_some() {
        // fio: a job that replays does not capture.
    }
    Ok(())
}
