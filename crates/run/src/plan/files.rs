//! The files of one job thread: names (filename, directory, filename_format), block
//! devices, sizes (fio's `filesetup.c` rules: size, filesize, or the existing files) and
//! each file's region (offset, offset_increment, file_append).

use super::{err, EnginePlan, PlanError};
use flexio_job::value::{split_colon_escaped, SizeVal};
use flexio_job::{JobDef, JobOptions};
use flexio_workload::Region;
use std::path::{Path, PathBuf};

/// A file a thread uses.
#[derive(Clone, Debug)]
pub struct FilePlan {
    pub path: PathBuf,
    /// Size the file must have for this thread (region end).
    pub need: u64,
    pub region: Region,
    /// Set when the target is a device node, block or character (never laid out,
    /// truncated, renamed or unlinked: everything that changes files filters on
    /// `block.is_none()`).
    pub block: Option<crate::blockdev::BlockInfo>,
    /// What planning's one look at the name found (`None`: not looked at), reused by the
    /// disk watch, the provenance and the layout check: a job of 100,000 files is stat'ed
    /// once per file.
    pub seen: Option<Seen>,
}

/// What planning's `stat` of a file name found.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Seen {
    /// Its device key; `None`: the name did not exist (its directory's then counts).
    pub key: Option<DeviceKey>,
    /// A regular file's size then.
    pub len: Option<u64>,
}

impl Seen {
    /// From a name's metadata (`None`: it did not exist).
    pub fn of(meta: Option<&std::fs::Metadata>) -> Seen {
        Seen {
            key: meta.map(key_of),
            len: meta.filter(|m| m.is_file()).map(|m| m.len()),
        }
    }
}

