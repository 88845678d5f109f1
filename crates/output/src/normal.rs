//! fio's normal (human) output, line for line (`stat.c: show_thread_status_normal`,
//! `show_ddir_status`, `show_group_stats`, `show_disk_util`): the newest fio's by default,
//! fio 3.33's with [`Layout::Fio333`] (`--compat=3.33`). Where the two differ the choice is
//! made in one small function each (`dir_suffix`, `mixed_rates`, `prio_name`,
//! `sync_header`, `latency_line`, `disk_line`).

use crate::num2str::{num2str, Unit};
use flexio_stats::report::{
    DirReport, DiskReport, GroupDir, GroupReport, JobReport, LatSummary, Layout, PrioReport,
    RunReport, Unified,
};
use std::fmt::Write;

fn i2p(kb_base: u32) -> bool {
    kb_base.is_power_of_two()
}

fn rate_unit(unit_base: u32) -> Unit {
    if unit_base == 1 {
        Unit::BitPerSec
    } else {
        Unit::BytePerSec
    }
}

/// The job header printed when a job is defined:
/// `name: (g=0): rw=read, bs=(R) 4096B-4096B, (W) ..., ioengine=psync, iodepth=1`.
#[allow(clippy::too_many_arguments)]
pub fn job_header(
    name: &str,
    groupid: u32,
    rw: &str,
    bs: [(u64, u64); 3],
    bs_is_seq_rand: bool,
    ioengine: &str,
    iodepth: u32,
    kb_base: u32,
    sig_figs: u32,
) -> String {
    let p = i2p(kb_base);
    let n = |v: u64| num2str(v, sig_figs as usize, 1, p, Unit::Byte);
    let bs_part = if bs_is_seq_rand {
        format!(
            "bs=(R) {}-{}, (W) {}-{}, bs_is_seq_rand, ",
            n(bs[0].0),
            n(bs[0].1),
            n(bs[1].0),
            n(bs[1].1)
        )
    } else {
        format!(
            "bs=(R) {}-{}, (W) {}-{}, (T) {}-{}, ",
            n(bs[0].0),
            n(bs[0].1),
            n(bs[1].0),
            n(bs[1].1),
            n(bs[2].0),
            n(bs[2].1)
        )
    };
    format!("{name}: (g={groupid}): rw={rw}, {bs_part}ioengine={ioengine}, iodepth={iodepth}\n")
}

/// A duration for flexio's own lines: ns, us, ms or s with two decimals.
fn human_ns(ns: f64) -> String {
    if ns >= 1e9 {
        format!("{:.2}s", ns / 1e9)
    } else if ns >= 1e6 {
        format!("{:.2}ms", ns / 1e6)
    } else if ns >= 1e3 {
        format!("{:.2}us", ns / 1e3)
    } else {
        format!("{ns:.0}ns")
    }
}

/// Latency line with fio's unit switch (nsec → usec → msec).
fn display_lat(out: &mut String, name: &str, l: &LatSummary) {
    let (mut min, mut max, mut mean, mut dev) = (l.min_ns, l.max_ns, l.mean_ns, l.stddev_ns);
    let base = if min > 2_000_000 && max > 99_999_999 && dev > 1_000_000.0 {
        min /= 1_000_000;
        max /= 1_000_000;
        mean /= 1_000_000.0;
        dev /= 1_000_000.0;
        "(msec)"
    } else if min > 2000 && max > 99_999 && dev > 1000.0 {
        min /= 1000;
        max /= 1000;
        mean /= 1000.0;
        dev /= 1000.0;
        "(usec)"
    } else {
        "(nsec)"
    };
    let _ = writeln!(
        out,
        "    {name} {base}: min={}, max={}, avg={mean:5.2}, stdev={dev:5.2}",
        num2str(min, 6, 1, false, Unit::None),
        num2str(max, 6, 1, false, Unit::None)
    );
}

