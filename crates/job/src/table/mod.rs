//! The option table: one declarative row per option (fio's `struct fio_option`).
//!
//! The same rows drive job-file parsing, argv parsing, `--cmdhelp`, the did-you-mean
//! suggestions and the canonical names in the JSON `job options` echo.
//!
//! Core options live here, one file per category (the groups of fio's option table); each
//! engine declares its private options in its own file with [`crate::engine_options!`].
//! The two meet in a [`Catalog`], which the engine registry builds and the loader, the
//! command line and the help read. Adding a core option means a field in
//! [`JobOptions`] and one row in its category file; adding an engine option touches only the
//! engine's file.

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
    /// Parse order within a section: higher first (kb_base before sizes), lower last
    /// (filename after directory), as fio's `sort_options()`.
    pub prio: i8,
    pub set: Setter,
    /// The fio release that added the option (`None`: fio 3.33 has it). Under
    /// `--compat=3.33` an option with a release here is unknown, as in fio 3.33.
    pub since: Option<&'static str>,
}

impl OptDef {
    /// The row, marked as added in fio release `version` (after 3.33).
    pub const fn since(mut self, version: &'static str) -> OptDef {
        self.since = Some(version);
        self
    }

    /// Whether the fio that `compat` reproduces has this option.
    pub fn known_at(&self, compat: crate::Compat) -> bool {
        !(compat.is_fio333() && self.since.is_some())
    }

    pub fn takes_optional_value(&self) -> bool {
        matches!(self.kind, Kind::Flag)
    }
}

pub fn req(v: Option<&str>) -> Result<&str, String> {
    match v {
        Some(s) if !s.is_empty() => Ok(s),
        _ => Err("this option requires a value".into()),
    }
}

pub fn flag(v: Option<&str>) -> Result<bool, String> {
    match v {
        None | Some("") => Ok(true),
        Some(s) => parse_bool(s),
    }
}

pub fn int_in(v: Option<&str>, kb: KbBase, min: i64, max: i64) -> Result<i64, String> {
    let s = req(v)?;
    let n = parse_int(s, kb)?;
    if n < min || n > max {
        return Err(format!("value {n} is out of range [{min}, {max}]"));
    }
    Ok(n)
}

pub fn choice<T: Copy>(v: Option<&str>, table: &[(&str, T)]) -> Result<T, String> {
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
                 prio: 0, set: $set, since: None }
    };
}

macro_rules! prio_row {
    ($prio:expr, $name:expr, [$($alias:expr),*], $kind:expr, $def:expr, $help:expr, $set:expr) => {
        OptDef { name: $name, aliases: &[$($alias),*], kind: $kind, help: $help, default: $def,
                 prio: $prio, set: $set, since: None }
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

mod buffers;
mod extra;
mod files;
mod io;
mod iolog;
mod job;
mod placement;
mod profile;
mod stats;
mod time;
mod unsupported;
mod verify;

pub use unsupported::UNSUPPORTED;

/// Values a newer fio added to options fio 3.33 has: (option, value, release). Under
/// `--compat=3.33` they are bad values, as fio 3.33 refuses them.
pub static NEWER_VALUES: &[(&str, &str, &str)] = verify::NEWER_VALUES;

/// The fio release that added `value` of option `name`, if it is newer than 3.33 (the
/// part before a `:` postfix is the value, as for every choice).
pub fn value_since(name: &str, value: &str) -> Option<&'static str> {
    let v = value.split(':').next().unwrap_or(value);
    NEWER_VALUES
        .iter()
        .find(|(n, x, _)| *n == name && *x == v)
        .map(|(_, _, r)| *r)
}

/// `ioengine` lists its values through the catalog, not here.
const ENGINE_NAMES_HELP: &[(&str, &str)] = &[];

/// A group of core options (one of fio's option categories).
pub struct Category {
    pub name: &'static str,
    pub rows: &'static [OptDef],
}

/// The core options, by category, in `--cmdhelp` order.
pub static CORE: &[Category] = &[
    Category {
        name: "job",
        rows: job::ROWS,
    },
    Category {
        name: "files",
        rows: files::ROWS,
    },
    Category {
        name: "io",
        rows: io::ROWS,
    },
    Category {
        name: "buffers",
        rows: buffers::ROWS,
    },
    Category {
        name: "time",
        rows: time::ROWS,
    },
    Category {
        name: "verify",
        rows: verify::ROWS,
    },
    Category {
        name: "stats",
        rows: stats::ROWS,
    },
    Category {
        name: "placement",
        rows: placement::ROWS,
    },
    Category {
        name: "extra",
        rows: extra::ROWS,
    },
    Category {
        name: "profile",
        rows: profile::ROWS,
    },
    Category {
        name: "iolog",
        rows: iolog::ROWS,
    },
];

/// An engine flexio runs, with its private options (fio's per-engine option tables).
pub struct EngineOptions {
    pub engine: &'static str,
    pub aliases: &'static [&'static str],
    /// Groups of rows (an engine may share a group, such as the command priorities, with
    /// others).
    pub groups: &'static [&'static [OptDef]],
    /// The fio release that added the engine, if later than 3.33: unknown under
    /// `--compat=3.33`.
    pub since: Option<&'static str>,
}

