//! flexio: a flexible I/O tester that runs fio job files and prints fio-compatible output.
//! See ARCHITECTURE.md for the map of the code. The binary (`src/main.rs`) calls
//! [`app::run`]; the modules are a library so that the fuzzer can drive the planner too.

pub mod app;
pub mod blockdev;
pub mod clock;
pub mod cmd;
pub mod debug;
pub mod defaults;
pub mod diskstats;
pub mod files;
pub mod idle;
pub mod iolog;
pub mod jobless;
pub mod logz;
pub mod notes;
pub mod parse_only;
pub mod plan;
pub mod progress;
pub mod remote;
pub mod run_extra;
pub mod selftest;
pub mod signals;
pub mod status;
pub mod steady_judge;
pub mod trigger;
pub mod verify;
pub mod worker;