/// A percentile block (`show_clat_percentiles`).
pub fn percentiles_block(out: &mut String, pre: &str, vals: &[(f64, u64)], precision: usize) {
    if vals.is_empty() {
        return;
    }
    let minv = vals.iter().map(|v| v.1).min().unwrap_or(0);
    let maxv = vals.iter().map(|v| v.1).max().unwrap_or(0);
    let (scale, divisor, unit) = if minv > 2_000_000 && maxv > 99_999_999 {
        (2, 1_000_000u64, "msec")
    } else if minv > 2000 && maxv > 99_999 {
        (1, 1000, "usec")
    } else {
        (0, 1, "nsec")
    };
    let _ = writeln!(out, "    {pre} percentiles ({unit}):");
    let q = maxv / divisor;
    let width = if q == 0 {
        5
    } else {
        ((q as f64).log10() + 1.0) as usize
    }
    .max(5);
    let per_line = (80 - 7) / (precision + 10 + width);
    let per_line = per_line.max(1);
    for (j, (p, v)) in vals.iter().enumerate() {
        if j % per_line == 0 {
            out.push_str("     |");
        }
        let mut v = *v;
        for _ in 0..scale {
            v = v.div_ceil(1000);
        }
        let last = j == vals.len() - 1;
        let _ = write!(
            out,
            " {:w$.prec$}th=[{:vw$}]{}",
            p,
            v,
            if last { '\n' } else { ',' },
            w = precision + 3,
            prec = precision,
            vw = width
        );
        if last {
            break;
        }
        if j % per_line == per_line - 1 {
            out.push('\n');
        }
    }
}

/// Which line of a job a direction block is.
#[derive(Clone, Copy, PartialEq, Eq)]
enum DirLine {
    Read,
    Write,
    Trim,
    /// unified_rw_reporting=mixed: the only line.
    Mixed,
    /// unified_rw_reporting=both: the line after read, write and trim.
    MixedOfBoth,
}

/// The end of a direction line: fio 3.33 puts `; N zone resets` on every write line; the
/// newest fio only for `zonemode=zbd` jobs, and then on every direction line.
fn dir_suffix(layout: Layout, j: &JobReport, line: DirLine) -> String {
    match (layout, j.zone_resets) {
        (Layout::Fio333, n) if line == DirLine::Write => {
            format!("; {} zone resets", n.unwrap_or(0))
        }
        (Layout::Latest, Some(n)) => format!("; {n} zone resets"),
        _ => String::new(),
    }
}

/// IOPS, bandwidth (primary and alternate) and bytes of a direction line. fio's
/// `unified_rw_reporting=both` line comes from a copy of the statistics without the
/// output settings: fio 3.33 prints zeros there (`IOPS=0, BW=0 (0)(0B/1msec)`), the
/// newest fio the right numbers without the rate unit (`BW=1000Mi (1049M)`).
fn mixed_rates(
    layout: Layout,
    j: &JobReport,
    d: &DirReport,
    p: bool,
    line: DirLine,
) -> (String, String, String, String) {
    let sf = j.params.sig_figs as usize;
    let unit = rate_unit(j.params.unit_base);
    let bw = d.bw_bytes;
    let iops = num2str(d.iops_int, sf, 1, false, Unit::None);
    let io = num2str(d.io_bytes, sf, 1, p, Unit::Byte);
    match (line, layout) {
        (DirLine::MixedOfBoth, Layout::Fio333) => ("0".into(), "0".into(), "0".into(), "0B".into()),
        (DirLine::MixedOfBoth, Layout::Latest) => (
            iops,
            num2str(bw, sf, 1, true, Unit::None),
            num2str(bw, sf, 1, false, Unit::None),
            io,
        ),
        _ => (
            iops,
            num2str(bw, sf, 1, p, unit),
            num2str(bw, sf, 1, !p, unit),
            io,
        ),
    }
}

/// `clat prio 2/0` (fio 3.33: class/level) or `clat prio 2/0/0` (newest: class/level/hint).
fn prio_name(layout: Layout, kind: &str, pr: &PrioReport) -> String {
    match layout {
        Layout::Fio333 => format!("{kind} prio {}/{}", pr.class, pr.level),
        Layout::Latest => format!("{kind} prio {}/{}/{}", pr.class, pr.level, pr.hint),
    }
}

