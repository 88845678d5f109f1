//! Reading fio's and flexio's JSON / json+ output into the [`crate::model`].
//!
//! The file may hold notes before the JSON (fio prints some on stdout) and several JSON
//! documents (`--status-interval` appends one per interval): the last complete document is
//! the final result.

use crate::model::*;
use serde_json::Value;
use std::path::Path;

/// Why a result could not be read.
#[derive(Debug)]
pub struct InputError(pub String);

impl std::fmt::Display for InputError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for InputError {}

fn u(v: &Value) -> u64 {
    match v {
        Value::Number(n) => n
            .as_u64()
            .or_else(|| n.as_f64().map(|f| f.max(0.0) as u64))
            .unwrap_or(0),
        Value::String(s) => s.trim().parse().unwrap_or(0),
        _ => 0,
    }
}

fn f(v: &Value) -> f64 {
    match v {
        Value::Number(n) => n.as_f64().unwrap_or(0.0),
        Value::String(s) => s.trim().parse().unwrap_or(0.0),
        _ => 0.0,
    }
}

fn pairs(v: Option<&Value>) -> Vec<(String, String)> {
    v.and_then(Value::as_object)
        .map(|o| {
            o.iter()
                .map(|(k, v)| {
                    let s = match v {
                        Value::String(s) => s.clone(),
                        other => other.to_string(),
                    };
                    (k.clone(), s)
                })
                .collect()
        })
        .unwrap_or_default()
}

/// The last complete JSON object in a text (after notes, among several documents).
pub fn last_document(text: &str) -> Result<Value, InputError> {
    let mut last: Option<Value> = None;
    let mut first_err: Option<String> = None;
    let mut pos = 0;
    // Documents start with '{' at the beginning of a line.
    while let Some(off) = find_doc_start(&text[pos..]) {
        let start = pos + off;
        let mut de = serde_json::Deserializer::from_str(&text[start..]).into_iter::<Value>();
        match de.next() {
            Some(Ok(v)) if v.get("jobs").is_some() || v.get("client_stats").is_some() => {
                last = Some(v);
                pos = start + de.byte_offset();
            }
            Some(Ok(_)) => pos = start + de.byte_offset(),
            Some(Err(e)) => {
                first_err.get_or_insert_with(|| e.to_string());
                pos = start + 1;
            }
            None => break,
        }
    }
    last.ok_or_else(|| {
        InputError(match first_err {
            Some(e) => format!("no complete fio/flexio JSON result ({e})"),
            None => "no fio/flexio JSON result (expected --output-format=json or json+)".into(),
        })
    })
}

fn find_doc_start(s: &str) -> Option<usize> {
    if s.starts_with('{') {
        return Some(0);
    }
    s.find("\n{").map(|i| i + 1)
}

fn lat(v: Option<&Value>) -> Lat {
    let Some(v) = v else {
        return Lat::default();
    };
    let mut percentiles: Vec<(f64, u64)> = v
        .get("percentile")
        .and_then(Value::as_object)
        .map(|o| {
            o.iter()
                .filter_map(|(k, x)| Some((k.trim().parse::<f64>().ok()?, u(x))))
                .collect()
        })
        .unwrap_or_default();
    percentiles.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut bins: Vec<(u64, u64)> = v
        .get("bins")
        .and_then(Value::as_object)
        .map(|o| {
            o.iter()
                .filter_map(|(k, x)| Some((k.trim().parse::<u64>().ok()?, u(x))))
                .filter(|b| b.1 > 0)
                .collect()
        })
        .unwrap_or_default();
    bins.sort_unstable();
    let n = u(&v["N"]);
    Lat {
        min: u(&v["min"]),
        max: u(&v["max"]),
        mean: f(&v["mean"]),
        stddev: f(&v["stddev"]),
        n,
        percentiles,
        bins,
    }
}

fn samples(v: &Value, pre: &str, dev: &str) -> Samples {
    Samples {
        min: f(&v[format!("{pre}_min")]),
        max: f(&v[format!("{pre}_max")]),
        mean: f(&v[format!("{pre}_mean")]),
        stddev: f(&v[format!("{pre}_{dev}")]),
        n: u(&v[format!("{pre}_samples")]),
    }
}

