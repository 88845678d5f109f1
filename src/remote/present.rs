//! The client's report: each server's results as a flexio report (`run_report_of`), the
//! "All clients" aggregate merged losslessly over every host (`stats::cluster`: histograms
//! bucket by bucket, so its percentiles are those of the pooled samples), the cluster
//! windows, and the exit status. Layout: `flexio_output::clients`.

pub use super::hosts::Out;
use super::hosts::{HostResult, Shared};
use flexio_job::{Cli, Format};
use flexio_output::clients::{self, Host};
use flexio_remote::convert::{job_result_of, run_report_of};
use flexio_run::{FIO_COMPAT, VERSION};
use flexio_stats::cluster::{self, HostRun, Progress};
use flexio_stats::report::{self, JobResult, RunReport};
use flexio_stats::ThreadStats;
use std::path::Path;

fn now() -> (i64, i64, String) {
    let wall = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    let secs = wall.as_secs() as i64;
    (
        secs,
        wall.as_millis() as i64,
        flexio_engine::sys::ctime(secs),
    )
}

/// One server's results as a report (its JOB_OPTs as the jobs' and global options).
pub fn host_report(h: &HostResult) -> (RunReport, Vec<JobResult>) {
    let ts: Vec<_> = h.ts.iter().map(|(_, t, _)| t.clone()).collect();
    let mut rep = run_report_of(&ts, &h.gs, &h.du, FIO_COMPAT, now(), 0);
    // The client/server protocol is fio 3.33's, and so is the client's layout.
    rep.set_layout(report::Layout::Fio333);
    for (j, (opts, _, _)) in rep.jobs.iter_mut().zip(&h.ts) {
        j.echo = opts
            .iter()
            .map(|o| (o.name.clone(), o.value.clone()))
            .collect();
    }
    rep.global_options = h
        .global_opts
        .iter()
        .map(|o| (o.name.clone(), o.value.clone()))
        .collect();
    (rep, ts.iter().map(job_result_of).collect())
}

/// The hosts' runs on one clock (the client's, or rank 0's for MPI): each starts at its
/// measured start (the first SERVER_START's arrival, a rank's first barrier) and ends when
/// its results arrived (a rank's own end stamp); a host without a measured start is placed
/// its longest runtime before its end. Its progress points (integrated ETA rates, a rank's
/// own samples) place its transfers inside the windows; they are capped at its totals.
/// `index` is the host's place in `hosts`.
pub(crate) fn host_runs(hosts: &[HostResult], results: &[Vec<JobResult>]) -> Vec<HostRun> {
    struct Span {
        index: usize,
        start: i128,
        end: i128,
        measured: bool,
        stats: ThreadStats,
    }
    let spans: Vec<Span> = hosts
        .iter()
        .zip(results)
        .enumerate()
        .filter(|(_, (_, r))| !r.is_empty())
        .map(|(index, (h, rs))| {
            let mut stats = ThreadStats::default();
            for (i, r) in rs.iter().enumerate() {
                stats.merge(&r.stats, i == 0);
            }
            let end = h
                .ended_at
                .or_else(|| h.ts.iter().map(|t| t.2).max())
                .unwrap_or(0);
            let run_ms = stats.dirs.iter().map(|d| d.runtime_ms).max().unwrap_or(0);
            let (start, measured) = match h.started_at {
                Some(s) if s <= end => (s, true),
                _ => (end - run_ms as i128 * 1_000_000, false),
            };
            Span {
                index,
                start,
                end,
                measured,
                stats,
            }
        })
        .collect();
    let base = spans.iter().map(|s| s.start).min().unwrap_or(0);
    spans
        .into_iter()
        .map(|s| {
            let h = &hosts[s.index];
            let total = |d: usize| (s.stats.dirs[d].io_bytes, s.stats.dirs[d].total_ios);
            let mut progress: Vec<Progress> = Vec::new();
            for (t, bytes, ios) in &h.progress {
                if *t <= s.start || *t >= s.end {
                    continue;
                }
                let mut p = Progress {
                    t_ns: (t - s.start) as u64,
                    ..Default::default()
                };
                for d in 0..3 {
                    let last = progress
                        .last()
                        .map(|q| (q.bytes[d], q.ios[d]))
                        .unwrap_or((0, 0));
                    p.bytes[d] = bytes[d].min(total(d).0).max(last.0);
                    p.ios[d] = ios[d].min(total(d).1).max(last.1);
                }
                progress.push(p);
            }
            HostRun {
                host: h.name.clone(),
                index: s.index,
                start_ns: (s.start - base) as u64,
                end_ns: (s.end - base) as u64,
                start_measured: s.measured,
                stats: s.stats,
                progress,
            }
        })
        .collect()
}

