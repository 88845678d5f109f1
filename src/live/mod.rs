//! Live outputs of a run (docs/live.md): `--metrics-listen` (OpenMetrics for Prometheus),
//! `--interval-stream` (JSON Lines intervals) and `--live` (a full-screen terminal view).
//! The run engine hands the command line's observer a sample of every thread's
//! statistics each `--interval` ([`flexio_run::Observer::live`]), copied by the job threads
//! at their periodic check, never per I/O; [`Live::sample`] turns it into intervals
//! (`flexio_stats::live::Tracker`) and feeds the three outputs.

pub mod metrics;
pub mod stream;
pub mod view;

use flexio_job::cli;
use flexio_run::plan::ThreadPlan;
use flexio_run::progress::Progress;
use flexio_run::report::JobResult;
use flexio_run::LiveSample;
use flexio_stats::live::{JobDelta, Tracker};
use std::io::IsTerminal;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// One job thread's interval, as the outputs see it.
pub struct JobInterval<'a> {
    pub plan: &'a ThreadPlan,
    pub result: &'a JobResult,
    /// The interval's length in ms (of the job's own run time).
    pub ms: u64,
    pub delta: JobDelta,
    /// The job's last interval: it has ended.
    pub last: bool,
}

/// What the live switches asked for, started before any I/O.
pub struct Live {
    every: Duration,
    stream: Option<stream::Stream>,
    exporter: Option<metrics::Exporter>,
    view: Mutex<Option<view::View>>,
    want_view: bool,
    terminate: Arc<AtomicBool>,
    host: String,
    inner: Mutex<Inner>,
}

#[derive(Default)]
struct Inner {
    tracker: Tracker,
    /// Each thread's run time (ms) at its last sample, and whether its final interval is out.
    run_ms: Vec<u64>,
    finished: Vec<bool>,
    progress: Option<Arc<Vec<Progress>>>,
    failed: bool,
}

/// Whether `--live` can draw here: a terminal on standard input and output.
pub fn have_terminal() -> bool {
    std::io::stdout().is_terminal() && std::io::stdin().is_terminal()
}

impl Live {
    /// Binds the exporter and creates the stream now, so that a port in use or a bad path
    /// is an error before any I/O. `view`: draw the full-screen view (the caller checked for
    /// a terminal). `terminate` stops the run (`q` in the view).
    pub fn start(sw: &cli::Live, view: bool, terminate: Arc<AtomicBool>) -> Result<Live, String> {
        let host = flexio_engine::os::system::uname()
            .nodename()
            .to_string_lossy()
            .into_owned();
        let exporter = match &sw.metrics_listen {
            Some(a) => Some(metrics::Exporter::bind(a, &host)?),
            None => None,
        };
        let stream = match &sw.interval_stream {
            Some(p) => Some(stream::Stream::open(p)?),
            None => None,
        };
        if let Some(e) = &exporter {
            eprintln!("flexio: metrics at http://{}/metrics", e.addr);
        }
        Ok(Live {
            every: Duration::from_millis(sw.interval_ms.unwrap_or(1000)),
            stream,
            exporter,
            view: Mutex::new(None),
            want_view: view,
            terminate,
            host,
            inner: Mutex::new(Inner::default()),
        })
    }

    pub fn every(&self) -> Duration {
        self.every
    }

    /// Whether the full-screen view owns the terminal (text for stdout waits until it ends).
    pub fn holds_terminal(&self) -> bool {
        self.want_view
    }

    /// The run's threads are known: the view starts.
    pub fn running(&self, plans: &[ThreadPlan], progress: &Arc<Vec<Progress>>) {
        if let Ok(mut g) = self.inner.lock() {
            g.progress = Some(progress.clone());
            g.tracker = Tracker::new(plans.len());
            g.run_ms = vec![0; plans.len()];
            g.finished = vec![false; plans.len()];
        }
        if self.want_view {
            let v = view::View::start(plans, progress.clone(), self.terminate.clone());
            if let Ok(mut g) = self.view.lock() {
                *g = Some(v);
            }
        }
        if let Some(e) = &self.exporter {
            e.publish(metrics::Scrape {
                host: self.host.clone(),
                state: metrics::RunState::Running,
                jobs_running: plans.len() as u64,
                ..metrics::Scrape::default()
            });
        }
    }