fn dir(v: &Value, ddir: Ddir, flexio: Option<&Value>) -> DirResult {
    let runtime_ms = u(&v["runtime"]);
    let io_bytes = u(&v["io_bytes"]);
    // bw_bytes is an integer in fio's output; recompute from bytes and runtime for the
    // fractional part when both are there.
    let bw_bytes = if runtime_ms > 0 {
        io_bytes as f64 * 1000.0 / runtime_ms as f64
    } else {
        f(&v["bw_bytes"])
    };
    DirResult {
        ddir,
        io_bytes,
        bw_bytes,
        iops: f(&v["iops"]),
        runtime_ms,
        total_ios: u(&v["total_ios"]),
        slat: lat(v.get("slat_ns")),
        clat: lat(v.get("clat_ns")),
        lat: lat(v.get("lat_ns")),
        sched_lat: flexio
            .and_then(|fx| fx.get(ddir.name()))
            .and_then(|d| d.get("sched_lat_ns"))
            .map(|l| lat(Some(l))),
        bw_samples: samples(v, "bw", "dev"),
        iops_samples: samples(v, "iops", "stddev"),
    }
}

fn job(v: &Value, global: &[(String, String)]) -> JobResult {
    let fx = v.get("flexio");
    let mut dirs = Vec::new();
    for d in [Ddir::Read, Ddir::Write, Ddir::Trim, Ddir::Mixed] {
        if let Some(dv) = v.get(d.name()) {
            let r = dir(dv, d, fx);
            if r.total_ios > 0 || r.io_bytes > 0 {
                dirs.push(r);
            }
        }
    }
    let mut options = pairs(v.get("job options"));
    for (k, val) in global {
        if !options.iter().any(|(o, _)| o == k) {
            options.push((k.clone(), val.clone()));
        }
    }
    JobResult {
        name: v["jobname"].as_str().unwrap_or("").to_string(),
        groupid: u(&v["groupid"]),
        error: v["error"].as_i64().unwrap_or(0),
        options,
        dirs,
        job_runtime_ms: u(&v["job_runtime"]),
        usr_cpu: f(&v["usr_cpu"]),
        sys_cpu: f(&v["sys_cpu"]),
        ctx: u(&v["ctx"]),
        majf: u(&v["majf"]),
        minf: u(&v["minf"]),
        logs: Default::default(),
        ops: ops(fx),
        steady: steady(fx),
        sync: v.get("sync").and_then(|s| {
            let total_ios = u(&s["total_ios"]);
            (total_ios > 0).then(|| SyncResult {
                total_ios,
                lat: lat(s.get("lat_ns")),
            })
        }),
    }
}

/// `flexio.steadystate`: the series and what flexio found in it.
fn steady(fx: Option<&Value>) -> Option<crate::model::SteadyWatch> {
    let w = fx?.get("steadystate")?;
    let us = |k: &str| w[k].as_i64().filter(|v| *v >= 0).map(|v| v as usize);
    Some(crate::model::SteadyWatch {
        metric: w["metric"].as_str().unwrap_or("").to_string(),
        interval_s: w["interval_s"].as_f64().unwrap_or(1.0),
        offset_s: f(&w["offset_s"]),
        series: w["series"]
            .as_array()
            .map(|a| a.iter().filter_map(Value::as_f64).collect())
            .unwrap_or_default(),
        ramp_samples: us("ramp_samples"),
        attained_sample: us("attained_sample"),
        level: w["level"].as_f64(),
        band_pct: w["band_pct"].as_f64(),
        departures: w["departures"]
            .as_array()
            .map(|a| {
                a.iter()
                    .map(|d| (f(&d["at_s"]), f(&d["from"]), f(&d["to"])))
                    .collect()
            })
            .unwrap_or_default(),
    })
}

