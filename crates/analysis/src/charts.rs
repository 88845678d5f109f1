//! The report's charts, built from the model: time series from the logs (bandwidth, IOPS,
//! latency with its min/max band and per-interval percentiles from histogram logs) and the
//! latency distribution views (histogram, percentile curve, sorted response times, CCDF)
//! from json+ bins or latency logs.

use crate::fmt;
use crate::logs::{DirLog, LogKind, TimeSeries};
use crate::model::{Ddir, DirResult, JobResult};
use crate::svg::{downsample, Axis, Chart, Scale, Series};

/// Points per drawn time series (about one per horizontal pixel of the plot).
pub const MAX_POINTS: usize = 560;
/// Points of a rate computed from per-I/O log lines: each averages enough time for the
/// rate to mean something.
pub const RATE_POINTS: usize = 150;

/// One result's data for a job and direction.
pub struct Entry<'a> {
    /// Index of the result (colour).
    pub result: usize,
    pub label: &'a str,
    pub job: &'a JobResult,
    pub dir: &'a DirResult,
}

/// A latency distribution: bins and where they came from.
pub struct Dist {
    pub bins: Vec<(u64, u64)>,
    pub source: String,
    pub kind: &'static str,
}

/// The best latency distribution of an entry: the response-time log (exact for every I/O),
/// else the json+ bins of the response statistic.
pub fn distribution(job: &JobResult, dir: &DirResult) -> Option<Dist> {
    let (kind, lat) = dir.response();
    let order = if kind == "lat" {
        [LogKind::Lat, LogKind::Clat]
    } else {
        [LogKind::Clat, LogKind::Lat]
    };
    if let Some(l) = order.iter().find_map(|k| {
        job.logs
            .get(*k, dir.ddir)
            .filter(|l| l.per_io && l.stat.samples > 0)
    }) {
        return Some(Dist {
            bins: l.bins(),
            source: format!("{} log, {} I/Os", l.kind.suffix(), l.stat.samples),
            kind: if l.kind == LogKind::Lat {
                "lat"
            } else {
                "clat"
            },
        });
    }
    if let Some(h) = job.logs.hist(dir.ddir) {
        let bins: Vec<(u64, u64)> = h
            .counts
            .iter()
            .enumerate()
            .filter(|(_, c)| **c > 0)
            .map(|(i, c)| (flexio_stats::hist::idx_to_val(i), *c))
            .collect();
        if !bins.is_empty() {
            return Some(Dist {
                bins,
                source: format!("clat histogram log, {} intervals", h.intervals),
                kind: "clat",
            });
        }
    }
    (!lat.bins.is_empty()).then(|| Dist {
        bins: lat.bins.clone(),
        source: format!("json+ {kind} bins"),
        kind,
    })
}

fn secs(v: f64) -> String {
    format!("{}s", fmt::sig3(v))
}
fn ns_axis(v: f64) -> String {
    fmt::ns(v)
}
fn count_axis(v: f64) -> String {
    fmt::count(v)
}
fn bw_axis(v: f64) -> String {
    fmt::bw(v)
}
fn pct_axis(v: f64) -> String {
    format!("{}%", fmt::sig3(v))
}
fn nines_axis(v: f64) -> String {
    let s = format!("{v:.4}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    format!("p{s}")
}
fn frac_axis(v: f64) -> String {
    if v >= 0.01 {
        fmt::sig3(v)
    } else {
        format!("1e{}", v.log10().round() as i32)
    }
}

fn time_axis() -> Axis {
    Axis {
        scale: Scale::Linear,
        label: "time (s)",
        fmt: secs,
        binary: false,
    }
}

fn lat_axis(scale: Scale) -> Axis {
    Axis {
        scale,
        label: "latency",
        fmt: ns_axis,
        binary: false,
    }
}

/// (t_s, mean, min, max) of a series, rate-converted by `f(bucket, width_s)`; with `zeros`,
/// empty time buckets count (a rate of 0), else they are left out.
fn series_points(
    ts: &TimeSeries,
    zeros: bool,
    f: impl Fn(&crate::logs::Bucket, f64) -> (f64, f64, f64),
) -> Vec<(f64, f64, f64, f64)> {
    let w = ts.width_ms as f64 / 1000.0;
    // A rate's last bucket is cut short by the end of the run: leave it out.
    let n = if zeros {
        ts.buckets.len().saturating_sub(1).max(1)
    } else {
        ts.buckets.len()
    };
    let pts: Vec<(f64, f64, f64, f64)> = ts
        .points()
        .take(n)
        .filter(|(_, b)| zeros || b.count > 0)
        .map(|(t, b)| {
            let (m, lo, hi) = f(b, w);
            (t as f64 / 1000.0 + w / 2.0, m, lo, hi)
        })
        .collect();
    downsample(&pts, MAX_POINTS)
}

fn to_series(name: String, result: usize, pts: Vec<(f64, f64, f64, f64)>, band: bool) -> Series {
    Series {
        name,
        result,
        points: pts.iter().map(|p| (p.0, p.1)).collect(),
        band: if band {
            pts.iter().map(|p| (p.0, p.2, p.3)).collect()
        } else {
            Vec::new()
        },
        ..Default::default()
    }
}

/// A per-I/O log of the entry (any kind), for rates derived from line counts.
fn per_io_log<'a>(e: &Entry<'a>) -> Option<&'a DirLog> {
    [
        LogKind::Iops,
        LogKind::Clat,
        LogKind::Lat,
        LogKind::Slat,
        LogKind::Bw,
    ]
    .iter()
    .find_map(|k| {
        e.job
            .logs
            .get(*k, e.dir.ddir)
            .filter(|l| l.per_io && l.stat.samples > 0)
    })
}

