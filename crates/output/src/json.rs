//! fio's JSON printer (`json.c`) and the JSON / JSON+ report (`stat.c:
//! show_thread_status_json`, `add_ddir_status_json`).
//!
//! Layout: two spaces per level, `"key" : value`, one member per line, integers as `%lld`,
//! floats as `%f` (six decimals). Keys appear in the newest fio's order, or fio 3.33's with
//! [`Layout::Fio333`] (`--compat=3.33`): the newest fio adds `job_start`,
//! `latency_target_ns`, `latency_window_us`, `priohint`, `read_sectors`/`write_sectors`
//! and `zone_resets` (zbd jobs), and keeps options whose value is empty (`"time_based" :
//! ""`), which fio 3.33 drops.

use flexio_stats::report::{
    DirReport, DiskReport, Fact, JobReport, LatSummary, Layout, RunReport, SyncReport, Unified,
};

/// A JSON value in insertion order.
#[derive(Clone, Debug, PartialEq)]
pub enum J {
    Bool(bool),
    Int(i128),
    Float(f64),
    Str(String),
    Obj(Vec<(String, J)>),
    Arr(Vec<J>),
}

/// Object builder.
#[derive(Default)]
pub struct Obj(Vec<(String, J)>);

impl Obj {
    pub fn new() -> Self {
        Obj(Vec::new())
    }
    pub fn int(mut self, k: &str, v: impl Into<i128>) -> Self {
        self.0.push((k.to_string(), J::Int(v.into())));
        self
    }
    pub fn float(mut self, k: &str, v: f64) -> Self {
        self.0.push((k.to_string(), J::Float(v)));
        self
    }
    pub fn str(mut self, k: &str, v: &str) -> Self {
        self.0.push((k.to_string(), J::Str(v.to_string())));
        self
    }
    pub fn obj(mut self, k: &str, v: Obj) -> Self {
        self.0.push((k.to_string(), J::Obj(v.0)));
        self
    }
    pub fn arr(mut self, k: &str, v: Vec<J>) -> Self {
        self.0.push((k.to_string(), J::Arr(v)));
        self
    }
    pub fn push(&mut self, k: &str, v: J) {
        self.0.push((k.to_string(), v));
    }
    pub fn into_j(self) -> J {
        J::Obj(self.0)
    }
}

/// `s` as a JSON string (quotes included), escaped as the printer escapes.
pub fn quote(s: &str, out: &mut String) {
    out.push('"');
    escape(s, out);
    out.push('"');
}

fn escape(s: &str, out: &mut String) {
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            // fio escapes only the two above; control characters are escaped here as well
            // so that the output stays valid JSON whatever a job name contains.
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
}

fn indent(level: usize, out: &mut String) {
    for _ in 0..level {
        out.push_str("  ");
    }
}

/// C's `%f` for a finite value; non-finite values are printed as 0 to keep JSON valid.
pub fn fmt_f(v: f64) -> String {
    if v.is_finite() {
        format!("{v:.6}")
    } else {
        "0.000000".into()
    }
}

fn print_value(v: &J, level: usize, out: &mut String) {
    match v {
        J::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        J::Int(i) => out.push_str(&i.to_string()),
        J::Float(f) => out.push_str(&fmt_f(*f)),
        J::Str(s) => {
            out.push('"');
            escape(s, out);
            out.push('"');
        }
        J::Obj(pairs) => {
            out.push('{');
            for (i, (k, v)) in pairs.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push('\n');
                indent(level + 1, out);
                out.push('"');
                escape(k, out);
                out.push_str("\" : ");
                print_value(v, level + 1, out);
            }
            out.push('\n');
            indent(level, out);
            out.push('}');
        }
        J::Arr(items) => {
            out.push('[');
            for (i, v) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push('\n');
                indent(level + 1, out);
                print_value(v, level + 1, out);
            }
            out.push('\n');
            indent(level, out);
            out.push(']');
        }
    }
}

/// Print a value as fio's printer does, followed by a newline.
pub fn print(v: &J) -> String {
    let mut out = String::new();
    print_value(v, 0, &mut out);
    out.push('\n');
    out
}

fn lat_obj(l: &LatSummary, plus: bool) -> Obj {
    let mut o = Obj::new()
        .int("min", l.min_ns)
        .int("max", l.max_ns)
        .float("mean", l.mean_ns)
        .float("stddev", l.stddev_ns)
        .int("N", l.n);
    if let Some(p) = &l.percentiles {
        let mut po = Obj::new();
        for (pct, v) in p {
            po = po.int(&fmt_f(*pct), *v);
        }
        o = o.obj("percentile", po);
        if plus {
            if let Some(bins) = &l.bins {
                let mut bo = Obj::new();
                for (v, n) in bins {
                    bo = bo.int(&v.to_string(), *n);
                }
                o = o.obj("bins", bo);
            }
        }
    }
    o
}

