//! flexio's analysis of results: reading fio's and flexio's JSON / json+ output and log
//! files into one model ([`input`], [`logs`]), the statistics ([`stats`]), comparisons of
//! runs ([`compare`]) and self-contained HTML reports ([`report`], drawn by [`svg`]).
//! A pure library: it reads files, it never runs I/O workloads.

pub mod charts;
pub mod compare;
pub mod compare_out;
pub mod flatten;
pub mod fmt;
pub mod history;
pub mod input;
pub mod logs;
pub mod matrix;
pub mod model;
pub mod pts;
pub mod report;
pub mod stats;
pub mod studies;
pub mod study;
pub mod svg;
pub mod sweep;
pub mod tail;

pub use compare::{compare, Comparison};
pub use input::{read, read_with_logs};
pub use model::RunResult;
