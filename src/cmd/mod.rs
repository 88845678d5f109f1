//! flexio's own subcommands (`flexio report ...`, `flexio compare ...`): everything that is
//! not a fio-style run. A subcommand is a word in first position that fio's command line
//! never has there (fio's arguments are options or job file names), so a job file of the
//! same name as a subcommand is still reachable as `./name`.
//!
//! Adding a subcommand: one module here, one row in [`SUBCOMMANDS`].

/// A subcommand: its name, one line of help, and its entry point (arguments after the
/// name; returns the exit status).
pub struct Subcommand {
    pub name: &'static str,
    pub help: &'static str,
    pub run: fn(&[String]) -> i32,
}

pub mod compare;
pub mod matrix;
pub mod out;
pub mod pts;
pub mod report;
#[cfg(feature = "tools")]
pub mod results;
pub mod rt_study;
pub mod sweep;
pub mod writemodes;

/// The results-store subcommands (crates/store, only in builds with `tools`).
#[cfg(feature = "tools")]
mod store_cmds {
    pub use super::results::{check, diff, history, import, rerun};
}
#[cfg(not(feature = "tools"))]
mod store_cmds {
    pub fn check(_: &[String]) -> i32 {
        1
    }
    pub use check as diff;
    pub use check as history;
    pub use check as import;
    pub use check as rerun;
}

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
pub(crate) const NOISY: f64 = 0.3;

/// Whether runs with range `lo..=hi` around `median` disagree ([`NOISY`]); one run never does.
pub(crate) fn runs_disagree(n: usize, lo: f64, hi: f64, median: f64) -> bool {
    n >= 2 && median > 0.0 && (hi - lo) / median > NOISY
}

/// A study's `--repeat` value: 1 to 100 (`what`: what one repeat is, "rounds", "runs").
pub(crate) fn repeat_count(v: &str, what: &str) -> Result<u32, String> {
    v.trim()
        .parse()
        .ok()
        .filter(|n| (1..=100).contains(n))
        .ok_or_else(|| format!("--repeat: '{v}' is not 1 to 100 {what}"))
}

/// `--save` (`Some(None)`) or `--save=LABEL` (`Some(Some(LABEL))`; an empty label is none),
/// as the subcommands take it; `None` for any other argument.
pub fn save_flag(arg: &str) -> Option<Option<String>> {
    match arg.strip_prefix("--save") {
        Some("") => Some(None),
        Some(l) => l
            .strip_prefix('=')
            .map(|l| Some(l.to_string()).filter(|l| !l.is_empty())),
        None => None,
    }
}

/// A subcommand's arguments through its `parse`: `-h`/`--help` prints `usage` (`Err(0)`),
/// a bad argument prints the error and the usage (`Err(2)`, the exit status).
pub fn args_of<A>(
    name: &str,
    args: &[String],
    usage: &str,
    parse: impl FnOnce(&[String]) -> Result<A, String>,
) -> Result<A, i32> {
    if args.iter().any(|a| a == "-h" || a == "--help") {
        out::stdout(usage);
        return Err(0);
    }
    parse(args).map_err(|e| {
        eprintln!("flexio {name}: {e}\n{usage}");
        2
    })
}

/// A positive time in milliseconds: `100ms`, `30s`, `2m`, or bare seconds; `what` names
/// the switch in the error.
pub fn time_ms(v: &str, what: &str) -> Result<u64, String> {
    let v = v.trim();
    let (num, mult) = if let Some(n) = v.strip_suffix("ms") {
        (n, 1)
    } else if let Some(n) = v.strip_suffix('s') {
        (n, 1000)
    } else if let Some(n) = v.strip_suffix('m') {
        (n, 60_000)
    } else {
        (v, 1000)
    };
    num.parse::<u64>()
        .ok()
        .and_then(|n| n.checked_mul(mult))
        .filter(|n| *n > 0)
        .ok_or_else(|| format!("{what}: '{v}' is not a positive time (e.g. 100ms, 30s)"))
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

/// Every subcommand, in `flexio --help` order.
pub static SUBCOMMANDS: &[Subcommand] = &[
    Subcommand {
        name: "report",
        help: "RESULT.json... -o report.html: one HTML page with charts and statistics",
        run: tool(report::run),
    },
    Subcommand {
        name: "compare",
        help: "A.json B.json | A... -- B... | --trials N a.fio b.fio: is B faster, really?",
        run: tool(compare::run),
    },
    Subcommand {
        name: "matrix",
        help: "[--dir DIR] [--max-file SIZE] ...: iozone-style file size x record size sweep",
        run: tool(matrix::run),
    },
    Subcommand {
        name: "writemodes",
        help: "[--dir DIR] [--size SIZE] ...: buffered, bgsync, O_SYNC, fsync writes with CPU",
        run: tool(writemodes::run),
    },
    Subcommand {
        name: "sweep",
        help: "--knob read_ahead_kb=128,4096 --opt bs=64k,8m JOB.fio: a job over settings, restored, with statistics",
        run: tool(sweep::run),
    },
    Subcommand {
        name: "rt-study",
        help: "[options] TARGET: foreground latency per I/O class under 0/1/4 background jobs, with tests",
        run: tool(rt_study::run),
    },
    Subcommand {
        name: "pts",
        help: "TARGET --i-understand-this-erases [--test iops|throughput|latency]: the SNIA PTS until steady state (erases TARGET)",
        run: tool(pts::run),
    },
    Subcommand {
        name: "import",
        help: "[--label L] RESULT.json...: store fio/flexio results in the results store",
        run: tool(store_cmds::import),
    },
    Subcommand {
        name: "history",
        help: "[--label L] [--job J] [--metric M] [--since DATE] [--html F]: a metric over stored runs, trend, change points",
        run: tool(store_cmds::history),
    },
    Subcommand {
        name: "check",
        help: "--baseline LABEL [--trials N] [--max-regression PCT] JOB.fio: CI regression check (Markdown, JUnit; exit 1)",
        run: tool(store_cmds::check),
    },
    Subcommand {
        name: "diff",
        help: "RUN_A RUN_B: metrics side by side, and what differs in provenance and resolved job",
        run: tool(store_cmds::diff),
    },
    Subcommand {
        name: "rerun",
        help: "[--set K=V] RUN_ID: the stored run's exact job and seeds again, warning where the machine changed",
        run: tool(store_cmds::rerun),
    },
];

/// Whether this build has the subcommands (cargo feature `tools`, on by default; the small
/// static builds for boards leave it out, see docs/embedded.md).
pub const BUILT: bool = cfg!(feature = "tools");

/// A subcommand's entry point where this build has the subcommands; elsewhere nothing
/// refers to it and the link leaves its code out ([`dispatch`] answers first).
const fn tool(run: fn(&[String]) -> i32) -> fn(&[String]) -> i32 {
    if BUILT {
        run
    } else {
        |_| 1
    }
}

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
    if !BUILT {
        eprintln!("flexio: {}", not_built(&format!("`flexio {}`", sub.name)));
        return Some(1);
    }
    Some((sub.run)(&args[1..]))
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
    fn save_and_store_arguments() {
        assert_eq!(save_flag("--save"), Some(None));
        assert_eq!(save_flag("--save="), Some(None));
        assert_eq!(save_flag("--save=nightly"), Some(Some("nightly".into())));
        assert_eq!(save_flag("--saved"), None);
        assert_eq!(save_flag("--store=x"), None);
        assert!(store_needs_save(&Some("x.db".into()), &None).is_err());
        assert!(store_needs_save(&Some("x.db".into()), &Some(None)).is_ok());
        assert!(store_needs_save(&None, &None).is_ok());
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