/// Print everything and return the exit status.
pub fn finish(cli: &Cli, sh: &Shared, hosts: &mut [HostResult], interrupted: bool) -> i32 {
    let sw = &cli.switches;
    let built: Vec<(RunReport, Vec<JobResult>)> = hosts.iter().map(host_report).collect();
    let results: Vec<Vec<JobResult>> = built.iter().map(|b| b.1.clone()).collect();
    let total_reports: usize = results.iter().map(|r| r.len()).sum();
    // The aggregate: merged without loss over every report of every host.
    let runs = host_runs(hosts, &results);
    let merged = (total_reports > 1).then(|| cluster::merge(&runs));
    let all = merged.as_ref().and_then(|c| {
        let last_gid = results
            .iter()
            .flatten()
            .last()
            .map(|r| r.groupid)
            .unwrap_or(0);
        let mut r = results.iter().flatten().next().cloned()?;
        r.name = "All clients".into();
        r.groupid = last_gid;
        r.pid = 0;
        r.description = None;
        r.echo = Vec::new();
        r.steadystate = None;
        r.stats = c.stats.clone();
        let mut rep = report::build(&[r], Vec::new(), Vec::new(), FIO_COMPAT, now(), 0);
        rep.set_layout(report::Layout::Fio333);
        for j in &mut rep.jobs {
            j.members = total_reports as u32;
        }
        Some(rep)
    });
    // The windows' clock error. MPI: the offsets' uncertainty (each rank's stamps are
    // moved by its offset). Client mode: the windows are placed by arrival times, late by
    // the messages' delivery delays; the shortest round trips show their order.
    let (time_base, time_error) = if sh.mpi {
        (
            clients::TimeBase::RankClocks,
            hosts.iter().filter_map(|h| h.offset.map(|o| o.1)).max(),
        )
    } else {
        (
            clients::TimeBase::Arrival,
            hosts.iter().filter_map(|h| h.rtt).max(),
        )
    };
    let time_error = time_error.unwrap_or(0);
    let views: Vec<Host<'_>> = hosts
        .iter()
        .zip(&built)
        .map(|(h, (rep, _))| Host {
            name: &h.name,
            hostname: &h.host,
            addr: &h.addr,
            port: h.port,
            report: rep,
            error: h.error.as_deref(),
            offset: h.offset,
            exit_error: h.stop.map_or(0, |(e, s)| if e != 0 { e } else { s }),
        })
        .collect();
    let mut text = String::new();
    if sh.terse {
        for h in &views {
            for j in &h.report.jobs {
                text.push_str(&flexio_output::terse::job_line(
                    j,
                    h.report,
                    sw.terse_version,
                ));
            }
        }
        if let Some(a) = &all {
            for j in &a.jobs {
                text.push_str(&flexio_output::terse::job_line(j, a, sw.terse_version));
            }
        }
    }
    if sh.normal {
        // (each server's block was printed when its session ended)
        if let Some(a) = &all {
            text.push_str(&clients::all_clients_block(a));
        }
        if let Some(c) = &merged {
            text.push_str(&clients::cluster_block(c, &views, time_error, time_base));
        }
    }
    let plus = sw.formats.contains(&Format::JsonPlus);
    if plus || sw.formats.contains(&Format::Json) {
        let n = now();
        text.push_str(&clients::json_document(
            &views,
            all.as_ref(),
            merged.as_ref().map(|c| (c, time_error, time_base)),
            plus,
            VERSION,
            (n.0, &n.2),
        ));
    }
    sh.out.text(&text);
    let mut code = 0;
    // Client mode names a server "client <name> (<address>)" as fio does; MPI names ranks.
    let who = |h: &HostResult| {
        if sh.mpi {
            format!("{} ({})", h.addr, h.name)
        } else {
            format!("client {} ({})", h.name, h.addr)
        }
    };
    for h in hosts.iter() {
        if let Some(e) = &h.error {
            eprintln!(
                "flexio: {}: {e}{}",
                who(h),
                if h.ts.is_empty() {
                    "; no results from it"
                } else {
                    "; its results are partial"
                }
            );
            code += 1;
        } else if let Some((err, sig)) = h.stop {
            if err != 0 || sig != 0 {
                if sh.mpi {
                    eprintln!("flexio: {}: its run ended with error {err}", who(h));
                } else {
                    eprintln!("flexio: client {}: exited with error {err}", h.name);
                }
                code += 1;
            }
        }
    }
    if code > 0 && hosts.iter().any(|h| h.error.is_some()) {
        eprintln!(
            "flexio: the run ended early: {} of {} {} failed; results shown are partial",
            hosts.iter().filter(|h| h.error.is_some()).count(),
            hosts.len(),
            if sh.mpi { "ranks" } else { "servers" }
        );
    }
    if let Some(p) = &sw.output {
        if let Err(e) = flexio_run::notes::write_atomic(Path::new(p), sh.out.take().as_bytes()) {
            eprintln!("flexio: cannot write output file '{p}': {e}");
            return 1;
        }
    }
    if interrupted {
        return 128;
    }
    code.min(255)
}