fn dir_obj(layout: Layout, d: &DirReport, plus: bool, lat_pct: bool) -> Obj {
    let mut o = Obj::new()
        .int("io_bytes", d.io_bytes)
        .int("io_kbytes", d.io_bytes >> 10)
        .int("bw_bytes", d.bw_bytes)
        .int("bw", d.bw_bytes / 1024)
        .float("iops", d.iops)
        .int("runtime", d.runtime_ms)
        .int("total_ios", d.total_ios)
        .int("short_ios", d.short_ios)
        .int("drop_ios", d.drop_ios)
        .obj("slat_ns", lat_obj(&d.slat, plus))
        .obj("clat_ns", lat_obj(&d.clat, plus))
        .obj("lat_ns", lat_obj(&d.lat, plus));
    if !d.prios.is_empty() {
        let key = if lat_pct { "lat_ns" } else { "clat_ns" };
        let prios = d
            .prios
            .iter()
            .map(|p| {
                let mut o = Obj::new().int("prioclass", p.class).int("prio", p.level);
                if layout == Layout::Latest {
                    o = o.int("priohint", p.hint);
                }
                o.obj(key, lat_obj(&p.lat, plus)).into_j()
            })
            .collect();
        o = o.arr("prios", prios);
    }
    o.int("bw_min", d.bw_samples.min)
        .int("bw_max", d.bw_samples.max)
        .float("bw_agg", d.bw_agg_pct)
        .float("bw_mean", d.bw_samples.mean)
        .float("bw_dev", d.bw_samples.stddev)
        .int("bw_samples", d.bw_samples.samples)
        .int("iops_min", d.iops_samples.min)
        .int("iops_max", d.iops_samples.max)
        .float("iops_mean", d.iops_samples.mean)
        .float("iops_stddev", d.iops_samples.stddev)
        .int("iops_samples", d.iops_samples.samples)
}

fn sync_obj(s: &SyncReport, plus: bool) -> Obj {
    let lat = if s.json_percentiles {
        lat_obj(&s.lat, plus)
    } else {
        lat_obj(
            &LatSummary {
                percentiles: None,
                ..s.lat.clone()
            },
            plus,
        )
    };
    Obj::new().int("total_ios", s.total_ios).obj("lat_ns", lat)
}

fn keyed(keys: &[&str], vals: &[f64]) -> Obj {
    let mut o = Obj::new();
    for (k, v) in keys.iter().zip(vals) {
        o = o.float(k, *v);
    }
    o
}

/// The options that appear in an options echo: fio 3.33's printer drops pairs whose value
/// is empty (flags such as `time_based`); the newest fio keeps them as `""`.
fn echoed(layout: Layout, echo: &[(String, String)]) -> impl Iterator<Item = &(String, String)> {
    echo.iter()
        .filter(move |(_, v)| layout == Layout::Latest || !v.is_empty())
}

/// Options echo (`global options`, `job options`); `None` when nothing is echoed.
pub fn options_obj(layout: Layout, echo: &[(String, String)]) -> Option<Obj> {
    let mut o = Obj::new();
    for (k, v) in echoed(layout, echo) {
        o = o.str(k, v);
    }
    (!o.0.is_empty()).then_some(o)
}