fn show_ddir(
    out: &mut String,
    layout: Layout,
    j: &JobReport,
    g: &GroupReport,
    line: DirLine,
    d: &DirReport,
) {
    let p = i2p(g.kb_base);
    let label = match line {
        DirLine::Read => "read",
        DirLine::Write => "write",
        DirLine::Trim => "trim",
        DirLine::Mixed | DirLine::MixedOfBoth => "mixed",
    };
    let (iops, bw, bw_alt, io) = mixed_rates(layout, j, d, p, line);
    let _ = writeln!(
        out,
        "  {label}: IOPS={iops}, BW={bw} ({bw_alt})({io}/{}msec){}",
        d.runtime_ms,
        dir_suffix(layout, j, line)
    );
    if d.slat.n > 0 {
        display_lat(out, "slat", &d.slat);
    }
    if d.clat.n > 0 {
        display_lat(out, "clat", &d.clat);
    }
    if d.lat.n > 0 && !j.params.nostats_engine {
        display_lat(out, " lat", &d.lat);
    }
    let prio_kind = if j.params.lat_percentiles {
        "lat"
    } else {
        "clat"
    };
    for pr in &d.prios {
        display_lat(out, &prio_name(layout, prio_kind, pr), &pr.lat);
    }
    let prec = j.params.percentile_precision;
    if let Some(v) = &d.slat.percentiles {
        percentiles_block(out, "slat", v, prec);
    }
    if let Some(v) = &d.clat.percentiles {
        percentiles_block(out, "clat", v, prec);
    }
    if let Some(v) = &d.lat.percentiles {
        percentiles_block(out, "lat", v, prec);
    }
    for pr in &d.prios {
        if let Some(v) = &pr.lat.percentiles {
            let pre = format!(
                "{} ({:.2}% of IOs)",
                prio_name(layout, prio_kind, pr),
                pr.pct_of_ios
            );
            percentiles_block(out, &pre, v, prec);
        }
    }
    flexio_lat_lines(out, j, d, prec);
    if let Some(sc) = &d.sched {
        // flexio: latency from the scheduled start (rate-limited jobs), and the lag. Named
        // `sched_lat` so that scripts matching fio's " lat (" lines do not pick it up.
        display_lat(out, "sched_lat", &sc.lat);
        if let Some(v) = &sc.lat.percentiles {
            percentiles_block(out, "sched_lat", v, prec);
        }
        let _ = writeln!(
            out,
            "    behind schedule: max={}, avg={}, late={}/{} I/Os (issued >= {} behind)",
            human_ns(sc.lag.max_ns as f64),
            human_ns(sc.lag.mean_ns),
            sc.late_ios,
            sc.lag.n,
            human_ns(sc.late_threshold_ns as f64)
        );
    }
    let b = &d.bw_samples;
    if b.samples > 0 {
        let kb = g.kb_base as f64;
        let (mut min, mut max, mut mean, mut dev) = (b.min as f64, b.max as f64, b.mean, b.stddev);
        // fio's label: KiB (kB under kb_base=1000), MiB above kb_base² whatever the base,
        // and never bits (its unit_base there holds a unit code, never 1: unit_base=1 is
        // not seen and the figures stay bytes).
        let mut label = if g.kb_base == 1000 { "kB" } else { "KiB" };
        if mean > kb * kb {
            min /= kb;
            max /= kb;
            mean /= kb;
            dev /= kb;
            label = "MiB";
        }
        let _ = writeln!(
            out,
            "   bw ({label:>5}/s): min={:5}, max={:5}, per={:3.2}%, avg={mean:5.2}, stdev={dev:5.2}, samples={}",
            min as u64, max as u64, d.bw_agg_pct, b.samples
        );
    }
    let i = &d.iops_samples;
    if i.samples > 0 {
        let _ = writeln!(
            out,
            "   iops        : min={:5}, max={:5}, avg={:5.2}, stdev={:5.2}, samples={}",
            i.min, i.max, i.mean, i.stddev, i.samples
        );
    }
}

