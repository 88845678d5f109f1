//! flexio's command line: the fio-compatible front door ([`app::run`]), flexio's own
//! subcommands ([`cmd`]), client/server mode and MPI ([`remote`]). The run engine they
//! drive is the `flexio-run` crate (crates/run); see ARCHITECTURE.md for the map of the
//! code. The modules are a library so that the fuzzer and the tests can reach them.

pub mod app;
pub mod cmd;
pub mod defaults;
pub mod jobless;
#[cfg(feature = "live")]
pub mod live;
pub mod parse_only;
pub mod remote;
pub mod selftest;
