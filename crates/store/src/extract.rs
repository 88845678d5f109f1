//! What a result JSON gives the store: who produced it, its host and kernel (from flexio's
//! provenance), its provenance text, and per job and direction the summary metrics and the
//! latency histogram (json+ bins), read with the analysis crate's reader, so a stored
//! metric is the number `flexio compare` and `flexio report` show.

use flexio_analysis::compare::{job_keys, Metric};
use serde_json::Value;
use std::path::Path;

/// One metric of one job and direction.
#[derive(Clone, Debug, PartialEq)]
pub struct MetricValue {
    pub job: String,
    pub ddir: String,
    pub metric: String,
    pub value: f64,
}

/// One latency histogram.
#[derive(Clone, Debug)]
pub struct Histogram {
    pub job: String,
    pub ddir: String,
    pub lat_kind: String,
    /// `[[ns, count], ...]`
    pub bins: String,
}

/// Everything the store keeps beside the result text.
#[derive(Clone, Debug, Default)]
pub struct Extracted {
    pub producer: String,
    pub host: Option<String>,
    pub kernel: Option<String>,
    pub provenance: Option<String>,
    pub metrics: Vec<MetricValue>,
    pub histograms: Vec<Histogram>,
}

/// The summary metrics of a result (`IOPS`, `bw` in bytes/s, and the response latency's
/// `mean`, `p50`, `p99`, `p99.9` in ns; jobs keyed `name`, `name#2`, ... as compare keys
/// them).
pub fn metrics_of(run: &flexio_analysis::RunResult) -> Vec<MetricValue> {
    let mut out = Vec::new();
    for (key, i) in job_keys(run) {
        let job = &run.jobs[i];
        for d in &job.dirs {
            for m in Metric::ALL {
                if let Some(v) = flexio_analysis::compare::metric_value(d, m, d.response().0) {
                    if v.is_finite() {
                        out.push(MetricValue {
                            job: key.clone(),
                            ddir: d.ddir.name().to_string(),
                            metric: m.name().to_string(),
                            value: v,
                        });
                    }
                }
            }
        }
    }
    out
}

pub fn extract(text: &str) -> Result<Extracted, String> {
    let doc = flexio_analysis::input::last_document(text).map_err(|e| e.0)?;
    let run =
        flexio_analysis::input::from_value(&doc, Path::new("result.json")).map_err(|e| e.0)?;
    let prov = doc.get("flexio").and_then(|f| f.get("provenance"));
    let host_fact = |k: &str| {
        prov.and_then(|p| p.get("host"))
            .and_then(|h| h.get(k))
            .and_then(Value::as_str)
            .map(String::from)
    };
    let mut histograms = Vec::new();
    for (key, i) in job_keys(&run) {
        for d in &run.jobs[i].dirs {
            let (kind, lat) = d.response();
            if lat.bins.is_empty() {
                continue;
            }
            let bins: Vec<Value> = lat
                .bins
                .iter()
                .map(|(v, c)| Value::from(vec![*v, *c]))
                .collect();
            histograms.push(Histogram {
                job: key.clone(),
                ddir: d.ddir.name().to_string(),
                lat_kind: kind.to_string(),
                bins: Value::from(bins).to_string(),
            });
        }
    }
    Ok(Extracted {
        producer: run.producer.clone(),
        host: host_fact("hostname"),
        kernel: host_fact("kernel"),
        provenance: prov.map(|p| p.to_string()),
        metrics: metrics_of(&run),
        histograms,
    })
}