/// One job object.
pub fn job_obj(j: &JobReport, r: &RunReport, plus: bool) -> Obj {
    let layout = r.layout;
    let mut o = Obj::new().str("jobname", &j.name).int("groupid", j.groupid);
    if layout == Layout::Latest {
        o = o.int("job_start", j.job_start_ms);
    }
    o = o.int("error", j.error);
    o = o.int("eta", r.eta_s).int("elapsed", r.elapsed_s);
    if let Some(opts) = options_obj(layout, &j.echo) {
        o = o.obj("job options", opts);
    }
    let lat_pct = j.params.lat_percentiles;
    match (j.params.unified, &j.mixed) {
        (Unified::Mixed, Some(m)) => {
            o = o.obj("mixed", dir_obj(layout, m, plus, lat_pct));
        }
        _ => {
            o = o
                .obj("read", dir_obj(layout, &j.dirs[0], plus, lat_pct))
                .obj("write", dir_obj(layout, &j.dirs[1], plus, lat_pct))
                .obj("trim", dir_obj(layout, &j.dirs[2], plus, lat_pct))
                .obj("sync", sync_obj(&j.sync, plus));
            if let (Unified::Both, Some(m)) = (j.params.unified, &j.mixed) {
                o = o.obj("mixed", dir_obj(layout, m, plus, lat_pct));
            }
        }
    }
    o = o
        .int("job_runtime", j.job_runtime_ms)
        .float("usr_cpu", j.usr_cpu)
        .float("sys_cpu", j.sys_cpu)
        .int("ctx", j.ctx)
        .int("majf", j.majf)
        .int("minf", j.minf)
        .obj(
            "iodepth_level",
            keyed(&["1", "2", "4", "8", "16", "32", ">=64"], &j.iodepth_level),
        )
        .obj(
            "iodepth_submit",
            keyed(
                &["0", "4", "8", "16", "32", "64", ">=64"],
                &j.iodepth_submit,
            ),
        )
        .obj(
            "iodepth_complete",
            keyed(
                &["0", "4", "8", "16", "32", "64", ">=64"],
                &j.iodepth_complete,
            ),
        )
        .obj(
            "latency_ns",
            keyed(
                &[
                    "2", "4", "10", "20", "50", "100", "250", "500", "750", "1000",
                ],
                &j.latency_ns,
            ),
        )
        .obj(
            "latency_us",
            keyed(
                &[
                    "2", "4", "10", "20", "50", "100", "250", "500", "750", "1000",
                ],
                &j.latency_us,
            ),
        )
        .obj(
            "latency_ms",
            keyed(
                &[
                    "2", "4", "10", "20", "50", "100", "250", "500", "750", "1000", "2000",
                    ">=2000",
                ],
                &j.latency_ms,
            ),
        );
    if j.params.continue_on_error {
        o = o
            .int("total_err", j.total_err)
            .int("first_error", j.first_error);
    }
    o = o
        .int("latency_depth", j.params.latency_depth)
        .int("latency_target", j.params.latency_target_ns);
    if layout == Layout::Latest {
        o = o.int("latency_target_ns", j.params.latency_target_ns);
    }
    o = o
        .float("latency_percentile", j.params.latency_percentile)
        .int("latency_window", j.params.latency_window_us);
    if layout == Layout::Latest {
        o = o.int("latency_window_us", j.params.latency_window_us);
    }
    if let Some(d) = &j.description {
        o = o.str("desc", d);
    }
    if let Some(b) = j.block.as_ref().filter(|b| !b.percentiles.is_empty()) {
        let mut pct = Obj::new();
        for (p, trims) in &b.percentiles {
            pct = pct.int(&format!("{p:.6}"), *trims);
        }
        let mut states = Obj::new();
        for (name, n) in flexio_stats::blocks::STATE_NAMES.iter().zip(b.states) {
            states = states.int(name, n);
        }
        o = o.obj(
            "block",
            Obj::new().obj("percentiles", pct).obj("states", states),
        );
    }
    if let Some(ss) = &j.steadystate {
        let pct = if ss.crit.pct { "%" } else { "" };
        let ints = |v: Vec<u64>| v.into_iter().map(|x| J::Int(x as i128)).collect();
        o = o.obj(
            "steadystate",
            Obj::new()
                .str("ss", &ss.crit.text())
                .int("duration", ss.duration_s)
                .int("attained", ss.attained as u8)
                .str("criterion", &format!("{}{pct}", fmt_f(ss.criterion)))
                .float("max_deviation", ss.max_deviation)
                .float("slope", ss.slope)
                .obj("data", {
                    let d = Obj::new()
                        .int("bw_mean", ss.bw_mean())
                        .int("iops_mean", ss.iops_mean());
                    // fio 3.42: latency criteria add the window's latencies.
                    let d = if ss.crit.lat {
                        d.int("lat_mean", ss.lat_mean())
                            .arr("lat_ns", ints(ss.lat_data()))
                    } else {
                        d
                    };
                    d.arr("iops", ints(ss.iops_data()))
                        .arr("bw", ints(ss.bw_data()))
                }),
        );
    }
    // The newest fio's last job key, for zonemode=zbd jobs only.
    if let (Layout::Latest, Some(n)) = (layout, j.zone_resets) {
        o = o.int("zone_resets", n);
    }
    // flexio's additions, after fio's keys (fio's readers ignore them): per-direction
    // schedule statistics of rate-limited jobs.
    let mut fx = Obj::new();
    let dirs: Vec<(&str, &DirReport)> = match (j.params.unified, &j.mixed) {
        (Unified::None, _) | (_, None) => {
            ["read", "write", "trim"].into_iter().zip(&j.dirs).collect()
        }
        (Unified::Mixed, Some(m)) => vec![("mixed", m)],
        (Unified::Both, Some(m)) => ["read", "write", "trim"]
            .into_iter()
            .zip(&j.dirs)
            .chain([("mixed", m)])
            .collect(),
    };
    for (name, d) in dirs {
        let mut dx = Obj::new();
        if let Some(sc) = &d.sched {
            dx = dx
                .obj("sched_lat_ns", lat_obj(&sc.lat, plus))
                .obj("sched_lag_ns", lat_obj(&sc.lag, false))
                .int("late_ios", sc.late_ios)
                .int("late_threshold_ns", sc.late_threshold_ns);
        }
        // RMS beside fio's mean and stddev, and the percentiles resting on too few samples.
        let lats = [("slat", &d.slat), ("clat", &d.clat), ("lat", &d.lat)];
        let mut rms = Obj::new();
        let mut few = Obj::new();
        for (n, l) in lats {
            if let (Some(x), true) = (&l.extra, l.n > 0) {
                rms = rms.float(n, x.rms_ns);
                if !x.few_samples.is_empty() && l.percentiles.is_some() {
                    few = few.arr(n, x.few_samples.iter().map(|p| J::Str(fmt_f(*p))).collect());
                }
            }
        }
        if !rms.0.is_empty() {
            dx = dx.obj("rms_ns", rms);
        }
        if !few.0.is_empty() {
            dx = dx.obj("few_samples", few);
        }
        if !dx.0.is_empty() {
            fx = fx.obj(name, dx);
        }
    }
    if let Some(t) = &j.tool {
        fx = fx.obj(
            "tool",
            Obj::new()
                .float("cpu_ns_per_io", t.cpu_ns_per_io)
                .float("engine_pct", t.engine_pct)
                .float("wait_pct", t.wait_pct)
                .float("tool_pct", t.tool_pct)
                .float("plain_loop_pct", t.plain_loop_pct)
                .float("lean_loop_pct", t.lean_loop_pct),
        );
    }
    if !j.ops.is_empty() {
        // Engines with several kinds of operation: each kind's figures, by name.
        let mut ops = Obj::new();
        for op in &j.ops {
            let mut x = Obj::new()
                .int("count", op.count)
                .int("total_ns", op.total_ns)
                .float("ops_per_s", op.ops_per_s)
                .int("span_ns", op.span_ns)
                .float("span_ops_per_s", op.span_ops_per_s)
                .obj("lat_ns", lat_obj(&op.lat, plus));
            if let Some(e) = &op.lat.extra {
                x = x.float("rms_ns", e.rms_ns);
            }
            ops = ops.obj(&op.name, x);
        }
        fx = fx.obj("ops", ops);
    }
    if let Some(ss) = j.steadystate.as_ref().filter(|s| s.watch.active()) {
        // flexio's steady-state additions: the warm-up MSER-5 found, the series judged,
        // and the departures from the steady band.
        let w = &ss.watch;
        let mut x = Obj::new()
            .str("metric", ss.crit.metric())
            .float("interval_s", w.interval_s)
            .float("offset_s", w.offset_s);
        if w.auto_ramp {
            x = match w.ramp {
                Some(d) => x
                    .int("ramp_samples", d as i128)
                    .float("ramp_s", d as f64 * w.interval_s),
                None => x.int("ramp_samples", -1),
            };
        }
        if let (Some(a), Some(l)) = (w.attained_at, w.attained_level) {
            x = x.int("attained_sample", a as i128).float("level", l);
        }
        if w.on_departure.is_some() {
            x = x
                .str(
                    "departure",
                    match w.on_departure {
                        Some(flexio_stats::watch::OnDeparture::Stop) => "stop",
                        _ => "flag",
                    },
                )
                .float("band_pct", w.band_pct)
                .int("departure_window_samples", w.window as i128)
                .arr(
                    "departures",
                    w.departures
                        .iter()
                        .map(|d| {
                            Obj::new()
                                .int("sample", d.sample as i128)
                                .float("at_s", d.at_s)
                                .float("from", d.from)
                                .float("to", d.to)
                                .into_j()
                        })
                        .collect(),
                );
        }
        x = x.arr("series", w.series.iter().map(|v| J::Float(*v)).collect());
        fx = fx.obj("steadystate", x);
    }
    if !fx.0.is_empty() {
        o = o.obj("flexio", fx);
    }
    o
}

