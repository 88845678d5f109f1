//! The options of fio's built-in workload profiles (`tiobench`, `act`). fio registers them
//! with its other options, so job files may carry them (fio's own steadystate.fio example sets
//! `threads=1`). fio 3.33 checks their values and never hands them to the profile
//! (`fio --profile=tiobench --block=8192 --debug=parse` still runs bs=4096; see
//! `crate::extra::Profile::jobs`), so here too they are checked and have no effect.

use super::*;

fn int_only(v: Option<&str>) -> Result<(), String> {
    int_in(v, KbBase::K1024, 0, i64::MAX).map(|_| ())
}

fn str_only(v: Option<&str>) -> Result<(), String> {
    req(v).map(|_| ())
}

const NOTE: &str = "(profile option; fio 3.33's profiles do not use it)";

/// The profiles' options, in fio's registration order (tiobench's `size` is the core option).
#[rustfmt::skip]
pub(super) static ROWS: &[OptDef] = &[
    row!("block", [], Kind::Int { min: 0, max: i64::MAX }, "4096", NOTE, |_, v| int_only(v)),
    row!("numruns", [], Kind::Int { min: 0, max: i64::MAX }, "", NOTE, |_, v| int_only(v)),
    row!("dir", [], Kind::Str, "", NOTE, |_, v| str_only(v)),
    row!("threads", [], Kind::Int { min: 0, max: i64::MAX }, "", NOTE, |_, v| int_only(v)),
    row!("device-names", [], Kind::Str, "", NOTE, |_, v| str_only(v)),
    row!("load", [], Kind::Int { min: 0, max: i64::MAX }, "1", NOTE, |_, v| int_only(v)),
    row!("test-duration", [], Kind::Time { secs: true }, "24h", NOTE,
         |_, v| parse_time_us(req(v)?, true).map(|_| ())),
    row!("threads-per-queue", [], Kind::Int { min: 0, max: i64::MAX }, "8", NOTE, |_, v| int_only(v)),
    row!("read-req-num-512-blocks", [], Kind::Int { min: 0, max: i64::MAX }, "3", NOTE, |_, v| int_only(v)),
    row!("large-block-op-kbytes", [], Kind::Int { min: 0, max: i64::MAX }, "131072", NOTE, |_, v| int_only(v)),
    row!("prep", [], Kind::Flag, "0", NOTE, |_, v| flag(v).map(|_| ())),
];
