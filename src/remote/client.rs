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
use flexio_job::{Cli, Format};
use flexio_remote::addr::Addr;
use flexio_remote::msg::{Eta, Job, JobLine, JobOpt, LoadFile, Probe, CLIENT_TYPE_CLI};
use flexio_remote::{Decoder, Message, Sender};
use flexio_run::signals::Signals;
use std::io::{IsTerminal, Read, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// A server that answers nothing (no ETA reply) for this long has failed.
pub const LIVENESS: Duration = Duration::from_secs(5);
/// Connecting gives up after this long.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
/// After QUIT was sent (stop), a server gets this long to send its results.
const STOP_GRACE: Duration = Duration::from_secs(10);
/// Longest SEND_ETA cadence (fio asks at 95 % of --eta-interval; flexio asks at least this
/// often whatever the interval, as the replies are its liveness check).
const ETA_EVERY: Duration = Duration::from_millis(950);

pub use super::hosts::{HostResult, Shared};

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
    /// `--auth-token-file`, `--tls-*`: authenticate before the fio protocol starts.
    pub auth: super::auth::ClientAuth,
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
    let sec = &sw.remote.security;
    let auth = match super::auth::ClientAuth::load(sec) {
        Ok(a) => a,
        Err(e) => {
            eprintln!("flexio: {e}");
            return 1;
        }
    };
    let mut plans = match plans_of(cli) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("flexio: {e}");
            return 1;
        }
    };
    for p in &mut plans {
        p.auth = auth.clone();
    }
    let shared = Arc::new(Shared {
        stop: AtomicBool::new(false),
        out: super::hosts::Out::new(sw.output.is_some()),
        normal: sw.formats.contains(&Format::Normal),
        terse: sw.formats.contains(&Format::Terse),
        mpi: false,
        etas: Mutex::new(vec![None; plans.len()]),
        triggered: AtomicBool::new(false),
        trigger_remote: sw.extra.trigger_remote_cmd.clone().unwrap_or_default(),
    });
    // fio's client polls the trigger: it runs --trigger here and sends --trigger-remote.
    let started = Instant::now();
    let mut trigger = flexio_run::trigger::Trigger::new(&sw.extra, 0);
    let eta_every = Duration::from_millis(sw.eta_interval_ms * 95 / 100)
        .clamp(Duration::from_millis(10), ETA_EVERY);
    let handles: Vec<_> = plans
        .into_iter()
        .enumerate()
        .map(|(i, p)| {
            let sh = shared.clone();
            std::thread::spawn(move || {
                let r = session(p, i, &sh, eta_every);
                if let Ok(mut e) = sh.etas.lock() {
                    e[i] = None;
                }
                // fio prints a server's block when its session ends.
                if sh.normal && !r.ts.is_empty() {
                    let rep = super::present::host_report(&r).0;
                    sh.out.text(&flexio_output::clients::host_block(&rep));
                }
                r
            })
        })
        .collect();
    let show_eta = match sw.eta {
        flexio_job::Eta::Always => true,
        flexio_job::Eta::Never => false,
        flexio_job::Eta::Auto => std::io::stderr().is_terminal(),
    };
    let mut status = StatusLine::new(
        Duration::from_millis(sw.eta_interval_ms),
        sw.eta_newline_ms.map(Duration::from_millis),
    );
    // A signal stops every server (they still report).
    while !handles.iter().all(|h| h.is_finished()) {
        if sigs.0.load(Ordering::Relaxed) {
            shared.stop.store(true, Ordering::Relaxed);
        }
        if trigger.poll(started.elapsed().as_nanos() as u64) {
            shared.triggered.store(true, Ordering::Relaxed);
        }
        if show_eta {
            if let Ok(e) = shared.etas.lock() {
                status.tick(&e);
            }
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    status.clear();
    let mut results = Vec::new();
    for h in handles {
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
            auth: Default::default(),
        });
    }
    Ok(out)
}

fn send(s: &mut Stream, m: &Message, tag: u64) -> std::io::Result<()> {
    s.write_all(&m.to_frames(tag))?;
    s.flush()
}

