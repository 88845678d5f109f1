//! flexio's output formatters. They lay out a [`flexio_stats::RunReport`]; they never
//! compute statistics. Each fio format is reproduced byte for byte where fio defines it.

pub mod clients;
pub mod json;
#[cfg(test)]
mod layout_tests;
pub mod logs;
pub mod normal;
pub mod num2str;
pub mod ops;
pub mod status;
pub mod terse;
