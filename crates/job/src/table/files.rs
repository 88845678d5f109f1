//! Files: names, counts, creation, opening, caching, syncing, removal.

use super::*;

/// Files: names, counts, creation, opening, caching, syncing, removal.
#[rustfmt::skip]
pub(super) static ROWS: &[OptDef] = &[
    prio_row!(
        -1,
        "filename",
        [],
        Kind::Str,
        "",
        "File(s) to use for the workload",
        |o, v| {
            o.filename = Some(req(v)?.to_string());
            Ok(())
        }
    ),
    row!(
        "directory",
        [],
        Kind::Str,
        "",
        "Directory to store files in",
        |o, v| {
            o.directory = Some(req(v)?.to_string());
            Ok(())
        }
    ),
    prio_row!(
        -1,
        "filename_format",
        [],
        Kind::Str,
        "$jobname.$jobnum.$filenum",
        "Override default $jobname.$jobnum.$filenum naming",
        |o, v| {
            o.filename_format = req(v)?.to_string();
            Ok(())
        }
    ),
    row!(
        "nrfiles",
        ["nr_files"],
        Kind::Int {
            min: 1,
            max: 100_000_000
        },
        "1",
        "Split job workload between this number of files",
        |o, v| {
            o.nrfiles = int_in(v, o.kb_base, 1, 100_000_000)? as u32;
            Ok(())
        }
    ),
    row!(
        "file_service_type",
        [],
        Kind::Choice(&[
            ("random", "Choose a file at random (uniform)"),
            ("zipf", "Zipf randomized"),
            ("pareto", "Pareto randomized"),
            ("normal", "Normal (Gaussian) randomized"),
            ("gauss", "Alias for normal"),
            ("roundrobin", "Round robin select files"),
            ("sequential", "Finish one file before moving to the next")
        ]),
        "roundrobin",
        "How to select which file to service next",
        |o, v| {
            let s = req(v)?;
            let (base, post) = match s.split_once(':') {
                Some((b, p)) => (b, Some(p)),
                None => (s, None),
            };
            o.file_service = match base {
                 "random" => FileService::Random,
                 "roundrobin" => FileService::RoundRobin,
                 "sequential" => FileService::Sequential,
                 "zipf" | "pareto" | "normal" | "gauss" => {
                     o.file_service = FileService::Dist(file_dist(base, post)?);
                     o.file_service_nr = 1;
                     return Ok(());
                 }
                 _ => return Err(format!("'{s}' is not a valid value; valid values: random, roundrobin, sequential, zipf, pareto, normal, gauss")),
             };
            o.file_service_nr = match post {
                Some(p) => {
                    let n = parse_size(p, o.kb_base)?;
                    if n == 0 {
                        return Err("the :N switch count must be at least 1".into());
                    }
                    n
                }
                None => 1,
            };
            Ok(())
        }
    ),
    row!(
        "openfiles",
        [],
        Kind::Int {
            min: 1,
            max: 100_000_000
        },
        "",
        "Number of files to keep open at the same time",
        |o, v| {
            o.openfiles = Some(int_in(v, o.kb_base, 1, 100_000_000)? as u32);
            Ok(())
        }
    ),
    row!(
        "fallocate",
        [],
        Kind::Choice(&[
            ("none", "Do not pre-allocate space"),
            ("native", "Use native pre-allocation if possible"),
            ("posix", "Use posix_fallocate()"),
            ("keep", "Use fallocate(..., FALLOC_FL_KEEP_SIZE, ...)"),
            (
                "truncate",
                "Truncate file to final size instead of allocating"
            ),
            ("0", "Alias for 'none'"),
            ("1", "Alias for 'posix'")
        ]),
        "native",
        "Whether pre-allocation is performed when laying out files",
        |o, v| {
            o.fallocate = choice(
                v,
                &[
                    ("none", Fallocate::None),
                    ("0", Fallocate::None),
                    ("native", Fallocate::Native),
                    ("posix", Fallocate::Posix),
                    ("1", Fallocate::Posix),
                    ("keep", Fallocate::Keep),
                    ("truncate", Fallocate::Truncate),
                ],
            )?;
            Ok(())
        }
    ),
    row!(
        "fadvise_hint",
        [],
        Kind::Choice(&[
            ("0", "Don't issue fadvise/madvise"),
            ("1", "Advise using fio IO pattern"),
            ("random", "Advise using FADV_RANDOM"),
            ("sequential", "Advise using FADV_SEQUENTIAL"),
            ("noreuse", "Advise using FADV_NOREUSE (fio 3.35+)")
        ]),
        "1",
        "Use fadvise() to advise the kernel on IO pattern",
        |o, v| {
            if v == Some("noreuse") && o.compat.is_fio333() {
                return Err("'noreuse' is not a valid value in fio 3.33 (fio 3.35 added it); valid values: 0, 1, random, sequential".into());
            }
            o.fadvise_hint = choice(
                v,
                &[
                    ("0", FadviseHint::Off),
                    ("1", FadviseHint::Auto),
                    ("random", FadviseHint::Random),
                    ("sequential", FadviseHint::Sequential),
                    ("noreuse", FadviseHint::NoReuse),
                ],
            )?;
            Ok(())
        }
    ),
    count_row!(
        "fsync",
        [],
        fsync,
        "0",
        "Issue fsync for writes every given number of blocks"
    ),
    count_row!(
        "fdatasync",
        [],
        fdatasync,
        "0",
        "Issue fdatasync for writes every given number of blocks"
    ),
    row!(
        "direct",
        [],
        Kind::Bool,
        "0",
        "Use O_DIRECT IO (negates buffered)",
        |o, v| {
            o.direct = parse_bool(req(v)?)?;
            Ok(())
        }
    ),
    row!(
        "buffered",
        [],
        Kind::Bool,
        "1",
        "Use buffered IO (negates direct)",
        |o, v| {
            o.direct = !parse_bool(req(v)?)?;
            Ok(())
        }
    ),
    bool_row!(
        "overwrite",
        [],
        overwrite,
        "0",
        "When writing, set whether to overwrite current data"
    ),
    row!(
        "sync",
        [],
        Kind::Choice(&[
            ("none", "Don't use sync"),
            ("0", "Alias for 'none'"),
            ("sync", "Use O_SYNC"),
            ("1", "Alias for 'sync'"),
            ("dsync", "Use O_DSYNC")
        ]),
        "none",
        "Use synchronous write IO",
        |o, v| {
            o.sync = choice(
                v,
                &[
                    ("none", SyncMode::None),
                    ("0", SyncMode::None),
                    ("sync", SyncMode::Sync),
                    ("1", SyncMode::Sync),
                    ("dsync", SyncMode::Dsync),
                ],
            )?;
            Ok(())
        }
    ),
    bool_row!(
        "end_fsync",
        [],
        end_fsync,
        "0",
        "Include fsync at the end of job"
    ),
    row!(
        "ioscheduler",
        [],
        Kind::Str,
        "",
        "Use this IO scheduler on the backing device",
        |o, v| {
            o.sysio.ioscheduler = Some(req(v)?.to_string());
            Ok(())
        }
    ),
    row!(
        "end_syncfs",
        [],
        Kind::Bool,
        "0",
        "Include syncfs at the end of job (fio 3.42+)",
        |o, v| {
            o.newest.end_syncfs = parse_bool(req(v)?)?;
            Ok(())
        }
    ).since("3.42"),
    row!(
        "filetype",
        [],
        Kind::Choice(&[
            ("none", "Classify each file with stat"),
            ("file", "Every file is a regular file"),
            ("block", "Every file is a block device"),
            ("char", "Every file is a character device")
        ]),
        "none",
        "Assume all files are of this type, skipping stat (fio 3.41+)",
        |o, v| {
            use crate::newest::FileTypeOpt as F;
            o.newest.filetype = choice(
                v,
                &[("none", F::None), ("file", F::File), ("block", F::Block), ("char", F::Char)],
            )?;
            Ok(())
        }
    ).since("3.41"),
    bool_row!(
        "fsync_on_close",
        [],
        fsync_on_close,
        "0",
        "fsync files on close"
    ),
    bool_row!(
        "unlink",
        [],
        unlink,
        "0",
        "Unlink created files after job has completed"
    ),
    bool_row!(
        "unlink_each_loop",
        [],
        unlink_each_loop,
        "0",
        "Unlink created files after each loop in a job has completed"
    ),
    bool_row!(
        "invalidate",
        [],
        invalidate,
        "1",
        "Invalidate buffer/page cache prior to running job"
    ),
    bool_row!(
        "create_serialize",
        [],
        create_serialize,
        "1",
        "Serialize creation of job files"
    ),
    bool_row!(
        "create_fsync",
        [],
        create_fsync,
        "1",
        "fsync file after creation"
    ),
    bool_row!(
        "create_on_open",
        [],
        create_on_open,
        "0",
        "Create files when they are opened for IO"
    ),
    bool_row!(
        "create_only",
        [],
        create_only,
        "0",
        "Only perform file creation phase"
    ),
    bool_row!(
        "allow_file_create",
        [],
        allow_file_create,
        "1",
        "Permit fio to create files, if they don't exist"
    ),
    bool_row!(
        "allow_mounted_write",
        [],
        allow_mounted_write,
        "0",
        "Allow writes to a mounted partition"
    ),
    bool_row!(
        "pre_read",
        [],
        pre_read,
        "0",
        "Pre-read files before starting official testing"
    ),
    // Only client/server mode prefixes names; flexio runs no clients, so like a local fio
    // it leaves names as they are.
    row!("lockfile", [],
         Kind::Choice(&[("none", "No file locking"), ("exclusive", "Exclusive file lock"), ("readwrite", "Read vs write lock")]),
         "none", "Lock file when doing IO to it",
         |o, v| { o.lockfile = choice(v, &[("none", LockMode::None), ("exclusive", LockMode::Exclusive), ("readwrite", LockMode::ReadWrite)])?; Ok(()) }),
    bool_row!("serialize_overlap", [], serialize_overlap, "0", "Wait for in-flight IOs that collide to complete"),
    row!("opendir", [], Kind::Str, "", "Recursively add files from this directory and down",
         |o, v| { o.opendir = Some(req(v)?.to_string()); Ok(()) }),
    bool_row!(
        "unique_filename",
        [],
        unique_filename,
        "1",
        "For network clients, prefix file with source IP"
    ),
];