/// flexio's lines beside fio's latency lines (none for summaries flexio did not measure):
/// the RMS of each latency statistic, and the percentiles that rest on too few samples to
/// be more than the maximum. They start with words fio never prints there (`rms:`,
/// `few samples:`), so parsers of fio's lines are not confused.
fn flexio_lat_lines(out: &mut String, j: &JobReport, d: &DirReport, prec: usize) {
    let mut lats = vec![("slat", &d.slat), ("clat", &d.clat)];
    if !j.params.nostats_engine {
        lats.push(("lat", &d.lat));
    }
    let rms: Vec<String> = lats
        .iter()
        .filter(|(_, l)| l.n > 0)
        .filter_map(|(n, l)| {
            l.extra
                .as_ref()
                .map(|x| format!("{n}={}", human_ns(x.rms_ns)))
        })
        .collect();
    if !rms.is_empty() {
        let _ = writeln!(out, "    rms: {}", rms.join(", "));
    }
    for (n, l) in &lats {
        let Some(x) = &l.extra else { continue };
        if x.few_samples.is_empty() || l.percentiles.is_none() {
            continue;
        }
        let list: Vec<String> = x
            .few_samples
            .iter()
            .map(|p| format!("{p:.prec$}th"))
            .collect();
        let need = flexio_stats::report::min_samples_for(x.few_samples[0]);
        let _ = writeln!(
            out,
            "    few samples: {n} {} from {} samples (the first needs >= {need}): they show the maximum, not the tail",
            list.join(", "),
            l.n
        );
    }
}

fn show_lat_dist(out: &mut String, vals: &[f64], ranges: &[&str], msg: &str) {
    let mut new_line = true;
    let mut line = 0;
    let mut shown = false;
    for (v, r) in vals.iter().zip(ranges) {
        if *v <= 0.0 {
            continue;
        }
        shown = true;
        if new_line {
            if line > 0 {
                out.push('\n');
            }
            let _ = write!(out, "  lat ({msg})   : ");
            new_line = false;
            line = 0;
        }
        if line > 0 {
            out.push_str(", ");
        }
        let _ = write!(out, "{r}{v:3.2}%");
        line += 1;
        if line == 5 {
            new_line = true;
        }
    }
    if shown {
        out.push('\n');
    }
}

const LAT_RANGES: [&str; 12] = [
    "2=", "4=", "10=", "20=", "50=", "100=", "250=", "500=", "750=", "1000=", "2000=", ">=2000=",
];

fn dist_line(label: &str, keys: [&str; 7], v: &[f64; 7]) -> String {
    let parts: Vec<String> = keys
        .iter()
        .zip(v)
        .map(|(k, x)| format!("{k}={x:3.1}%"))
        .collect();
    format!("{label}{}\n", parts.join(", "))
}

/// errno → text, as strerror() prints it.
pub fn strerror(e: i32) -> String {
    if e == 0 {
        return "Success".into();
    }
    let s = std::io::Error::from_raw_os_error(e).to_string();
    // Rust appends " (os error N)".
    match s.rfind(" (os error") {
        Some(i) => s[..i].to_string(),
        None => s,
    }
}

/// The sync block's title: the newest fio adds `/syncfs`.
fn sync_header(layout: Layout) -> &'static str {
    match layout {
        Layout::Fio333 => "  fsync/fdatasync/sync_file_range:\n",
        Layout::Latest => "  fsync/fdatasync/sync_file_range/syncfs:\n",
    }
}

/// A latency-target value in ns with the newest fio's unit: s from 2 s, ms from 2 ms, us
/// from 2 µs, else ns, two decimals (`10.00ms`, `0.00ns`).
pub fn target_time(ns: f64) -> String {
    if ns >= 2e9 {
        format!("{:.2}s", ns / 1e9)
    } else if ns >= 2e6 {
        format!("{:.2}ms", ns / 1e6)
    } else if ns >= 2000.0 {
        format!("{:.2}us", ns / 1e3)
    } else {
        format!("{ns:.2}ns")
    }
}

/// `latency   : target=..., window=..., percentile=..., depth=...`: fio 3.33 prints the
/// raw target (ns) and window (µs); the newest fio both as times with units.
fn latency_line(layout: Layout, j: &JobReport) -> String {
    let pr = &j.params;
    let (target, window) = match layout {
        Layout::Fio333 => (
            pr.latency_target_ns.to_string(),
            pr.latency_window_us.to_string(),
        ),
        Layout::Latest => (
            target_time(pr.latency_target_ns as f64),
            target_time(pr.latency_window_us as f64 * 1000.0),
        ),
    };
    format!(
        "     latency   : target={target}, window={window}, percentile={:.2}%, depth={}\n",
        pr.latency_percentile, pr.latency_depth
    )
}

