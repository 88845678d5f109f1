//! `--metrics-listen`: OpenMetrics text on `/metrics` while the run lasts, through
//! `prometheus-client`'s encoder (a [`Collector`] over the latest live sample) and
//! hyper's HTTP/1 server on a one-thread tokio runtime of its own. A scrape never reaches
//! the job threads: it encodes the sample the run published last (once per `--interval`),
//! so its cost is bounded by the number of series. A slow or stuck scraper costs one task,
//! not a thread: a connection that has not sent its request headers within
//! [`HEADER_TIMEOUT`] is closed, and at most [`MAX_CONNECTIONS`] are open at once (more
//! are closed as they arrive), so the exporter always answers the next scrape.

use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, NoLabelSet};
use prometheus_client::metrics::MetricType;
use prometheus_client::registry::{Registry, Unit};
use std::net::{SocketAddr, TcpListener, ToSocketAddrs};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Latency bucket upper bounds in ns: the Renard R10 series (ten per decade, steps of
/// about 26%) from 100 ns to 100 s, so `histogram_quantile` is within one of these steps
/// of the report's percentiles.
pub fn bounds_ns() -> Vec<u64> {
    const R10: [u64; 10] = [100, 125, 160, 200, 250, 315, 400, 500, 630, 800];
    let mut out = Vec::new();
    let mut scale = 1u64;
    for _ in 0..9 {
        out.extend(R10.iter().map(|r| r * scale));
        scale *= 10;
    }
    out.push(100_000_000_000);
    out
}

/// What the run is doing (`flexio_run_state`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum RunState {
    #[default]
    Starting,
    Running,
    Finished,
}