    /// One sample: its intervals to the stream, the view and the exporter.
    pub fn sample(&self, s: &LiveSample) {
        let mut g = match self.inner.lock() {
            Ok(g) => g,
            Err(e) => e.into_inner(),
        };
        let g = &mut *g;
        let mut ivs = Vec::new();
        for (i, (job, plan)) in s.jobs.iter().zip(s.plans).enumerate() {
            let Some(r) = job else { continue };
            if g.finished.get(i).copied().unwrap_or(false) {
                continue;
            }
            let delta = g.tracker.step(i, &r.stats, r.params.lat_percentiles);
            let now_ms = r.stats.total_run_time_ms;
            let before = if delta.restarted { 0 } else { g.run_ms[i] };
            g.run_ms[i] = now_ms;
            let last = s.done.get(i).copied().unwrap_or(false);
            g.finished[i] = last;
            ivs.push(JobInterval {
                plan,
                result: r,
                ms: now_ms.saturating_sub(before),
                delta,
                last,
            });
        }
        let elapsed_ms = s.elapsed_ns / 1_000_000;
        if let (Some(st), false) = (&self.stream, g.failed) {
            if let Err(e) = st.write(s.unix_ms, elapsed_ms, &ivs) {
                // Said once; the run goes on.
                eprintln!("flexio: {e}");
                g.failed = true;
            }
        }
        let eta = g
            .progress
            .as_ref()
            .and_then(|p| flexio_run::status::estimate(s.plans, p, elapsed_ms.div_ceil(1000)));
        if let Some(e) = &self.exporter {
            e.publish(self.scrape(s, eta));
        }
        if let Ok(v) = self.view.lock() {
            if let Some(v) = &*v {
                v.update(&ivs, elapsed_ms, eta);
            }
        }
    }

    fn scrape(&self, s: &LiveSample, eta: Option<u64>) -> metrics::Scrape {
        let bounds = metrics::bounds_ns();
        let mut jobs = Vec::new();
        for (job, plan) in s.jobs.iter().zip(s.plans) {
            let Some(r) = job else { continue };
            let st = &r.stats;
            let lat = r.params.lat_percentiles;
            let mut dirs = Vec::new();
            for (d, name) in ["read", "write", "trim"].into_iter().enumerate() {
                let x = &st.dirs[d];
                if x.total_ios == 0 {
                    continue;
                }
                let (l, h) = flexio_stats::live::reported_latency(x, lat);
                dirs.push(metrics::DirSeries {
                    direction: name,
                    ios: x.total_ios,
                    bytes: x.io_bytes,
                    kind: if lat { "lat" } else { "clat" },
                    lat_sum_s: l.sum as f64 / 1e9,
                    lat_count: h.total(),
                    buckets: flexio_stats::live::rebucket(h.counts(), &bounds),
                });
            }
            let tool_share = st.tool_share().filter(|_| !plan.engine.caps.measures_tool);
            jobs.push(metrics::JobSeries {
                job: r.name.clone(),
                thread: plan.thread_number,
                group: r.groupid,
                dirs,
                errors: st.total_err,
                usr_s: st.usr_time_us as f64 / 1e6,
                sys_s: st.sys_time_us as f64 / 1e6,
                tool_share,
                iodepth: plan.header.iodepth,
            });
        }
        let running = s
            .jobs
            .iter()
            .zip(&s.done)
            .filter(|(j, d)| j.is_some() && !**d)
            .count() as u64;
        metrics::Scrape {
            host: self.host.clone(),
            state: if s.last {
                metrics::RunState::Finished
            } else {
                metrics::RunState::Running
            },
            elapsed_s: s.elapsed_ns as f64 / 1e9,
            eta_s: if s.last { Some(0) } else { eta },
            jobs_running: running,
            jobs,
        }
    }

    /// The run has ended: the view gives the terminal back, the exporter stops.
    pub fn finish(&self) {
        if let Ok(mut v) = self.view.lock() {
            if let Some(v) = v.take() {
                v.finish();
            }
        }
    }

    pub fn stop_exporter(self) {
        self.finish();
        if let Some(e) = self.exporter {
            e.finish();
        }
    }

    /// Whether the view asked the run to stop (`q`).
    pub fn stopped_by_view(&self) -> bool {
        self.want_view && self.terminate.load(Ordering::Relaxed)
    }
}