fn show_job(out: &mut String, layout: Layout, j: &JobReport, g: &GroupReport, time: &str) {
    let io: u64 = j.dirs.iter().map(|d| d.io_bytes).sum();
    let issued: u64 = j.issued[..3].iter().sum();
    if io == 0 && issued == 0 {
        return;
    }
    if j.error == 0 {
        let _ = writeln!(
            out,
            "{}: (groupid={}, jobs={}): err= 0: pid={}: {time}",
            j.name, j.groupid, j.members, j.pid
        );
    } else {
        let _ = writeln!(
            out,
            "{}: (groupid={}, jobs={}): err={:2} ({}): pid={}: {time}",
            j.name, j.groupid, j.members, j.error, j.verror, j.pid
        );
    }
    if let Some(d) = &j.description {
        let _ = writeln!(out, "  Description  : [{d}]");
    }
    match (j.params.unified, &j.mixed) {
        (Unified::Mixed, Some(m)) => {
            if m.runtime_ms > 0 && m.io_bytes > 0 {
                show_ddir(out, layout, j, g, DirLine::Mixed, m);
            }
        }
        _ => {
            let lines = [DirLine::Read, DirLine::Write, DirLine::Trim];
            for (d, line) in j.dirs.iter().zip(lines) {
                if d.io_bytes > 0 && d.runtime_ms > 0 {
                    show_ddir(out, layout, j, g, line, d);
                }
            }
            if let (Unified::Both, Some(m)) = (j.params.unified, &j.mixed) {
                if m.runtime_ms > 0 {
                    show_ddir(out, layout, j, g, DirLine::MixedOfBoth, m);
                }
            }
        }
    }
    if !j.params.nostats_engine {
        show_lat_dist(out, &j.latency_ns, &LAT_RANGES[..10], "nsec");
        show_lat_dist(out, &j.latency_us, &LAT_RANGES[..10], "usec");
        show_lat_dist(out, &j.latency_ms, &LAT_RANGES, "msec");
    }
    if j.sync.lat.n > 0 {
        out.push_str(sync_header(layout));
        display_lat(out, "sync", &j.sync.lat);
        if let Some(v) = &j.sync.lat.percentiles {
            percentiles_block(out, "sync", v, j.params.percentile_precision);
        }
    }
    let _ = writeln!(
        out,
        "  cpu          : usr={:3.2}%, sys={:3.2}%, ctx={}, majf={}, minf={}",
        j.usr_cpu, j.sys_cpu, j.ctx, j.majf, j.minf
    );
    out.push_str(&dist_line(
        "  IO depths    : ",
        ["1", "2", "4", "8", "16", "32", ">=64"],
        &j.iodepth_level,
    ));
    out.push_str(&dist_line(
        "     submit    : ",
        ["0", "4", "8", "16", "32", "64", ">=64"],
        &j.iodepth_submit,
    ));
    out.push_str(&dist_line(
        "     complete  : ",
        ["0", "4", "8", "16", "32", "64", ">=64"],
        &j.iodepth_complete,
    ));
    let _ = writeln!(
        out,
        "     issued rwts: total={},{},{},{} short={},{},{},0 dropped={},{},{},0",
        j.issued[0],
        j.issued[1],
        j.issued[2],
        j.issued[3],
        j.short[0],
        j.short[1],
        j.short[2],
        j.dropped[0],
        j.dropped[1],
        j.dropped[2]
    );
    if j.params.continue_on_error {
        let _ = writeln!(
            out,
            "     errors    : total={}, first_error={}/<{}>",
            j.total_err,
            j.first_error,
            strerror(j.first_error)
        );
    }
    out.push_str(&latency_line(layout, j));
    if let Some(b) = &j.block {
        block_lines(out, b);
    }
    if let Some(ss) = &j.steadystate {
        let kb = j.params.kb_base as u64;
        let i2p = kb.is_power_of_two();
        let sf = j.params.sig_figs as usize;
        let unit = rate_unit(j.params.unit_base);
        let bw = ss.bw_mean() / kb.max(1);
        // fio 3.42: a latency criterion shows the window's mean latency, always in nsec.
        let lat = if ss.crit.lat {
            format!(
                "lat={}nsec, ",
                num2str(ss.lat_mean(), sf, 1, false, Unit::None)
            )
        } else {
            String::new()
        };
        let _ = writeln!(
            out,
            "  steadystate  : attained={}, bw={} ({}), iops={}, {lat}{}{}={:.3}{}",
            if ss.attained { "yes" } else { "no" },
            num2str(bw, sf, kb, i2p, unit),
            num2str(bw, sf, kb, !i2p, unit),
            num2str(ss.iops_mean(), sf, 1, false, Unit::None),
            ss.crit.metric(),
            if ss.crit.slope { " slope" } else { " mean dev" },
            ss.criterion,
            if ss.crit.pct { "%" } else { "" }
        );
    }
    crate::ops::table(out, j);
}