/// `flexio.ops`: each kind of operation's figures, in the JSON's order.
fn ops(fx: Option<&Value>) -> Vec<crate::model::OpFigures> {
    let Some(m) = fx.and_then(|x| x.get("ops")).and_then(Value::as_object) else {
        return Vec::new();
    };
    m.iter()
        .map(|(name, o)| {
            let pct = |k: &str| o["lat_ns"]["percentile"][k].as_f64();
            crate::model::OpFigures {
                name: name.clone(),
                count: u(&o["count"]),
                ops_per_s: f(&o["ops_per_s"]),
                phase_ops_per_s: f(&o["span_ops_per_s"]),
                mean_ns: f(&o["lat_ns"]["mean"]),
                p50_ns: pct("50.000000"),
                p99_ns: pct("99.000000"),
                p999_ns: pct("99.900000"),
            }
        })
        .collect()
}

/// Build a run from a parsed JSON document.
pub fn from_value(doc: &Value, path: &Path) -> Result<RunResult, InputError> {
    // fio's (and flexio's) client writes "client_stats": one entry per host's report, each
    // named here job@host, and the "All clients" aggregate.
    let client = doc.get("jobs").is_none() && doc.get("client_stats").is_some();
    let jobs_v = doc[if client { "client_stats" } else { "jobs" }]
        .as_array()
        .ok_or_else(|| InputError("the JSON has no \"jobs\" array".into()))?;
    let global = pairs(doc.get("global options"));
    let jobs = jobs_v
        .iter()
        .map(|j| {
            let mut r = job(j, &global);
            if client && r.name != "All clients" {
                if let Some(h) = j.get("hostname").and_then(Value::as_str) {
                    r.name = format!("{}@{h}", r.name);
                }
            }
            r
        })
        .collect();
    let disks = doc
        .get("disk_util")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .map(|x| Disk {
                    name: x["name"].as_str().unwrap_or("").to_string(),
                    read_ios: u(&x["read_ios"]),
                    write_ios: u(&x["write_ios"]),
                    read_merges: u(&x["read_merges"]),
                    write_merges: u(&x["write_merges"]),
                    read_ticks: u(&x["read_ticks"]),
                    write_ticks: u(&x["write_ticks"]),
                    in_queue: u(&x["in_queue"]),
                    util: f(&x["util"]),
                })
                .collect()
        })
        .unwrap_or_default();
    let producer = doc
        .get("flexio")
        .and_then(|fx| fx.get("version"))
        .and_then(Value::as_str)
        // flexio writes "flexio-0.1.0"; a bare version gets the name.
        .map(|v| {
            if v.starts_with("flexio") {
                v.to_string()
            } else {
                format!("flexio-{v}")
            }
        })
        .unwrap_or_else(|| doc["fio version"].as_str().unwrap_or("fio").to_string());
    Ok(RunResult {
        path: path.to_path_buf(),
        label: path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default(),
        producer,
        time: doc["time"].as_str().unwrap_or("").to_string(),
        global_options: global,
        jobs,
        disks,
        warnings: Vec::new(),
        provenance: doc.get("flexio").and_then(|f| f.get("provenance")).cloned(),
    })
}

/// Read one result from text.
pub fn parse(text: &str, path: &Path) -> Result<RunResult, InputError> {
    from_value(&last_document(text)?, path)
}

/// Read one result file (JSON or json+), without its logs.
pub fn read(path: &Path) -> Result<RunResult, InputError> {
    let bytes = std::fs::read(path)
        .map_err(|e| InputError(format!("cannot read {}: {e}", path.display())))?;
    let text = String::from_utf8_lossy(&bytes);
    parse(&text, path).map_err(|e| InputError(format!("{}: {e}", path.display())))
}

/// Read one result file and the log files beside it that belong to its jobs.
pub fn read_with_logs(path: &Path) -> Result<RunResult, InputError> {
    let mut run = read(path)?;
    crate::logs::attach(&mut run);
    Ok(run)
}

#[cfg(test)]
mod tests {
    use super::*;