/// A rate over time, from the averaged log of `kind` (a window's mean with its min..max
/// band, scaled by `avg_scale`: fio logs KiB/s for bandwidth) or else from the per-I/O
/// log (`per_io`: the value of a bucket of `w` seconds).
fn rate_over_time(
    entries: &[Entry],
    kind: LogKind,
    avg_scale: f64,
    per_io: fn(&crate::logs::Bucket, f64) -> f64,
    title: &str,
    y: Axis,
) -> Chart {
    let mut series = Vec::new();
    for e in entries {
        let avg = e.job.logs.get(kind, e.dir.ddir).filter(|l| !l.per_io);
        let pts = if let Some(l) = avg {
            series_points(&l.series, false, |b, _| {
                (
                    b.mean() * avg_scale,
                    b.min as f64 * avg_scale,
                    b.max as f64 * avg_scale,
                )
            })
        } else if let Some(l) = per_io_log(e) {
            downsample(
                &series_points(&l.series, true, |b, w| {
                    let v = per_io(b, w);
                    (v, v, v)
                }),
                RATE_POINTS,
            )
        } else {
            continue;
        };
        series.push(to_series(e.label.to_string(), e.result, pts, avg.is_some()));
    }
    Chart {
        title: title.into(),
        x: time_axis(),
        y,
        series,
    }
}

/// Bandwidth over time (bytes/s).
pub fn bandwidth(entries: &[Entry]) -> Chart {
    rate_over_time(
        entries,
        LogKind::Bw,
        1024.0,
        |b, w| b.bytes as f64 / w,
        "Bandwidth over time",
        Axis {
            scale: Scale::Linear,
            label: "bandwidth",
            fmt: bw_axis,
            binary: true,
        },
    )
}

/// The steady-state series of the entries that have one (flexio's `ss_ramp=auto` or
/// `ss_departure`), over time, with marks where the warm-up ended, steady state was
/// attained and the device left it.
pub fn steady(entries: &[Entry]) -> Option<(Chart, Vec<(f64, String)>)> {
    let mut series = Vec::new();
    let mut marks = Vec::new();
    let mut metric = "";
    for e in entries {
        let Some(w) = &e.job.steady else { continue };
        metric = match w.metric.as_str() {
            "iops" => "IOPS",
            "bw" => "bandwidth (bytes/s)",
            _ => "mean latency (ns)",
        };
        let at = |i: usize| w.offset_s + i as f64 * w.interval_s;
        let pts: Vec<(f64, f64)> = w
            .series
            .iter()
            .enumerate()
            .map(|(i, v)| (at(i) + w.interval_s, *v))
            .collect();
        series.push(Series {
            name: format!("{} {}", e.label, w.metric),
            result: e.result,
            points: pts,
            ..Default::default()
        });
        if let Some(d) = w.ramp_samples {
            marks.push((at(d), "warm-up ends (MSER-5)".to_string()));
        }
        if let Some(a) = w.attained_sample {
            marks.push((at(a), "steady".to_string()));
        }
        for (t, from, to) in &w.departures {
            marks.push((
                *t,
                format!(
                    "departure {:+.0}%",
                    100.0 * (to - from) / from.max(f64::MIN_POSITIVE)
                ),
            ));
        }
    }
    if series.is_empty() {
        return None;
    }
    let y = Axis {
        scale: Scale::Linear,
        label: "steady-state metric",
        fmt: count_axis,
        binary: false,
    };
    Some((
        Chart {
            title: format!("Steady state: {metric} per sample"),
            x: time_axis(),
            y,
            series,
        },
        marks,
    ))
}

