//! flexio's own subcommands (`flexio report ...`, `flexio compare ...`): everything that is
//! not a fio-style run. A subcommand is a word in first position that fio's command line
//! never has there (fio's arguments are options or job file names), so a job file of the
//! same name as a subcommand is still reachable as `./name`.
//!
//! Adding a subcommand: one module here, one row in [`SUBCOMMANDS`].

/// A subcommand: its name, one line of help, and (in builds with the subcommands) its
/// entry point (arguments after the name; returns the exit status) and its clap command
/// (for the completions and man pages).
pub struct Subcommand {
    pub name: &'static str,
    pub help: &'static str,
    #[cfg(feature = "tools")]
    pub run: fn(&[String]) -> i32,
    #[cfg(feature = "tools")]
    pub command: fn() -> clap::Command,
}

// The subcommands are only compiled into builds with `tools` (clap is part of it); without
// it [`SUBCOMMANDS`] still has their names, which answer that the build lacks them.
#[cfg(feature = "tools")]
pub mod args;
#[cfg(feature = "tools")]
pub mod compare;
#[cfg(feature = "tools")]
pub mod generate;
#[cfg(feature = "tools")]
pub mod matrix;
pub mod out;
#[cfg(feature = "tools")]
pub mod pts;
#[cfg(feature = "tools")]
pub mod report;
#[cfg(feature = "tools")]
pub mod results;
#[cfg(feature = "tools")]
pub mod rt_study;
#[cfg(feature = "tools")]
pub mod sweep;
#[cfg(feature = "tools")]
pub mod writemodes;

/// Store `runs` (source, result JSON) as one batch of `kind` in the results store: a line
/// saying where, or why not.
pub fn save_batch(
    store: Option<&str>,
    kind: &str,
    label: Option<&str>,
    runs: Vec<(String, String)>,
) -> Result<String, String> {
    #[cfg(feature = "tools")]
    {
        let runs: Vec<flexio_store::NewRun> = runs
            .into_iter()
            .map(|(source, result)| flexio_store::NewRun { source, result })
            .collect();
        let mut s = flexio_store::Store::open(store).map_err(|e| e.to_string())?;
        let ids = s.save(kind, label, &runs).map_err(|e| e.to_string())?;
        Ok(match ids.as_slice() {
            [one] => format!("saved as run {one} in {}", s.location()),
            _ => format!(
                "saved {} runs as runs {}..{} in {}",
                ids.len(),
                ids.first().unwrap_or(&0),
                ids.last().unwrap_or(&0),
                s.location()
            ),
        })
    }
    #[cfg(not(feature = "tools"))]
    {
        let _ = (store, kind, label, runs);
        Err(not_built("the results store"))
    }
}

/// A repeated measurement's runs disagree when their range is more than this share of
/// their median (matrix cells, writemodes rows).
#[cfg(feature = "tools")]
pub(crate) const NOISY: f64 = 0.3;

/// Whether runs with range `lo..=hi` around `median` disagree ([`NOISY`]); one run never does.
#[cfg(feature = "tools")]
pub(crate) fn runs_disagree(n: usize, lo: f64, hi: f64, median: f64) -> bool {
    n >= 2 && median > 0.0 && (hi - lo) / median > NOISY
}

/// A subcommand's `--store` means nothing without `--save`: refused rather than ignored.
pub fn store_needs_save(
    store: &Option<String>,
    save: &Option<Option<String>>,
) -> Result<(), String> {
    if store.is_some() && save.is_none() {
        return Err("--store names where --save stores results: give --save too".into());
    }
    Ok(())
}

/// The command line as one string (the source of a saved run).
pub fn command_line(args: &[String]) -> String {
    let mut s = String::from("flexio");
    for a in args {
        s.push(' ');
        if a.is_empty() || a.contains(|c: char| c.is_whitespace() || c == '\'' || c == '"') {
            s.push_str(&format!("'{}'", a.replace('\'', "'\\''")));
        } else {
            s.push_str(a);
        }
    }
    s
}

/// A [`SUBCOMMANDS`] row: the name, the `flexio --help` line, and (with `tools`) the entry
/// point and the clap arguments struct.
macro_rules! sub {
    ($name:literal, $help:literal, $run:path, $args:ty) => {
        Subcommand {
            name: $name,
            help: $help,
            #[cfg(feature = "tools")]
            run: $run,
            #[cfg(feature = "tools")]
            command: args::command::<$args>,
        }
    };
}

