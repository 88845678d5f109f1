//! Statistics, reporting and logs.

use super::*;

/// Statistics, reporting and logs.
#[rustfmt::skip]
pub(super) static ROWS: &[OptDef] = &[
    row!(
        "unified_rw_reporting",
        [],
        Kind::Choice(&[
            ("none", "Normal statistics reporting"),
            (
                "mixed",
                "Statistics are summed per data direction and reported together"
            ),
            (
                "both",
                "Statistics are reported normally, followed by the mixed statistics"
            ),
            ("0", "Backward-compatible alias for 'none'"),
            ("1", "Backward-compatible alias for 'mixed'"),
            ("2", "Alias for 'both'")
        ]),
        "none",
        "Unify reporting across data direction",
        |o, v| {
            o.unified_rw_reporting = choice(
                v,
                &[
                    ("none", Unified::None),
                    ("0", Unified::None),
                    ("mixed", Unified::Mixed),
                    ("1", Unified::Mixed),
                    ("both", Unified::Both),
                    ("2", Unified::Both),
                ],
            )?;
            Ok(())
        }
    ),
    row!(
        "bwavgtime",
        [],
        Kind::Int {
            min: 1,
            max: i64::MAX
        },
        "500",
        "Time window over which to calculate bandwidth (msec)",
        |o, v| {
            o.bwavgtime_ms = int_in(v, o.kb_base, 1, i64::MAX)? as u64;
            o.bwavgtime_set = true;
            Ok(())
        }
    ),
    row!(
        "iopsavgtime",
        [],
        Kind::Int {
            min: 1,
            max: i64::MAX
        },
        "500",
        "Time window over which to calculate IOPS (msec)",
        |o, v| {
            o.iopsavgtime_ms = int_in(v, o.kb_base, 1, i64::MAX)? as u64;
            o.iopsavgtime_set = true;
            Ok(())
        }
    ),
    bool_row!(
        "disk_util",
        [],
        disk_util,
        "1",
        "Log disk utilization statistics"
    ),
    row!(
        "percentile_list",
        [],
        Kind::FloatList,
        "1:5:10:20:30:40:50:60:70:80:90:95:99:99.5:99.9:99.95:99.99",
        "Specify a custom list of percentiles to report for completion latency and block errors",
        |o, v| {
            let (list, prec) = parse_float_list(req(v)?, 20)?;
            if list.iter().any(|p| *p < 0.0 || *p > 100.0) {
                return Err("percentiles must be within [0, 100]".into());
            }
            o.percentile_list = list;
            o.percentile_precision = prec;
            Ok(())
        }
    ),
    bool_row!(
        "clat_percentiles",
        [],
        clat_percentiles,
        "1",
        "Enable the reporting of completion latency percentiles"
    ),
    bool_row!(
        "lat_percentiles",
        [],
        lat_percentiles,
        "0",
        "Enable the reporting of IO latency percentiles"
    ),
    bool_row!(
        "slat_percentiles",
        [],
        slat_percentiles,
        "0",
        "Enable the reporting of submission latency percentiles"
    ),
    bool_row!(
        "disable_lat",
        [],
        disable_lat,
        "0",
        "Disable latency numbers"
    ),
    bool_row!(
        "disable_clat",
        [],
        disable_clat,
        "0",
        "Disable completion latency numbers"
    ),
    bool_row!(
        "disable_slat",
        [],
        disable_slat,
        "0",
        "Disable submission latency numbers"
    ),
    bool_row!(
        "disable_bw_measurement",
        ["disable_bw"],
        disable_bw,
        "0",
        "Disable bandwidth logging"
    ),
    row!(
        "gtod_reduce",
        [],
        Kind::Bool,
        "0",
        "Greatly reduce number of gettimeofday() calls",
        |o, v| {
            let b = parse_bool(req(v)?)?;
            o.gtod_reduce = b;
            o.disable_lat = b;
            o.disable_clat = b;
            o.disable_slat = b;
            o.disable_bw = b;
            o.clat_percentiles = !b;
            o.lat_percentiles = !b && o.lat_percentiles;
            o.slat_percentiles = !b && o.slat_percentiles;
            Ok(())
        }
    ),
    row!("write_bw_log", [], Kind::Str, "", "Write log of bandwidth during run",
         |o, v| { o.write_bw_log = Some(v.unwrap_or("").to_string()); Ok(()) }),
    row!("write_lat_log", [], Kind::Str, "", "Write log of latency during run",
         |o, v| { o.write_lat_log = Some(v.unwrap_or("").to_string()); Ok(()) }),
    row!("write_iops_log", [], Kind::Str, "", "Write log of IOPS during run",
         |o, v| { o.write_iops_log = Some(v.unwrap_or("").to_string()); Ok(()) }),
    row!("write_hist_log", [], Kind::Str, "", "Write log of latency histograms during run",
         |o, v| { o.write_hist_log = Some(v.unwrap_or("").to_string()); Ok(()) }),
    count_row!("log_avg_msec", [], log_avg_msec, "0", "Average bw/iops/lat logs over this period of time"),
    row!("log_window_value", ["log_max_value"],
         Kind::Choice(&[("avg", "Log average value over the window"),
                        ("max", "Log maximum value in the window"),
                        ("both", "Log both average and maximum value over the window"),
                        ("0", "Backward-compatible alias for 'avg'"),
                        ("1", "Backward-compatible alias for 'max'")]),
         "avg", "Value to log for each window (average, maximum or both)",
         |o, v| { o.log_window = choice(v, &[("avg", LogWindow::Avg), ("max", LogWindow::Max), ("both", LogWindow::Both), ("0", LogWindow::Avg), ("1", LogWindow::Max)])?; Ok(()) }),
    bool_row!("log_issue_time", [], log_issue_time, "0", "Include IO issue time for each log entry").since("3.38"),
    bool_row!("log_unix_epoch", [], log_unix_epoch, "", "Use Unix time in log files"),
    bool_row!("log_alternate_epoch", [], log_alternate_epoch, "", "Use alternate epoch time in log files. Uses the same epoch as that is used by clock_gettime with specified log_alternate_epoch_clock_id."),
    row!("log_alternate_epoch_clock_id", [], Kind::Int { min: 0, max: i32::MAX as i64 }, "", "If log_alternate_epoch or log_unix_epoch is true, this option specifies the clock_id from clock_gettime whose epoch should be used. If neither of those is true, this option has no effect. Default value is 0, or CLOCK_REALTIME",
         |o, v| { o.log_alternate_epoch_clock_id = int_in(v, o.kb_base, 0, i32::MAX as i64)? as i32; Ok(()) }),
    row!("job_start_clock_id", [], Kind::Int { min: 0, max: i32::MAX as i64 }, "0", "The clock_id of clock_gettime whose reading at the job's start is the JSON job_start (ms). Default 0, CLOCK_REALTIME",
         |o, v| { o.newest.job_start_clock_id = int_in(v, o.kb_base, 0, i32::MAX as i64)? as i32; Ok(()) }).since("3.36"),
    row!("log_compression", [], Kind::Int { min: 1024, max: 536_870_912 }, "", "Log in compressed chunks of this size",
         |o, v| { o.log_compression = int_in(v, o.kb_base, 1024, 536_870_912)? as u64; Ok(()) }),
    row!("log_compression_cpus", [], Kind::Str, "", "Limit log compression to these CPUs",
         |o, v| { o.log_compression_cpus = Some(crate::cpus::parse_cpu_list(req(v)?)?); Ok(()) }),
    bool_row!("log_store_compressed", [], log_store_compressed, "", "Store logs in a compressed format"),
    bool_row!("log_offset", [], log_offset, "0", "Include offset of IO for each log entry"),
    bool_row!("log_prio", [], log_prio, "0", "Include I/O priority value for each log entry"),
    bool_row!("per_job_logs", [], per_job_logs, "1", "Include job number in generated log files or not"),
    count_row!("log_hist_msec", [], log_hist_msec, "0", "Dump completion latency histograms at frequency of this time value"),
    row!("log_hist_coarseness", [], Kind::Int { min: 0, max: 6 }, "0", "Integer in range [0,6]. Higher coarseness outputs fewer histogram bins per sample",
         |o, v| { o.log_hist_coarseness = int_in(v, o.kb_base, 0, 6)? as u32; Ok(()) }),
    row!("log_entries", [], Kind::Int { min: 1, max: i64::MAX }, "1024", "Initial number of entries for a job IO log",
         |o, v| { o.log_entries = int_in(v, o.kb_base, 1, i64::MAX)? as u64; Ok(()) }),
    row!("interval_log", [], Kind::Str, "", "flexio: write one JSON line per job, direction and interval (not cumulative, with the interval's latency histogram) to this file",
         |o, v| { o.interval_log = Some(req(v)?.to_string()); Ok(()) }),
    row!("interval_log_msec", [], Kind::Int { min: 1, max: i64::MAX }, "1000", "flexio: length of an interval_log interval (ms)",
         |o, v| { o.interval_log_msec = int_in(v, o.kb_base, 1, i64::MAX)? as u64; Ok(()) }),
];
