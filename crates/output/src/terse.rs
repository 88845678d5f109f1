//! fio's terse (minimal) output, versions 2, 3, 4 and 5 (`show_thread_status_terse_all`):
//! one `;`-separated line per reporting unit; latencies in µs, bandwidth in KiB/s. Version 2
//! has no fio version and no disks, includes trim, and puts the description on a line of
//! its own (`;<description>`). The same in fio 3.33 and the newest fio.

use crate::json::fmt_f;
use flexio_stats::report::{DirReport, DiskReport, JobReport, LatSummary, RunReport, Unified};
use std::fmt::Write;

/// Percentile slots printed per direction (fio's FIO_IO_U_LIST_MAX_LEN).
const PCT_SLOTS: usize = 20;

fn lat4(out: &mut String, l: &LatSummary) {
    if l.n > 0 {
        let _ = write!(
            out,
            ";{};{};{};{}",
            l.min_ns / 1000,
            l.max_ns / 1000,
            fmt_f(l.mean_ns / 1000.0),
            fmt_f(l.stddev_ns / 1000.0)
        );
    } else {
        out.push_str(";0;0;0.000000;0.000000");
    }
}

fn ddir(out: &mut String, j: &JobReport, d: &DirReport, ver: u32) {
    let (bw, iops) = if d.runtime_ms > 0 {
        (d.bw_bytes / 1024, d.iops_int)
    } else {
        (0, 0)
    };
    let _ = write!(
        out,
        ";{};{};{};{}",
        d.io_bytes >> 10,
        bw,
        iops,
        d.runtime_ms
    );
    lat4(out, &d.slat);
    lat4(out, &d.clat);
    let pct = if j.params.lat_percentiles {
        &d.lat.percentiles
    } else {
        &d.clat.percentiles
    };
    // With percentiles enabled fio prints every listed percentile, with value 0 for a
    // direction without samples; the remaining slots are "0%=0".
    let enabled = j.params.lat_percentiles || j.params.clat_percentiles;
    let list: &[f64] = if enabled {
        &j.params.percentile_list
    } else {
        &[]
    };
    let vals: &[(f64, u64)] = pct.as_deref().unwrap_or(&[]);
    for i in 0..PCT_SLOTS {
        match list.get(i) {
            Some(p) => {
                let v = vals.get(i).map(|x| x.1).unwrap_or(0);
                let _ = write!(out, ";{}%={}", fmt_f(*p), v / 1000);
            }
            None => out.push_str(";0%=0"),
        }
    }
    lat4(out, &d.lat);
    let b = &d.bw_samples;
    if b.samples > 0 {
        let _ = write!(
            out,
            ";{};{};{}%;{};{}",
            b.min,
            b.max,
            fmt_f(d.bw_agg_pct_terse),
            fmt_f(b.mean),
            fmt_f(b.stddev)
        );
    } else {
        out.push_str(";0;0;0.000000%;0.000000;0.000000");
    }
    if ver == 5 {
        let _ = write!(out, ";{}", b.samples);
        let i = &d.iops_samples;
        if i.samples > 0 {
            let _ = write!(
                out,
                ";{};{};{};{};{}",
                i.min,
                i.max,
                fmt_f(i.mean),
                fmt_f(i.stddev),
                i.samples
            );
        } else {
            out.push_str(";0;0;0.000000;0.000000;0");
        }
    }
}

/// The disk fields of a terse line (v3 and later): each device's, then for a device with
/// slaves `slaves` and their averages (no sectors, in every fio).
pub fn disks(out: &mut String, ds: &[DiskReport]) {
    for d in ds {
        let _ = write!(
            out,
            ";{};{};{};{};{};{};{};{};{:3.2}%",
            d.name,
            d.read_ios,
            d.write_ios,
            d.read_merges,
            d.write_merges,
            d.read_ticks,
            d.write_ticks,
            d.in_queue,
            d.util
        );
        if let Some(a) = &d.aggr {
            let _ = write!(
                out,
                ";slaves;{};{};{};{};{};{};{};{:3.2}%",
                a.avg(a.ios[0]),
                a.avg(a.ios[1]),
                a.avg(a.merges[0]),
                a.avg(a.merges[1]),
                a.avg(a.ticks[0]),
                a.avg(a.ticks[1]),
                a.avg(a.in_queue),
                a.max_util
            );
        }
    }
}

/// One terse line.
pub fn job_line(j: &JobReport, r: &RunReport, ver: u32) -> String {
    let mut out = String::new();
    if ver == 2 {
        let _ = write!(out, "2;{};{};{}", j.name, j.groupid, j.error);
    } else {
        let _ = write!(
            out,
            "{ver};{};{};{};{}",
            r.version, j.name, j.groupid, j.error
        );
    }
    let mixed = j.params.unified == Unified::Mixed;
    match (&j.mixed, mixed) {
        (Some(m), true) => ddir(&mut out, j, m, ver),
        _ => {
            ddir(&mut out, j, &j.dirs[0], ver);
            ddir(&mut out, j, &j.dirs[1], ver);
            if ver != 3 {
                ddir(&mut out, j, &j.dirs[2], ver);
            }
            if let (Unified::Both, Some(m)) = (j.params.unified, &j.mixed) {
                ddir(&mut out, j, m, ver);
            }
        }
    }
    let _ = write!(
        out,
        ";{}%;{}%;{};{};{}",
        fmt_f(j.usr_cpu),
        fmt_f(j.sys_cpu),
        j.ctx,
        j.majf,
        j.minf
    );
    for v in &j.iodepth_level {
        let _ = write!(out, ";{v:3.1}%");
    }
    // The first µs bucket also counts everything below 1 µs.
    let mut us = j.latency_us;
    us[0] = j.latency_us_terse0;
    for v in us.iter().chain(j.latency_ms.iter()) {
        let _ = write!(out, ";{v:3.2}%");
    }
    if ver != 2 {
        disks(&mut out, &r.disks);
    }
    if j.params.continue_on_error {
        let _ = write!(out, ";{};{}", j.total_err, j.first_error);
    }
    if let Some(d) = &j.description {
        if ver == 2 {
            out.push('\n');
        }
        let _ = write!(out, ";{d}");
    }
    out.push('\n');
    out
}

pub fn report(r: &RunReport, ver: u32) -> String {
    r.jobs.iter().map(|j| job_line(j, r, ver)).collect()
}
