//! Files: names, counts, creation, opening, caching, syncing, removal.

use super::*;

/// Files: names, counts, creation, opening, caching, syncing, removal.
#[rustfmt::skip]
pub(super) static ROWS: &[OptDef] = &[
    OptDef {
        name: "filename",
        aliases: &[],
        kind: Kind::Str,
        default: "",
        help: "File(s) to use for the workload",
        prio: -1,
        set: |o, v| {
            o.filename = Some(req(v)?.to_string());
            Ok(())
        },
    },
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
    OptDef {
        name: "filename_format",
        aliases: &[],
        kind: Kind::Str,
        default: "$jobname.$jobnum.$filenum",
        help: "Override default $jobname.$jobnum.$filenum naming",
        prio: -1,
        set: |o, v| {
            o.filename_format = req(v)?.to_string();
            Ok(())
        },
    },
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
            ("random", "Choose a file at random"),
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
                 "zipf" | "pareto" | "normal" | "gauss" =>
                     return Err(format!("file_service_type={base} is not supported by flexio yet")),
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
            ("sequential", "Advise using FADV_SEQUENTIAL")
        ]),
        "1",
        "Use fadvise() to advise the kernel on IO pattern",
        |o, v| {
            o.fadvise_hint = choice(
                v,
                &[
                    ("0", FadviseHint::Off),
                    ("1", FadviseHint::Auto),
                    ("random", FadviseHint::Random),
                    ("sequential", FadviseHint::Sequential),
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
        "end_syncfs",
        [],
        Kind::Bool,
        "0",
        "Include syncfs at the end of job (fio 3.42+)",
        |o, v| {
            o.newest.end_syncfs = parse_bool(req(v)?)?;
            Ok(())
        }
    ),
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
    ),
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
