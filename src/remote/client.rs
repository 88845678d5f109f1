//! `flexio --client=ADDR [job files] ...`: drive fio 3.33 or flexio servers.
//!
//! One thread per server: connect, PROBE, JOBLINE (the forwarded switches), one JOB per
//! job file (or LOAD_FILE for `--remote-config`), RUN, then receive until the server's
//! QUIT, asking SEND_ETA every second. The ETA replies are the liveness check: a server
//! that does not answer for [`LIVENESS`], disconnects, or sends what cannot be decoded
//! (a protocol version mismatch included) fails, is named, and makes every other server
//! stop (QUIT: they still send the results of what ran). Results that did arrive are kept
//! and marked partial. Presentation: [`super::present`].

use super::net::{self, Stream};
use crate::signals::Signals;
use flexio_job::{Cli, Format};
use flexio_remote::addr::Addr;
use flexio_remote::msg::{
    DiskUtil, Eta, Job, JobLine, JobOpt, LoadFile, Probe, ProbeReply, CLIENT_TYPE_CLI,
};
use flexio_remote::ts::{GroupStats, ThreadStat};
use flexio_remote::{Decoder, Message, Sender};
use std::io::{Read, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A server that answers nothing (no ETA reply) for this long has failed.
pub const LIVENESS: Duration = Duration::from_secs(5);
/// Connecting gives up after this long.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
/// After QUIT was sent (stop), a server gets this long to send its results.
const STOP_GRACE: Duration = Duration::from_secs(10);
/// SEND_ETA cadence.
const ETA_EVERY: Duration = Duration::from_millis(950);

/// What one server sent, and how its session ended.
#[derive(Debug, Default)]
pub struct HostResult {
    /// The address as given.
    pub addr: String,
    /// Its name: the probe's hostname (else the address).
    pub name: String,
    /// TCP port (0 for a Unix socket).
    pub port: u16,
    pub probe: Option<ProbeReply>,
    pub global_opts: Vec<JobOpt>,
    /// Each TS with the JOB_OPTs that preceded it, and its arrival (ns, client wall clock).
    pub ts: Vec<(Vec<JobOpt>, ThreadStat, i128)>,
    pub gs: Vec<GroupStats>,
    pub du: Vec<DiskUtil>,
    /// START's report count (cumulative, the last one received).
    pub stat_outputs: u32,
    /// STOP {error, signal}.
    pub stop: Option<(u32, u32)>,
    /// Why the session failed (the run is then partial).
    pub error: Option<String>,
    /// Clock offset of the server's wall clock against ours (ns, server − client) and its
    /// uncertainty (± ns): from the first TEXT answering the first JOB.
    pub offset: Option<(i128, i128)>,
    /// First SERVER_START (client wall clock, ns).
    pub started_at: Option<i128>,
    /// The last ETA reply.
    pub last_eta: Option<Eta>,
}

/// Shared between the server threads.
pub struct Shared {
    /// Set when the run must stop (a server failed, or a signal): every session sends QUIT.
    pub stop: AtomicBool,
    /// Output so far (TEXT lines are printed as they come, prefixed by the server name).
    pub out: super::present::Out,
    pub normal: bool,
    pub terse: bool,
}

fn wall_ns() -> i128 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as i128)
        .unwrap_or(0)
}

/// What to send to one server.
#[derive(Debug)]
pub struct Plan {
    pub addr: String,
    /// (file name, its text) sent as JOB.
    pub jobs: Vec<(String, String)>,
    /// Paths the server opens itself (LOAD_FILE).
    pub remote: Vec<String>,
    /// Forwarded switches (JOBLINE after "fio").
    pub args: Vec<String>,
}