/// block_error_percentiles: fio's "block lifetime percentiles" (entries wrap past 75
/// columns) and the blocks' states.
fn block_lines(out: &mut String, b: &flexio_stats::blocks::BlockReport) {
    out.push_str("  block lifetime percentiles :\n   |");
    let mut pos = 0;
    for (i, (p, trims)) in b.percentiles.iter().enumerate() {
        let end = if i + 1 == b.percentiles.len() {
            '\n'
        } else {
            ','
        };
        let e = format!(" {p:3.2}th={trims}{end}");
        if pos + e.len() > 75 {
            pos = 0;
            out.push_str("\n   |");
        }
        out.push_str(&e);
        pos += e.len();
    }
    out.push_str("        states               :");
    for (i, (name, n)) in flexio_stats::blocks::STATE_NAMES
        .iter()
        .zip(b.states)
        .enumerate()
    {
        let end = if i == 4 { '\n' } else { ',' };
        let _ = write!(out, " {name}={n}{end}");
    }
}

fn group_line(out: &mut String, label: &str, g: &GroupReport, d: &GroupDir) {
    let p = i2p(g.kb_base);
    let sf = g.sig_figs as usize;
    let u = rate_unit(g.unit_base);
    let _ = writeln!(
        out,
        "{label}: bw={} ({}), {}-{} ({}-{}), io={} ({}), run={}-{}msec",
        num2str(d.agg_bw, sf, 1, p, u),
        num2str(d.agg_bw, sf, 1, !p, u),
        num2str(d.min_bw, sf, 1, p, u),
        num2str(d.max_bw, sf, 1, p, u),
        num2str(d.min_bw, sf, 1, !p, u),
        num2str(d.max_bw, sf, 1, !p, u),
        num2str(d.io_bytes, sf, 1, p, Unit::Byte),
        num2str(d.io_bytes, sf, 1, !p, Unit::Byte),
        d.min_run_ms,
        d.max_run_ms
    );
}

fn show_group(out: &mut String, g: &GroupReport) {
    let _ = writeln!(out, "\nRun status group {} (all jobs):", g.id);
    // A mixed group labels every direction MIXED: its mixed units' figures are in the
    // read slot, and a plain unit beside them keeps its own directions (fio).
    for (i, d) in g.dirs.iter().enumerate() {
        if d.max_run_ms > 0 {
            let label = if g.unified == Unified::Mixed {
                "  MIXED"
            } else {
                ["   READ", "  WRITE", "   TRIM"][i]
            };
            group_line(out, label, g, d);
        }
    }
    if g.unified == Unified::Both {
        if let Some(m) = &g.mixed {
            if m.max_run_ms > 0 {
                group_line(out, "  MIXED", g, m);
            }
        }
    }
}

/// One device of the disk block; the newest fio adds `sectors=` after `ios=`. A device
/// with slaves is indented two more and ends with the slaves' averages (`aggsectors=`, so
/// spelt, only in the newest fio).
fn disk_line(layout: Layout, d: &DiskReport) -> String {
    let sectors = match layout {
        Layout::Fio333 => String::new(),
        Layout::Latest => format!("sectors={}/{}, ", d.read_sectors, d.write_sectors),
    };
    let (indent, aggr) = match &d.aggr {
        None => ("", String::new()),
        Some(a) => {
            let sectors = match layout {
                Layout::Fio333 => String::new(),
                Layout::Latest => format!(
                    ", aggsectors={}/{}",
                    a.avg(a.sectors[0]),
                    a.avg(a.sectors[1])
                ),
            };
            let s = format!(
                ", aggrios={}/{}{sectors}, aggrmerge={}/{}, aggrticks={}/{}, aggrin_queue={}, aggrutil={:3.2}%",
                a.avg(a.ios[0]),
                a.avg(a.ios[1]),
                a.avg(a.merges[0]),
                a.avg(a.merges[1]),
                a.avg(a.ticks[0]),
                a.avg(a.ticks[1]),
                a.avg(a.in_queue),
                a.max_util
            );
            ("  ", s)
        }
    };
    format!(
        "{indent}  {}: ios={}/{}, {sectors}merge={}/{}, ticks={}/{}, in_queue={}, util={:3.2}%{aggr}\n",
        d.name,
        d.read_ios,
        d.write_ios,
        d.read_merges,
        d.write_merges,
        d.read_ticks,
        d.write_ticks,
        d.in_queue,
        d.util
    )
}