impl RunState {
    const ALL: [(RunState, &'static str); 3] = [
        (RunState::Starting, "starting"),
        (RunState::Running, "running"),
        (RunState::Finished, "finished"),
    ];
}

/// One direction of one job thread, cumulative.
#[derive(Clone, Debug, Default)]
pub struct DirSeries {
    pub direction: &'static str,
    pub ios: u64,
    pub bytes: u64,
    /// `clat` or `lat` (the report's percentile latency).
    pub kind: &'static str,
    pub lat_sum_s: f64,
    pub lat_count: u64,
    /// Per-bound counts for [`bounds_ns`] (not cumulative; the encoder sums them).
    pub buckets: Vec<u64>,
}

/// One job thread, cumulative.
#[derive(Clone, Debug, Default)]
pub struct JobSeries {
    pub job: String,
    pub thread: u32,
    pub group: u32,
    pub dirs: Vec<DirSeries>,
    pub errors: u64,
    pub usr_s: f64,
    pub sys_s: f64,
    /// The share of the job's time spent in flexio itself (not in the engine, not in
    /// rate or think-time waits), 0 to 1.
    pub tool_share: Option<f64>,
    pub iodepth: u32,
}

/// Everything one scrape shows.
#[derive(Clone, Debug, Default)]
pub struct Scrape {
    pub host: String,
    pub state: RunState,
    pub elapsed_s: f64,
    pub eta_s: Option<u64>,
    pub jobs_running: u64,
    pub jobs: Vec<JobSeries>,
}

type Shared = Arc<Mutex<Arc<Scrape>>>;

#[derive(Debug)]
struct Live {
    latest: Shared,
    bounds_s: Vec<f64>,
}

impl Collector for Live {
    fn encode(&self, mut enc: DescriptorEncoder) -> Result<(), std::fmt::Error> {
        // The lock is held only to take the latest sample.
        let s = match self.latest.lock() {
            Ok(g) => g.clone(),
            Err(e) => e.into_inner().clone(),
        };
        let host = s.host.as_str();
        {
            let mut m = enc.encode_descriptor(
                "flexio_build",
                "The flexio build serving these metrics",
                None,
                MetricType::Info,
            )?;
            let labels = [
                ("version", flexio_run::VERSION),
                ("fio", flexio_run::FIO_LATEST),
                (
                    "commit",
                    option_env!("FLEXIO_GIT_COMMIT").unwrap_or("unknown"),
                ),
            ];
            m.encode_info(&labels)?;
        }
        {
            let mut m = enc.encode_descriptor(
                "flexio_run_state",
                "1 for the run's current state",
                None,
                MetricType::Gauge,
            )?;
            for (st, name) in RunState::ALL {
                let labels = [("state", name), ("host", host)];
                m.encode_family(&labels)?
                    .encode_gauge(&i64::from(st == s.state))?;
            }
        }
        gauge(
            &mut enc,
            "flexio_elapsed",
            "Time since the run started",
            Some(Unit::Seconds),
            &[("host", host)],
            s.elapsed_s,
        )?;
        if let Some(eta) = s.eta_s {
            gauge(
                &mut enc,
                "flexio_time_left",
                "Estimated time until the run ends (fio's ETA)",
                Some(Unit::Seconds),
                &[("host", host)],
                eta as f64,
            )?;
        }
        gauge(
            &mut enc,
            "flexio_jobs_running",
            "Job threads running now",
            None,
            &[("host", host)],
            s.jobs_running as f64,
        )?;
        let job_labels = |j: &JobSeries| {
            vec![
                ("job", j.job.clone()),
                ("thread", j.thread.to_string()),
                ("group", j.group.to_string()),
                ("host", host.to_string()),
            ]
        };
        let dir_labels = |j: &JobSeries, d: &DirSeries| {
            let mut l = job_labels(j);
            l.push(("direction", d.direction.to_string()));
            l
        };
        {
            let mut m = enc.encode_descriptor(
                "flexio_ios",
                "I/Os completed (fio's total_ios)",
                None,
                MetricType::Counter,
            )?;
            for j in &s.jobs {
                for d in &j.dirs {
                    m.encode_family(&dir_labels(j, d))?
                        .encode_counter::<NoLabelSet, _, u64>(&d.ios, None)?;
                }
            }
        }
        {
            let mut m = enc.encode_descriptor(
                "flexio_io",
                "Bytes transferred",
                Some(&Unit::Bytes),
                MetricType::Counter,
            )?;
            for j in &s.jobs {
                for d in &j.dirs {
                    m.encode_family(&dir_labels(j, d))?
                        .encode_counter::<NoLabelSet, _, u64>(&d.bytes, None)?;
                }
            }
        }
        {
            let mut m = enc.encode_descriptor(
                "flexio_latency",
                "I/O latency: completion latency (kind=clat), or total latency with lat_percentiles (kind=lat)",
                Some(&Unit::Seconds),
                MetricType::Histogram,
            )?;
            for j in &s.jobs {
                for d in &j.dirs {
                    let mut l = dir_labels(j, d);
                    l.push(("kind", d.kind.to_string()));
                    let mut b: Vec<(f64, u64)> = self
                        .bounds_s
                        .iter()
                        .copied()
                        .zip(d.buckets.iter().copied())
                        .collect();
                    let below: u64 = d.buckets.iter().sum();
                    b.push((f64::INFINITY, d.lat_count.saturating_sub(below)));
                    m.encode_family(&l)?.encode_histogram::<NoLabelSet>(
                        d.lat_sum_s,
                        d.lat_count,
                        &b,
                        None,
                    )?;
                }
            }
        }
        {
            let mut m = enc.encode_descriptor(
                "flexio_errors",
                "Errors counted and gone past (continue_on_error)",
                None,
                MetricType::Counter,
            )?;
            for j in &s.jobs {
                m.encode_family(&job_labels(j))?
                    .encode_counter::<NoLabelSet, _, u64>(&j.errors, None)?;
            }
        }
        {
            let mut m = enc.encode_descriptor(
                "flexio_cpu",
                "CPU time of the job thread",
                Some(&Unit::Seconds),
                MetricType::Counter,
            )?;
            for j in &s.jobs {
                for (mode, v) in [("user", j.usr_s), ("system", j.sys_s)] {
                    let mut l = job_labels(j);
                    l.push(("mode", mode.to_string()));
                    m.encode_family(&l)?
                        .encode_counter::<NoLabelSet, _, f64>(&v, None)?;
                }
            }
        }
        {
            let mut m = enc.encode_descriptor(
                "flexio_tool_share",
                "Share of the job's time spent in flexio itself rather than the engine or deliberate waits (0-1): near 1, the results measure the tool",
                Some(&Unit::Ratios),
                MetricType::Gauge,
            )?;
            for j in &s.jobs {
                if let Some(t) = j.tool_share {
                    m.encode_family(&job_labels(j))?.encode_gauge(&t)?;
                }
            }
        }
        {
            let mut m = enc.encode_descriptor(
                "flexio_iodepth",
                "The job's configured queue depth (iodepth)",
                None,
                MetricType::Gauge,
            )?;
            for j in &s.jobs {
                m.encode_family(&job_labels(j))?
                    .encode_gauge(&i64::from(j.iodepth))?;
            }
        }
        Ok(())
    }
}

fn gauge(
    enc: &mut DescriptorEncoder,
    name: &str,
    help: &str,
    unit: Option<Unit>,
    labels: &[(&str, &str)],
    v: f64,
) -> Result<(), std::fmt::Error> {
    let mut m = enc.encode_descriptor(name, help, unit.as_ref(), MetricType::Gauge)?;
    m.encode_family(&labels)?.encode_gauge(&v)?;
    Ok(())
}

/// The address `--metrics-listen` names: `PORT` (loopback), `HOST:PORT`, `[V6]:PORT`.
pub fn parse_addr(spec: &str) -> Result<SocketAddr, String> {
    let bad = || {
        format!("--metrics-listen: '{spec}' is not [ADDR:]PORT (e.g. 9100, 127.0.0.1:9100, [::1]:9100, 0.0.0.0:9100)")
    };
    if let Ok(port) = spec.parse::<u16>() {
        return Ok(SocketAddr::from(([127, 0, 0, 1], port)));
    }
    if let Ok(a) = spec.parse::<SocketAddr>() {
        return Ok(a);
    }
    if !spec.contains(':') {
        return Err(bad());
    }
    match spec.to_socket_addrs() {
        Ok(mut it) => it.next().ok_or_else(bad),
        Err(e) => Err(format!("--metrics-listen: cannot resolve '{spec}': {e}")),
    }
}

/// The exporter: bound before any I/O starts, serving until [`Exporter::finish`].
pub struct Exporter {
    latest: Shared,
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
    pub addr: SocketAddr,
}

const CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

impl Exporter {
    /// Listen on `spec` ([`parse_addr`]); a bad address or a port in use is an error now.
    pub fn bind(spec: &str, host: &str) -> Result<Exporter, String> {
        let addr = parse_addr(spec)?;
        let listener = TcpListener::bind(addr)
            .map_err(|e| format!("--metrics-listen: cannot listen on {addr}: {e}"))?;
        let addr = listener.local_addr().unwrap_or(addr);
        listener
            .set_nonblocking(true)
            .map_err(|e| format!("--metrics-listen: cannot serve on {addr}: {e}"))?;
        let latest: Shared = Arc::new(Mutex::new(Arc::new(Scrape {
            host: host.to_string(),
            ..Scrape::default()
        })));
        let mut registry = Registry::default();
        registry.register_collector(Box::new(Live {
            latest: latest.clone(),
            bounds_s: bounds_ns().iter().map(|b| *b as f64 / 1e9).collect(),
        }));
        let stop = Arc::new(AtomicBool::new(false));
        let stop2 = stop.clone();
        let thread = std::thread::Builder::new()
            .name("flexio-metrics".into())
            .spawn(move || serve(listener, registry, stop2))
            .map_err(|e| format!("--metrics-listen: cannot start its thread: {e}"))?;
        Ok(Exporter {
            latest,
            stop,
            thread: Some(thread),
            addr,
        })
    }