/// The live status line: every interval, the sum of the servers' latest ETA replies,
/// drawn on stderr as a local run draws its own (`\r`, a newline every `--eta-newline`).
struct StatusLine {
    interval: Duration,
    newline_every: Option<Duration>,
    last: Instant,
    last_newline: Instant,
    last_len: usize,
}

impl StatusLine {
    fn new(interval: Duration, newline_every: Option<Duration>) -> StatusLine {
        StatusLine {
            interval,
            newline_every,
            last: Instant::now(),
            last_newline: Instant::now(),
            last_len: 0,
        }
    }

    fn tick(&mut self, etas: &[Option<Eta>]) {
        if self.last.elapsed() < self.interval {
            return;
        }
        let live: Vec<&Eta> = etas.iter().flatten().collect();
        if live.is_empty() {
            return;
        }
        self.last = Instant::now();
        let l = status_of(&live);
        let mut err = std::io::stderr().lock();
        let pad = self.last_len.saturating_sub(l.len());
        let _ = write!(err, "{l}{}\r", " ".repeat(pad));
        if let Some(nl) = self.newline_every {
            if self.last_newline.elapsed() >= nl {
                let _ = writeln!(err);
                self.last_newline = Instant::now();
            }
        }
        let _ = err.flush();
        self.last_len = l.len();
    }

    fn clear(&mut self) {
        if self.last_len > 0 {
            let mut err = std::io::stderr().lock();
            let _ = write!(err, "{}\r", " ".repeat(self.last_len));
            let _ = err.flush();
            self.last_len = 0;
        }
    }
}

/// Per-job state letters from a run string (`R(2),w(1)` gives R, R, w).
fn states_of(run_str: &str) -> Vec<char> {
    let mut out = Vec::new();
    for part in run_str.split(',') {
        let mut cs = part.chars();
        let Some(c) = cs.next() else { continue };
        let rest: String = cs.collect();
        let n = rest
            .strip_prefix('(')
            .and_then(|r| r.strip_suffix(')'))
            .and_then(|n| n.parse::<usize>().ok())
            .unwrap_or(1)
            .min(1 << 16);
        out.extend(std::iter::repeat(c).take(n));
    }
    out
}

/// fio's status line from the servers' ETA replies: jobs, files, rates, IOPS and limits
/// summed, the job states of every server in turn, the longest ETA (unknown while any
/// server's is), and the share done by the longest elapsed time (fio 3.33's client sums
/// the elapsed times, which overstates it).
fn status_of(etas: &[&Eta]) -> String {
    use flexio_output::status::{line, RateLimits};
    let mut states = Vec::new();
    let mut rates = [0u64; 3];
    let mut iops = [0u64; 3];
    let mut limits = RateLimits::default();
    for e in etas {
        states.extend(states_of(&e.run_str));
        for d in 0..3 {
            rates[d] += e.rate[d].saturating_mul(1024);
            iops[d] += e.iops[d] as u64;
            limits.add([
                e.m_rate[d],
                e.t_rate[d],
                e.m_iops[d] as u64,
                e.t_iops[d] as u64,
            ]);
        }
    }
    let running = etas.iter().map(|e| e.nr_running as usize).sum();
    let files = etas.iter().map(|e| e.files_open).sum();
    let unknown = etas.iter().any(|e| e.eta_sec >= i32::MAX as u64);
    let eta = (!unknown).then(|| etas.iter().map(|e| e.eta_sec).max().unwrap_or(0));
    let elapsed = etas.iter().map(|e| e.elapsed_sec).max().unwrap_or(0);
    let pct = match eta {
        Some(e) if elapsed > 0 => Some(100.0 * elapsed as f64 / (elapsed + e) as f64),
        _ => None,
    };
    line(running, files, &states, pct, rates, iops, eta, &limits)
}