/// Departures from steady state of the entries, as marks for the over-time charts.
pub fn departure_marks(entries: &[Entry]) -> Vec<(f64, String)> {
    entries
        .iter()
        .filter_map(|e| e.job.steady.as_ref())
        .flat_map(|w| {
            w.departures.iter().map(|(t, from, to)| {
                (
                    *t,
                    format!(
                        "departure {:+.0}%",
                        100.0 * (to - from) / from.max(f64::MIN_POSITIVE)
                    ),
                )
            })
        })
        .collect()
}

/// IOPS over time.
pub fn iops(entries: &[Entry]) -> Chart {
    rate_over_time(
        entries,
        LogKind::Iops,
        1.0,
        |b, w| b.count as f64 / w,
        "IOPS over time",
        Axis {
            scale: Scale::Linear,
            label: "IOPS",
            fmt: count_axis,
            binary: false,
        },
    )
}

/// Latency over time: mean per time bucket with the min..max band, and the per-interval
/// p50/p99 of histogram logs (dashed).
pub fn latency_time(entries: &[Entry]) -> Chart {
    let mut series = Vec::new();
    for e in entries {
        let (kind, _) = e.dir.response();
        let order = if kind == "lat" {
            [LogKind::Lat, LogKind::Clat]
        } else {
            [LogKind::Clat, LogKind::Lat]
        };
        if let Some(l) = order.iter().find_map(|k| {
            e.job
                .logs
                .get(*k, e.dir.ddir)
                .filter(|l| l.stat.samples > 0)
        }) {
            let pts = series_points(&l.series, false, |b, _| {
                (b.mean(), b.min as f64, b.max as f64)
            });
            series.push(to_series(
                format!("{} {} mean, min-max", e.label, l.kind.suffix()),
                e.result,
                pts,
                true,
            ));
        }
        if let Some(h) = e.job.logs.hist(e.dir.ddir) {
            for (name, ts) in [("p50", &h.p50), ("p99", &h.p99)] {
                let pts = series_points(ts, false, |b, _| (b.mean(), b.min as f64, b.max as f64));
                let mut s = to_series(format!("{} clat {name}", e.label), e.result, pts, false);
                s.dashed = true;
                series.push(s);
            }
        }
    }
    Chart {
        title: "Latency over time".into(),
        x: time_axis(),
        y: lat_axis(Scale::Log),
        series,
    }
}