/// Every option and engine name the job language knows: the core table plus the engines'
/// private rows. Built by the engine registry (`flexio_engine::registry::CATALOG`); unit
/// tests build their own.
pub struct Catalog {
    pub core: &'static [Category],
    pub engines: &'static [EngineOptions],
    /// fio engines flexio does not run, each with the reason: rejected as "not supported
    /// by flexio".
    pub fio_only_engines: &'static [(&'static str, &'static str)],
    /// flexio engines this build leaves out (cargo feature off, or a target without the
    /// kernel interface): rejected as "not built into this flexio".
    /// Each is (name, what it needs).
    pub left_out_engines: &'static [(&'static str, &'static str)],
    /// The private options of fio's engines flexio does not run, by engine: a job that
    /// names such an engine parses them (values kept as given, `--parse-only` passes) and
    /// the run then says the engine is not available.
    pub fio_only_options: &'static [(&'static str, &'static [&'static str])],
}

/// The core options and no engines.
pub static CORE_ONLY: Catalog = Catalog {
    core: CORE,
    engines: &[],
    fio_only_engines: &[],
    left_out_engines: &[],
    fio_only_options: &[],
};

impl Catalog {
    /// Core rows in `--cmdhelp` order.
    pub fn core_rows(&self) -> impl Iterator<Item = &'static OptDef> + '_ {
        self.core.iter().flat_map(|c| c.rows.iter())
    }

    /// Engine rows, each name once (the first engine declaring it).
    pub fn engine_rows(&self) -> impl Iterator<Item = &'static OptDef> + '_ {
        let mut seen: Vec<&str> = Vec::new();
        self.engines
            .iter()
            .flat_map(|e| e.groups.iter().flat_map(|g| g.iter()))
            .filter(move |d| {
                if seen.contains(&d.name) {
                    false
                } else {
                    seen.push(d.name);
                    true
                }
            })
    }

    /// Every row: the core ones, then the engines' (each name once).
    pub fn rows(&self) -> impl Iterator<Item = &'static OptDef> + '_ {
        self.core_rows().chain(self.engine_rows())
    }

