//! Client-mode output (`flexio --client=...`): fio's per-server blocks, the "All clients"
//! aggregate, flexio's cluster summary (merge windows, per-host runtimes and stragglers,
//! clock offsets), and the JSON document with fio's `client_stats` layout.

use crate::json::{self, Obj, J};
use crate::normal;
use crate::num2str::{num2str, Unit};
use flexio_stats::cluster::{Cluster, Window};
use flexio_stats::report::RunReport;
use std::fmt::Write;

/// One server's results as the client received them.
pub struct Host<'a> {
    /// Display name (the probe's hostname, else the address).
    pub name: &'a str,
    /// fio's name for it in JSON `hostname`: the address's host part (a socket's path).
    pub hostname: &'a str,
    /// The address as given on the command line.
    pub addr: &'a str,
    pub port: u16,
    pub report: &'a RunReport,
    /// Why its session failed (its results are then partial).
    pub error: Option<&'a str>,
    /// Clock offset against the client (ns, server − client) and its uncertainty (± ns).
    pub offset: Option<(i128, i128)>,
    /// The error its run ended with (STOP's; 0: none).
    pub exit_error: u32,
}

/// A server's block: its jobs, groups and disks as fio prints them (no leading newline:
/// the server's own "\n" TEXT comes first).
pub fn host_block(r: &RunReport) -> String {
    let s = normal::report(r);
    s.strip_prefix('\n').unwrap_or(&s).to_string()
}

/// The "All clients" job block (`r` holds the one merged job and its group): fio 3.33's
/// lines, plus the percentiles of the pooled histograms (fio prints none for it); like
/// fio's, without the "latency : target=" line (a per-job setting, meaningless summed).
pub fn all_clients_block(r: &RunReport) -> String {
    let mut out = String::new();
    for j in &r.jobs {
        for l in normal::job_block(j, r).split_inclusive('\n') {
            if !l.starts_with("     latency   : target=") {
                out.push_str(l);
            }
        }
    }
    out
}

fn ms(ns: i128) -> String {
    format!("{:.3}ms", ns as f64 / 1e6)
}

fn window_line(out: &mut String, label: &str, w: &Window) {
    let names = ["read", "write", "trim"];
    let parts: Vec<String> = (0..3)
        .filter(|d| w.bytes[*d] > 0)
        .map(|d| {
            format!(
                "{} bw={} iops={:.0}",
                names[d],
                num2str(w.bw_bytes[d], 4, 1, true, Unit::BytePerSec),
                w.iops[d]
            )
        })
        .collect();
    let _ = writeln!(
        out,
        "  {label:<11}: window={}, {}",
        ms((w.end_ns - w.start_ns) as i128),
        if parts.is_empty() {
            "no I/O".to_string()
        } else {
            parts.join(", ")
        }
    );
}

/// Which clock placed the hosts' runs (and so the windows).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TimeBase {
    /// Client mode: the client's clock, by when messages arrived (a host starts at its
    /// first SERVER_START and ends when its results arrived); clock offsets do not move
    /// the windows.
    Arrival,
    /// MPI: each rank's own start and end stamps, shifted onto rank 0's clock by the
    /// rank's measured offset.
    RankClocks,
}

impl TimeBase {
    fn describe(self, error: &str) -> String {
        match self {
            TimeBase::Arrival => format!(
                "windows placed by the client's clock (start: first SERVER_START arrival, end: results arrival), late by delivery delays (shortest round trip {error})"
            ),
            TimeBase::RankClocks => format!(
                "windows placed by each rank's own clock, shifted onto rank 0's by its measured offset, uncertain by ±{error}"
            ),
        }
    }
    fn name(self) -> &'static str {
        match self {
            TimeBase::Arrival => "arrival",
            TimeBase::RankClocks => "rank_clocks",
        }
    }
}

/// flexio's cluster summary under "All clients": per-host runtimes, how far each finished
/// behind the first, clock offsets, whether its start and its transfers over time were
/// measured, and the bandwidth over the three merge windows. `hosts` are all the hosts
/// (those without results included); the cluster's summaries name theirs by index.
/// `time_error_ns`: the longest shortest round trip (arrival) or the largest offset
/// uncertainty (rank clocks).
pub fn cluster_block(
    c: &Cluster,
    hosts: &[Host<'_>],
    time_error_ns: i128,
    base: TimeBase,
) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "Cluster (flexio): {} hosts, latency percentiles of the pooled histograms",
        c.hosts.len()
    );
    for s in &c.hosts {
        let Some(h) = hosts.get(s.index) else {
            continue;
        };
        let off = match h.offset {
            Some((o, u)) => format!("{:+.3}ms ±{}", o as f64 / 1e6, ms(u)),
            None => "not measured".into(),
        };
        let start = if s.start_measured {
            "start measured"
        } else {
            "start estimated (end - runtime)"
        };
        let rate = if s.progress_points > 0 {
            format!("transfers measured ({} points)", s.progress_points)
        } else {
            "transfers estimated (constant rate)".to_string()
        };
        let _ = writeln!(
            out,
            "  host {} ({}): run={}msec, done {} after the first, clock offset {off}, {start}, {rate}{}",
            h.name,
            h.addr,
            s.runtime_ms,
            ms(s.behind_first_ns as i128),
            if h.error.is_some() { " [PARTIAL]" } else { "" }
        );
    }
    match &c.common {
        Some(w) => window_line(&mut out, "common", w),
        None => out.push_str("  common     : the hosts' runs do not overlap\n"),
    }
    window_line(&mut out, "first done", &c.first_done);
    window_line(&mut out, "last done", &c.last_done);
    let _ = writeln!(
        out,
        "  {}{}",
        base.describe(&ms(time_error_ns)),
        if c.estimated {
            "; hosts without measured transfers assume a constant rate inside a window"
        } else {
            ""
        }
    );
    out
}