    const DOC: &str = r#"note: both iodepth >= 1 and synchronous I/O engine
{
  "fio version" : "fio-3.33",
  "time" : "Sun Nov 22 04:38:30 2026",
  "global options" : { "bs" : "4k" },
  "jobs" : [
    {
      "jobname" : "j", "groupid" : 0, "error" : 0,
      "job options" : { "rw" : "randread" },
      "read" : { "io_bytes" : 4096000, "bw_bytes" : 4096000, "iops" : 1000.0, "runtime" : 1000,
        "total_ios" : 1000,
        "clat_ns" : { "min" : 10, "max" : 90, "mean" : 50.0, "stddev" : 10.0, "N" : 1000,
          "percentile" : { "50.000000" : 50, "99.900000" : 89 }, "bins" : { "50" : 999, "89" : 1 } },
        "lat_ns" : { "min" : 11, "max" : 91, "mean" : 51.0, "stddev" : 10.0, "N" : 1000 },
        "bw_min" : 1, "bw_max" : 3, "bw_mean" : 2.0, "bw_dev" : 1.0, "bw_samples" : 3 },
      "write" : { "io_bytes" : 0, "total_ios" : 0, "runtime" : 0 },
      "usr_cpu" : 1.5, "sys_cpu" : 2.5, "ctx" : 7
    }
  ],
  "disk_util" : [ { "name" : "vda", "util" : 12.5 } ]
}
{ "partial" :"#;

    #[test]
    fn reads_fio_json_after_notes() {
        let r = parse(DOC, Path::new("/x/res.json")).unwrap();
        assert_eq!(r.producer, "fio-3.33");
        assert_eq!(r.label, "res.json");
        let j = &r.jobs[0];
        assert_eq!(j.dirs.len(), 1, "unused directions are left out");
        let d = &j.dirs[0];
        assert_eq!(d.ddir, Ddir::Read);
        assert_eq!(d.clat.percentile(99.9), Some(89));
        assert_eq!(d.clat.bins, vec![(50, 999), (89, 1)]);
        assert_eq!(d.response().0, "clat");
        assert_eq!(j.option("bs"), Some("4k"));
        assert_eq!(j.option("rw"), Some("randread"));
        assert_eq!(d.bw_samples.n, 3);
        assert_eq!(r.disks[0].util, 12.5);
        assert_eq!(j.ctx, 7);
        assert_eq!(j.sync, None, "a job without sync calls has no sync figures");
        // RMS = sqrt(50^2 + 100 * 999/1000).
        assert!((d.clat.rms() - (2500.0f64 + 99.9).sqrt()).abs() < 1e-9);
    }

    #[test]
    fn last_of_several_documents_and_errors() {
        let two = "{\n\"jobs\" : [ { \"jobname\" : \"a\" } ]\n}\n{\n\"jobs\" : [ { \"jobname\" : \"b\" } ]\n}\n";
        let r = parse(two, Path::new("r")).unwrap();
        assert_eq!(r.jobs[0].name, "b");
        assert!(parse("hello", Path::new("r")).is_err());
        assert!(parse("{\n\"jobs\" : [", Path::new("r")).is_err());
        assert!(parse("{\n\"jobs\" : 3\n}", Path::new("r")).is_err());
        let fx = "{\n\"fio version\" : \"fio-3.33\", \"jobs\" : [],\n\"flexio\" : { \"version\" : \"flexio-0.1.0\" }\n}\n";
        assert_eq!(parse(fx, Path::new("r")).unwrap().producer, "flexio-0.1.0");
        assert!(too_few_for(99.9, 999));
        assert!(!too_few_for(99.9, 1000));
        assert!(!too_few_for(100.0, 1));
    }

    #[test]
    fn reads_sync_calls() {
        let doc = r#"{ "jobs" : [ { "jobname" : "s",
            "write" : { "io_bytes" : 8192, "total_ios" : 2, "runtime" : 1 },
            "sync" : { "total_ios" : 2, "lat_ns" : { "min" : 100, "max" : 300, "mean" : 200.0,
              "stddev" : 141.4, "N" : 2, "percentile" : { "99.000000" : 300 } } } } ] }"#;
        let r = parse(doc, Path::new("s.json")).unwrap();
        let s = r.jobs[0].sync.as_ref().expect("the job's sync calls");
        assert_eq!(
            (s.total_ios, s.lat.min, s.lat.max, s.lat.n),
            (2, 100, 300, 2)
        );
        assert_eq!(s.lat.percentile(99.0), Some(300));
    }
}