    /// The next scrapes show `s`.
    pub fn publish(&self, s: Scrape) {
        let s = Arc::new(s);
        match self.latest.lock() {
            Ok(mut g) => *g = s,
            Err(e) => *e.into_inner() = s,
        }
    }

    /// Stop serving (the run has ended).
    pub fn finish(mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// A connection must have sent its request headers this soon after it opened (or after
/// its previous response), or it is closed.
pub const HEADER_TIMEOUT: Duration = Duration::from_secs(5);
/// Connections open at once; more are closed as they arrive.
pub const MAX_CONNECTIONS: usize = 64;

fn serve(listener: TcpListener, registry: Registry, stop: Arc<AtomicBool>) {
    let rt = match tokio::runtime::Builder::new_current_thread()
        .enable_io()
        .enable_time()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("flexio: --metrics-listen: cannot start its runtime: {e}");
            return;
        }
    };
    let registry = Arc::new(registry);
    let open = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    rt.block_on(async move {
        let listener = match tokio::net::TcpListener::from_std(listener) {
            Ok(l) => l,
            Err(e) => {
                eprintln!("flexio: --metrics-listen: cannot serve: {e}");
                return;
            }
        };
        while !stop.load(Ordering::Relaxed) {
            let stream =
                match tokio::time::timeout(Duration::from_millis(100), listener.accept()).await {
                    Ok(Ok((stream, _))) => stream,
                    // Timed out (look at `stop` again), or a failed accept (out of
                    // descriptors): try again after the pause.
                    Ok(Err(_)) => {
                        tokio::time::sleep(Duration::from_millis(10)).await;
                        continue;
                    }
                    Err(_) => continue,
                };
            if open.load(Ordering::Relaxed) >= MAX_CONNECTIONS {
                drop(stream);
                continue;
            }
            open.fetch_add(1, Ordering::Relaxed);
            let open = open.clone();
            let registry = registry.clone();
            tokio::task::spawn(async move {
                let service = hyper::service::service_fn(move |req| {
                    let r = respond(&req, &registry);
                    async move { Ok::<_, std::convert::Infallible>(r) }
                });
                let _ = hyper::server::conn::http1::Builder::new()
                    .timer(hyper_util::rt::TokioTimer::new())
                    .header_read_timeout(HEADER_TIMEOUT)
                    .serve_connection(hyper_util::rt::TokioIo::new(stream), service)
                    .await;
                open.fetch_sub(1, Ordering::Relaxed);
            });
        }
    });
    // Dropping the runtime drops the open connections and the listener: the port is free.
    drop(rt);
}

type Body = http_body_util::Full<hyper::body::Bytes>;

fn respond<B>(req: &hyper::Request<B>, registry: &Registry) -> hyper::Response<Body> {
    let text = |code: u16, body: &str| {
        let mut r = hyper::Response::new(Body::from(body.to_string()));
        *r.status_mut() = hyper::StatusCode::from_u16(code).unwrap_or_default();
        r
    };
    if req.method() != hyper::Method::GET && req.method() != hyper::Method::HEAD {
        return text(405, "only GET: metrics at /metrics\n");
    }
    match req.uri().path() {
        "/metrics" => {
            let mut body = String::new();
            match prometheus_client::encoding::text::encode(&mut body, registry) {
                Ok(()) => {
                    let mut r = hyper::Response::new(Body::from(body));
                    r.headers_mut().insert(
                        hyper::header::CONTENT_TYPE,
                        hyper::header::HeaderValue::from_static(CONTENT_TYPE),
                    );
                    r
                }
                Err(_) => text(500, "encoding failed\n"),
            }
        }
        "/" => text(200, "flexio: metrics at /metrics\n"),
        _ => text(404, "not found: metrics at /metrics\n"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses() {
        assert_eq!(parse_addr("9100").unwrap().to_string(), "127.0.0.1:9100");
        assert_eq!(parse_addr("0.0.0.0:1").unwrap().to_string(), "0.0.0.0:1");
        assert_eq!(parse_addr("[::1]:9").unwrap().to_string(), "[::1]:9");
        assert!(parse_addr("nonsense").unwrap_err().contains("[ADDR:]PORT"));
        assert!(parse_addr("127.0.0.1:99999").is_err());
    }

    #[test]
    fn bounds_rise() {
        let b = bounds_ns();
        assert!(b.windows(2).all(|w| w[0] < w[1]));
        assert_eq!(b[0], 100);
        assert_eq!(*b.last().unwrap(), 100_000_000_000);
    }

    #[test]
    fn a_scrape_is_openmetrics_text() {
        let e = Exporter::bind("127.0.0.1:0", "h1").unwrap();
        let nb = bounds_ns().len();
        let mut buckets = vec![0u64; nb];
        buckets[3] = 5;
        e.publish(Scrape {
            host: "h1".into(),
            state: RunState::Running,
            jobs: vec![JobSeries {
                job: "a\"b".into(),
                thread: 1,
                dirs: vec![DirSeries {
                    direction: "read",
                    ios: 6,
                    bytes: 24576,
                    kind: "clat",
                    lat_sum_s: 0.5,
                    lat_count: 6,
                    buckets,
                }],
                iodepth: 4,
                ..JobSeries::default()
            }],
            ..Scrape::default()
        });
        let body = get(e.addr, "/metrics");
        e.finish();
        assert!(
            body.contains("content-type: application/openmetrics-text"),
            "{body}"
        );
        assert!(
            body.contains("flexio_build_info{version=\"flexio-"),
            "{body}"
        );
        assert!(body.contains(
            "flexio_ios_total{job=\"a\\\"b\",thread=\"1\",group=\"0\",host=\"h1\",direction=\"read\"} 6"
        ), "{body}");
        assert!(
            body.contains("flexio_run_state{state=\"running\",host=\"h1\"} 1"),
            "{body}"
        );
        let bucket = |le: &str| {
            body.lines()
                .find(|l| l.starts_with(&format!("flexio_latency_seconds_bucket{{le=\"{le}\",")))
                .and_then(|l| l.rsplit(' ').next())
                .map(String::from)
        };
        assert_eq!(bucket("1.6e-7").as_deref(), Some("0"), "{body}");
        assert_eq!(bucket("2e-7").as_deref(), Some("5"), "{body}");
        assert_eq!(bucket("+Inf").as_deref(), Some("6"), "{body}");

        assert!(body.trim_end().ends_with("# EOF"), "{body}");
    }

    fn get(addr: SocketAddr, path: &str) -> String {
        use std::io::{Read, Write};
        let mut s = std::net::TcpStream::connect(addr).unwrap();
        write!(s, "GET {path} HTTP/1.0\r\nHost: x\r\n\r\n").unwrap();
        let mut out = String::new();
        s.read_to_string(&mut out).unwrap();
        // Header names are case-insensitive: lower-case the head only.
        match out.split_once("\r\n\r\n") {
            Some((head, body)) => format!("{}\r\n\r\n{body}", head.to_ascii_lowercase()),
            None => out,
        }
    }
}