/// Every subcommand, in `flexio --help` order.
pub static SUBCOMMANDS: &[Subcommand] = &[
    sub!(
        "report",
        "RESULT.json... -o report.html: one HTML page with charts and statistics",
        report::run,
        report::Args
    ),
    sub!(
        "compare",
        "A.json B.json | A... -- B... | --trials N a.fio b.fio: is B faster, really?",
        compare::run,
        compare::Args
    ),
    sub!(
        "matrix",
        "[--dir DIR] [--max-file SIZE] ...: iozone-style file size x record size sweep",
        matrix::run,
        matrix::Args
    ),
    sub!(
        "writemodes",
        "[--dir DIR] [--size SIZE] ...: buffered, bgsync, O_SYNC, fsync writes with CPU",
        writemodes::run,
        writemodes::Args
    ),
    sub!(
        "sweep",
        "--knob read_ahead_kb=128,4096 --opt bs=64k,8m JOB.fio: a job over settings, restored, with statistics",
        sweep::run,
        sweep::Args
    ),
    sub!(
        "rt-study",
        "[options] TARGET: foreground latency per I/O class under 0/1/4 background jobs, with tests",
        rt_study::run,
        rt_study::Args
    ),
    sub!(
        "pts",
        "TARGET --i-understand-this-erases [--test iops|throughput|latency]: the SNIA PTS until steady state (erases TARGET)",
        pts::run,
        pts::Args
    ),
    sub!(
        "import",
        "[--label L] RESULT.json...: store fio/flexio results in the results store",
        results::import,
        results::Import
    ),
    sub!(
        "history",
        "[--label L] [--job J] [--metric M] [--since DATE] [--html F]: a metric over stored runs, trend, change points",
        results::history,
        results::History
    ),
    sub!(
        "check",
        "--baseline LABEL [--trials N] [--max-regression PCT] JOB.fio: CI regression check (Markdown, JUnit; exit 1)",
        results::check,
        results::Check
    ),
    sub!(
        "diff",
        "RUN_A RUN_B: metrics side by side, and what differs in provenance and resolved job",
        results::diff,
        results::Diff
    ),
    sub!(
        "rerun",
        "[--set K=V] RUN_ID: the stored run's exact job and seeds again, warning where the machine changed",
        results::rerun,
        results::Rerun
    ),
    sub!(
        "completions",
        "bash|zsh|fish: the shell completion script for flexio and its subcommands",
        generate::completions,
        generate::Completions
    ),
    sub!(
        "man",
        "[SUBCOMMAND] | --out-dir DIR: the man page (flexio.1, flexio-SUBCOMMAND.1) as roff",
        generate::man,
        generate::Man
    ),
];

/// Whether this build has the subcommands (cargo feature `tools`, on by default; the small
/// static builds for boards leave them out, see docs/embedded.md).
pub const BUILT: bool = cfg!(feature = "tools");

/// Why a subcommand (or `--report`) is missing from this build.
pub fn not_built(what: &str) -> String {
    format!(
        "{what} is not built into this flexio: it needs the cargo feature `tools` (the small \
         static builds for boards leave flexio's own subcommands and --report out)"
    )
}

/// Run the subcommand named by the first argument, if it names one. A build without the
/// subcommands still knows their names and says so, rather than taking the word for a job
/// file.
pub fn dispatch(args: &[String]) -> Option<i32> {
    let first = args.first()?;
    let Some(sub) = SUBCOMMANDS.iter().find(|s| s.name == first) else {
        // A mistyped subcommand (`flexio reprot`): a bare word that is no file but close to
        // a subcommand's name, rather than fio's "unable to open job file".
        let bare = !first.starts_with('-') && !first.contains(['/', '.', '=']);
        if bare && !std::path::Path::new(first).exists() {
            if let Some(s) = flexio_job::error::suggest(first, SUBCOMMANDS.iter().map(|s| s.name)) {
                eprintln!(
                    "flexio: '{first}' is neither a job file nor a flexio subcommand; did you mean `flexio {s}`?"
                );
                return Some(1);
            }
        }
        return None;
    };
    #[cfg(feature = "tools")]
    return Some((sub.run)(&args[1..]));
    #[cfg(not(feature = "tools"))]
    {
        eprintln!("flexio: {}", not_built(&format!("`flexio {}`", sub.name)));
        Some(1)
    }
}

/// The `flexio --help` lines for the subcommands.
pub fn usage() -> String {
    if SUBCOMMANDS.is_empty() {
        return String::new();
    }
    if !BUILT {
        return format!(
            "\nflexio's own subcommands ({}) are not built into this flexio (cargo feature `tools`)\n",
            SUBCOMMANDS.iter().map(|c| c.name).collect::<Vec<_>>().join(", ")
        );
    }
    let mut s = String::from("\nflexio's own subcommands:\n");
    for c in SUBCOMMANDS {
        s.push_str(&format!("  flexio {:<12} {}\n", c.name, c.help));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Without the `tools` feature every subcommand name still answers, with status 1 (and
    /// its "not built into this flexio" line), rather than being taken for a job file.
    #[cfg(not(feature = "tools"))]
    #[test]
    fn left_out_subcommands_answer() {
        for c in SUBCOMMANDS {
            assert_eq!(
                dispatch(&[c.name.to_string(), "x".into()]),
                Some(1),
                "{}",
                c.name
            );
        }
        assert!(not_built("--report").contains("cargo feature `tools`"));
        assert!(usage().contains("not built into this flexio"));
    }

    #[test]
    fn other_words_are_not_subcommands() {
        assert_eq!(dispatch(&["job.fio".to_string()]), None);
        assert_eq!(dispatch(&["zzzzzzzz".to_string()]), None);
        assert_eq!(dispatch(&[]), None);
    }

    #[test]
    fn a_mistyped_subcommand_is_answered() {
        assert_eq!(dispatch(&["reprot".to_string()]), Some(1));
        assert_eq!(dispatch(&["histroy".to_string()]), Some(1));
        // Paths and options are never taken for subcommands.
        assert_eq!(dispatch(&["./reprot".to_string()]), None);
        assert_eq!(dispatch(&["--reprot".to_string()]), None);
    }
}
