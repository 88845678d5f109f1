//! The option table: one declarative row per option (fio's `struct fio_option`).
//!
//! The same rows drive job-file parsing, argv parsing, `--cmdhelp`, the did-you-mean
//! suggestions and the canonical names in the JSON `job options` echo. Adding an option
//! means adding a field to [`JobOptions`] and one row here.

use crate::options::*;
use crate::value::*;

/// How a value is written; used for help output and for argv (a [`Kind::Flag`] takes an
/// optional value, everything else requires one).
#[derive(Clone, Copy, Debug)]
pub enum Kind {
    /// Free string.
    Str,
    /// One of a fixed set of names (with help text), optionally with a `:postfix`.
    Choice(&'static [(&'static str, &'static str)]),
    /// Integer (size suffixes allowed), with inclusive bounds.
    Int { min: i64, max: i64 },
    /// Size with suffix; `pct` also accepts `N%`.
    Size { pct: bool },
    /// Up to three sizes: read,write,trim.
    SizeDir,
    /// Up to three integers: read,write,trim.
    IntDir,
    /// Time; default unit seconds when `secs`, else microseconds.
    Time { secs: bool },
    /// 0 or 1.
    Bool,
    /// Bare key means 1 (fio's `str_set`).
    Flag,
    /// `lo-hi` ranges, up to three.
    Range,
    /// `:`-separated floats.
    FloatList,
}

impl Kind {
    pub fn describe(&self) -> &'static str {
        match self {
            Kind::Str => "string (opt=bla)",
            Kind::Choice(_) => "string (opt=bla)",
            Kind::Int { .. } | Kind::IntDir => "integer value (opt=100)",
            Kind::Size { .. } | Kind::SizeDir => "integer value (opt=100)",
            Kind::Time { .. } => "integer value (opt=100)",
            Kind::Bool => "boolean value (opt=1)",
            Kind::Flag => "no argument (opt)",
            Kind::Range => "range of integers (opt=1k-4k)",
            Kind::FloatList => "list of floating point values separated by ':' (opt=5.9:7.8)",
        }
    }
}

/// Parses a value (`None` for a bare key) into the job options.
pub type Setter = fn(&mut JobOptions, Option<&str>) -> Result<(), String>;

/// One option.
pub struct OptDef {
    pub name: &'static str,
    pub aliases: &'static [&'static str],
    pub kind: Kind,
    pub help: &'static str,
    /// Default as `--cmdhelp` shows it ("" = none).
    pub default: &'static str,
    /// Engines that own this option; empty = a generic option.
    pub engines: &'static [&'static str],
    /// Parse order within a section: higher first (kb_base before sizes), lower last
    /// (filename after directory), as fio's `sort_options()`.
    pub prio: i8,
    pub set: Setter,
}

impl OptDef {
    pub fn takes_optional_value(&self) -> bool {
        matches!(self.kind, Kind::Flag)
    }
}

fn req(v: Option<&str>) -> Result<&str, String> {
    match v {
        Some(s) if !s.is_empty() => Ok(s),
        _ => Err("this option requires a value".into()),
    }
}

fn flag(v: Option<&str>) -> Result<bool, String> {
    match v {
        None | Some("") => Ok(true),
        Some(s) => parse_bool(s),
    }
}

fn int_in(v: Option<&str>, kb: KbBase, min: i64, max: i64) -> Result<i64, String> {
    let s = req(v)?;
    let n = parse_int(s, kb)?;
    if n < min || n > max {
        return Err(format!("value {n} is out of range [{min}, {max}]"));
    }
    Ok(n)
}

fn choice<T: Copy>(v: Option<&str>, table: &[(&str, T)]) -> Result<T, String> {
    let s = req(v)?;
    for (name, val) in table {
        if *name == s {
            return Ok(*val);
        }
    }
    let names: Vec<&str> = table.iter().map(|(n, _)| *n).collect();
    Err(format!(
        "'{s}' is not a valid value; valid values: {}",
        names.join(", ")
    ))
}

fn dirs_sizes(o: &JobOptions, s: &str, cur: [u64; 3]) -> Result<[u64; 3], String> {
    let parts = split_dirs(s, true)?;
    let mut out = cur;
    for (i, p) in parts.iter().enumerate() {
        if let Some(p) = p {
            out[i] = parse_size(p, o.kb_base)?;
        }
    }
    Ok(out)
}

macro_rules! row {
    ($name:expr, [$($alias:expr),*], $kind:expr, $def:expr, $help:expr, $set:expr) => {
        OptDef { name: $name, aliases: &[$($alias),*], kind: $kind, help: $help, default: $def,
                 engines: &[], prio: 0, set: $set }
    };
}

macro_rules! prio_row {
    ($prio:expr, $name:expr, [$($alias:expr),*], $kind:expr, $def:expr, $help:expr, $set:expr) => {
        OptDef { name: $name, aliases: &[$($alias),*], kind: $kind, help: $help, default: $def,
                 engines: &[], prio: $prio, set: $set }
    };
}

macro_rules! erow {
    ($name:expr, [$($eng:expr),*], $kind:expr, $def:expr, $help:expr, $set:expr) => {
        OptDef { name: $name, aliases: &[], kind: $kind, help: $help, default: $def,
                 engines: &[$($eng),*], prio: 0, set: $set }
    };
}

macro_rules! bool_row {
    ($name:expr, [$($alias:expr),*], $field:ident, $def:expr, $help:expr) => {
        row!($name, [$($alias),*], Kind::Bool, $def, $help,
             |o, v| { o.$field = parse_bool(req(v)?)?; Ok(()) })
    };
}

/// A non-negative count into a `u64` field (size suffixes allowed, as fio's int options).
macro_rules! count_row {
    ($name:expr, [$($alias:expr),*], $field:ident, $def:expr, $help:expr) => {
        row!($name, [$($alias),*], Kind::Int { min: 0, max: i64::MAX }, $def, $help,
             |o, v| { o.$field = int_in(v, o.kb_base, 0, i64::MAX)? as u64; Ok(()) })
    };
}

macro_rules! flag_row {
    ($name:expr, [$($alias:expr),*], $field:ident, $help:expr) => {
        row!($name, [$($alias),*], Kind::Flag, "0", $help, |o, v| { o.$field = flag(v)?; Ok(()) })
    };
}

macro_rules! time_row {
    ($name:expr, [$($alias:expr),*], $field:ident, $secs:expr, $help:expr) => {
        row!($name, [$($alias),*], Kind::Time { secs: $secs }, "0", $help,
             |o, v| { o.$field = parse_time_us(req(v)?, $secs)?; Ok(()) })
    };
}

const ENGINE_NAMES_HELP: &[(&str, &str)] = &[];

