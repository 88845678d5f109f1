//! Data verification, pure: block headers, checksums, patterns, the written-block log,
//! verify-state files and mismatch reports, in both fio generations' formats.
//!
//! * [`header`]: fio 3.33's 40-byte header and the newest fio's 48-byte versioned header
//!   ([`Generation`] selects).
//! * [`sum`]: every checksum, stored as each generation stores it; [`md5`]: flexio's own
//!   MD5 core (faster than the md-5 crate's on 64 KiB blocks).
//! * [`format`](mod@format): [`Format`] fills a block to be written and checks a block read, with
//!   fio's check order and messages, reporting a [`Mismatch`] (see [`report`]).
//! * [`fill`]: `verify_pattern` layout (`%o`, `verify_pattern_interval`).
//! * [`wlog`]: the written-block log with the newest fio's last-write-wins semantics, and
//!   the rules that switch the header-seed and write-sequence checks off.
//! * [`state`]: `verify_state_save` files of both generations.

pub mod fill;
pub mod format;
pub mod header;
pub mod kind;
pub mod md5;
pub mod report;
pub mod state;
pub mod sum;
pub mod wlog;

pub use format::{Expect as Expectation, Format, Stamp, WriteRef};
pub use header::Generation;
pub use kind::Kind;
pub use report::{Class, Mismatch};
