//! The files of one job thread: names (filename, directory, filename_format), block
//! devices, sizes (fio's `filesetup.c` rules: size, filesize, or the existing files) and
//! each file's region (offset, offset_increment, file_append).

use super::{err, PlanError};
use flexio_engine::Caps;
use flexio_job::value::{split_colon_escaped, SizeVal};
use flexio_job::JobDef;
use flexio_workload::Region;
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

/// Expand `filename_format` for one file.
pub fn format_name(fmt: &str, jobname: &str, jobnum: u32, filenum: u32) -> String {
    fmt.replace("$jobname", jobname)
        .replace("$jobnum", &jobnum.to_string())
        .replace("$filenum", &filenum.to_string())
        .replace("$clientuid", "0")
}

/// Entries opendir looks at before it gives up (a whole file system is not a job's files).
const OPENDIR_MAX_ENTRIES: u32 = 65536;

/// The regular files below `dir`, depth first in directory order (symbolic links and
/// special files are left out).
fn walk(dir: &Path, out: &mut Vec<PathBuf>, budget: &mut u32) -> std::io::Result<()> {
    for e in std::fs::read_dir(dir)? {
        let e = e?;
        if *budget == 0 {
            return Err(std::io::Error::other(format!(
                "more than {OPENDIR_MAX_ENTRIES} entries below it; flexio stops there"
            )));
        }
        *budget -= 1;
        let t = e.file_type()?;
        if t.is_dir() {
            walk(&e.path(), out, budget)?;
        } else if t.is_file() {
            out.push(e.path());
        }
    }
    Ok(())
}

/// Current size of a regular file (None if missing).
fn existing_size(p: &Path) -> Option<u64> {
    std::fs::metadata(p)
        .ok()
        .filter(|m| m.is_file())
        .map(|m| m.len())
}

/// The files of clone `sub` of a job.
/// Length of the pseudo-file of engines that move no data (no end in practice).
const NOIO_LEN: u64 = 1 << 60;

pub fn resolve(
    def: &JobDef,
    sub: u32,
    caps: &Caps,
    ask_engine: bool,
) -> Result<Vec<FilePlan>, PlanError> {
    let o = &def.opts;
    let name = &o.name;
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
    // opendir: the regular files below the directory (in directory order, depth first), then
    // those of filename=, as fio adds them.
    let mut found = Vec::new();
    if let Some(d) = &o.opendir {
        let mut budget = OPENDIR_MAX_ENTRIES;
        walk(Path::new(d), &mut found, &mut budget)
            .map_err(|e| err(def, format!("opendir '{d}': {e}")))?;
        if found.is_empty() && o.filename.is_none() {
            return Err(err(def, format!("opendir '{d}' has no regular files")));
        }
    }
    let names: Vec<PathBuf> = match &o.filename {
        None if !found.is_empty() => Vec::new(),
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
            .map(|i| in_dir(&format_name(&o.filename_format, name, sub, i), i))
            .collect(),
    };
    if caps.noio {
        // Engines that move no data (cpuio, exec) run on one pseudo-file without end.
        let len = NOIO_LEN / o.max_bs().max(1) * o.max_bs().max(1);
        return Ok(vec![FilePlan {
            path: names
                .into_iter()
                .next()
                .unwrap_or_else(|| PathBuf::from(name)),
            need: 0,
            region: Region { start: 0, len },
            block: None,
        }]);
    }
    if caps.pipe {
        // A stream (net): named by filename (a host or socket path), its length is the
        // job's size; nothing on disk is looked at.
        let cfg =
            crate::plan::engine_config(o, o.iodepth, 1, &[0; flexio_workload::rng::slot::COUNT]);
        // The engine is asked only when planning for a run (not while fuzzing the planner):
        // an NBD export's size needs a connection.
        let known = if ask_engine {
            flexio_engine::target_size(&o.ioengine, &cfg).map_err(|m| err(def, m))?
        } else {
            None
        };
        let len = match (o.size, known) {
            (Some(SizeVal::Bytes(n)), Some(k)) if n > 0 => n.min(k),
            (Some(SizeVal::Percent(p)), Some(k)) => SizeVal::Percent(p).resolve(k),
            (Some(SizeVal::Bytes(n)), None) if n > 0 => n,
            (_, Some(k)) if k > 0 => k,
            _ if o.runtime_us > 0 => NOIO_LEN / o.max_bs().max(1) * o.max_bs().max(1),
            _ => {
                return Err(err(
                    def,
                    format!(
                        "you need to specify size= (an ioengine={} job transfers that much)",
                        o.ioengine
                    ),
                ))
            }
        };
        let path = PathBuf::from(o.filename.as_deref().unwrap_or(&o.ioengine));
        return Ok(vec![FilePlan {
            path,
            need: 0,
            region: Region { start: 0, len },
            block: None,
        }]);
    }
    let names: Vec<PathBuf> = found.into_iter().chain(names).collect();
    let mut blocks: Vec<Option<crate::blockdev::BlockInfo>> = Vec::new();
    let filetype = o.newest.filetype;
    for n in &names {
        if filetype == flexio_job::newest::FileTypeOpt::File {
            // filetype=file: every file is taken to be a regular file, nothing is classified.
            blocks.push(None);
            continue;
        }
        let b = crate::blockdev::probe(n).map_err(|e| {
            err(
                def,
                format!("cannot open block device '{}': {e}", n.display()),
            )
        })?;
        if b.is_none() && filetype == flexio_job::newest::FileTypeOpt::Block {
            return Err(err(
                def,
                format!("'{}' is not a block device (filetype=block)", n.display()),
            ));
        }
        if b.is_none() && !caps.dirs {
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
            if caps.creates || caps.dirs {
                // The operation makes (or setup makes) the target: one block per file.
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
    Ok(files)
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
