//! flexio's statistics: what a job measures ([`thread::ThreadStats`]) and what a run
//! reports ([`report::RunReport`]). Numbers only; formatting lives in `flexio-output`.

pub mod blocks;
pub mod cluster;
pub mod hist;
pub mod interval;
pub mod live;
pub mod ops;
pub mod report;
pub mod stat;
pub mod steady;
pub mod thread;
pub mod watch;

pub use hist::Hist;
pub use report::{JobResult, ReportParams, RunReport};
pub use stat::Stat;
pub use thread::{StatsConfig, ThreadStats};
