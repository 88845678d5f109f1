//! flexio's run engine as a library: fio job files or fio-style options go in, a resolved
//! plan comes out (one [`plan::ThreadPlan`] per job thread, to inspect), the run takes an
//! [`Observer`] for its events and interval reports, and the results are typed: the
//! [`report::RunReport`] model that flexio's normal, JSON and terse outputs render.
//!
//! ```
//! let job = "[seq]\nioengine=null\nrw=read\nbs=4k\nsize=64m\n";
//! let prepared = flexio_run::prepare_job_text(job, &[]).expect("a valid job");
//! assert_eq!(prepared.plans().len(), 1);
//! let outcome = prepared.run(&flexio_run::Quiet);
//! let report = outcome.report.expect("the run's report");
//! println!("{} read IOPS", report.jobs[0].dirs[0].iops);
//! ```
//!
//! See ARCHITECTURE.md for the map of the code.
#![deny(clippy::print_stdout)]

pub mod blockdev;
pub mod clock;
pub mod debug;
pub mod diskstats;
pub mod files;
pub mod idle;
pub mod inproc;
pub mod iolog;
pub mod logz;
pub mod notes;
pub mod plan;
pub mod progress;
pub mod provenance;
pub mod run_extra;
pub mod session;
pub mod signals;
pub mod status;
pub mod steady_judge;
pub mod sweep;
pub mod trigger;
pub mod verify;
pub mod worker;

pub use flexio_stats::report;
pub use session::{
    prepare, prepare_cli, prepare_job_text, prepare_with, run_planned, run_prepared, LiveSample,
    Observer, Outcome, Prepared, Quiet, FIO_COMPAT, FIO_LATEST, VERSION,
};