/// Entry point of `--client`; returns the exit status.
pub fn main(cli: &Cli, sigs: &(Arc<AtomicBool>, Signals)) -> i32 {
    let sw = &cli.switches;
    if cli.sections.iter().any(|s| !s.opts.is_empty()) {
        eprintln!(
            "flexio: job options on the command line are not sent to servers (as with fio); put them in a job file"
        );
        return 1;
    }
    let plans = match plans_of(cli) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("flexio: {e}");
            return 1;
        }
    };
    let shared = Arc::new(Shared {
        stop: AtomicBool::new(false),
        out: super::present::Out::new(sw.output.is_some()),
        normal: sw.formats.contains(&Format::Normal),
        terse: sw.formats.contains(&Format::Terse),
    });
    let handles: Vec<_> = plans
        .into_iter()
        .map(|p| {
            let sh = shared.clone();
            std::thread::spawn(move || {
                let r = session(p, &sh);
                // fio prints a server's block when its session ends.
                if sh.normal && !r.ts.is_empty() {
                    let rep = super::present::host_report(&r).0;
                    sh.out.text(&flexio_output::clients::host_block(&rep));
                }
                r
            })
        })
        .collect();
    // A signal stops every server (they still report).
    let mut results = Vec::new();
    for h in handles {
        while !h.is_finished() {
            if sigs.0.load(Ordering::Relaxed) {
                shared.stop.store(true, Ordering::Relaxed);
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        match h.join() {
            Ok(r) => results.push(r),
            Err(_) => {
                eprintln!("flexio: internal error in a client session");
                return 1;
            }
        }
    }
    super::present::finish(cli, &shared, &mut results, sigs.1.any())
}

/// The job files each server gets: its own (named after its `--client`) and its
/// `--remote-config` files, else every job file not bound to a server.
fn plans_of(cli: &Cli) -> Result<Vec<Plan>, String> {
    let sw = &cli.switches;
    let read = |f: &str| -> Result<(String, String), String> {
        std::fs::read_to_string(f)
            .map(|t| (f.to_string(), t))
            .map_err(|e| format!("cannot read job file '{f}': {e}"))
    };
    let unbound: Vec<(String, String)> = cli
        .job_files
        .iter()
        .map(|(_, f)| read(f))
        .collect::<Result<_, _>>()?;
    let mut args = Vec::new();
    if sw.readonly {
        args.push("--readonly".to_string());
    }
    for s in &sw.sections {
        args.push(format!("--section={s}"));
    }
    let mut out = Vec::new();
    for c in &sw.remote.clients {
        Addr::parse(Some(&c.addr)).map_err(|e| format!("--client={}: {e}", c.addr))?;
        let own: Vec<(String, String)> = c
            .job_files
            .iter()
            .map(|f| read(f))
            .collect::<Result<_, _>>()?;
        let jobs = if own.is_empty() && c.remote_configs.is_empty() {
            unbound.clone()
        } else {
            own
        };
        if jobs.is_empty() && c.remote_configs.is_empty() {
            return Err(format!("no job file for server {}", c.addr));
        }
        out.push(Plan {
            addr: c.addr.clone(),
            jobs,
            remote: c.remote_configs.clone(),
            args: args.clone(),
        });
    }
    Ok(out)
}

fn send(s: &mut Stream, m: &Message, tag: u64) -> std::io::Result<()> {
    s.write_all(&m.to_frames(tag))?;
    s.flush()
}

/// One server's session.
fn session(p: Plan, sh: &Shared) -> HostResult {
    let mut r = HostResult {
        addr: p.addr.clone(),
        name: p.addr.clone(),
        ..Default::default()
    };
    let fail = |r: &mut HostResult, why: String| {
        if r.error.is_none() {
            r.error = Some(why);
        }
        sh.stop.store(true, Ordering::Relaxed);
    };
    let addr = match Addr::parse(Some(&p.addr)) {
        Ok(a) => a,
        Err(e) => {
            fail(&mut r, e.to_string());
            return r;
        }
    };
    if let Addr::Ip {
        host: Some(h),
        port,
        ..
    } = &addr
    {
        r.name = h.clone();
        r.port = *port;
    }
    let (mut s, probe_name) = match net::connect(&addr, CONNECT_TIMEOUT) {
        Ok(c) => c,
        Err(e) => {
            fail(&mut r, format!("cannot connect: {e}"));
            return r;
        }
    };
    let mut reader = match s.try_clone() {
        Ok(c) => c,
        Err(e) => {
            fail(&mut r, format!("connection error: {e}"));
            return r;
        }
    };
    let _ = s.set_write_timeout(Some(LIVENESS));
    let _ = reader.set_read_timeout(Some(Duration::from_millis(50)));
    let mut job_sent_at = None;
    // Shortest SEND_ETA round trip: the bound on a message's one-way delay.
    let mut min_rtt: Option<i128> = None;
    let mut eta_sent: Vec<(u64, i128)> = Vec::new();
    // Clock offset: every TEXT was stamped (server clock) before it arrived (ours), so
    // offset >= stamp - arrival; the first TEXT after the first JOB was stamped after
    // that JOB left, so offset <= stamp - sent.
    let mut lower: Option<i128> = None;
    let mut upper: Option<i128> = None;
    let sent = (|| -> std::io::Result<()> {
        send(
            &mut s,
            &Message::Probe(Probe {
                flags: 0,
                server: probe_name,
            }),
            1,
        )?;
        if !p.args.is_empty() {
            let mut args = vec!["fio".to_string()];
            args.extend(p.args.iter().cloned());
            send(
                &mut s,
                &Message::JobLine(JobLine {
                    client_type: CLIENT_TYPE_CLI as u16,
                    args,
                }),
                0,
            )?;
        }
        for (_, text) in &p.jobs {
            let t0 = wall_ns();
            send(
                &mut s,
                &Message::Job(Job {
                    client_type: CLIENT_TYPE_CLI,
                    text: text.clone(),
                }),
                0,
            )?;
            job_sent_at.get_or_insert(t0);
        }
        for path in &p.remote {
            send(
                &mut s,
                &Message::LoadFile(LoadFile {
                    client_type: CLIENT_TYPE_CLI as u16,
                    path: path.clone(),
                }),
                0,
            )?;
        }
        send(&mut s, &Message::Run, 0)
    })();
    if let Err(e) = sent {
        fail(&mut r, format!("cannot send the jobs: {e}"));
        return r;
    }
    let mut dec = Decoder::default();
    let mut buf = vec![0u8; 256 << 10];
    let mut pending_opts: Vec<JobOpt> = Vec::new();
    let mut last_answer = Instant::now();
    let mut next_eta = Instant::now();
    let mut eta_outstanding = 0u32;
    let mut tag = 100u64;
    let mut quit_sent: Option<Instant> = None;
    let mut continuation = false;
    let mut done = false;
    while !done {
        if sh.stop.load(Ordering::Relaxed) && quit_sent.is_none() {
            let _ = send(&mut s, &Message::Quit, 0);
            quit_sent = Some(Instant::now());
        }
        if let Some(q) = quit_sent {
            if q.elapsed() > STOP_GRACE {
                fail(
                    &mut r,
                    format!(
                        "did not send its results within {} s of being told to stop",
                        STOP_GRACE.as_secs()
                    ),
                );
                break;
            }
        }
        if next_eta <= Instant::now() {
            if eta_outstanding > 0 && last_answer.elapsed() > LIVENESS {
                fail(
                    &mut r,
                    format!(
                        "no answer for {} s (SEND_ETA unanswered): the server is hung or unreachable",
                        LIVENESS.as_secs()
                    ),
                );
                break;
            }
            tag += 1;
            if send(&mut s, &Message::SendEta, tag).is_err() {
                fail(&mut r, "disconnected (write failed)".into());
                break;
            }
            eta_outstanding += 1;
            if eta_sent.len() < 64 {
                eta_sent.push((tag, wall_ns()));
            }
            next_eta = Instant::now() + ETA_EVERY;
        }
        match reader.read(&mut buf) {
            Ok(0) => {
                fail(&mut r, "disconnected before the end of the run".into());
                break;
            }
            Ok(n) => dec.push(&buf[..n]),
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock
                        | std::io::ErrorKind::TimedOut
                        | std::io::ErrorKind::Interrupted
                ) => {}
            Err(e) => {
                fail(&mut r, format!("disconnected: {e}"));
                break;
            }
        }
        loop {
            let raw = match dec.next_message() {
                Ok(Some(m)) => m,
                Ok(None) => break,
                Err(e) => {
                    fail(&mut r, e.to_string());
                    done = true;
                    break;
                }
            };
            let now = wall_ns();
            last_answer = Instant::now();
            // Messages flexio does not use (IOLOG, ADD_JOB, ...) are skipped.
            let Ok(m) = Message::decode(&raw, Sender::Server) else {
                continue;
            };
            match m {
                Message::ProbeReply(pr) => {
                    if sh.normal {
                        sh.out.text(&format!(
                            "hostname={}, be={}, {}-bit, os={}, arch={}, fio={}, flags={:x}\n",
                            pr.hostname,
                            pr.bigendian,
                            pr.bpp as u32 * 8,
                            os_name(pr.os),
                            arch_name(pr.arch),
                            pr.fio_version,
                            pr.flags
                        ));
                    }
                    r.name = pr.hostname.clone();
                    r.probe = Some(pr);
                }
                Message::Text(t) => {
                    let srv = t.log_sec as i128 * 1_000_000_000 + t.log_usec as i128 * 1000;
                    lower = Some(lower.map_or(srv - now, |l| l.max(srv - now)));
                    if let (None, Some(t0)) = (upper, job_sent_at) {
                        upper = Some(srv - t0 + 1000);
                    }

                    if sh.normal || t.level >= flexio_remote::msg::LOG_ERR {
                        let line = if continuation || sh.terse {
                            t.text.clone()
                        } else {
                            format!("<{}> {}", r.name, t.text)
                        };
                        if sh.normal {
                            sh.out.text(&line);
                        } else {
                            eprint!("{line}");
                        }
                    }
                    continuation = !t.text.contains('\n');
                }
                Message::Start(st) => r.stat_outputs = st.stat_outputs,
                Message::ServerStart => {
                    r.started_at.get_or_insert(now);
                }
                Message::Eta(e) => {
                    eta_outstanding = 0;
                    if let Some(i) = eta_sent.iter().position(|(t, _)| *t == raw.tag) {
                        let rtt = now - eta_sent[i].1;
                        min_rtt = Some(min_rtt.map_or(rtt, |m| m.min(rtt)));
                        eta_sent.drain(..=i);
                    }
                    r.last_eta = Some(e);
                }
                Message::JobOpt(o) => {
                    if o.global {
                        r.global_opts.push(o);
                    } else {
                        pending_opts.push(o);
                    }
                }
                Message::Ts(ts) => r.ts.push((std::mem::take(&mut pending_opts), *ts, now)),
                Message::Gs(g) => r.gs.push(g),
                Message::Du(d) => r.du.push(d),
                Message::Stop(st) => r.stop = Some((st.error, st.signal)),
                Message::Quit => {
                    done = true;
                    break;
                }
                _ => {}
            }
        }
    }
    r.offset = offset_of(lower, upper, min_rtt);
    if r.stop.is_none() && r.error.is_none() {
        fail(
            &mut r,
            "ended without reporting how the run ended (no STOP)".into(),
        );
    }
    s.shutdown();
    r
}

