//! Time and pacing: start, runtime, ramp, clock, rate limits, think time, latency targets, steady state.

use super::*;

/// Time and pacing: start, runtime, ramp, clock, rate limits, think time, latency targets, steady state.
#[rustfmt::skip]
pub(super) static ROWS: &[OptDef] = &[
    row!(
        "startdelay",
        [],
        Kind::Time { secs: true },
        "0",
        "Only start job when this period has passed",
        |o, v| {
            let s = req(v)?;
            o.startdelay_us = match s.char_indices().skip(1).find(|(_, c)| *c == '-') {
                Some((i, _)) => {
                    let a = parse_time_us(&s[..i], true)?;
                    let b = parse_time_us(&s[i + 1..], true)?;
                    if a <= b {
                        (a, b)
                    } else {
                        (b, a)
                    }
                }
                None => {
                    let t = parse_time_us(s, true)?;
                    (t, t)
                }
            };
            Ok(())
        }
    ),
    time_row!(
        "runtime",
        ["timeout"],
        runtime_us,
        true,
        "Stop workload when this amount of time has passed"
    ),
    flag_row!(
        "time_based",
        [],
        time_based,
        "Keep running until runtime/timeout is met"
    ),
    time_row!(
        "ramp_time",
        [],
        ramp_time_us,
        true,
        "Ramp up time before measuring performance"
    ),
    row!("ramp_size", [], Kind::Size { pct: false }, "", "Amount of data transferred before measuring performance (fio 3.42+)",
         |o, v| {
             let n = parse_size(req(v)?, o.kb_base)?;
             if n < 1 { return Err("ramp_size must be at least 1".into()); }
             o.newest.ramp_size = Some(n);
             Ok(())
         }).since("3.42"),
    row!("clocksource", [], Kind::Choice(&[("gettimeofday", "Use gettimeofday(2) for timing"), ("clock_gettime", "Use clock_gettime(2) for timing"), ("cpu", "Use CPU private clock")]),
         "cpu", "What type of timing source to use (flexio: cpu = the TSC, when invariant and trusted by the kernel)",
         |o, v| { o.clocksource = Some(choice(v, &[("gettimeofday", crate::options::ClockSourceOpt::Gettimeofday), ("clock_gettime", crate::options::ClockSourceOpt::ClockGettime), ("cpu", crate::options::ClockSourceOpt::Cpu)])?); Ok(()) }),
    row!("rate", [], Kind::SizeDir, "0", "Set bandwidth rate",
         |o, v| { o.rate = dirs_sizes(o, req(v)?, o.rate)?; Ok(()) }),
    row!("rate_min", ["ratemin"], Kind::SizeDir, "0", "Job must meet this rate or it will be shut down",
         |o, v| { o.rate_min = dirs_sizes(o, req(v)?, o.rate_min)?; Ok(()) }),
    row!("rate_iops", [], Kind::IntDir, "0", "Limit IO used to this number of IO operations/sec",
         |o, v| { o.rate_iops = dirs_sizes(o, req(v)?, o.rate_iops)?; Ok(()) }),
    row!("rate_iops_min", [], Kind::IntDir, "0", "Job must meet this rate or it will be shut down",
         |o, v| { o.rate_iops_min = dirs_sizes(o, req(v)?, o.rate_iops_min)?; Ok(()) }),
    row!("rate_process", [], Kind::Choice(&[("linear", "Linear rate of IO"), ("poisson", "Rate follows Poisson process")]),
         "linear", "What process controls how rated IO is managed",
         |o, v| { o.rate_poisson = choice(v, &[("linear", false), ("poisson", true)])?; Ok(()) }),
    row!("rate_cycle", ["ratecycle"], Kind::Int { min: 1, max: i64::MAX }, "1000", "Window average for rate limits (msec)",
         |o, v| { o.rate_cycle_ms = int_in(v, o.kb_base, 1, i64::MAX)? as u64; Ok(()) }),
    bool_row!("rate_ignore_thinktime", [], rate_ignore_thinktime, "0", "Rated IO ignores thinktime settings"),
    row!("thinktime", [], Kind::Time { secs: false }, "0", "Idle time between IO buffers (usec)",
         |o, v| { o.thinktime_us = parse_time_us(req(v)?, false)?; Ok(()) }),
    row!("thinktime_spin", [], Kind::Time { secs: false }, "0", "Start think time by spinning this amount (usec)",
         |o, v| { o.thinktime_spin_us = parse_time_us(req(v)?, false)?; Ok(()) }),
    row!("thinkcycles", [], Kind::Int { min: 0, max: i64::MAX }, "0", "Number of empty busy loop iterations after each submission round (fio 3.37+)",
         |o, v| { o.newest.thinkcycles = int_in(v, o.kb_base, 0, i64::MAX)? as u64; Ok(()) }).since("3.37"),
    row!("thinktime_blocks", [], Kind::Int { min: 1, max: i64::MAX }, "1", "IO buffer period between 'thinktime'",
         |o, v| { o.thinktime_blocks = Some(int_in(v, o.kb_base, 1, i64::MAX)? as u64); Ok(()) }),
    row!("thinktime_blocks_type", [], Kind::Choice(&[("complete", "thinktime_blocks takes effect at the completion side"), ("issue", "thinktime_blocks takes effect at the issue side")]),
         "complete", "How to count thinktime_blocks",
         |o, v| { o.thinktime_blocks_issue = choice(v, &[("complete", false), ("issue", true)])?; Ok(()) }),
    row!("thinktime_iotime", [], Kind::Time { secs: true }, "0", "IO time interval between 'thinktime'",
         |o, v| { o.thinktime_iotime_us = parse_time_us(req(v)?, true)?; Ok(()) }),
    row!("latency_target", [], Kind::Time { secs: false }, "0", "Ramp to max queue depth supporting this latency",
         |o, v| { o.latency_target_ns = parse_time_us(req(v)?, false)? * 1000; Ok(()) }),
    row!("latency_window", [], Kind::Time { secs: false }, "0", "Time to sustain latency_target",
         |o, v| { o.latency_window_us = parse_time_us(req(v)?, false)?; Ok(()) }),
    row!("latency_percentile", [], Kind::FloatList, "100", "Percentile of IOs must be below latency_target",
         |o, v| {
             let (l, _) = parse_float_list(req(v)?, 1)?;
             if !(0.0..=100.0).contains(&l[0]) { return Err("percentile must be within [0, 100]".into()); }
             o.latency_percentile = l[0];
             Ok(())
         }),
    bool_row!("latency_run", [], latency_run, "0", "Keep adjusting queue depth to match latency_target"),
    row!("max_latency", [], Kind::IntDir, "0", "Maximum tolerated IO latency (usec)",
         |o, v| {
             let parts = split_dirs(req(v)?, true)?;
             for (i, p) in parts.iter().enumerate() {
                 if let Some(p) = p { o.max_latency_us[i] = parse_time_us(p, false)?; }
             }
             Ok(())
         }),
    row!("steadystate", ["ss"], Kind::Str, "iops_slope:0.01%", "Define the criterion and limit to judge when a job has reached steady state",
         |o, v| { o.ss = crate::options::SsCriterion::parse(req(v)?, o.kb_base, o.compat)?; Ok(()) }),
    time_row!("steadystate_duration", ["ss_dur"], ss_dur_us, true, "Stop workload upon attaining steady state for specified duration"),
    row!("steadystate_ramp_time", ["ss_ramp"], Kind::Time { secs: true }, "0", "Delay before initiation of data collection for steady state job termination testing (flexio: auto finds it from the data)",
         |o, v| {
             let v = req(v)?;
             // flexio: the warm-up's end found by MSER-5 (fio takes a time only).
             if v == "auto" && !o.compat.is_fio333() {
                 o.ss_ramp_auto = true;
                 o.ss_ramp_us = 0;
             } else {
                 o.ss_ramp_us = parse_time_us(v, true)?;
                 o.ss_ramp_auto = false;
             }
             Ok(())
         }),
    row!("steadystate_departure", ["ss_departure"], Kind::Choice(&[("flag", "Record leaving steady state and keep running"), ("stop", "Record leaving steady state and stop the job")]), "", "flexio: once steady state is attained, keep watching and record when the metric leaves the steady band",
         |o, v| {
             o.ss_departure = Some(match req(v)? {
                 "flag" => crate::options::SsDeparture::Flag,
                 "stop" => crate::options::SsDeparture::Stop,
                 x => return Err(format!("'{x}': expected flag or stop")),
             });
             Ok(())
         }).since("flexio"),
    row!("steadystate_band", ["ss_band"], Kind::Str, "20%", "flexio: half-width of the steady band around the attained level, percent (ss_departure)",
         |o, v| {
             let t = req(v)?;
             let n: f64 = t.strip_suffix('%').unwrap_or(t).parse().map_err(|_| format!("'{t}': expected a percentage, e.g. 20%"))?;
             if !(n > 0.0 && n < 100.0) { return Err(format!("'{t}': the band must be between 0% and 100%")); }
             o.ss_band_pct = n;
             Ok(())
         }).since("flexio"),
    row!("steadystate_direction", ["ss_direction"], Kind::Choice(&[("all", "All directions pooled, as fio"), ("read", "The reads' samples only"), ("write", "The writes' samples only"), ("trim", "The trims' samples only"), ("each", "Every direction with I/O in its own window: attained when all are")]), "all", "flexio: which direction's IOPS or bandwidth steady state judges in a mixed job",
         |o, v| {
             use crate::options::SsDirection as D;
             o.ss_direction = match req(v)? {
                 "all" => D::All,
                 "read" => D::One(0),
                 "write" => D::One(1),
                 "trim" => D::One(2),
                 "each" => D::Each,
                 x => return Err(format!("'{x}': expected all, read, write, trim or each")),
             };
             Ok(())
         }).since("flexio"),
    time_row!("steadystate_departure_window", ["ss_departure_window"], ss_departure_window_us, true, "flexio: how long the metric must stay outside the band to count as a departure (default: ss_dur)").since("flexio"),
    row!("steadystate_check_interval", ["ss_interval"], Kind::Time { secs: true }, "1", "Polling interval for the steady state check (fio 3.35+)",
         |o, v| {
             let t = parse_time_us(req(v)?, true)?;
             if t < 1_000_000 { return Err("ss_check_interval must be at least 1s".into()); }
             o.ss_interval_us = t;
             Ok(())
         }).since("3.35"),
];