/// One `disk_util` element; the newest fio adds the sectors after `write_ios` (and, for a
/// device with slaves, `aggr_*_sectors` after `aggr_write_ios`).
pub fn disk_obj(layout: Layout, d: &DiskReport) -> Obj {
    let mut o = Obj::new()
        .str("name", &d.name)
        .int("read_ios", d.read_ios)
        .int("write_ios", d.write_ios);
    if layout == Layout::Latest {
        o = o
            .int("read_sectors", d.read_sectors)
            .int("write_sectors", d.write_sectors);
    }
    o = o
        .int("read_merges", d.read_merges)
        .int("write_merges", d.write_merges)
        .int("read_ticks", d.read_ticks)
        .int("write_ticks", d.write_ticks)
        .int("in_queue", d.in_queue)
        .float("util", d.util);
    let Some(a) = &d.aggr else { return o };
    o = o
        .int("aggr_read_ios", a.avg(a.ios[0]))
        .int("aggr_write_ios", a.avg(a.ios[1]));
    if layout == Layout::Latest {
        o = o
            .int("aggr_read_sectors", a.avg(a.sectors[0]))
            .int("aggr_write_sectors", a.avg(a.sectors[1]));
    }
    // fio's key for the write merges is `aggr_write_merge` (sic).
    o.int("aggr_read_merges", a.avg(a.merges[0]))
        .int("aggr_write_merge", a.avg(a.merges[1]))
        .int("aggr_read_ticks", a.avg(a.ticks[0]))
        .int("aggr_write_ticks", a.avg(a.ticks[1]))
        .int("aggr_in_queue", a.avg(a.in_queue))
        .float("aggr_util", a.max_util)
}

