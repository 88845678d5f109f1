//! Job description and control: names, cloning, loops, groups, unit conventions.

use super::*;

/// Job description and control: names, cloning, loops, groups, unit conventions.
#[rustfmt::skip]
pub(super) static ROWS: &[OptDef] = &[
    row!(
        "description",
        [],
        Kind::Str,
        "",
        "Text job description",
        |o, v| {
            o.description = Some(req(v)?.to_string());
            Ok(())
        }
    ),
    row!("exec_prerun", [], Kind::Str, "", "Execute this file prior to running job",
         |o, v| { o.exec_prerun = Some(req(v)?.to_string()); Ok(()) }),
    row!("exec_postrun", [], Kind::Str, "", "Execute this file after running job",
         |o, v| { o.exec_postrun = Some(req(v)?.to_string()); Ok(()) }),
    row!("name", [], Kind::Str, "", "Name of this job", |o, v| {
        o.name = req(v)?.to_string();
        Ok(())
    }),
    row!(
        "comm",
        [],
        Kind::Str,
        "",
        "Process (thread) name of the job, as ps shows it (fio 3.42+)",
        |o, v| {
            o.newest.comm = Some(req(v)?.to_string());
            Ok(())
        }
    ).since("3.42"),
    row!(
        "numjobs",
        [],
        Kind::Int { min: 0, max: 65536 },
        "1",
        "Duplicate this job this many times",
        |o, v| {
            // 0 switches the job off (a one-file sweep over 0, 1, 4 ... background jobs).
            o.numjobs = int_in(v, o.kb_base, 0, 65536)? as u32;
            Ok(())
        }
    ),
    row!(
        "loops",
        ["loop"],
        Kind::Int {
            min: 1,
            max: u32::MAX as i64
        },
        "1",
        "Number of times to run the job",
        |o, v| {
            o.loops = int_in(v, o.kb_base, 1, u32::MAX as i64)? as u32;
            Ok(())
        }
    ),
    flag_row!("thread", [], thread, "Use threads instead of processes"),
    flag_row!(
        "stonewall",
        ["wait_for_previous"],
        stonewall,
        "Insert a hard barrier between this job and previous"
    ),
    flag_row!(
        "new_group",
        [],
        new_group,
        "Mark the start of a new group (for reporting)"
    ),
    flag_row!(
        "group_reporting",
        [],
        group_reporting,
        "Do reporting on a per-group basis"
    ),
    flag_row!("exitall", [], exitall, "Terminate all jobs when one exits"),
    row!("flow_id", [], Kind::Int { min: 0, max: u32::MAX as i64 }, "0", "The flow index ID to use",
         |o, v| { o.flow_id = int_in(v, o.kb_base, 0, u32::MAX as i64)? as u32; Ok(()) }),
    row!("flow", [], Kind::Int { min: 0, max: 1000 }, "0", "Weight for flow control of this job",
         |o, v| { o.flow = int_in(v, o.kb_base, 0, 1000)? as u64; Ok(()) }),
    row!("flow_sleep", [], Kind::Int { min: 0, max: i64::MAX }, "0", "How many microseconds to sleep after being held back by the flow control mechanism",
         |o, v| { o.flow_sleep_us = int_in(v, o.kb_base, 0, i64::MAX)? as u64; Ok(()) }),
    row!("wait_for", [], Kind::Str, "", "Name of the job this one wants to wait for before starting",
         |o, v| { o.wait_for = Some(req(v)?.to_string()); Ok(()) }),
    row!("exit_what", [],
         Kind::Choice(&[("group", "exit_all=1 default behaviour"),
                        ("stonewall", "quit all currently running jobs; continue with next stonewall"),
                        ("all", "Quit everything")]),
         "group", "Fine-grained control for exitall",
         |o, v| { o.exit_what = choice(v, &[("group", ExitWhat::Group), ("stonewall", ExitWhat::Stonewall), ("all", ExitWhat::All)])?; Ok(()) }),
    flag_row!(
        "exitall_on_error",
        [],
        exitall_on_error,
        "Terminate all jobs when one exits in error"
    ),
    bool_row!("stats", [], stats, "1", "Enable collection of stats"),
    prio_row!(
        1,
        "kb_base",
        [],
        Kind::Choice(&[
            (
                "1024",
                "Inputs invert IEC and SI prefixes (for compatibility); outputs prefer binary"
            ),
            ("1000", "Inputs use IEC and SI prefixes; outputs prefer SI")
        ]),
        "1024",
        "Unit prefix interpretation for quantities of data (IEC and SI)",
        |o, v| {
            o.kb_base = choice(v, &[("1024", KbBase::K1024), ("1000", KbBase::K1000)])?;
            Ok(())
        }
    ),
    prio_row!(
        1,
        "unit_base",
        [],
        Kind::Choice(&[
            ("0", "Auto-detect"),
            ("8", "Normal (byte based)"),
            ("1", "Bit based")
        ]),
        "0",
        "Bit multiple of result summary data (8 for byte, 1 for bit)",
        |o, v| {
            o.unit_base = choice(v, &[("0", 0), ("8", 8), ("1", 1)])?;
            Ok(())
        }
    ),
    row!(
        "significant_figures",
        [],
        Kind::Int { min: 1, max: 10 },
        "4",
        "Significant figures for output-format set to normal",
        |o, v| {
            o.significant_figures = int_in(v, o.kb_base, 1, 10)? as u32;
            Ok(())
        }
    ),
];