/// The disk block.
pub fn disk_block(out: &mut String, layout: Layout, disks: &[DiskReport]) {
    if disks.is_empty() {
        return;
    }
    out.push_str("\nDisk stats (read/write):\n");
    for d in disks {
        out.push_str(&disk_line(layout, d));
    }
}

/// One job's block (its group from `r`), as in the final report.
pub fn job_block(j: &JobReport, r: &RunReport) -> String {
    let mut out = String::new();
    if let Some(g) = r.groups.iter().find(|g| g.id == j.groupid) {
        show_job(&mut out, r.layout, j, g, &r.time);
    }
    out
}

/// The final report in normal format.
pub fn report(r: &RunReport) -> String {
    let mut out = String::from("\n");
    for j in &r.jobs {
        let g = r
            .groups
            .iter()
            .find(|g| g.id == j.groupid)
            .expect("every job has a group");
        show_job(&mut out, r.layout, j, g, &r.time);
    }
    for g in &r.groups {
        show_group(&mut out, g);
    }
    disk_block(&mut out, r.layout, &r.disks);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_layout() {
        let h = job_header(
            "sq-read",
            0,
            "read",
            [(8 << 20, 8 << 20); 3],
            false,
            "psync",
            1,
            1024,
            4,
        );
        assert_eq!(
            h,
            "sq-read: (g=0): rw=read, bs=(R) 8192KiB-8192KiB, (W) 8192KiB-8192KiB, (T) 8192KiB-8192KiB, ioengine=psync, iodepth=1\n"
        );
    }

    #[test]
    fn percentile_block_layout_matches_fio() {
        // Values captured from fio 3.33 (clat percentiles (nsec) of a sync write job).
        let list = [
            1.0, 5.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 95.0, 99.0, 99.5, 99.9,
            99.95, 99.99,
        ];
        let vals = [
            1848u64, 1944, 1992, 2064, 2096, 2160, 2192, 2256, 2320, 2448, 2768, 4576, 18304,
            28032, 83456, 88576, 111104,
        ];
        let v: Vec<(f64, u64)> = list.iter().copied().zip(vals.iter().copied()).collect();
        let mut out = String::new();
        percentiles_block(&mut out, "clat", &v, 2);
        let expect = "    clat percentiles (nsec):
     |  1.00th=[  1848],  5.00th=[  1944], 10.00th=[  1992], 20.00th=[  2064],
     | 30.00th=[  2096], 40.00th=[  2160], 50.00th=[  2192], 60.00th=[  2256],
     | 70.00th=[  2320], 80.00th=[  2448], 90.00th=[  2768], 95.00th=[  4576],
     | 99.00th=[ 18304], 99.50th=[ 28032], 99.90th=[ 83456], 99.95th=[ 88576],
     | 99.99th=[111104]
";
        assert_eq!(out, expect);
    }

    #[test]
    fn usec_percentiles_round_up() {
        let vals = [(50.0, 1_581_056u64), (99.0, 22_937_600)];
        let mut out = String::new();
        percentiles_block(&mut out, "clat", &vals, 2);
        assert_eq!(
            out,
            "    clat percentiles (usec):\n     | 50.00th=[ 1582], 99.00th=[22938]\n"
        );
    }

    #[test]
    fn latency_distribution_lines() {
        let mut out = String::new();
        let v = [0.0, 0.0, 0.0, 0.0, 0.51, 20.88, 75.96, 1.79, 0.71, 0.07];
        show_lat_dist(&mut out, &v, &LAT_RANGES[..10], "usec");
        assert_eq!(out, "  lat (usec)   : 50=0.51%, 100=20.88%, 250=75.96%, 500=1.79%, 750=0.71%\n  lat (usec)   : 1000=0.07%\n");
    }

    #[test]
    fn strerror_text() {
        assert_eq!(strerror(22), "Invalid argument");
        assert_eq!(strerror(0), "Success");
    }
}