/// One server's session (`index`: its place among the servers).
fn session(p: Plan, index: usize, sh: &Shared, eta_every: Duration) -> HostResult {
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
    match &addr {
        Addr::Ip {
            host: Some(h),
            port,
            ..
        } => {
            r.name = h.clone();
            r.port = *port;
        }
        Addr::Ip { port, .. } => r.port = *port,
        Addr::Unix(p) => r.name = p.display().to_string(),
    }
    r.host = r.name.clone();
    let (mut s, probe_name) = match net::connect(&addr, CONNECT_TIMEOUT) {
        Ok(c) => c,
        Err(e) => {
            fail(&mut r, format!("cannot connect: {e}"));
            return r;
        }
    };
    if p.auth.any() {
        let _ = s.set_read_timeout(Some(CONNECT_TIMEOUT));
        let _ = s.set_write_timeout(Some(CONNECT_TIMEOUT));
        // The name the server's certificate must carry.
        let host = match &addr {
            Addr::Ip { family, host, .. } => net::host_or_loopback(*family, host).to_string(),
            Addr::Unix(_) => "localhost".to_string(),
        };
        s = match super::auth::client(s, &p.auth, &host) {
            Ok(s) => s,
            Err(e) => {
                fail(&mut r, e);
                return r;
            }
        };
    }
    let mut reader = match s.try_clone() {
        Ok(c) => c,
        Err(e) => {
            fail(&mut r, format!("connection error: {e}"));
            return r;
        }
    };
    let _ = s.set_write_timeout(Some(LIVENESS));
    let _ = reader.set_read_timeout(Some(Duration::from_millis(50)));
    let mut run_sent_at = 0i128;
    // Shortest SEND_ETA round trip (reported with the windows).
    let mut min_rtt: Option<i128> = None;
    let mut eta_sent: Vec<(u64, i128)> = Vec::new();
    // Clock offset: every TEXT was stamped (server clock) before it arrived (ours), so
    // offset >= stamp - arrival; and after the PROBE, the session's first message, left,
    // so offset <= stamp - sent (the first TEXT's stamp is the least).
    let mut lower: Option<i128> = None;
    let mut upper: Option<i128> = None;
    let probe_sent_at = wall_ns();
    let state_prefix = probe_name.clone();
    let mut trigger_sent = false;
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
            send(
                &mut s,
                &Message::Job(Job {
                    client_type: CLIENT_TYPE_CLI,
                    text: text.clone(),
                }),
                0,
            )?;
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
        run_sent_at = wall_ns();
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
    // The server sent an error message (a refusal, a job it could not parse).
    let mut said_error = false;
    // Progress from the ETA replies: each reply's rates cover the time since the previous
    // reply (the first: since RUN), so rate x that time, added up, is the bytes moved.
    let mut last_eta_at: Option<i128> = None;
    let mut moved = ([0f64; 3], [0f64; 3]);
    while !done {
        if sh.stop.load(Ordering::Relaxed) && quit_sent.is_none() {
            let _ = send(&mut s, &Message::Quit, 0);
            quit_sent = Some(Instant::now());
        }
        if !trigger_sent && sh.triggered.load(Ordering::Relaxed) {
            trigger_sent = true;
            let t = flexio_remote::vstate::VTrigger {
                command: sh.trigger_remote.clone(),
            };
            let _ = send(&mut s, &Message::VTrigger(t), 0);
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
            next_eta = Instant::now() + eta_every;
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
                    said_error |= t.level >= flexio_remote::msg::LOG_ERR;
                    let srv = t.log_sec as i128 * 1_000_000_000 + t.log_usec as i128 * 1000;
                    lower = Some(lower.map_or(srv - now, |l| l.max(srv - now)));
                    // (+1 µs: the stamp is truncated to microseconds.)
                    upper = Some(upper.map_or(srv - probe_sent_at + 1000, |u| {
                        u.min(srv - probe_sent_at + 1000)
                    }));

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
                    let dt = (now - last_eta_at.unwrap_or(run_sent_at)).max(0) as f64 / 1e9;
                    last_eta_at = Some(now);
                    for d in 0..3 {
                        moved.0[d] += e.rate[d] as f64 * 1024.0 * dt;
                        moved.1[d] += e.iops[d] as f64 * dt;
                    }
                    if r.started_at.is_some() {
                        r.progress.push((
                            now,
                            moved.0.map(|b| b as u64),
                            moved.1.map(|i| i as u64),
                        ));
                    }
                    if let Ok(mut all) = sh.etas.lock() {
                        all[index] = Some(e);
                    }
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
                Message::VTriggerReply(v) => {
                    // The server's jobs' verify state, saved here as fio's client does.
                    for t in &v.threads {
                        let name = flexio_remote::vstate::SendFileRequest::state_name(
                            &state_prefix,
                            &t.name,
                            t.index as u32,
                        );
                        if let Err(e) = flexio_run::notes::write_atomic(
                            std::path::Path::new(&name),
                            &flexio_remote::vstate::VerifyState::V3(t.clone()).encode(),
                        ) {
                            eprintln!("flexio: cannot write {name}: {e}");
                        }
                    }
                }
                Message::Quit => {
                    done = true;
                    break;
                }
                _ => {}
            }
        }
    }
    r.offset = offset_of(lower, upper);
    r.rtt = min_rtt;
    if r.stop.is_none() && r.error.is_none() {
        let why = if said_error {
            "refused or failed before the run (its message is above)"
        } else {
            "ended without reporting how the run ended (no STOP)"
        };
        fail(&mut r, why.into());
    }
    s.shutdown();
    r
}