/// The distribution charts: histogram, percentile curve, sorted response times, CCDF.
pub fn distribution_charts(entries: &[Entry]) -> [Chart; 4] {
    let mut hist = Vec::new();
    let mut pct = Vec::new();
    let mut sorted = Vec::new();
    let mut ccdf = Vec::new();
    for e in entries {
        let Some(d) = distribution(e.job, e.dir) else {
            // Percentiles alone still give the percentile curve.
            let (kind, lat) = e.dir.response();
            if !lat.percentiles.is_empty() {
                pct.push(Series {
                    name: format!("{} {kind} (percentiles only)", e.label),
                    result: e.result,
                    points: lat
                        .percentiles
                        .iter()
                        .map(|(p, v)| (*p, *v as f64))
                        .collect(),
                    ..Default::default()
                });
            }
            continue;
        };
        let n: u64 = d.bins.iter().map(|b| b.1).sum();
        let nf = n as f64;
        let name = format!("{} {}", e.label, d.kind);
        // Histogram: 20 bins per decade, percent of I/Os.
        let mut coarse: Vec<(f64, f64)> = Vec::new();
        for (v, c) in &d.bins {
            let k = ((*v).max(1) as f64).log10() * 20.0;
            let center = 10f64.powf((k.floor() + 0.5) / 20.0);
            match coarse.last_mut() {
                Some(l) if (l.0 - center).abs() < 1e-9 * center => l.1 += *c as f64,
                _ => coarse.push((center, *c as f64)),
            }
        }
        hist.push(Series {
            name: name.clone(),
            result: e.result,
            points: coarse.iter().map(|(x, c)| (*x, c * 100.0 / nf)).collect(),
            step: true,
            ..Default::default()
        });
        let mut cum = 0u64;
        let (mut p, mut s, mut c) = (Vec::new(), Vec::new(), Vec::new());
        for (v, k) in &d.bins {
            let v = *v as f64;
            s.push((cum as f64, v));
            cum += k;
            s.push((cum as f64, v));
            p.push((cum as f64 * 100.0 / nf, v));
            c.push((v, (n - cum) as f64 / nf));
        }
        pct.push(Series {
            name: name.clone(),
            result: e.result,
            points: p,
            ..Default::default()
        });
        sorted.push(Series {
            name: name.clone(),
            result: e.result,
            points: s,
            ..Default::default()
        });
        ccdf.push(Series {
            name,
            result: e.result,
            points: c,
            step: true,
            ..Default::default()
        });
    }
    [
        Chart {
            title: "Latency histogram".into(),
            x: lat_axis(Scale::Log),
            y: Axis {
                scale: Scale::Linear,
                label: "% of I/Os",
                fmt: pct_axis,
                binary: false,
            },
            series: hist,
        },
        Chart {
            title: "Latency percentiles".into(),
            x: Axis {
                scale: Scale::Nines,
                label: "percentile",
                fmt: nines_axis,
                binary: false,
            },
            y: lat_axis(Scale::Log),
            series: pct,
        },
        Chart {
            title: "Sorted response times".into(),
            x: Axis {
                scale: Scale::Linear,
                label: "I/Os, sorted by latency",
                fmt: count_axis,
                binary: false,
            },
            y: lat_axis(Scale::Log),
            series: sorted,
        },
        Chart {
            title: "CCDF: share of I/Os slower than x".into(),
            x: lat_axis(Scale::Log),
            y: Axis {
                scale: Scale::Log,
                label: "P(latency > x)",
                fmt: frac_axis,
                binary: false,
            },
            series: ccdf,
        },
    ]
}

/// Whether an entry's direction has logs (for the "no logs" hint).
pub fn has_logs(e: &Entry) -> bool {
    !e.job.logs.is_empty()
        && (e
            .job
            .logs
            .series
            .iter()
            .any(|s| s.ddir == e.dir.ddir || e.dir.ddir == Ddir::Mixed)
            || e.job.logs.hist(e.dir.ddir).is_some())
}

fn kib_s_cell(v: f64) -> String {
    fmt::count(v)
}

/// KiB/s as the matrix's tables and heat maps print them (one unit on the page).
fn kib_s_axis(v: f64) -> String {
    fmt::count(v)
}

fn kib_axis(v: f64) -> String {
    fmt::count(v)
}

/// The heat map of one operation of a matrix sweep: rows file size, columns record size,
/// KiB/s.
pub fn matrix_heatmap(m: &crate::matrix::Matrix, op: &str) -> crate::svg::HeatMap {
    crate::svg::HeatMap {
        title: format!("{op}: KiB/s"),
        x_label: "record size (KiB)".into(),
        y_label: "file size (KiB)".into(),
        columns: m.records_kib.iter().map(|r| r.to_string()).collect(),
        rows: m.files_kib.iter().map(|f| f.to_string()).collect(),
        values: m
            .files_kib
            .iter()
            .map(|f| {
                m.records_kib
                    .iter()
                    .map(|r| m.cell(op, *f, *r).map(|c| c.kib_s))
                    .collect()
            })
            .collect(),
        fmt: kib_s_cell,
    }
}

/// The same operation as lines: throughput over file size, one line per record size.
pub fn matrix_lines(m: &crate::matrix::Matrix, op: &str) -> Chart {
    let series = m
        .records_kib
        .iter()
        .enumerate()
        .map(|(i, r)| Series {
            name: format!("{r} KiB records"),
            result: i,
            points: m
                .files_kib
                .iter()
                .filter_map(|f| m.cell(op, *f, *r).map(|c| (*f as f64, c.kib_s)))
                .collect(),
            ..Default::default()
        })
        .filter(|s| !s.points.is_empty())
        .collect();
    Chart {
        title: format!("{op}: KiB/s by file size"),
        x: Axis {
            scale: Scale::Log,
            label: "file size (KiB)",
            fmt: kib_axis,
            binary: false,
        },
        y: Axis {
            scale: Scale::Log,
            label: "KiB/s",
            fmt: kib_s_axis,
            binary: false,
        },
        series,
    }
}
