//! write_barrier, atomic, gtod_cpu, block_error_percentiles, profile (`crate::extra`);
//! verify_policy (the newest fio).

use super::*;
use crate::extra::Profile;

#[rustfmt::skip]
pub(super) static ROWS: &[OptDef] = &[
    row!("write_barrier", [], Kind::Int { min: 0, max: i64::MAX }, "0",
         "Make every Nth write a barrier write",
         |o, v| { o.extra.write_barrier = int_in(v, o.kb_base, 0, i64::MAX)? as u64; Ok(()) }),
    row!("atomic", [], Kind::Bool, "0", "Use Atomic IO with O_DIRECT (implies O_DIRECT)",
         |o, v| { o.extra.atomic = parse_bool(req(v)?)?; Ok(()) }),
    row!("gtod_cpu", [], Kind::Int { min: 0, max: i64::MAX }, "",
         "Set up dedicated gettimeofday() thread on this CPU",
         |o, v| { o.extra.gtod_cpu = Some(int_in(v, o.kb_base, 0, u32::MAX as i64)? as u32); Ok(()) }),
    row!("block_error_percentiles", [], Kind::Bool, "0",
         "Record trim block errors and make a histogram",
         |o, v| { o.extra.block_error_percentiles = parse_bool(req(v)?)?; Ok(()) }),
    // The newest fio (after 3.42): which writes the verify phase checks. `completed`:
    // every completed write; `fsynced`: only writes issued before the submission of the
    // last fsync that completed successfully (none without one), online and in the saved
    // verify state.
    row!("verify_policy", [], Kind::Choice(&[
            ("completed", "Verify every completed write"),
            ("fsynced", "Verify only writes issued before the last completed fsync"),
         ]), "completed", "Which writes are verified (newest fio)",
         |o, v| match req(v)? {
             "completed" => { o.extra.verify_fsynced = false; Ok(()) }
             "fsynced" => { o.extra.verify_fsynced = true; Ok(()) }
             x => Err(format!("'{x}' is not a valid value; valid values: completed, fsynced")),
         }).since("post-3.42"),
    row!("profile", [], Kind::Choice(Profile::CHOICES), "",
         "Select a specific builtin performance test",
         |o, v| { o.extra.profile = Some(Profile::parse(req(v)?)?); Ok(()) }),
];