/// Every option flexio understands, in `--cmdhelp` order.
pub static OPTIONS: &[OptDef] = &[
    // ------------------------------------------------------------------ description
    row!(
        "description",
        [],
        Kind::Str,
        "",
        "Text job description",
        |o, v| {
            o.description = Some(req(v)?.to_string());
            Ok(())
        }
    ),
    row!("name", [], Kind::Str, "", "Name of this job", |o, v| {
        o.name = req(v)?.to_string();
        Ok(())
    }),
    // ------------------------------------------------------------------ files
    OptDef {
        name: "filename",
        aliases: &[],
        kind: Kind::Str,
        default: "",
        help: "File(s) to use for the workload",
        engines: &[],
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
        engines: &[],
        prio: -1,
        set: |o, v| {
            o.filename_format = req(v)?.to_string();
            Ok(())
        },
    },
    // ------------------------------------------------------------------ io type
    row!(
        "rw",
        ["readwrite"],
        Kind::Choice(RwKind::CHOICES),
        "read",
        "IO direction",
        |o, v| {
            let s = req(v)?;
            let (base, post) = match s.split_once(':') {
                Some((b, p)) => (b, Some(p)),
                None => (s, None),
            };
            o.rw = RwKind::from_name(base).ok_or_else(|| {
                let names: Vec<&str> = RwKind::CHOICES.iter().map(|c| c.0).collect();
                format!(
                    "'{base}' is not a valid value; valid values: {}",
                    names.join(", ")
                )
            })?;
            o.rw_nr = match post {
                Some(p) => parse_size(p, o.kb_base)?,
                None => 0,
            };
            Ok(())
        }
    ),
    row!(
        "bs",
        ["blocksize"],
        Kind::SizeDir,
        "4096",
        "Block size unit",
        |o, v| {
            let bs = dirs_sizes(o, req(v)?, o.bs)?;
            if bs.contains(&0) {
                return Err("block size must be at least 1".into());
            }
            o.bs = bs;
            Ok(())
        }
    ),
    row!(
        "ba",
        ["blockalign"],
        Kind::SizeDir,
        "",
        "IO block offset alignment",
        |o, v| {
            let cur = o.blockalign.unwrap_or([0; 3]);
            let ba = dirs_sizes(o, req(v)?, cur)?;
            if ba.contains(&0) {
                return Err("block alignment must be at least 1".into());
            }
            o.blockalign = Some(ba);
            Ok(())
        }
    ),
    row!(
        "bsrange",
        ["blocksize_range"],
        Kind::Range,
        "",
        "Set block size range (in more detail than bs)",
        |o, v| {
            let s = req(v)?;
            let mut r =
                o.bsrange
                    .unwrap_or([(o.bs[0], o.bs[0]), (o.bs[1], o.bs[1]), (o.bs[2], o.bs[2])]);
            let parts: Vec<&str> = s.split(',').collect();
            if parts.len() > 3 {
                return Err("at most three ranges (read,write,trim) are allowed".into());
            }
            let mut last = None;
            for (i, p) in parts.iter().enumerate() {
                if p.is_empty() {
                    continue;
                }
                let rr = parse_range(p, o.kb_base)?;
                if rr.0 == 0 {
                    return Err("block size must be at least 1".into());
                }
                r[i] = rr;
                last = Some(rr);
            }
            if let Some(l) = last {
                for slot in r.iter_mut().skip(parts.len()) {
                    *slot = l;
                }
            }
            o.bsrange = Some(r);
            Ok(())
        }
    ),
    row!(
        "bssplit",
        [],
        Kind::Str,
        "",
        "Set a specific mix of block sizes",
        |o, v| {
            o.bssplit = Some(crate::bssplit::parse_bssplit(req(v)?, o.kb_base)?);
            Ok(())
        }
    ),
    flag_row!(
        "bs_unaligned",
        ["blocksize_unaligned"],
        bs_unaligned,
        "Don't sector align IO buffer sizes"
    ),
    bool_row!(
        "bs_is_seq_rand",
        [],
        bs_is_seq_rand,
        "0",
        "Consider any blocksize setting to be sequential,random"
    ),
    bool_row!(
        "randrepeat",
        [],
        randrepeat,
        "1",
        "Use repeatable random IO pattern"
    ),
    row!(
        "randseed",
        [],
        Kind::Size { pct: false },
        "0x89",
        "Set the random generator seed value",
        |o, v| {
            o.randseed = Some(parse_size(req(v)?, o.kb_base)?);
            o.randrepeat = false;
            Ok(())
        }
    ),
    flag_row!(
        "norandommap",
        [],
        norandommap,
        "Accept potential duplicate random blocks"
    ),
    row!(
        "rw_sequencer",
        [],
        Kind::Choice(&[
            ("sequential", "Generate sequential offsets"),
            ("identical", "Generate identical offsets")
        ]),
        "sequential",
        "IO offset generator modifier",
        |o, v| {
            o.rw_sequencer = choice(
                v,
                &[
                    ("sequential", Sequencer::Sequential),
                    ("identical", Sequencer::Identical),
                ],
            )?;
            Ok(())
        }
    ),
    row!(
        "ioengine",
        [],
        Kind::Choice(ENGINE_NAMES_HELP),
        "psync",
        "IO engine to use",
        |o, v| {
            o.ioengine = req(v)?.to_string();
            Ok(())
        }
    ),
    row!(
        "iodepth",
        [],
        Kind::Int { min: 1, max: 65536 },
        "1",
        "Number of IO buffers to keep in flight",
        |o, v| {
            o.iodepth = int_in(v, o.kb_base, 1, 65536)? as u32;
            Ok(())
        }
    ),
    row!(
        "iodepth_batch",
        ["iodepth_batch_submit"],
        Kind::Int { min: 0, max: 65536 },
        "1",
        "Number of IO buffers to submit in one go",
        |o, v| {
            o.iodepth_batch = int_in(v, o.kb_base, 0, 65536)? as u32;
            Ok(())
        }
    ),
    row!(
        "iodepth_batch_complete_min",
        ["iodepth_batch_complete"],
        Kind::Int { min: 0, max: 65536 },
        "1",
        "Min number of IO buffers to retrieve in one go",
        |o, v| {
            o.iodepth_batch_complete_min = int_in(v, o.kb_base, 0, 65536)? as u32;
            Ok(())
        }
    ),
    row!(
        "iodepth_batch_complete_max",
        [],
        Kind::Int { min: 0, max: 65536 },
        "",
        "Max number of IO buffers to retrieve in one go",
        |o, v| {
            o.iodepth_batch_complete_max = Some(int_in(v, o.kb_base, 0, 65536)? as u32);
            Ok(())
        }
    ),
    row!(
        "iodepth_low",
        [],
        Kind::Int { min: 0, max: 65536 },
        "",
        "Low water mark for queuing depth",
        |o, v| {
            o.iodepth_low = Some(int_in(v, o.kb_base, 0, 65536)? as u32);
            Ok(())
        }
    ),
    // ------------------------------------------------------------------ sizes
    row!(
        "size",
        [],
        Kind::Size { pct: true },
        "",
        "Total size of device or files",
        |o, v| {
            o.size = Some(parse_size_pct(req(v)?, o.kb_base)?);
            Ok(())
        }
    ),
    row!(
        "io_size",
        ["io_limit"],
        Kind::Size { pct: true },
        "",
        "Total size of I/O to be performed",
        |o, v| {
            o.io_size = Some(parse_size_pct(req(v)?, o.kb_base)?);
            Ok(())
        }
    ),
    bool_row!(
        "fill_device",
        ["fill_fs"],
        fill_device,
        "0",
        "Write until an ENOSPC error occurs"
    ),
    row!(
        "filesize",
        [],
        Kind::Range,
        "",
        "Size of individual files",
        |o, v| {
            let s = req(v)?;
            let r = if s.chars().skip(1).any(|c| c == '-' || c == ':') {
                parse_range(s, o.kb_base)?
            } else {
                let n = parse_size(s, o.kb_base)?;
                (n, n)
            };
            if r.0 == 0 {
                return Err("file size must be at least 1".into());
            }
            o.filesize = Some(r);
            Ok(())
        }
    ),
    bool_row!(
        "file_append",
        [],
        file_append,
        "0",
        "IO will start at the end of the file(s)"
    ),
    row!(
        "offset",
        ["fileoffset"],
        Kind::Size { pct: true },
        "0",
        "Start IO from this offset",
        |o, v| {
            o.offset = parse_size_pct(req(v)?, o.kb_base)?;
            Ok(())
        }
    ),
    row!(
        "offset_increment",
        [],
        Kind::Size { pct: true },
        "0",
        "What is the increment from one offset to the next",
        |o, v| {
            o.offset_increment = parse_size_pct(req(v)?, o.kb_base)?;
            Ok(())
        }
    ),
    row!(
        "offset_align",
        [],
        Kind::Size { pct: false },
        "0",
        "Start IO from this offset alignment",
        |o, v| {
            o.offset_align = parse_size(req(v)?, o.kb_base)?;
            Ok(())
        }
    ),
    row!(
        "number_ios",
        [],
        Kind::Size { pct: false },
        "0",
        "Force job completion after this number of IOs",
        |o, v| {
            o.number_ios = parse_size(req(v)?, o.kb_base)?;
            Ok(())
        }
    ),
    row!(
        "random_generator",
        [],
        Kind::Choice(&[
            ("tausworthe", "Strong Tausworthe generator"),
            ("lfsr", "Variable length LFSR"),
            ("tausworthe64", "64-bit Tausworthe variant")
        ]),
        "tausworthe",
        "Type of random number generator to use",
        |o, v| {
            o.random_generator = choice(v, &[("tausworthe", RandGenOpt::Tausworthe), ("lfsr", RandGenOpt::Lfsr), ("tausworthe64", RandGenOpt::Tausworthe64)])?;
            Ok(())
        }
    ),
    row!(
        "random_distribution",
        [],
        Kind::Choice(&[
            ("random", "Random uniform distribution"),
            ("zipf", "Zipf distribution"),
            ("pareto", "Pareto distribution"),
            ("normal", "Normal (Gaussian) distribution"),
            ("zoned", "Zoned random distribution"),
            ("zoned_abs", "Zoned absolute random distribution")
        ]),
        "random",
        "Random offset distribution generator",
        |o, v| {
            // Per direction, separated by ',' (read,write,trim); one value for all.
            let s = req(v)?;
            let parts: Vec<&str> = s.split(',').collect();
            if parts.len() > 3 {
                return Err("at most three distributions (read,write,trim)".into());
            }
            let kb1024 = o.kb_base == KbBase::K1024;
            let mut last = None;
            for (i, p) in parts.iter().enumerate() {
                if p.is_empty() {
                    continue;
                }
                let d = flexio_workload::dist::parse_dist(p, kb1024)?;
                o.random_distribution[i] = d.clone();
                last = Some(d);
            }
            if let Some(d) = last {
                for slot in o.random_distribution.iter_mut().skip(parts.len()) {
                    *slot = d.clone();
                }
            }
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
        "loops",
        ["loop"],
        Kind::Int {
            min: 1,
            max: u32::MAX as i64
        },
        "1",
        "Number of times to run the job",
        |o, v| {
            o.loops = int_in(v, o.kb_base, 1, u32::MAX as i64)? as u32;
            Ok(())
        }
    ),
    row!(
        "numjobs",
        [],
        Kind::Int { min: 1, max: 65536 },
        "1",
        "Duplicate this job this many times",
        |o, v| {
            o.numjobs = int_in(v, o.kb_base, 1, 65536)? as u32;
            Ok(())
        }
    ),
    row!(
        "startdelay",
        [],
        Kind::Time { secs: true },
        "0",
        "Only start job when this period has passed",
        |o, v| {
            let s = req(v)?;
            o.startdelay_us = match s.char_indices().skip(1).find(|(_, c)| *c == '-') {
                Some((i, _)) => {
                    let a = parse_time_us(&s[..i], true)?;
                    let b = parse_time_us(&s[i + 1..], true)?;
                    if a <= b {
                        (a, b)
                    } else {
                        (b, a)
                    }
                }
                None => {
                    let t = parse_time_us(s, true)?;
                    (t, t)
                }
            };
            Ok(())
        }
    ),
    time_row!(
        "runtime",
        ["timeout"],
        runtime_us,
        true,
        "Stop workload when this amount of time has passed"
    ),
    flag_row!(
        "time_based",
        [],
        time_based,
        "Keep running until runtime/timeout is met"
    ),
    time_row!(
        "ramp_time",
        [],
        ramp_time_us,
        true,
        "Ramp up time before measuring performance"
    ),
    // ------------------------------------------------------------------ sync
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
    // ------------------------------------------------------------------ file setup
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
    // ------------------------------------------------------------------ buffers
    flag_row!(
        "zero_buffers",
        [],
        zero_buffers,
        "Init IO buffers to all zeroes"
    ),
    flag_row!(
        "refill_buffers",
        [],
        refill_buffers,
        "Refill IO buffers on every IO submit"
    ),
    bool_row!(
        "scramble_buffers",
        [],
        scramble_buffers,
        "1",
        "Slightly scramble buffers on every IO submit"
    ),
    bool_row!(
        "iomem_thp",
        [],
        iomem_thp,
        "1",
        "flexio: put I/O buffers of 1 MiB or more on transparent huge pages (0: 4 KiB pages, as fio's malloc)"
    ),
    row!(
        "buffer_pattern",
        [],
        Kind::Str,
        "",
        "Fill pattern for IO buffers",
        |o, v| {
            o.buffer_pattern = Some(crate::pattern::parse_pattern(req(v)?)?);
            Ok(())
        }
    ),
    row!(
        "buffer_compress_percentage",
        [],
        Kind::Int { min: 0, max: 100 },
        "",
        "How compressible the buffer is (approximately)",
        |o, v| {
            o.buffer_compress_percentage = Some(int_in(v, o.kb_base, 0, 100)? as u32);
            Ok(())
        }
    ),
    row!(
        "buffer_compress_chunk",
        [],
        Kind::Int {
            min: 1,
            max: i64::MAX
        },
        "512",
        "Size of compressible region in buffer",
        |o, v| {
            o.buffer_compress_chunk = int_in(v, o.kb_base, 1, i64::MAX)? as u64;
            Ok(())
        }
    ),
    row!(
        "iomem_align",
        ["mem_align"],
        Kind::Int {
            min: 0,
            max: 1 << 30
        },
        "0",
        "IO memory buffer offset alignment",
        |o, v| {
            let a = int_in(v, o.kb_base, 0, 1 << 30)? as u64;
            if a != 0 && !a.is_power_of_two() {
                return Err(format!("alignment {a} is not a power of two"));
            }
            o.iomem_align = a;
            Ok(())
        }
    ),
    // ------------------------------------------------------------------ job control
    row!(
        "rwmixread",
        [],
        Kind::Int { min: 0, max: 100 },
        "50",
        "Percentage of mixed workload that is reads",
        |o, v| {
            o.rwmixread = int_in(v, o.kb_base, 0, 100)? as u32;
            Ok(())
        }
    ),
    row!(
        "rwmixwrite",
        [],
        Kind::Int { min: 0, max: 100 },
        "50",
        "Percentage of mixed workload that is writes",
        |o, v| {
            o.rwmixread = 100 - int_in(v, o.kb_base, 0, 100)? as u32;
            Ok(())
        }
    ),
    flag_row!("thread", [], thread, "Use threads instead of processes"),
    flag_row!(
        "stonewall",
        ["wait_for_previous"],
        stonewall,
        "Insert a hard barrier between this job and previous"
    ),
    flag_row!(
        "new_group",
        [],
        new_group,
        "Mark the start of a new group (for reporting)"
    ),
    flag_row!(
        "group_reporting",
        [],
        group_reporting,
        "Do reporting on a per-group basis"
    ),
    flag_row!("exitall", [], exitall, "Terminate all jobs when one exits"),
    flag_row!(
        "exitall_on_error",
        [],
        exitall_on_error,
        "Terminate all jobs when one exits in error"
    ),
    bool_row!("stats", [], stats, "1", "Enable collection of stats"),
    row!(
        "continue_on_error",
        [],
        Kind::Choice(&[
            ("none", "Exit when an error is encountered"),
            ("read", "Continue on read errors only"),
            ("write", "Continue on write errors only"),
            ("io", "Continue on any IO errors"),
            ("verify", "Continue on verify errors only"),
            ("all", "Continue on all io and verify errors"),
            ("0", "Alias for 'none'"),
            ("1", "Alias for 'all'")
        ]),
        "none",
        "Continue on non-fatal errors during IO",
        |o, v| {
            use crate::options::err_class::*;
            o.continue_on_error = choice(
                v,
                &[
                    ("none", 0),
                    ("0", 0),
                    ("read", READ),
                    ("write", WRITE),
                    ("io", IO),
                    ("verify", VERIFY),
                    ("all", ALL),
                    ("1", ALL),
                ],
            )?;
            Ok(())
        }
    ),
    row!(
        "ignore_error",
        [],
        Kind::Str,
        "",
        "Set a specific list of errors to ignore (READ,WRITE,VERIFY lists of names or numbers)",
        |o, v| {
            o.ignore_error = crate::pattern::parse_ignore_error(req(v)?)?;
            Ok(())
        }
    ),
    bool_row!(
        "error_dump",
        [],
        error_dump,
        "0",
        "Dump info on each error"
    ),
    row!(
        "verify",
        [],
        Kind::Choice(&[
            ("0", "Don't do IO verification"),
            ("md5", "Use md5 checksums for verification"),
            ("crc64", "Use crc64 checksums for verification"),
            ("crc32", "Use crc32 checksums for verification"),
            ("crc32c-intel", "Use crc32c checksums for verification (hw assisted, if available)"),
            ("crc32c", "Use crc32c checksums for verification (hw assisted, if available)"),
            ("crc16", "Use crc16 checksums for verification"),
            ("crc7", "Use crc7 checksums for verification"),
            ("sha1", "Use sha1 checksums for verification"),
            ("sha256", "Use sha256 checksums for verification"),
            ("sha512", "Use sha512 checksums for verification"),
            ("sha3-224", "Use sha3-224 checksums for verification"),
            ("sha3-256", "Use sha3-256 checksums for verification"),
            ("sha3-384", "Use sha3-384 checksums for verification"),
            ("sha3-512", "Use sha3-512 checksums for verification"),
            ("xxhash", "Use xxhash checksums for verification"),
            ("meta", "Use io information"),
            ("pattern", "Verify strict pattern"),
            ("null", "Pretend to verify")
        ]),
        "0",
        "Verify data written",
        |o, v| {
            use crate::options::verify_code::*;
            let s = req(v)?;
            if matches!(s, "crc16" | "crc7") || s.starts_with("sha3-") {
                return Err(format!("verify={s} is not supported by flexio (use crc32c, crc64, md5, sha1, sha256, sha512 or xxhash)"));
            }
            o.verify = choice(
                v,
                &[
                    ("0", NONE),
                    ("md5", MD5),
                    ("crc64", CRC64),
                    ("crc32", CRC32),
                    ("crc32c-intel", CRC32C),
                    ("crc32c", CRC32C),
                    ("sha1", SHA1),
                    ("sha256", SHA256),
                    ("sha512", SHA512),
                    ("xxhash", XXHASH),
                    ("meta", META),
                    ("pattern", PATTERN),
                    ("null", NULL),
                ],
            )?;
            Ok(())
        }
    ),
    bool_row!(
        "do_verify",
        [],
        do_verify,
        "1",
        "Run verification stage after write"
    ),
    flag_row!(
        "verify_only",
        [],
        verify_only,
        "Verifies previously written data is still valid"
    ),
    row!(
        "verify_interval",
        [],
        Kind::Int { min: 2 * 40, max: u32::MAX as i64 },
        "",
        "Store verify buffer header every N bytes",
        |o, v| {
            o.verify_interval = int_in(v, o.kb_base, 80, u32::MAX as i64)? as u64;
            Ok(())
        }
    ),
    row!(
        "verify_offset",
        [],
        Kind::Int { min: 40, max: u32::MAX as i64 },
        "",
        "Offset verify header location by N bytes",
        |o, v| {
            o.verify_offset = int_in(v, o.kb_base, 40, u32::MAX as i64)? as u64;
            Ok(())
        }
    ),
    row!(
        "verify_pattern",
        [],
        Kind::Str,
        "",
        "Fill pattern for IO buffers",
        |o, v| {
            o.verify_pattern = Some(crate::pattern::parse_verify_pattern(req(v)?)?);
            // fio: a pattern without a verify type means verify=pattern.
            if o.verify == crate::options::verify_code::NONE {
                o.verify = crate::options::verify_code::PATTERN;
            }
            Ok(())
        }
    ),
    bool_row!(
        "verify_fatal",
        [],
        verify_fatal,
        "0",
        "Exit on a single verify failure, don't continue"
    ),
    bool_row!(
        "verify_dump",
        [],
        verify_dump,
        "0",
        "Dump contents of good and bad blocks on failure"
    ),
    count_row!(
        "verify_backlog",
        [],
        verify_backlog,
        "",
        "Verify after this number of blocks are written"
    ),
    count_row!(
        "verify_backlog_batch",
        [],
        verify_backlog_batch,
        "",
        "Verify this number of IO blocks"
    ),
    bool_row!(
        "verify_state_save",
        [],
        verify_state_save,
        "1",
        "Save verify state on termination"
    ),
    bool_row!(
        "verify_state_load",
        [],
        verify_state_load,
        "0",
        "Load verify state on termination"
    ),
    prio_row!(
        1,
        "kb_base",
        [],
        Kind::Choice(&[
            (
                "1024",
                "Inputs invert IEC and SI prefixes (for compatibility); outputs prefer binary"
            ),
            ("1000", "Inputs use IEC and SI prefixes; outputs prefer SI")
        ]),
        "1024",
        "Unit prefix interpretation for quantities of data (IEC and SI)",
        |o, v| {
            o.kb_base = choice(v, &[("1024", KbBase::K1024), ("1000", KbBase::K1000)])?;
            Ok(())
        }
    ),
    prio_row!(
        1,
        "unit_base",
        [],
        Kind::Choice(&[
            ("0", "Auto-detect"),
            ("8", "Normal (byte based)"),
            ("1", "Bit based")
        ]),
        "0",
        "Bit multiple of result summary data (8 for byte, 1 for bit)",
        |o, v| {
            o.unit_base = choice(v, &[("0", 0), ("8", 8), ("1", 1)])?;
            Ok(())
        }
    ),
    row!(
        "significant_figures",
        [],
        Kind::Int { min: 1, max: 10 },
        "4",
        "Significant figures for output-format set to normal",
        |o, v| {
            o.significant_figures = int_in(v, o.kb_base, 1, 10)? as u32;
            Ok(())
        }
    ),
    row!(
        "unified_rw_reporting",
        [],
        Kind::Choice(&[
            ("none", "Normal statistics reporting"),
            (
                "mixed",
                "Statistics are summed per data direction and reported together"
            ),
            (
                "both",
                "Statistics are reported normally, followed by the mixed statistics"
            ),
            ("0", "Backward-compatible alias for 'none'"),
            ("1", "Backward-compatible alias for 'mixed'"),
            ("2", "Alias for 'both'")
        ]),
        "none",
        "Unify reporting across data direction",
        |o, v| {
            o.unified_rw_reporting = choice(
                v,
                &[
                    ("none", Unified::None),
                    ("0", Unified::None),
                    ("mixed", Unified::Mixed),
                    ("1", Unified::Mixed),
                    ("both", Unified::Both),
                    ("2", Unified::Both),
                ],
            )?;
            Ok(())
        }
    ),
    // ------------------------------------------------------------------ statistics
    row!(
        "bwavgtime",
        [],
        Kind::Int {
            min: 1,
            max: i64::MAX
        },
        "500",
        "Time window over which to calculate bandwidth (msec)",
        |o, v| {
            o.bwavgtime_ms = int_in(v, o.kb_base, 1, i64::MAX)? as u64;
            Ok(())
        }
    ),
    row!(
        "iopsavgtime",
        [],
        Kind::Int {
            min: 1,
            max: i64::MAX
        },
        "500",
        "Time window over which to calculate IOPS (msec)",
        |o, v| {
            o.iopsavgtime_ms = int_in(v, o.kb_base, 1, i64::MAX)? as u64;
            Ok(())
        }
    ),
    bool_row!(
        "disk_util",
        [],
        disk_util,
        "1",
        "Log disk utilization statistics"
    ),
    row!(
        "percentile_list",
        [],
        Kind::FloatList,
        "1:5:10:20:30:40:50:60:70:80:90:95:99:99.5:99.9:99.95:99.99",
        "Specify a custom list of percentiles to report for completion latency and block errors",
        |o, v| {
            let (list, prec) = parse_float_list(req(v)?, 20)?;
            if list.iter().any(|p| *p < 0.0 || *p > 100.0) {
                return Err("percentiles must be within [0, 100]".into());
            }
            o.percentile_list = list;
            o.percentile_precision = prec;
            Ok(())
        }
    ),
    bool_row!(
        "clat_percentiles",
        [],
        clat_percentiles,
        "1",
        "Enable the reporting of completion latency percentiles"
    ),
    bool_row!(
        "lat_percentiles",
        [],
        lat_percentiles,
        "0",
        "Enable the reporting of IO latency percentiles"
    ),
    bool_row!(
        "slat_percentiles",
        [],
        slat_percentiles,
        "0",
        "Enable the reporting of submission latency percentiles"
    ),
    bool_row!(
        "disable_lat",
        [],
        disable_lat,
        "0",
        "Disable latency numbers"
    ),
    bool_row!(
        "disable_clat",
        [],
        disable_clat,
        "0",
        "Disable completion latency numbers"
    ),
    bool_row!(
        "disable_slat",
        [],
        disable_slat,
        "0",
        "Disable submission latency numbers"
    ),
    bool_row!(
        "disable_bw_measurement",
        ["disable_bw"],
        disable_bw,
        "0",
        "Disable bandwidth logging"
    ),
    row!(
        "gtod_reduce",
        [],
        Kind::Bool,
        "0",
        "Greatly reduce number of gettimeofday() calls",
        |o, v| {
            let b = parse_bool(req(v)?)?;
            o.gtod_reduce = b;
            o.disable_lat = b;
            o.disable_clat = b;
            o.disable_slat = b;
            o.disable_bw = b;
            o.clat_percentiles = !b;
            o.lat_percentiles = !b && o.lat_percentiles;
            o.slat_percentiles = !b && o.slat_percentiles;
            Ok(())
        }
    ),
    // ------------------------------------------------------------------ engine-private
    erow!(
        "hipri",
        ["pvsync2", "io_uring"],
        Kind::Flag,
        "0",
        "Set RWF_HIPRI for pwritev2/preadv2",
        |o, v| {
            o.hipri = flag(v)?;
            Ok(())
        }
    ),
    erow!(
        "hipri_percentage",
        ["pvsync2"],
        Kind::Int { min: 0, max: 100 },
        "100",
        "Probabilistically set RWF_HIPRI for pwritev2/preadv2",
        |o, v| {
            o.hipri_percentage = int_in(v, o.kb_base, 0, 100)? as u32;
            Ok(())
        }
    ),
    erow!(
        "uncached",
        ["pvsync2", "io_uring"],
        Kind::Int { min: 0, max: 1 },
        "0",
        "Use RWF_UNCACHED for buffered read/writes",
        |o, v| {
            o.uncached = int_in(v, o.kb_base, 0, 1)? as u32;
            Ok(())
        }
    ),
    erow!(
        "nowait",
        ["pvsync2", "io_uring", "libaio"],
        Kind::Bool,
        "0",
        "Set RWF_NOWAIT for pwritev2/preadv2",
        |o, v| {
            o.nowait = parse_bool(req(v)?)?;
            Ok(())
        }
    ),
    erow!(
        "stat_type",
        ["filestat"],
        Kind::Choice(&[
            ("stat", "Use stat(2)"),
            ("lstat", "Use lstat(2)"),
            ("statx", "Use statx(2) if exists")
        ]),
        "stat",
        "Specify stat system call type to measure lookup/getattr performance",
        |o, v| {
            o.stat_type = choice(
                v,
                &[
                    ("stat", StatType::Stat),
                    ("lstat", StatType::Lstat),
                    ("statx", StatType::Statx),
                ],
            )?;
            Ok(())
        }
    ),
    erow!(
        "fixedbufs",
        ["io_uring"],
        Kind::Flag,
        "0",
        "Pre map IO buffers",
        |o, v| {
            o.fixedbufs = flag(v)?;
            Ok(())
        }
    ),
    erow!(
        "registerfiles",
        ["io_uring"],
        Kind::Flag,
        "0",
        "Pre-open/register files",
        |o, v| {
            o.registerfiles = flag(v)?;
            Ok(())
        }
    ),
    erow!(
        "sqthread_poll",
        ["io_uring"],
        Kind::Flag,
        "0",
        "Offload submission/completion to kernel thread",
        |o, v| {
            o.sqthread_poll = flag(v)?;
            Ok(())
        }
    ),
    erow!(
        "sqthread_poll_cpu",
        ["io_uring"],
        Kind::Int { min: 0, max: 65535 },
        "",
        "What CPU to run SQ thread polling on",
        |o, v| {
            o.sqthread_poll_cpu = Some(int_in(v, o.kb_base, 0, 65535)? as u32);
            Ok(())
        }
    ),
    erow!(
        "nonvectored",
        ["io_uring"],
        Kind::Int { min: -1, max: 1 },
        "-1",
        "Use non-vectored read/write commands",
        |o, v| {
            o.nonvectored = int_in(v, o.kb_base, -1, 1)? as i32;
            Ok(())
        }
    ),
    erow!(
        "force_async",
        ["io_uring"],
        Kind::Int {
            min: 0,
            max: u32::MAX as i64
        },
        "0",
        "Set IOSQE_ASYNC every N requests",
        |o, v| {
            o.force_async = int_in(v, o.kb_base, 0, u32::MAX as i64)? as u32;
            Ok(())
        }
    ),
    erow!(
        "userspace_reap",
        ["libaio"],
        Kind::Flag,
        "0",
        "Use alternative user-space reap implementation",
        |o, v| {
            o.userspace_reap = flag(v)?;
            Ok(())
        }
    ),
    row!(
        "prio",
        [],
        Kind::Int { min: 0, max: 7 },
        "",
        "Set job IO priority value",
        |o, v| {
            o.prio = Some(int_in(v, o.kb_base, 0, 7)? as u32);
            Ok(())
        }
    ),
    row!(
        "prioclass",
        [],
        Kind::Int { min: 0, max: 3 },
        "",
        "Set job IO priority class",
        |o, v| {
            o.prioclass = Some(int_in(v, o.kb_base, 0, 3)? as u32);
            Ok(())
        }
    ),
    row!(
        "nice",
        [],
        Kind::Int { min: -20, max: 19 },
        "0",
        "Set job CPU nice value",
        |o, v| {
            o.nice = int_in(v, o.kb_base, -20, 19)? as i32;
            Ok(())
        }
    ),
    row!(
        "cpus_allowed",
        [],
        Kind::Str,
        "",
        "Set CPUs allowed",
        |o, v| {
            o.cpus_allowed = Some(crate::cpus::parse_cpu_list(req(v)?)?);
            Ok(())
        }
    ),
    row!("cpumask", [], Kind::Str, "", "CPU affinity mask", |o, v| {
        o.cpus_allowed = Some(crate::cpus::parse_cpu_mask(req(v)?)?);
        Ok(())
    }),
    OptDef {
        name: "cpus_allowed_policy",
        aliases: &[],
        kind: Kind::Choice(&[
            ("shared", "Default. Threads will share CPUs in the set"),
            ("split", "Each thread will get a unique CPU from the set"),
        ]),
        default: "shared",
        help: "Distribution policy for cpus_allowed",
        engines: &[],
        prio: 1,
        set: |o, v| {
            o.cpus_split = choice(v, &[("shared", false), ("split", true)])?;
            Ok(())
        },
    },
    erow!(
        "cmdprio_percentage",
        ["io_uring", "libaio"],
        Kind::IntDir,
        "",
        "Send high priority I/O this percentage of the time",
        |o, v| {
            o.cmdprio_percentage = crate::cpus::rw_ints(req(v)?, o.cmdprio_percentage, 0, 100)?;
            Ok(())
        }
    ),
    erow!(
        "cmdprio_class",
        ["io_uring", "libaio"],
        Kind::IntDir,
        "1",
        "Set asynchronous IO priority class",
        |o, v| {
            o.cmdprio_class = crate::cpus::rw_ints(req(v)?, o.cmdprio_class, 1, 3)?;
            Ok(())
        }
    ),
    erow!(
        "cmdprio",
        ["io_uring", "libaio"],
        Kind::IntDir,
        "0",
        "Set asynchronous IO priority level",
        |o, v| {
            o.cmdprio = crate::cpus::rw_ints(req(v)?, o.cmdprio, 0, 7)?;
            Ok(())
        }
    ),
    row!("percentage_random", [], Kind::IntDir, "100", "Percentage of seq/random mix that should be random",
         |o, v| {
             let parts = split_dirs(req(v)?, false)?;
             for (i, p) in parts.iter().enumerate() {
                 if let Some(p) = p {
                     let n = int_in(Some(p), o.kb_base, 0, 100)? as u32;
                     o.percentage_random[i] = n;
                 }
             }
             Ok(())
         }),
    flag_row!("allrandrepeat", [], allrandrepeat, "Use repeatable random numbers for everything"),
    row!("zonemode", [], Kind::Choice(&[("none", "no zoning"), ("strided", "strided mode - random I/O is restricted to a single zone"), ("zbd", "zoned block device mode - random I/O selects one of multiple zones randomly")]),
         "none", "Mode for the zonesize, zonerange and zoneskip parameters",
         |o, v| {
             o.zonemode = match req(v)? {
                 "none" => ZoneMode::None,
                 "strided" => ZoneMode::Strided,
                 "zbd" => return Err("zonemode=zbd (zoned block devices) is not supported by flexio".into()),
                 s => return Err(format!("'{s}' is not a valid value; valid values: none, strided, zbd")),
             };
             Ok(())
         }),
    row!("zonesize", [], Kind::Size { pct: false }, "0", "Amount of data to read per zone",
         |o, v| { o.zonesize = parse_size(req(v)?, o.kb_base)?; Ok(()) }),
    row!("zonerange", [], Kind::Size { pct: false }, "0", "Give size of an IO zone",
         |o, v| { o.zonerange = parse_size(req(v)?, o.kb_base)?; Ok(()) }),
    row!("zoneskip", [], Kind::Size { pct: false }, "0", "Space between IO zones",
         |o, v| { o.zoneskip = parse_size(req(v)?, o.kb_base)?; Ok(()) }),
    row!("write_bw_log", [], Kind::Str, "", "Write log of bandwidth during run",
         |o, v| { o.write_bw_log = Some(v.unwrap_or("").to_string()); Ok(()) }),
    row!("write_lat_log", [], Kind::Str, "", "Write log of latency during run",
         |o, v| { o.write_lat_log = Some(v.unwrap_or("").to_string()); Ok(()) }),
    row!("write_iops_log", [], Kind::Str, "", "Write log of IOPS during run",
         |o, v| { o.write_iops_log = Some(v.unwrap_or("").to_string()); Ok(()) }),
    row!("write_hist_log", [], Kind::Str, "", "Write log of latency histograms during run",
         |o, v| { o.write_hist_log = Some(v.unwrap_or("").to_string()); Ok(()) }),
    count_row!("log_avg_msec", [], log_avg_msec, "0", "Average bw/iops/lat logs over this period of time"),
    bool_row!("log_max_value", [], log_max_value, "0", "Log max sample in a window instead of average"),
    bool_row!("log_offset", [], log_offset, "0", "Include offset of IO for each log entry"),
    bool_row!("log_prio", [], log_prio, "0", "Include I/O priority value for each log entry"),
    bool_row!("per_job_logs", [], per_job_logs, "1", "Include job number in generated log files or not"),
    count_row!("log_hist_msec", [], log_hist_msec, "0", "Dump completion latency histograms at frequency of this time value"),
    row!("log_hist_coarseness", [], Kind::Int { min: 0, max: 6 }, "0", "Integer in range [0,6]. Higher coarseness outputs fewer histogram bins per sample",
         |o, v| { o.log_hist_coarseness = int_in(v, o.kb_base, 0, 6)? as u32; Ok(()) }),
    row!("log_entries", [], Kind::Int { min: 1, max: i64::MAX }, "1024", "Initial number of entries for a job IO log",
         |o, v| { o.log_entries = int_in(v, o.kb_base, 1, i64::MAX)? as u64; Ok(()) }),
    row!("interval_log", [], Kind::Str, "", "flexio: write one JSON line per job, direction and interval (not cumulative, with the interval's latency histogram) to this file",
         |o, v| { o.interval_log = Some(req(v)?.to_string()); Ok(()) }),
    row!("interval_log_msec", [], Kind::Int { min: 1, max: i64::MAX }, "1000", "flexio: length of an interval_log interval (ms)",
         |o, v| { o.interval_log_msec = int_in(v, o.kb_base, 1, i64::MAX)? as u64; Ok(()) }),
    row!("rate", [], Kind::SizeDir, "0", "Set bandwidth rate",
         |o, v| { o.rate = dirs_sizes(o, req(v)?, o.rate)?; Ok(()) }),
    row!("rate_min", ["ratemin"], Kind::SizeDir, "0", "Job must meet this rate or it will be shut down",
         |o, v| { o.rate_min = dirs_sizes(o, req(v)?, o.rate_min)?; Ok(()) }),
    row!("rate_iops", [], Kind::IntDir, "0", "Limit IO used to this number of IO operations/sec",
         |o, v| { o.rate_iops = dirs_sizes(o, req(v)?, o.rate_iops)?; Ok(()) }),
    row!("rate_iops_min", [], Kind::IntDir, "0", "Job must meet this rate or it will be shut down",
         |o, v| { o.rate_iops_min = dirs_sizes(o, req(v)?, o.rate_iops_min)?; Ok(()) }),
    row!("rate_process", [], Kind::Choice(&[("linear", "Linear rate of IO"), ("poisson", "Rate follows Poisson process")]),
         "linear", "What process controls how rated IO is managed",
         |o, v| { o.rate_poisson = choice(v, &[("linear", false), ("poisson", true)])?; Ok(()) }),
    row!("rate_cycle", ["ratecycle"], Kind::Int { min: 1, max: i64::MAX }, "1000", "Window average for rate limits (msec)",
         |o, v| { o.rate_cycle_ms = int_in(v, o.kb_base, 1, i64::MAX)? as u64; Ok(()) }),
    bool_row!("rate_ignore_thinktime", [], rate_ignore_thinktime, "0", "Rated IO ignores thinktime settings"),
    row!("thinktime", [], Kind::Time { secs: false }, "0", "Idle time between IO buffers (usec)",
         |o, v| { o.thinktime_us = parse_time_us(req(v)?, false)?; Ok(()) }),
    row!("thinktime_spin", [], Kind::Time { secs: false }, "0", "Start think time by spinning this amount (usec)",
         |o, v| { o.thinktime_spin_us = parse_time_us(req(v)?, false)?; Ok(()) }),
    row!("thinktime_blocks", [], Kind::Int { min: 1, max: i64::MAX }, "1", "IO buffer period between 'thinktime'",
         |o, v| { o.thinktime_blocks = Some(int_in(v, o.kb_base, 1, i64::MAX)? as u64); Ok(()) }),
    row!("thinktime_blocks_type", [], Kind::Choice(&[("complete", "thinktime_blocks takes effect at the completion side"), ("issue", "thinktime_blocks takes effect at the issue side")]),
         "complete", "How to count thinktime_blocks",
         |o, v| { o.thinktime_blocks_issue = choice(v, &[("complete", false), ("issue", true)])?; Ok(()) }),
    row!("thinktime_iotime", [], Kind::Time { secs: true }, "0", "IO time interval between 'thinktime'",
         |o, v| { o.thinktime_iotime_us = parse_time_us(req(v)?, true)?; Ok(()) }),
    row!("latency_target", [], Kind::Time { secs: false }, "0", "Ramp to max queue depth supporting this latency",
         |o, v| { o.latency_target_ns = parse_time_us(req(v)?, false)? * 1000; Ok(()) }),
    row!("latency_window", [], Kind::Time { secs: false }, "0", "Time to sustain latency_target",
         |o, v| { o.latency_window_us = parse_time_us(req(v)?, false)?; Ok(()) }),
    row!("latency_percentile", [], Kind::FloatList, "100", "Percentile of IOs must be below latency_target",
         |o, v| {
             let (l, _) = parse_float_list(req(v)?, 1)?;
             if !(0.0..=100.0).contains(&l[0]) { return Err("percentile must be within [0, 100]".into()); }
             o.latency_percentile = l[0];
             Ok(())
         }),
    bool_row!("latency_run", [], latency_run, "0", "Keep adjusting queue depth to match latency_target"),
    row!("max_latency", [], Kind::IntDir, "0", "Maximum tolerated IO latency (usec)",
         |o, v| {
             let parts = split_dirs(req(v)?, true)?;
             for (i, p) in parts.iter().enumerate() {
                 if let Some(p) = p { o.max_latency_us[i] = parse_time_us(p, false)?; }
             }
             Ok(())
         }),
    row!("clocksource", [], Kind::Choice(&[("gettimeofday", "Use gettimeofday(2) for timing"), ("clock_gettime", "Use clock_gettime(2) for timing"), ("cpu", "Use CPU private clock")]),
         "cpu", "What type of timing source to use (flexio: cpu = the TSC, when invariant and trusted by the kernel)",
         |o, v| { o.clocksource = Some(choice(v, &[("gettimeofday", crate::options::ClockSourceOpt::Gettimeofday), ("clock_gettime", crate::options::ClockSourceOpt::ClockGettime), ("cpu", crate::options::ClockSourceOpt::Cpu)])?); Ok(()) }),
    row!("steadystate", ["ss"], Kind::Str, "iops_slope:0.01%", "Define the criterion and limit to judge when a job has reached steady state",
         |o, v| { o.ss = crate::options::SsCriterion::parse(req(v)?, o.kb_base)?; Ok(()) }),
    time_row!("steadystate_duration", ["ss_dur"], ss_dur_us, true, "Stop workload upon attaining steady state for specified duration"),
    time_row!("steadystate_ramp_time", ["ss_ramp"], ss_ramp_us, true, "Delay before initiation of data collection for steady state job termination testing"),
    row!("steadystate_check_interval", ["ss_interval"], Kind::Time { secs: true }, "1", "Polling interval for the steady state check (fio 3.35+)",
         |o, v| {
             let t = parse_time_us(req(v)?, true)?;
             if t < 1000 { return Err("the steady-state check interval must be at least 1 ms".into()); }
             o.ss_interval_us = t;
             Ok(())
         }),
    erow!("null_stall", ["null"], Kind::Str, "", "flexio test aid: stall one I/O for this long, <time>[@<I/O number, default 1000>]",
          |o, v| {
              let s = req(v)?;
              let (t, n) = match s.split_once('@') { Some((t, n)) => (t, n.parse::<u64>().map_err(|_| format!("'{n}' is not an I/O number"))?), None => (s, 1000) };
              o.null_stall = Some((parse_time_us(t, false)? * 1000, n.max(1)));
              Ok(())
          }),
];

/// fio 3.33 options that flexio recognises but does not implement (yet). They are rejected
/// with "not supported by flexio", never silently ignored.
pub static UNSUPPORTED: &[&str] = &[
    "wait_for",
    "lockfile",
    "unique_filename",
    "opendir",
    "io_submit_mode",
    "serialize_overlap",
    "write_barrier",
    "sync_file_range",
    "atomic",
    "verify_async",
    "experimental_verify",
    "trim_percentage",
    "trim_verify_zero",
    "trim_backlog",
    "trim_backlog_batch",
    "exit_what",
    "exec_prerun",
    "exec_postrun",
    "uid",
    "gid",
    "numa_cpu_nodes",
    "numa_mem_policy",
    "cgroup",
    "cgroup_weight",
    "cgroup_nodelete",
    "flow",
    "flow_id",
    "flow_sleep",
    "log_compression",
    "log_compression_cpus",
    "log_store_compressed",
    "log_unix_epoch",
    "log_alternate_epoch",
    "log_alternate_epoch_clock_id",
    "block_error_percentiles",
    "write_iolog",
    "read_iolog",
    "read_iolog_chunked",
    "replay_no_stall",
    "replay_redirect",
    "replay_scale",
    "replay_align",
    "replay_time_scale",
    "replay_skip",
    "merge_blktrace_file",
    "merge_blktrace_scalars",
    "merge_blktrace_iters",
    "gtod_cpu",
    "mem",
    "iomem",
    "hugepage-size",
    "lockmem",
    "dedupe_percentage",
    "dedupe_mode",
    "dedupe_working_set_percentage",
    "dedupe_global",
    "zonecapacity",
    "max_open_zones",
    "job_max_open_zones",
    "ignore_zone_limits",
    "read_beyond_wp",
    "zone_reset_threshold",
    "zone_reset_frequency",
    "write_hint",
    "ioscheduler",
    "profile",
    "cmdprio_bssplit",
    "cmd_type",
    "thp",
    "cpuload",
    "cpuchunks",
    "cpumode",
    "exit_on_io_done",
    "hostname",
    "port",
    "protocol",
    "listen",
    "pingpong",
    "nodelay",
    "interface",
    "ttl",
    "window_size",
    "mss",
    "program",
    "arguments",
    "grace_time",
    "std_redirect",
    "softrandommap",
];

/// Find an option by canonical name or alias.
pub fn lookup(name: &str) -> Option<&'static OptDef> {
    OPTIONS
        .iter()
        .find(|o| o.name == name || o.aliases.contains(&name))
}