/// The clock offset (server − client, ns) and its uncertainty from the bounds the TEXT
/// stamps give: a message's one-way delay is taken as at most the shortest ETA round trip
/// (centre of [lower, lower + rtt]), kept inside the hard bounds.
fn offset_of(lower: Option<i128>, upper: Option<i128>, rtt: Option<i128>) -> Option<(i128, i128)> {
    let lo = lower?;
    let hi = match (upper, rtt) {
        (Some(u), Some(r)) => u.min(lo + r).max(lo),
        (Some(u), None) => u.max(lo),
        (None, Some(r)) => lo + r,
        (None, None) => return None,
    };
    // TEXT stamps have microsecond resolution.
    Some(((lo + hi) / 2, (hi - lo) / 2 + 1000))
}

fn os_name(v: u8) -> &'static str {
    match v {
        1 => "Linux",
        2 => "AIX",
        3 => "FreeBSD",
        4 => "HP-UX",
        5 => "OSX",
        6 => "NetBSD",
        7 => "OpenBSD",
        8 => "Solaris",
        9 => "Windows",
        10 => "Android",
        11 => "DragonFly",
        _ => "unknown",
    }
}

fn arch_name(v: u8) -> &'static str {
    match v {
        1 => "x86-64",
        2 => "x86",
        3 => "ppc",
        4 => "ia64",
        5 => "s390",
        6 => "alpha",
        7 => "sparc",
        8 => "sparc64",
        9 => "arm",
        10 => "sh",
        11 => "hppa",
        12 => "mips",
        13 => "aarch64",
        14 => "generic",
        _ => "unknown",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offset_stays_inside_its_bounds() {
        // Stamp-arrival says >= -2 ms; stamp-sent says <= +8 ms; a 1 ms round trip narrows
        // it to [-2, -1] ms.
        let (o, u) = offset_of(Some(-2_000_000), Some(8_000_000), Some(1_000_000)).unwrap();
        assert_eq!(o, -1_500_000);
        assert_eq!(u, 500_000 + 1000);
        // Without a round trip, the hard bounds.
        let (o, u) = offset_of(Some(0), Some(4_000_000), None).unwrap();
        assert_eq!((o, u), (2_000_000, 2_001_000));
        // A round trip longer than the hard bounds does not widen them.
        let (o, _) = offset_of(Some(0), Some(1_000), Some(1_000_000)).unwrap();
        assert_eq!(o, 500);
        assert_eq!(offset_of(None, Some(1), Some(1)), None);
        assert_eq!(offset_of(Some(1), None, None), None);
    }

    #[test]
    fn job_files_go_where_fio_sends_them() {
        let d = tempfile::tempdir().unwrap();
        for f in ["a.fio", "b.fio", "u.fio"] {
            std::fs::write(d.path().join(f), format!("[{f}]\n")).unwrap();
        }
        let p = |s: &str| d.path().join(s).display().to_string();
        let args = vec![
            p("u.fio"),
            "--client=h1".into(),
            p("a.fio"),
            "--client=h2".into(),
            "--client=h3".into(),
            "--remote-config=/srv/r.fio".into(),
            "--readonly".into(),
        ];
        let cli = flexio_job::parse_args(&args, &flexio_engine::CATALOG).unwrap();
        let plans = plans_of(&cli).unwrap();
        let names = |pl: &Plan| pl.jobs.iter().map(|j| j.0.clone()).collect::<Vec<_>>();
        assert_eq!(names(&plans[0]), vec![p("a.fio")]);
        assert_eq!(
            names(&plans[1]),
            vec![p("u.fio")],
            "no own file: the unbound ones"
        );
        assert!(names(&plans[2]).is_empty());
        assert_eq!(plans[2].remote, vec!["/srv/r.fio".to_string()]);
        assert_eq!(plans[0].args, vec!["--readonly".to_string()]);
        let bad = flexio_job::parse_args(&["--client=h1".into()], &flexio_engine::CATALOG).unwrap();
        assert!(plans_of(&bad)
            .unwrap_err()
            .contains("no job file for server h1"));
    }
}
