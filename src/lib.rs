//! flexio's command line: the fio-compatible front door ([`app::run`]), flexio's own
//! subcommands ([`cmd`]), client/server mode and MPI ([`remote`]). The run engine they
//! drive is the `flexio-run` crate (crates/run); see ARCHITECTURE.md for the map of the
//! code. The modules are a library so that the fuzzer and the tests can reach them.
#![deny(clippy::print_stdout)]

/// `print!` for flexio's own output: through [`flexio_run::notes::print`], so a reader of
/// stdout that has gone ends flexio as SIGPIPE ends fio, instead of a panic. (print! and
/// println! are denied in this crate: clippy::print_stdout.)
macro_rules! out {
    ($($t:tt)*) => {
        flexio_run::notes::print(&format!($($t)*))
    };
}

/// `println!` through [`flexio_run::notes::print`] (see [`out!`]).
macro_rules! outln {
    ($($t:tt)*) => {
        flexio_run::notes::print(&format!("{}\n", format_args!($($t)*)))
    };
}

/// `print!` for a subcommand's output: through [`cmd::out::stdout`], which ends the output
/// quietly when the reader has gone and lets the subcommand finish and set its status; only
/// the subcommands of feature `tools` use it.
#[cfg_attr(not(feature = "tools"), allow(unused_macros))]
macro_rules! cmd_out {
    ($($t:tt)*) => {
        $crate::cmd::out::stdout(&format!($($t)*))
    };
}

/// `println!` through [`cmd::out::stdout`] (see [`cmd_out!`]); only the subcommands of
/// feature `tools` use it.
#[cfg_attr(not(feature = "tools"), allow(unused_macros))]
macro_rules! cmd_outln {
    ($($t:tt)*) => {
        $crate::cmd::out::stdout(&format!("{}\n", format_args!($($t)*)))
    };
}

pub mod app;
pub mod cmd;
pub mod defaults;
pub mod jobless;
#[cfg(feature = "live")]
pub mod live;
pub mod parse_only;
pub mod remote;
pub mod selftest;
