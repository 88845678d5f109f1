//! flexio's job language: fio 3.33's job-file dialect and command line, parsed in three
//! stages (raw text with origins → typed [`JobOptions`] → a [`JobSet`] with groups).
//!
//! This crate is pure: file reading, host facts and engine validation are injected, so the
//! whole parser can be fuzzed without touching the system.

pub mod bssplit;
pub mod cli;
pub mod cli_extra;
pub mod compat;
pub mod cpus;
pub mod engine_opts;
pub mod engine_values;
pub mod error;
pub mod expr;
pub mod extra;
pub mod help;
pub mod jobfile;
pub mod load;
pub mod newest;
pub mod options;
pub mod pattern;
pub mod showcmd;
pub mod subst;
pub mod sysio;
pub mod table;
pub mod units;
pub mod value;
pub mod zbd;

pub use cli::{parse_args, Cli, Eta, Format, Switches};
pub use compat::Compat;
pub use engine_opts::EngineValues;
pub use error::{JobError, Origin};
pub use load::{load, JobDef, JobSet, LoadEnv};
pub use options::JobOptions;
pub use subst::Host;
pub use table::Catalog;