    /// Find an option by canonical name or alias.
    pub fn lookup(&self, name: &str) -> Option<&'static OptDef> {
        self.rows()
            .find(|o| o.name == name || o.aliases.contains(&name))
    }

    /// Find an option the fio that `compat` reproduces has (newer options are unknown to
    /// fio 3.33).
    /// An engine option may be older in one engine than in another (fio 3.38 gave
    /// io_uring_cmd sg's `readfua`): any row of that name known at `compat` answers.
    pub fn lookup_at(&self, name: &str, compat: crate::Compat) -> Option<&'static OptDef> {
        self.core_rows()
            .chain(self.all_engine_rows())
            .find(|o| (o.name == name || o.aliases.contains(&name)) && o.known_at(compat))
    }

    /// Every engine row, names shared by several engines once per engine.
    fn all_engine_rows(&self) -> impl Iterator<Item = &'static OptDef> + '_ {
        self.engines
            .iter()
            .flat_map(|e| e.groups.iter().flat_map(|g| g.iter()))
    }

    /// The engines that have option `name` in the fio that `compat` reproduces.
    pub fn owners_at(&self, name: &str, compat: crate::Compat) -> Vec<&'static str> {
        self.engines
            .iter()
            .filter(|e| {
                e.groups
                    .iter()
                    .any(|g| g.iter().any(|d| d.name == name && d.known_at(compat)))
            })
            .map(|e| e.engine)
            .collect()
    }

    /// An engine's options in the fio that `compat` reproduces.
    pub fn engine_options_at(&self, engine: &str, compat: crate::Compat) -> Vec<&'static OptDef> {
        self.engine_options(engine)
            .into_iter()
            .filter(|d| d.known_at(compat))
            .collect()
    }

    /// [`Catalog::all_names`] of the fio that `compat` reproduces, for suggestions.
    pub fn names_at(&self, compat: crate::Compat) -> impl Iterator<Item = &'static str> + '_ {
        self.core_rows()
            .chain(self.all_engine_rows())
            .filter(move |o| o.known_at(compat))
            .flat_map(|o| std::iter::once(o.name).chain(o.aliases.iter().copied()))
            .chain(UNSUPPORTED.iter().copied())
    }

    /// Whether `name` is an engine-private option (and which engines own it).
    pub fn owners(&self, name: &str) -> Vec<&'static str> {
        self.engines
            .iter()
            .filter(|e| e.groups.iter().any(|g| g.iter().any(|d| d.name == name)))
            .map(|e| e.engine)
            .collect()
    }

    /// Options private to one engine (by name or alias).
    pub fn engine_options(&self, engine: &str) -> Vec<&'static OptDef> {
        self.engine(engine)
            .map(|e| e.groups.iter().flat_map(|g| g.iter()).collect())
            .unwrap_or_default()
    }

    /// An engine by name or alias.
    pub fn engine(&self, name: &str) -> Option<&EngineOptions> {
        self.engines
            .iter()
            .find(|e| e.engine == name || e.aliases.contains(&name))
    }

    /// Engine names flexio runs, in registry order.
    pub fn engine_names(&self) -> impl Iterator<Item = &'static str> + '_ {
        self.engines.iter().map(|e| e.engine)
    }

    /// Whether `name` is an engine flexio knows by name: one it runs, one of fio's it
    /// rejects as not supported, or one this build leaves out.
    pub fn is_known_engine(&self, name: &str) -> bool {
        self.engine(name).is_some()
            || name.starts_with("external:")
            || self.fio_only_engines.iter().any(|(n, _)| *n == name)
            || self.left_out_engines.iter().any(|(n, _)| *n == name)
    }

    /// Whether flexio knows `name` (an engine it does not run, or one this build leaves out)
    /// but cannot run it: a job may name it, the run says why not.
    pub fn is_unavailable_engine(&self, name: &str) -> bool {
        self.engine(name).is_none() && self.is_known_engine(name)
    }

    /// The static name of `name` if it is a private option of an engine flexio does not run.
    pub fn fio_only_option(&self, name: &str) -> Option<&'static str> {
        self.fio_only_options
            .iter()
            .flat_map(|(_, opts)| opts.iter())
            .find(|o| **o == name)
            .copied()
    }

    /// Whether `name` is a private option of `engine`, an engine flexio does not run.
    pub fn is_fio_only_option_of(&self, engine: &str, name: &str) -> bool {
        self.fio_only_options
            .iter()
            .any(|(e, opts)| *e == engine && opts.contains(&name))
    }

    /// Whether the fio that `compat` reproduces has engine `name`: an engine a newer fio
    /// added is unknown under `--compat=3.33` (fio 3.33: `engine NAME not loadable`).
    pub fn check_engine_at(&self, name: &str, compat: crate::Compat) -> Result<(), String> {
        match self.engine(name).and_then(|e| e.since) {
            Some(release) if compat.is_fio333() => {
                let added = match release.strip_prefix("post-") {
                    Some(r) => format!("a fio release after {r} added it"),
                    None => format!("fio {release} added it"),
                };
                Err(format!(
                    "unknown ioengine '{name}': fio 3.33 does not have it ({added})"
                ))
            }
            _ => self.check_engine(name),
        }
    }

    /// Engine names the fio that `compat` reproduces has, in registry order.
    pub fn engine_names_at(
        &self,
        compat: crate::Compat,
    ) -> impl Iterator<Item = &'static str> + '_ {
        self.engines
            .iter()
            .filter(move |e| !(compat.is_fio333() && e.since.is_some()))
            .map(|e| e.engine)
    }

    /// Whether flexio can run the engine `name`; the error says why not.
    pub fn check_engine(&self, name: &str) -> Result<(), String> {
        if self.engine(name).is_some() {
            return Ok(());
        }
        if name.starts_with("external:") {
            return Err(format!(
                "ioengine '{name}' is not supported by flexio: it is an external engine fio \
                 loads as a plug-in, and flexio loads no engine plug-ins"
            ));
        }
        if let Some((_, why)) = self.fio_only_engines.iter().find(|(n, _)| *n == name) {
            return Err(format!(
                "ioengine '{name}' is not supported by flexio: {why}"
            ));
        }
        if let Some((_, needs)) = self.left_out_engines.iter().find(|(n, _)| *n == name) {
            return Err(format!(
                "ioengine '{name}' is not built into this flexio: it needs {needs}"
            ));
        }
        Err(format!("unknown ioengine '{name}'"))
    }

    /// All option names (canonical and aliases) and the unsupported fio names, for
    /// suggestions.
    pub fn all_names(&self) -> impl Iterator<Item = &'static str> + '_ {
        self.rows()
            .flat_map(|o| std::iter::once(o.name).chain(o.aliases.iter().copied()))
            .chain(UNSUPPORTED.iter().copied())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique() {
        let mut seen = std::collections::HashSet::new();
        for n in CORE_ONLY
            .rows()
            .flat_map(|o| std::iter::once(o.name).chain(o.aliases.iter().copied()))
        {
            assert!(seen.insert(n), "duplicate option name {n}");
        }
        // The engines' rows are checked against UNSUPPORTED with the full catalog, in
        // flexio_engine::registry's tests.
        for n in UNSUPPORTED {
            assert!(
                CORE_ONLY.lookup(n).is_none(),
                "{n} is both supported and unsupported"
            );
        }
    }

    #[test]
    fn rwmix_last_one_wins() {
        let mut o = JobOptions::default();
        (CORE_ONLY.lookup("rwmixwrite").unwrap().set)(&mut o, Some("30")).unwrap();
        assert_eq!(o.rwmixread, 70);
        (CORE_ONLY.lookup("rwmixread").unwrap().set)(&mut o, Some("10")).unwrap();
        assert_eq!(o.rwmixread, 10);
    }

    #[test]
    fn rw_postfix() {
        let mut o = JobOptions::default();
        (CORE_ONLY.lookup("readwrite").unwrap().set)(&mut o, Some("randread:8")).unwrap();
        assert_eq!(o.rw, RwKind::RandRead);
        assert_eq!(o.rw_nr, 8);
        assert!((CORE_ONLY.lookup("rw").unwrap().set)(&mut o, Some("RandRead")).is_err());
    }

    #[test]
    fn direct_and_buffered_are_inverse() {
        let mut o = JobOptions::default();
        (CORE_ONLY.lookup("buffered").unwrap().set)(&mut o, Some("0")).unwrap();
        assert!(o.direct);
        assert!((CORE_ONLY.lookup("direct").unwrap().set)(&mut o, Some("yes")).is_err());
    }

    #[test]
    fn bs_per_direction() {
        let mut o = JobOptions::default();
        (CORE_ONLY.lookup("bs").unwrap().set)(&mut o, Some("8k,32k,")).unwrap();
        assert_eq!(o.bs, [8192, 32768, 4096]);
    }
}