/// All names (canonical and aliases) and the unsupported fio names, for suggestions.
pub fn all_names() -> impl Iterator<Item = &'static str> {
    OPTIONS
        .iter()
        .flat_map(|o| std::iter::once(o.name).chain(o.aliases.iter().copied()))
        .chain(UNSUPPORTED.iter().copied())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique() {
        let mut seen = std::collections::HashSet::new();
        for n in OPTIONS
            .iter()
            .flat_map(|o| std::iter::once(o.name).chain(o.aliases.iter().copied()))
        {
            assert!(seen.insert(n), "duplicate option name {n}");
        }
        for n in UNSUPPORTED {
            assert!(lookup(n).is_none(), "{n} is both supported and unsupported");
        }
    }

    #[test]
    fn rwmix_last_one_wins() {
        let mut o = JobOptions::default();
        (lookup("rwmixwrite").unwrap().set)(&mut o, Some("30")).unwrap();
        assert_eq!(o.rwmixread, 70);
        (lookup("rwmixread").unwrap().set)(&mut o, Some("10")).unwrap();
        assert_eq!(o.rwmixread, 10);
    }

    #[test]
    fn rw_postfix() {
        let mut o = JobOptions::default();
        (lookup("readwrite").unwrap().set)(&mut o, Some("randread:8")).unwrap();
        assert_eq!(o.rw, RwKind::RandRead);
        assert_eq!(o.rw_nr, 8);
        assert!((lookup("rw").unwrap().set)(&mut o, Some("RandRead")).is_err());
    }

    #[test]
    fn direct_and_buffered_are_inverse() {
        let mut o = JobOptions::default();
        (lookup("buffered").unwrap().set)(&mut o, Some("0")).unwrap();
        assert!(o.direct);
        assert!((lookup("direct").unwrap().set)(&mut o, Some("yes")).is_err());
    }

    #[test]
    fn bs_per_direction() {
        let mut o = JobOptions::default();
        (lookup("bs").unwrap().set)(&mut o, Some("8k,32k,")).unwrap();
        assert_eq!(o.bs, [8192, 32768, 4096]);
    }
}