/// The whole JSON (or JSON+) document. After fio's keys comes a `flexio` object (fio's
/// readers ignore it) naming the program that produced the document.
pub fn report(r: &RunReport, plus: bool, flexio_version: &str) -> String {
    let mut root = Obj::new()
        .str("fio version", &r.version)
        .int("timestamp", r.timestamp)
        .int("timestamp_ms", r.timestamp_ms)
        .str("time", &r.time);
    if let Some(opts) = options_obj(r.layout, &r.global_options) {
        root = root.obj("global options", opts);
    }
    let jobs: Vec<J> = r
        .jobs
        .iter()
        .map(|j| job_obj(j, r, plus).into_j())
        .collect();
    root = root.arr("jobs", jobs);
    if !r.disks.is_empty() {
        let disks: Vec<J> = r
            .disks
            .iter()
            .map(|d| disk_obj(r.layout, d).into_j())
            .collect();
        root = root.arr("disk_util", disks);
    }
    let mut flexio = Obj::new().str("version", flexio_version).obj(
        "clock",
        Obj::new()
            .str("source", &r.clock.source)
            .float("read_ns", r.clock.read_ns)
            .int("resolution_ns", r.clock.resolution_ns),
    );
    if !r.provenance.is_empty() {
        flexio.push("provenance", fact_j(&Fact::Obj(r.provenance.clone())));
    }
    root = root.obj("flexio", flexio);
    print(&root.into_j())
}

/// A provenance fact as the JSON printer writes it (as it stands in `flexio.provenance`).
pub fn fact_text(f: &Fact) -> String {
    print(&fact_j(f))
}

/// A provenance fact in the printer's terms.
fn fact_j(f: &Fact) -> J {
    match f {
        Fact::Str(s) => J::Str(s.clone()),
        Fact::Int(i) => J::Int(*i as i128),
        Fact::Bool(b) => J::Bool(*b),
        Fact::Obj(m) => J::Obj(m.iter().map(|(k, v)| (k.clone(), fact_j(v))).collect()),
        Fact::List(l) => J::Arr(l.iter().map(fact_j).collect()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn printer_layout() {
        let v = Obj::new()
            .str("a", "x\"y")
            .int("b", -3)
            .float("c", 1.5)
            .obj("d", Obj::new())
            .arr("e", vec![J::Int(1), Obj::new().int("f", 2).into_j()])
            .into_j();
        let s = print(&v);
        let expect = "{\n  \"a\" : \"x\\\"y\",\n  \"b\" : -3,\n  \"c\" : 1.500000,\n  \"d\" : {\n  },\n  \"e\" : [\n    1,\n    {\n      \"f\" : 2\n    }\n  ]\n}\n";
        assert_eq!(s, expect);
    }
}
