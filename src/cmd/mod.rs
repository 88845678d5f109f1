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
pub mod inproc;
pub mod matrix;
pub mod report;
pub mod rt_study;
pub mod writemodes;

/// Every subcommand, in `flexio --help` order.
pub static SUBCOMMANDS: &[Subcommand] = &[
    Subcommand {
        name: "report",
        help: "RESULT.json... -o report.html: one HTML page with charts and statistics",
        run: report::run,
    },
    Subcommand {
        name: "compare",
        help: "A.json B.json | A... -- B... | --trials N a.fio b.fio: is B faster, really?",
        run: compare::run,
    },
    Subcommand {
        name: "matrix",
        help: "[--dir DIR] [--max-file SIZE] ...: iozone-style file size x record size sweep",
        run: matrix::run,
    },
    Subcommand {
        name: "writemodes",
        help: "[--dir DIR] [--size SIZE] ...: buffered, bgsync, O_SYNC, fsync writes with CPU",
        run: writemodes::run,
    },
    Subcommand {
        name: "rt-study",
        help: "[options] TARGET: foreground latency per I/O class under 0/1/4 background jobs, with tests",
        run: rt_study::run,
    },
];

/// Run the subcommand named by the first argument, if it names one.
pub fn dispatch(args: &[String]) -> Option<i32> {
    let first = args.first()?;
    let sub = SUBCOMMANDS.iter().find(|s| s.name == first)?;
    Some((sub.run)(&args[1..]))
}

/// The `flexio --help` lines for the subcommands.
pub fn usage() -> String {
    if SUBCOMMANDS.is_empty() {
        return String::new();
    }
    let mut s = String::from("\nflexio's own subcommands:\n");
    for c in SUBCOMMANDS {
        s.push_str(&format!("  flexio {:<12} {}\n", c.name, c.help));
    }
    s
}