fn window_obj(w: &Window) -> Obj {
    let mut o = Obj::new()
        .int("start_ns", w.start_ns)
        .int("end_ns", w.end_ns);
    for (d, n) in ["read", "write", "trim"].iter().enumerate() {
        o = o.obj(
            n,
            Obj::new()
                .int("io_bytes", w.bytes[d])
                .int("total_ios", w.ios[d])
                .int("bw_bytes", w.bw_bytes[d])
                .float("iops", w.iops[d]),
        );
    }
    o
}

/// The JSON (or JSON+) document: fio's client layout (`client_stats` with `hostname` and
/// `port` per report, the "All clients" entry last, `disk_util` per server) and a
/// `flexio` object with the cluster detail per host.
pub fn json_document(
    hosts: &[Host<'_>],
    all: Option<&RunReport>,
    cluster: Option<(&Cluster, i128, TimeBase)>,
    plus: bool,
    version: &str,
    now: (i64, &str),
) -> String {
    let mut root = Obj::new()
        .str("fio version", "fio-3.33")
        .int("timestamp", now.0)
        .str("time", now.1);
    let mut globals = Vec::new();
    for h in hosts {
        globals.extend(h.report.global_options.iter().cloned());
    }
    // Client mode speaks fio 3.33's protocol: its layout (the object even when empty).
    let opts = json::options_obj(flexio_stats::report::Layout::Fio333, &globals);
    root = root.obj("global options", opts.unwrap_or_default());
    let mut stats = Vec::new();
    let mut disks = Vec::new();
    for h in hosts {
        for j in &h.report.jobs {
            let o = json::job_obj(j, h.report, plus)
                .str("hostname", h.hostname)
                .int("port", h.port);
            stats.push(o.into_j());
        }
        for d in &h.report.disks {
            disks.push(
                json::disk_obj(flexio_stats::report::Layout::Fio333, d)
                    .str("hostname", h.hostname)
                    .int("port", h.port)
                    .into_j(),
            );
        }
    }
    if let Some(a) = all {
        let last = hosts.iter().rev().find(|h| !h.report.jobs.is_empty());
        for j in &a.jobs {
            stats.push(
                json::job_obj(j, a, plus)
                    .str("hostname", last.map(|h| h.hostname).unwrap_or(""))
                    .int("port", last.map(|h| h.port).unwrap_or(0))
                    .into_j(),
            );
        }
    }
    root = root.arr("client_stats", stats);
    if !disks.is_empty() {
        root = root.arr("disk_util", disks);
    }
    let mut fx = Obj::new().str("version", version);
    let host_objs: Vec<J> = hosts
        .iter()
        .enumerate()
        .map(|(i, h)| {
            let mut o = Obj::new()
                .str("name", h.name)
                .str("address", h.addr)
                .int("port", h.port)
                .int("reports", h.report.jobs.len() as u64)
                .str("status", if h.error.is_some() { "partial" } else { "ok" });
            if let Some(e) = h.error {
                o = o.str("error", e);
            }
            if h.exit_error != 0 {
                o = o.int("exit_error", h.exit_error);
            }
            if let Some((off, unc)) = h.offset {
                o = o
                    .int("clock_offset_ns", off)
                    .int("clock_offset_error_ns", unc);
            }
            if let Some(s) = cluster.and_then(|(c, _, _)| c.hosts.iter().find(|s| s.index == i)) {
                o = o
                    .int("start_ns", s.start_ns)
                    .int("start_measured", u8::from(s.start_measured))
                    .int("progress_points", s.progress_points as u64)
                    .int("end_ns", s.end_ns)
                    .int("runtime_ms", s.runtime_ms)
                    .int("behind_first_ns", s.behind_first_ns)
                    .arr(
                        "io_bytes",
                        s.io_bytes.iter().map(|v| J::Int(*v as i128)).collect(),
                    )
                    .arr(
                        "bw_bytes",
                        s.bw_bytes.iter().map(|v| J::Int(*v as i128)).collect(),
                    );
            }
            o.into_j()
        })
        .collect();
    fx = fx.arr("hosts", host_objs);
    fx = fx.str(
        "status",
        if hosts.iter().any(|h| h.error.is_some()) {
            "partial"
        } else {
            "complete"
        },
    );
    if let Some((c, err, base)) = cluster {
        let mut co = Obj::new();
        if let Some(w) = &c.common {
            co = co.obj("common", window_obj(w));
        }
        co = co
            .obj("first_done", window_obj(&c.first_done))
            .obj("last_done", window_obj(&c.last_done))
            .int("time_error_ns", err)
            .str("time_base", base.name())
            .int("rate_estimated", u8::from(c.estimated));
        fx = fx.obj("cluster", co);
    }
    root = root.obj("flexio", fx);
    json::print(&root.into_j())
}