impl FilePlan {
    /// A character device (`/dev/null`, `/dev/zero`): no size, no layout, no disk.
    pub fn is_char_dev(&self) -> bool {
        self.block.as_ref().is_some_and(|b| b.char_dev)
    }
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

/// How many files a job's options name (`filename`'s list, else `nrfiles`), before
/// anything is looked at (an `opendir` job's files are found by [`resolve`]).
pub fn count_of(o: &flexio_job::JobOptions) -> u32 {
    match &o.filename {
        Some(list) => split_colon_escaped(list).len() as u32,
        None => o.nrfiles,
    }
}

/// The files of clone `sub` of a job.
/// Length of the pseudo-file of engines that move no data (no end in practice).
const NOIO_LEN: u64 = 1 << 60;

pub fn resolve(
    def: &JobDef,
    sub: u32,
    engine: &EnginePlan,
    ask_engine: bool,
) -> Result<Vec<FilePlan>, PlanError> {
    let o = &def.opts;
    let caps = &engine.caps;
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
            // fio's name is the directory, '/', the name: `directory=/x/` gives `/x//j.0.0`,
            // the name iologs show and the zipf/pareto/normal seed hashes.
            let d = &dirs[(sub as usize + filenum as usize) % dirs.len()];
            PathBuf::from(format!("{d}/{n}"))
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
            seen: None,
        }]);
    }
    if caps.pipe {
        // A stream (net): named by filename (a host or socket path), its length is the
        // job's size; nothing on disk is looked at.
        // The engine is asked only when planning for a run (not while fuzzing the planner):
        // an NBD export's size needs a connection.
        let known = if ask_engine {
            flexio_engine::target_size(&engine.name, &engine.cfg).map_err(|m| err(def, m))?
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
            seen: None,
        }]);
    }
    let names: Vec<PathBuf> = found.into_iter().chain(names).collect();
    let mut blocks: Vec<Option<crate::blockdev::BlockInfo>> = Vec::new();
    // Each name is looked at once (one stat): the device check, the file type check and
    // the existing size below all use this answer.
    let metas: Vec<Option<std::fs::Metadata>> =
        names.iter().map(|n| std::fs::metadata(n).ok()).collect();
    let filetype = o.newest.filetype;
    for (n, meta) in names.iter().zip(&metas) {
        if filetype == flexio_job::newest::FileTypeOpt::File {
            // filetype=file: every file is taken to be a regular file, nothing is classified.
            blocks.push(None);
            continue;
        }
        let b = if filetype == flexio_job::newest::FileTypeOpt::Char {
            // filetype=char: every file is taken to be a character device, unlooked at.
            Some(crate::blockdev::BlockInfo::char_device(n))
        } else {
            meta.as_ref()
                .map_or(Ok(None), |m| crate::blockdev::probe_with(n, m))
                .map_err(|e| {
                    err(
                        def,
                        format!("cannot open block device '{}': {e}", n.display()),
                    )
                })?
        };
        if let Some(dev) = b.as_ref() {
            // Engines that create, remove or rename names (or work on directories) never
            // get a device node: nothing may replace or remove one.
            if caps.changes_names || caps.creates || caps.dirs || caps.file_op {
                let what = if dev.char_dev { "character" } else { "block" };
                return Err(err(
                    def,
                    format!(
                        "'{}' is a {what} device; ioengine={} works on file names and is not run on device nodes",
                        n.display(),
                        o.ioengine
                    ),
                ));
            }
        }
        if b.as_ref().map_or(true, |b| b.char_dev)
            && filetype == flexio_job::newest::FileTypeOpt::Block
        {
            return Err(err(
                def,
                format!("'{}' is not a block device (filetype=block)", n.display()),
            ));
        }
        if b.is_none() && !caps.dirs {
            if let Some(m) = meta {
                if !m.is_file() {
                    let what = if m.is_dir() {
                        "a directory"
                    } else {
                        "a FIFO, socket or other special file"
                    };
                    return Err(err(
                        def,
                        format!(
                            "'{}' is {what}; flexio runs on regular files, block and character devices",
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
    let mut existing: Vec<Option<u64>> = Vec::with_capacity(names.len());
    for ((p, b), meta) in names.iter().zip(&blocks).zip(&metas) {
        existing.push(match b {
            // A character device has no size (the job's size= or filesize= gives it),
            // unless its engine can tell (sg's READ CAPACITY, mtd's MEMGETINFO).
            Some(b) if b.char_dev && ask_engine => {
                flexio_engine::device_size(&engine.name, p, &engine.cfg).map_err(|m| err(def, m))?
            }
            Some(b) if b.char_dev => None,
            Some(b) => Some(b.size),
            None => meta.as_ref().filter(|m| m.is_file()).map(|m| m.len()),
        });
    }
    let no_size = |n: &Path, i: usize| -> String {
        if blocks[i].as_ref().is_some_and(|b| b.char_dev) {
            format!("'{}' is a character device and has no size", n.display())
        } else {
            format!("'{}' does not exist or is empty", n.display())
        }
    };
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
            for (i, (n, e)) in names.iter().zip(&existing).enumerate() {
                match e {
                    Some(s) => v.push(SizeVal::Percent(p).resolve(*s)),
                    None => {
                        return Err(err(
                            def,
                            format!(
                            "you need to specify size= (size={p}% needs a size to take it of: {})",
                            no_size(n, i)
                        ),
                        ))
                    }
                }
            }
            v
        }
        // fill_device: "a really large size" (fio's -1): the file system's end is the end.
        (None, None) if o.fill_device && blocks.iter().all(|b| b.is_none()) => {
            vec![u64::MAX / nfiles.max(1); nfiles as usize]
        }
        (None, None) => {
            if caps.creates || caps.dirs {
                // The operation makes (or setup makes) the target: one block per file.
                vec![o.bs[0]; nfiles as usize]
            } else {
                let mut v = Vec::new();
                for (i, (n, e)) in names.iter().zip(&existing).enumerate() {
                    match e {
                        Some(s) if *s > 0 => v.push(*s),
                        _ => {
                            return Err(err(
                                def,
                                format!("you need to specify size= ({})", no_size(n, i)),
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
    let mut files = Vec::with_capacity(names.len());
    for (i, path) in names.iter().enumerate() {
        let share = per_file[i];
        let char_dev = blocks[i].as_ref().is_some_and(|b| b.char_dev);
        // fio's start offset: percentages are of the file's size before the job (0 for a
        // file still to be made; the job's size for a character device or a diskless
        // engine's file), and an offset with a percentage in it (offset or
        // offset_increment) is rounded up to offset_align, else the smallest block size.
        // file_append on a file starts at its current end (on a device, at the offset).
        let real = if char_dev || caps.diskless {
            share
        } else {
            existing[i].unwrap_or(0)
        };
        let appends = o.file_append && blocks[i].is_none();
        let start = if appends {
            existing[i].unwrap_or(0)
        } else {
            start_offset(o, real, sub)
        };
        let len = match o.size {
            // A character device is as large as the job's size says (fio's rule): the
            // offset moves the start inside it, the region ends there.
            _ if char_dev => share.saturating_sub(start),
            Some(SizeVal::Percent(_)) | None
                if existing[i].is_some()
                    && o.filesize.is_none()
                    && !o.file_append
                    && !(o.fill_device && o.size.is_none()) =>
            {
                share.min(existing[i].unwrap_or(0).saturating_sub(start))
            }
            // filesize= is the file's size: the region runs from the offset to its end
            // (fio's io_size of the file; `size` only bounds the job's I/O).
            _ if o.filesize.is_some() && !o.file_append => share.saturating_sub(start),
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
        if let Some(b) = blocks[i].as_ref().filter(|b| !b.char_dev) {
            check_block(def, path, b, start, len)?;
        }
        let len = len.min(u64::MAX - start);
        files.push(FilePlan {
            path: path.clone(),
            need: start + len,
            region: Region { start, len },
            block: blocks[i].clone(),
            seen: Some(Seen::of(metas[i].as_ref())),
        });
    }
    Ok(files)
}

/// fio's start offset of a thread's region in a file of `real` bytes: `offset` plus
/// `offset_increment` times the subjob number; with a percentage in either, of the file's
/// size and rounded up to offset_align, else the smallest block size.
pub(crate) fn start_offset(o: &JobOptions, real: u64, sub: u32) -> u64 {
    let start = o.offset.resolve(real) + o.offset_increment.resolve(real) * sub as u64;
    let pct = matches!(o.offset, SizeVal::Percent(_))
        || matches!(o.offset_increment, SizeVal::Percent(_));
    if !pct {
        return start;
    }
    let align = if o.offset_align > 0 {
        o.offset_align
    } else {
        o.min_bs()
    };
    start.div_ceil(align) * align
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

/// A file's device key for the disk watch and the provenance: (a block device, its device
/// numbers: a block device's own, anything else's file system's).
pub type DeviceKey = (bool, u64);

/// The files' device keys as planning saw them. A name that did not exist then goes by its
/// directory's (each directory looked at once); a file planning did not look at (a replay
/// trace's, say) is looked at now. `None`: neither the name nor its directory could be.
pub fn device_keys<'a>(
    files: impl IntoIterator<Item = &'a FilePlan>,
) -> Vec<(&'a Path, Option<DeviceKey>)> {
    let mut dirs: std::collections::HashMap<&Path, Option<DeviceKey>> = Default::default();
    files
        .into_iter()
        .map(|f| {
            let p = f.path.as_path();
            let key = match f.seen {
                Some(Seen { key: Some(k), .. }) => Some(k),
                Some(_) => *dirs
                    .entry(dir_of(p))
                    .or_insert_with(|| std::fs::metadata(dir_of(p)).ok().map(|m| key_of(&m))),
                None => device_key(p),
            };
            (p, key)
        })
        .collect()
}

/// One path's device key, looked at now (a path that does not exist by its directory's).
pub fn device_key(path: &Path) -> Option<DeviceKey> {
    let m = std::fs::metadata(path).or_else(|_| std::fs::metadata(dir_of(path)));
    m.ok().map(|m| key_of(&m))
}

/// A name's device key from its metadata: a block device's own numbers, anything else's
/// file system's.
fn key_of(m: &std::fs::Metadata) -> DeviceKey {
    use std::os::unix::fs::{FileTypeExt, MetadataExt};
    let block = m.file_type().is_block_device();
    (block, if block { m.rdev() } else { m.dev() })
}

/// The directory a name is in (`.` for a bare name).
fn dir_of(path: &Path) -> &Path {
    path.parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
}

/// One path per device key, in first-seen order, with how many of the (distinct) paths
/// share its key; paths without a key stand alone.
pub fn one_per_device<'a>(
    keys: &[(&'a Path, Option<DeviceKey>)],
) -> Vec<(&'a Path, Option<DeviceKey>, u64)> {
    let mut out: Vec<(&Path, Option<DeviceKey>, u64)> = Vec::new();
    let mut at: std::collections::HashMap<DeviceKey, usize> = Default::default();
    let mut paths: std::collections::HashSet<&Path> = Default::default();
    for &(p, k) in keys {
        if !paths.insert(p) {
            continue;
        }
        match k {
            Some(k) => match at.get(&k) {
                Some(&i) => out[i].2 += 1,
                None => {
                    at.insert(k, out.len());
                    out.push((p, Some(k), 1));
                }
            },
            None => out.push((p, None, 1)),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_path_per_device_with_its_count() {
        let p = |s: &'static str| Path::new(s);
        let keys = [
            (p("/a/0"), Some((false, 7))),
            (p("/dev/x"), Some((true, 8))),
            (p("/a/1"), Some((false, 7))),
            (p("/a/1"), Some((false, 7))), // the same path twice counts once
            (p("/gone/0"), None),
            (p("/gone/1"), None),
            (p("/b/0"), Some((false, 7))),
        ];
        assert_eq!(
            one_per_device(&keys),
            [
                (p("/a/0"), Some((false, 7)), 3),
                (p("/dev/x"), Some((true, 8)), 1),
                (p("/gone/0"), None, 1),
                (p("/gone/1"), None, 1),
            ]
        );
    }

    #[test]
    fn a_missing_file_goes_by_its_directory() {
        use std::os::unix::fs::MetadataExt;
        let d = tempfile::tempdir().unwrap();
        let there = d.path().join("f");
        std::fs::write(&there, b"x").unwrap();
        let missing = d.path().join("g");
        let plan = |path: &Path, looked: bool| FilePlan {
            path: path.to_path_buf(),
            need: 1,
            region: Region { start: 0, len: 1 },
            block: None,
            seen: looked.then(|| Seen::of(std::fs::metadata(path).ok().as_ref())),
        };
        let files = [
            plan(&there, true),
            plan(&missing, true),
            plan(&there, false),
        ];
        let dev = std::fs::metadata(d.path()).unwrap().dev();
        let keys = device_keys(&files);
        assert!(
            keys.iter().all(|(_, k)| *k == Some((false, dev))),
            "{keys:?}"
        );
        assert_eq!(files[0].seen.unwrap().len, Some(1));
        assert_eq!(files[1].seen, Some(Seen::default()));
    }
}