/// The clock offset (server − client, ns) and its uncertainty: the centre of the bounds
/// the TEXT stamps give, ± half their distance. Both bounds hold whatever the delays
/// (no assumption on how long a message took one way).
fn offset_of(lower: Option<i128>, upper: Option<i128>) -> Option<(i128, i128)> {
    let (lo, hi) = (lower?, upper?);
    let hi = hi.max(lo);
    Some(((lo + hi) / 2, (hi - lo + 1) / 2))
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
        // Stamp-arrival says >= -2 ms; stamp-sent says <= +8 ms.
        let (o, u) = offset_of(Some(-2_000_000), Some(8_000_000)).unwrap();
        assert_eq!((o, u), (3_000_000, 5_000_000));
        let (o, u) = offset_of(Some(0), Some(3)).unwrap();
        assert_eq!((o, u), (1, 2));
        // Crossed bounds (not expected) collapse on the lower one.
        assert_eq!(offset_of(Some(5), Some(1)), Some((5, 0)));
        assert_eq!(offset_of(None, Some(1)), None);
        assert_eq!(offset_of(Some(1), None), None);
    }

    #[test]
    fn status_line_sums_the_servers() {
        assert_eq!(states_of("R(2),w(1)"), vec!['R', 'R', 'w']);
        assert_eq!(states_of(""), Vec::<char>::new());
        let a = Eta {
            nr_running: 2,
            files_open: 2,
            rate: [1000, 0, 0],
            iops: [250, 0, 0],
            t_rate: [10 << 20, 0, 0],
            elapsed_sec: 4,
            eta_sec: 6,
            run_str: "R(2)".into(),
            ..Default::default()
        };
        let b = Eta {
            nr_running: 1,
            files_open: 1,
            rate: [0, 2000, 0],
            iops: [0, 500, 0],
            t_rate: [10 << 20, 0, 0],
            elapsed_sec: 3,
            eta_sec: 2,
            run_str: "w(1)".into(),
            ..Default::default()
        };
        assert_eq!(
            status_of(&[&a, &b]),
            "Jobs: 3 (f=3), 0B/s-20.0MiB/s: [R(2),w(1)][40.0%][r=1000KiB/s,w=2000KiB/s][r=250,w=500 IOPS][eta 00m:06s]"
        );
        // One server's ETA still unknown (fio's first 3 s): the jobs and limits only, as
        // fio draws a line without an ETA.
        let c = Eta {
            eta_sec: i32::MAX as u64,
            ..b.clone()
        };
        assert_eq!(status_of(&[&a, &c]), "Jobs: 3 (f=3), 0B/s-20.0MiB/s");
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