/// `file_service_type=zipf|pareto|normal|gauss[:value[:center]]` with fio's defaults (zipf
/// 1.1, pareto 0.2, normal 0) and checks, in fio's words.
fn file_dist(
    base: &str,
    post: Option<&str>,
) -> Result<flexio_workload::fileservice::FileDist, String> {
    use flexio_workload::fileservice::FileDist;
    let mut val = match base {
        "zipf" => 1.1,
        "pareto" => 0.2,
        _ => 0.0,
    };
    let mut center = -1.0;
    if let Some(p) = post {
        let bad = || "fio: file service type random postfix parsing failed".to_string();
        let (v, c) = match p.split_once(':') {
            Some((v, c)) => (v, Some(c)),
            None => (p, None),
        };
        val = v.trim().parse::<f64>().map_err(|_| bad())?;
        if let Some(c) = c {
            center = c.trim().parse::<f64>().map_err(|_| bad())?;
            if !(0.0..=1.0).contains(&center) {
                return Err("fio: distribution center out of range (0 <= center <= 1.0)".into());
            }
        }
    }
    match base {
        "zipf" if val == 1.0 => Err("fio: zipf theta must be different than 1.0".into()),
        "zipf" => Ok(FileDist::Zipf { theta: val, center }),
        "pareto" if val <= 0.0 || val >= 1.0 => {
            Err("fio: pareto input out of range (0 < input < 1.0)".into())
        }
        "pareto" => Ok(FileDist::Pareto { h: val, center }),
        _ if !(0.0..100.0).contains(&val) => {
            Err("fio: normal deviation out of range (0 <= input < 100.0)".into())
        }
        _ => Ok(FileDist::Gauss { dev: val, center }),
    }
}
