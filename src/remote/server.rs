//! `flexio --server[=ADDR]`: a backend that fio 3.33's client (or flexio's) drives.
//!
//! One thread per connection (fio forks a process). A session collects job lines (JOBLINE),
//! job texts (JOB) and server-side job files (LOAD_FILE), checks each by parsing and
//! planning the whole set (START with cumulative counts, or an error TEXT and QUIT), runs
//! them on RUN through [`flexio_run::run_prepared`] while answering SEND_ETA from the
//! threads' live progress, and ends with the results as fio sends them (JOB_OPT, TS, GS,
//! DU), STOP and QUIT. A client's QUIT stops the jobs (the results of what ran are still
//! sent); a client that disconnects stops them too.

use super::auth::{self, ServerAuth, Token};
use super::confine::Policy;
use super::net::{Listener, Stream};
use flexio_job::cli::Remote;
use flexio_job::Format;
use flexio_remote::addr::Addr;
use flexio_remote::convert::wire_run_of;
use flexio_remote::msg::{Eta, ProbeReply, Start, Stop, Text, LOG_ERR, LOG_INFO};
use flexio_remote::{Decoder, Message, Sender};
use flexio_run::plan::ThreadPlan;
use flexio_run::progress::Progress;
use flexio_run::session::{self as app, Observer, Outcome, Prepared};
use flexio_run::signals::Signals;
use std::io::{Read, Write};
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Environment variable naming the pid file of a daemonized server (set for the
/// background process, which removes the file when it exits).
const DAEMON_PIDFILE_ENV: &str = "FLEXIO_DAEMON_PIDFILE";
/// Largest message a server accepts (job texts are small; fio allows 2 GiB).
const MAX_CLIENT_MESSAGE: u64 = 4 << 20;

/// Connections served at once; more are refused with a message.
const MAX_SESSIONS: usize = 128;
/// A client must have sent its jobs and RUN this soon after connecting.
const SETUP_DEADLINE: Duration = Duration::from_secs(60);
/// A client must have sent its first bytes (the fio PROBE or the flexio hello) this soon.
const FIRST_BYTES: Duration = Duration::from_secs(10);

/// What the server lets in and what remote jobs may do.
struct Rules {
    policy: Policy,
    auth: ServerAuth,
    allow_fio_clients: bool,
    /// Sessions open now.
    sessions: AtomicUsize,
    /// Set while a run is in progress (one at a time, as fio's server).
    running: AtomicBool,
    /// Fuzzing: RUN is checked but answered without running anything.
    dry_run: bool,
}

/// Entry point of `--server`; returns the exit status.
pub fn main(remote: &Remote, sigs: &(Arc<AtomicBool>, Signals)) -> i32 {
    let addr = remote.server.as_ref().and_then(|a| a.as_deref());
    let a = match Addr::parse(addr) {
        Ok(a) => a,
        Err(e) => {
            eprintln!("flexio: --server: {e}");
            return 1;
        }
    };
    let sec = &remote.security;
    let auth = match ServerAuth::load(sec) {
        Ok(a) => a,
        Err(e) => {
            eprintln!("flexio: {e}");
            return 1;
        }
    };
    let policy = match Policy::from_switches(sec) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("flexio: --server: {e}");
            return 1;
        }
    };
    if let Some(pidfile) = remote.daemonize.as_deref() {
        if cfg!(target_os = "rtems") {
            eprintln!(
                "flexio: --server: --daemonize is not supported by flexio on RTEMS: RTEMS has \
                 no processes to start the server in"
            );
            return 1;
        }
        if std::env::var_os(DAEMON_PIDFILE_ENV).is_none() {
            return spawn_daemon(pidfile);
        }
    }
    // Relative names in remote jobs are under the root.
    if let Err(e) = std::env::set_current_dir(&policy.root) {
        eprintln!(
            "flexio: --server: cannot work in {}: {e}",
            policy.root.display()
        );
        return 1;
    }
    let listener = match Listener::bind(&a) {
        Ok(l) => l,
        Err(e) => {
            eprintln!("flexio: --server: cannot listen on {}: {e}", a.name());
            return 1;
        }
    };
    if listener.local_only() {
        outln!(
            "fio: server listening on {} (this host only; name an address to listen on others, e.g. --server=0.0.0.0)",
            listener.describe()
        );
    } else {
        outln!("fio: server listening on {}", listener.describe());
    }
    let _ = std::io::stdout().flush();
    let rules = Arc::new(Rules {
        policy,
        auth,
        allow_fio_clients: sec.allow_fio_clients,
        sessions: AtomicUsize::new(0),
        running: AtomicBool::new(false),
        dry_run: false,
    });
    eprintln!("flexio: server: {}", rules.describe());
    let terminate = sigs.0.clone();
    while !terminate.load(Ordering::Relaxed) {
        match listener.accept() {
            Ok(Some(s)) => {
                if rules.sessions.fetch_add(1, Ordering::SeqCst) >= MAX_SESSIONS {
                    rules.sessions.fetch_sub(1, Ordering::SeqCst);
                    refuse_plain(
                        s,
                        &format!(
                            "the server is serving {MAX_SESSIONS} connections; try again later"
                        ),
                        false,
                    );
                    continue;
                }
                let sig = sigs.1.clone();
                let term = terminate.clone();
                let rules2 = rules.clone();
                let started = std::thread::Builder::new()
                    .name("flexio-session".into())
                    .spawn(move || {
                        session(s, sig, term, &rules2);
                        rules2.sessions.fetch_sub(1, Ordering::SeqCst);
                    });
                if started.is_err() {
                    rules.sessions.fetch_sub(1, Ordering::SeqCst);
                }
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(50)),
            Err(e) => {
                eprintln!("flexio: --server: accept failed: {e}");
                std::thread::sleep(Duration::from_millis(100));
            }
        }
    }
    if let Some(p) = std::env::var_os(DAEMON_PIDFILE_ENV) {
        let _ = std::fs::remove_file(p);
    }
    0
}

impl Rules {
    /// The startup summary of what is refused and allowed.
    fn describe(&self) -> String {
        let p = &self.policy;
        let mut parts = vec![format!("remote jobs use files under {}", p.root.display())];
        parts.push(if p.allow_exec {
            "may run programs (--allow-exec)".into()
        } else {
            "may not run programs (--allow-exec allows it)".into()
        });
        parts.push(if p.allow_net {
            "may use the network (--allow-net)".into()
        } else {
            "may not use the network (--allow-net allows it)".into()
        });
        parts.push(if p.devices.is_empty() {
            "may use no device (--allow-device=PATH allows one)".into()
        } else {
            format!(
                "may use the devices {}",
                p.devices
                    .iter()
                    .map(|d| d.display().to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        });
        let how = match (&self.auth.tls, &self.auth.token) {
            (Some(t), None) if t.verifies_clients() => "TLS with a client certificate",
            (Some(t), Some(_)) if t.verifies_clients() => {
                "TLS with a client certificate or the token"
            }
            (Some(_), _) => "TLS and the token",
            (None, Some(_)) => "the token",
            (None, None) => "",
        };
        let auth = match (how.is_empty(), self.allow_fio_clients) {
            (false, false) => format!("flexio clients on other hosts must authenticate with {how}"),
            (false, true) => format!("flexio clients on other hosts authenticate with {how}; fio clients are accepted unauthenticated (--allow-fio-clients)"),
            (true, false) => "clients on other hosts are refused (--auth-token-file, --tls-* or --allow-fio-clients lets them in)".into(),
            (true, true) => "clients on other hosts are accepted unauthenticated (--allow-fio-clients)".into(),
        };
        parts.push(auth);
        parts.join("; ")
    }
}

/// Tell a plain fio-protocol client why it is refused (TEXT and QUIT, which fio's client
/// prints), then close.
fn refuse_plain(stream: Stream, why: &str, drain: bool) {
    eprintln!("flexio: server: refused {}: {why}", stream.peer_name());
    let _ = stream.set_write_timeout(Some(Duration::from_secs(2)));
    let w: Writer = Arc::new(Mutex::new(stream));
    send_lines(&w, LOG_ERR, &format!("flexio server: {why}\n"));
    send(&w, &Message::Quit, 0);
    // Let the client read that before the connection goes: closing at once would make a
    // client still sending its jobs fail on its write (fio dies of SIGPIPE, unprinted).
    // What it sends meanwhile is discarded, for 2 s at most.
    if let Ok(mut s) = w.lock() {
        let until = Instant::now() + Duration::from_secs(if drain { 2 } else { 0 });
        let _ = s.set_read_timeout(Some(Duration::from_millis(100)));
        let mut sink = [0u8; 4096];
        while Instant::now() < until {
            match s.read(&mut sink) {
                Ok(0) => break,
                Ok(_) => {}
                Err(e)
                    if matches!(
                        e.kind(),
                        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                    ) => {}
                Err(_) => break,
            }
        }
        s.shutdown();
    };
}

/// Fuzzing and tests: serve `input` as the bytes one client connection sends, on a socket
/// pair, under the default rules rooted at `root` (with `token` as the server's token),
/// RUN checked but answered without running anything. Returns what the server sent.
#[doc(hidden)]
pub fn serve_bytes(input: &[u8], root: &Path, token: Option<Token>) -> Vec<u8> {
    let (ours, theirs) = match std::os::unix::net::UnixStream::pair() {
        Ok(p) => p,
        Err(_) => return Vec::new(),
    };
    let rules = Rules {
        policy: Policy {
            root: root.to_path_buf(),
            allow_exec: false,
            allow_net: false,
            devices: Vec::new(),
        },
        auth: ServerAuth { token, tls: None },
        allow_fio_clients: false,
        sessions: AtomicUsize::new(0),
        running: AtomicBool::new(false),
        dry_run: true,
    };
    let mut client = theirs;
    let mut reader = match client.try_clone() {
        Ok(r) => r,
        Err(_) => return Vec::new(),
    };
    let drain = std::thread::spawn(move || {
        let mut out = Vec::new();
        let _ = reader.read_to_end(&mut out);
        out
    });
    let input = input.to_vec();
    let feed = std::thread::spawn(move || {
        let _ = client.write_all(&input);
        let _ = client.shutdown(std::net::Shutdown::Write);
    });
    session(
        Stream::Unix(ours),
        Signals::default(),
        Arc::new(AtomicBool::new(false)),
        &rules,
    );
    let _ = feed.join();
    drain.join().unwrap_or_default()
}

/// `--daemonize=PIDFILE`: start the server again in the background (own process group,
/// standard streams on /dev/null), write its pid to PIDFILE and return.
fn spawn_daemon(pidfile: &str) -> i32 {
    let path = Path::new(pidfile);
    if path.exists() {
        match std::fs::read_to_string(path) {
            Ok(t) => {
                let live = t
                    .trim()
                    .parse::<u32>()
                    .is_ok_and(|pid| Path::new(&format!("/proc/{pid}")).exists());
                if live {
                    eprintln!(
                        "flexio: --daemonize: pid file {pidfile} names a running process ({}); not starting another server",
                        t.trim()
                    );
                    return 1;
                }
            }
            Err(e) => {
                eprintln!("flexio: --daemonize: cannot read existing pid file {pidfile}: {e}");
                return 1;
            }
        }
    }
    let abs = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    let exe = match std::env::current_exe() {
        Ok(e) => e,
        Err(e) => {
            eprintln!("flexio: --daemonize: cannot find the flexio executable: {e}");
            return 1;
        }
    };
    let mut cmd = std::process::Command::new(exe);
    // The same switches (the environment tells the copy not to daemonize again).
    cmd.args(std::env::args_os().skip(1))
        .env(DAEMON_PIDFILE_ENV, &abs)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
    match cmd.spawn() {
        Ok(child) => {
            if let Err(e) =
                flexio_run::notes::write_atomic(&abs, format!("{}\n", child.id()).as_bytes())
            {
                eprintln!("flexio: --daemonize: cannot write pid file {pidfile}: {e}");
                return 1;
            }
            0
        }
        Err(e) => {
            eprintln!("flexio: --daemonize: cannot start the server: {e}");
            1
        }
    }
}

type Writer = Arc<Mutex<Stream>>;

fn send(w: &Writer, m: &Message, tag: u64) -> bool {
    let frames = m.to_frames(tag);
    match w.lock() {
        Ok(mut s) => s.write_all(&frames).and_then(|_| s.flush()).is_ok(),
        Err(_) => false,
    }
}

fn text(level: u32, s: &str) -> Message {
    let (sec, usec) = super::wall_now();
    Message::Text(Text {
        level,
        log_sec: sec,
        log_usec: usec,
        text: s.to_string(),
    })
}

/// Send text one line per TEXT (the client prefixes each with the server's name).
fn send_lines(w: &Writer, level: u32, s: &str) -> bool {
    s.split_inclusive('\n').all(|l| send(w, &text(level, l), 0))
}

/// The run's hooks: the preamble goes to the client; the plans and progress are kept for
/// ETA and SERVER_START.
struct Events {
    /// The connection to the client.
    client: Writer,
    run: Mutex<Option<LiveRun>>,
}

/// A running job set: its plans and the threads' live progress.
type LiveRun = (Vec<ThreadPlan>, Arc<Vec<Progress>>);

impl Observer for Events {
    fn text(&self, s: &str) {
        send_lines(&self.client, LOG_INFO, s);
    }
    fn running(&self, plans: &[ThreadPlan], progress: &Arc<Vec<Progress>>) {
        if let Ok(mut r) = self.run.lock() {
            *r = Some((plans.to_vec(), progress.clone()));
        }
    }
}

/// A job source of the session, in arrival order.
enum Source {
    /// JOB: text under a name of its own.
    Text(String, String),
    /// LOAD_FILE: a path on this host.
    Path(String),
}

#[derive(Default)]
struct Jobs {
    /// JOBLINE arguments (without argv[0]).
    args: Vec<String>,
    sources: Vec<Source>,
    /// `unique_filename`: what goes before the file names the jobs generate (the client's
    /// address, as fio writes it).
    client_prefix: Option<String>,
    /// The server's rules: files read for the client (LOAD_FILE, `include`) are confined.
    policy: Option<Policy>,
}

/// fio's `unique_filename` prefix for a connection: the client's IP address; on a Unix
/// socket fio reads the address where an IPv4 one would be (bytes 2 to 5 of the socket's
/// path), which flexio writes the same way so both tools name the files alike.
fn client_prefix(stream: &Stream) -> Option<String> {
    match stream {
        Stream::Tcp(s) => s.peer_addr().ok().map(|a| a.ip().to_string()),
        Stream::Unix(s) => {
            let path = s.local_addr().ok()?.as_pathname()?.to_path_buf();
            let b = path.as_os_str().as_encoded_bytes();
            let at = |i: usize| b.get(i).copied().unwrap_or(0);
            Some(format!("{}.{}.{}.{}", at(2), at(3), at(4), at(5)))
        }
        #[cfg(feature = "tls")]
        Stream::Tls(t) => client_prefix(t.raw()),
    }
}

/// `unique_filename` (fio's default): on a server, file names a job generates (no
/// `filename`) start with the client's address and a dot.
fn unique_filenames(set: &mut flexio_job::JobSet, prefix: &str) {
    for j in &mut set.jobs {
        let o = &mut j.opts;
        if o.unique_filename && o.filename.is_none() && o.opendir.is_none() {
            o.filename_format = format!("{prefix}.{}", o.filename_format);
        }
    }
}

impl Jobs {
    fn prepare(&self) -> Result<Prepared, String> {
        let mut args = self.args.clone();
        args.extend(self.sources.iter().map(|s| match s {
            Source::Text(n, _) => n.clone(),
            Source::Path(p) => p.clone(),
        }));
        let read = |p: &Path| -> std::io::Result<Vec<u8>> {
            for s in &self.sources {
                if let Source::Text(n, t) = s {
                    if Path::new(n) == p {
                        return Ok(t.clone().into_bytes());
                    }
                }
            }
            match &self.policy {
                Some(rules) => rules.read(p),
                None => std::fs::read(p),
            }
        };
        match &self.client_prefix {
            Some(prefix) => app::prepare_with(&args, &read, &|set| unique_filenames(set, prefix)),
            None => app::prepare(&args, &read),
        }
    }
}

/// fio's START counts: jobs (clones included) and reports (one per job without
/// group_reporting, one per run of consecutive group_reporting jobs of a group).
fn start_counts(plans: &[ThreadPlan]) -> Start {
    let mut reports = 0;
    let mut last: Option<(u32, bool)> = None;
    for p in plans.iter().filter(|p| p.stats_enabled) {
        let gr = p.control.group_reporting;
        if !matches!(last, Some((g, lgr)) if gr && lgr && g == p.groupid) {
            reports += 1;
        }
        last = Some((p.groupid, gr));
    }
    Start {
        jobs: plans.len() as u32,
        stat_outputs: reports,
    }
}

/// Live status for SEND_ETA.
struct EtaState {
    start: Instant,
    last_t: Instant,
    last_bytes: [u64; 3],
    last_ios: [u64; 3],
}

fn eta_of(ev: &Events, st: &mut EtaState) -> Eta {
    let guard = ev.run.lock();
    let Some((plans, progress)) = guard.as_ref().ok().and_then(|g| g.as_ref()) else {
        return Eta::default();
    };
    let states: Vec<char> = progress.iter().map(|p| p.state_char()).collect();
    let mut e = Eta {
        nr_running: states
            .iter()
            .filter(|c| !matches!(c, '_' | 'P' | 'I'))
            .count() as u32,
        nr_pending: states.iter().filter(|c| **c == 'P').count() as u32,
        nr_setting_up: states.iter().filter(|c| **c == 'I').count() as u32,
        nr_ramp: states.iter().filter(|c| **c == '/').count() as u32,
        files_open: progress
            .iter()
            .map(|p| p.files.load(Ordering::Relaxed))
            .sum(),
        nr_threads: plans.len() as u32,
        is_pow2: 1,
        unit_base: 0,
        sig_figs: plans.first().map(|p| p.report.sig_figs).unwrap_or(4),
        run_str: flexio_output::status::run_string(&states),
        ..Eta::default()
    };
    let mut bytes = [0u64; 3];
    let mut ios = [0u64; 3];
    for p in progress.iter() {
        for d in 0..3 {
            bytes[d] += p.bytes[d].load(Ordering::Relaxed);
            ios[d] += p.ios[d].load(Ordering::Relaxed);
        }
    }
    let dt = st.last_t.elapsed().as_secs_f64().max(1e-3);
    for d in 0..3 {
        e.rate[d] = (bytes[d].saturating_sub(st.last_bytes[d]) as f64 / dt / 1024.0) as u64;
        e.iops[d] = (ios[d].saturating_sub(st.last_ios[d]) as f64 / dt) as u32;
    }
    for (p, s) in plans.iter().zip(&states) {
        if !matches!(s, '_' | 'P' | 'E') {
            let r = p.control.rate_sums;
            e.m_rate[0] += r[0];
            e.t_rate[0] += r[1];
            e.m_iops[0] = e.m_iops[0].saturating_add(r[2] as u32);
            e.t_iops[0] = e.t_iops[0].saturating_add(r[3] as u32);
        }
    }
    st.last_t = Instant::now();
    st.last_bytes = bytes;
    st.last_ios = ios;
    let elapsed = st.start.elapsed().as_millis().div_ceil(1000) as u64;
    e.elapsed_sec = elapsed;
    e.eta_sec = if elapsed < 3 {
        i32::MAX as u64
    } else {
        flexio_run::status::estimate(plans, progress, elapsed).unwrap_or(0)
    };
    e
}

fn hostname() -> String {
    flexio_engine::os::system::uname()
        .nodename()
        .to_string_lossy()
        .into_owned()
}

/// The results of a finished run as fio sends them, then STOP and QUIT.
fn send_results(w: &Writer, out: &Outcome, normal: bool) -> bool {
    if let Some(rep) = &out.report {
        let wr = wire_run_of(&out.results, rep, out.disk_msec);
        for o in wr.global_opts {
            send(w, &Message::JobOpt(o), 0);
        }
        for (opts, ts) in wr.reports {
            for o in opts {
                send(w, &Message::JobOpt(o), 0);
            }
            send(w, &Message::Ts(Box::new(ts)), 0);
        }
        for g in wr.groups {
            send(w, &Message::Gs(g), 0);
        }
        for d in wr.disks {
            send(w, &Message::Du(d), 0);
        }
        if normal {
            send(w, &text(LOG_INFO, "\n"), 0);
        }
    }
    let stop = Stop {
        error: out.code.max(0) as u32,
        signal: 0,
    };
    send(w, &Message::Stop(stop), 0) && send(w, &Message::Quit, 0)
}

enum Phase {
    Parsing,
    Running(std::thread::JoinHandle<Outcome>),
    Done(Instant),
}

/// Serve one connection until the client closes it (or, after the run, for at most 30 s).
fn session(mut stream: Stream, sigs: Signals, server_stop: Arc<AtomicBool>, rules: &Rules) {
    // The first bytes: the flexio hello, or a fio-protocol client's PROBE.
    let _ = stream.set_read_timeout(Some(FIRST_BYTES));
    let _ = stream.set_write_timeout(Some(FIRST_BYTES));
    let mut first = [0u8; 8];
    let mut got = 0;
    while got < first.len() {
        match stream.read(&mut first[got..]) {
            Ok(0) | Err(_) => return,
            Ok(n) => got += n,
        }
    }
    let local = stream.peer_is_local();
    if &first == auth::HELLO {
        let peer = stream.peer_name();
        stream = match auth::serve(stream, &rules.auth) {
            Ok(s) => s,
            Err(why) => {
                eprintln!("flexio: server: refused {peer}: {why}");
                return;
            }
        };
    } else if !local && !rules.allow_fio_clients {
        let a = &rules.auth;
        let why = if a.token.is_some() || a.tls.is_some() {
            let how = if a.tls.is_some() {
                "--tls-ca/--tls-cert"
            } else {
                "--auth-token-file"
            };
            format!("refusing an unauthenticated client from {}: connect with flexio {how} (or start the server with --allow-fio-clients to accept fio clients, unauthenticated)", stream.peer_name())
        } else {
            format!("refusing a client from {}: this server takes clients from other hosts only with --auth-token-file or --tls-*, or unauthenticated with --allow-fio-clients", stream.peer_name())
        };
        refuse_plain(stream, &why, true);
        return;
    }
    let connected = Instant::now();
    let peer = match stream.try_clone() {
        Ok(r) => r,
        Err(e) => {
            eprintln!("flexio: server: {e}");
            return;
        }
    };
    let _ = stream.set_write_timeout(Some(Duration::from_secs(30)));
    let w: Writer = Arc::new(Mutex::new(stream));
    let mut reader = peer;
    // Short: SERVER_START and the results leave within 10 ms of the run's start and end
    // (the client places each host's run by their arrival).
    let _ = reader.set_read_timeout(Some(Duration::from_millis(10)));
    let mut dec = Decoder::with_limit(MAX_CLIENT_MESSAGE);
    if &first != auth::HELLO {
        dec.push(&first);
    }
    let mut jobs = Jobs {
        policy: Some(rules.policy.clone()),
        client_prefix: client_prefix(&w.lock().unwrap_or_else(|e| e.into_inner())),
        ..Jobs::default()
    };
    let mut normal = true;
    let ev = Arc::new(Events {
        client: w.clone(),
        run: Mutex::new(None),
    });
    let stop_run = Arc::new(AtomicBool::new(false));
    let mut phase = Phase::Parsing;
    let mut started: Vec<bool> = Vec::new();
    let mut eta = EtaState {
        start: Instant::now(),
        last_t: Instant::now(),
        last_bytes: [0; 3],
        last_ios: [0; 3],
    };
    let mut buf = vec![0u8; 64 << 10];
    let mut fatal: Option<String> = None;
    let mut holds_slot = false;
    'conn: loop {
        if matches!(phase, Phase::Parsing) && connected.elapsed() > SETUP_DEADLINE {
            fatal = Some(format!(
                "no RUN within {} s of connecting; closing the connection",
                SETUP_DEADLINE.as_secs()
            ));
            break;
        }
        match reader.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => dec.push(&buf[..n]),
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock
                        | std::io::ErrorKind::TimedOut
                        | std::io::ErrorKind::Interrupted
                ) => {}
            Err(_) => break,
        }
        loop {
            let raw = match dec.next_message() {
                Ok(Some(r)) => r,
                Ok(None) => break,
                Err(e) => {
                    fatal = Some(e.to_string());
                    break 'conn;
                }
            };
            let msg = match Message::decode(&raw, Sender::Client) {
                Ok(m) => m,
                Err(e) => {
                    fatal = Some(e.to_string());
                    break 'conn;
                }
            };
            match msg {
                Message::Probe(_) => {
                    let reply = ProbeReply {
                        hostname: hostname(),
                        bigendian: u8::from(cfg!(target_endian = "big")),
                        fio_version: app::VERSION.to_string(),
                        os: 1,
                        arch: if cfg!(target_arch = "x86_64") {
                            1
                        } else if cfg!(target_arch = "aarch64") {
                            13
                        } else {
                            14
                        },
                        bpp: std::mem::size_of::<usize>() as u8,
                        cpus: flexio_engine::sys::cpus_configured().min(u32::MAX as u64) as u32,
                        flags: 0,
                    };
                    send(&w, &Message::ProbeReply(reply), raw.tag);
                }
                Message::JobLine(jl) => {
                    let args: Vec<String> = jl.args.into_iter().skip(1).collect();
                    match flexio_job::parse_args(&args, &flexio_engine::CATALOG) {
                        Ok(c) => {
                            normal = c.switches.formats.contains(&Format::Normal);
                            jobs.args.extend(args);
                            let s = match jobs.prepare() {
                                Ok(p) => start_counts(&p.plans),
                                Err(_) => Start {
                                    jobs: 0,
                                    stat_outputs: 0,
                                },
                            };
                            send(&w, &Message::Start(s), 0);
                        }
                        Err(e) => {
                            fatal = Some(format!("bad job line from the client: {e}"));
                            break 'conn;
                        }
                    }
                }
                Message::Job(j) => {
                    let name = format!("client-job-{}.fio", jobs.sources.len() + 1);
                    jobs.sources.push(Source::Text(name, j.text));
                    if !accept_job(&w, &jobs, normal) {
                        fatal = Some(String::new());
                        break 'conn;
                    }
                }
                Message::LoadFile(lf) => {
                    jobs.sources.push(Source::Path(lf.path.clone()));
                    if !accept_job(&w, &jobs, normal) {
                        fatal = Some(String::new());
                        break 'conn;
                    }
                }
                Message::Run => {
                    if !matches!(phase, Phase::Parsing) {
                        continue;
                    }
                    let prep = match jobs.prepare() {
                        Ok(p) => p,
                        Err(e) => {
                            fatal = Some(format!("RUN without a runnable job: {e}"));
                            break 'conn;
                        }
                    };
                    let refused = rules.policy.check(&prep);
                    if !refused.is_empty() {
                        fatal = Some(format!("refused:\n  {}", refused.join("\n  ")));
                        break 'conn;
                    }
                    if rules.dry_run {
                        let stop = Stop {
                            error: 0,
                            signal: 0,
                        };
                        send(&w, &Message::Stop(stop), 0);
                        send(&w, &Message::Quit, 0);
                        break 'conn;
                    }
                    if rules
                        .running
                        .compare_exchange(false, true, Ordering::SeqCst, Ordering::SeqCst)
                        .is_err()
                    {
                        fatal = Some("busy: another client's run is in progress (one run at a time); try again when it has ended".into());
                        break 'conn;
                    }
                    holds_slot = true;
                    started = vec![false; prep.plans.len()];
                    eta.start = Instant::now();
                    let ev2 = ev.clone();
                    let stop = stop_run.clone();
                    let sigs = sigs.clone();
                    let h = std::thread::Builder::new()
                        .name("flexio-run".into())
                        .spawn(move || app::run_prepared(prep, &*ev2, stop, sigs));
                    match h {
                        Ok(h) => phase = Phase::Running(h),
                        Err(e) => {
                            fatal = Some(format!("cannot start the run: {e}"));
                            break 'conn;
                        }
                    }
                }
                Message::SendEta => {
                    let e = eta_of(&ev, &mut eta);
                    send(&w, &Message::Eta(e), raw.tag);
                }
                Message::Quit => stop_run.store(true, Ordering::Relaxed),
                Message::Exit => break 'conn,
                Message::VTrigger(t) => {
                    // The client's trigger fired (--trigger-remote): as fio's server, reply
                    // with the jobs' verify state (flexio's server keeps it in its own
                    // state files: none on the wire), stop the jobs and run the command
                    // (with --allow-exec).
                    let reply = flexio_remote::vstate::VTriggerReply::default();
                    send(&w, &Message::VTriggerReply(reply), 0);
                    stop_run.store(true, Ordering::Relaxed);
                    if !t.command.is_empty() {
                        if rules.policy.allow_exec {
                            flexio_run::trigger::exec(&t.command);
                        } else {
                            let m = "flexio server: --trigger-remote: the jobs were stopped, but the command was not run: this server does not run programs for clients (start it with --allow-exec)\n";
                            send(&w, &text(LOG_ERR, m), 0);
                        }
                    }
                }
                other => {
                    let m = format!(
                        "flexio server: {} is not supported by flexio's server; ignored",
                        other.opcode().name()
                    );
                    send(&w, &text(LOG_ERR, &format!("{m}\n")), 0);
                }
            }
        }
        if server_stop.load(Ordering::Relaxed) {
            stop_run.store(true, Ordering::Relaxed);
        }
        // SERVER_START once per job thread as it starts.
        if let Ok(r) = ev.run.lock() {
            if let Some((_, progress)) = r.as_ref() {
                for (i, p) in progress.iter().enumerate() {
                    if !started.get(i).copied().unwrap_or(true)
                        && p.tid.load(Ordering::Relaxed) != 0
                    {
                        started[i] = true;
                        send(&w, &Message::ServerStart, 0);
                    }
                }
            }
        }
        if matches!(&phase, Phase::Running(h) if h.is_finished()) {
            if let Phase::Running(h) = std::mem::replace(&mut phase, Phase::Done(Instant::now())) {
                let joined = h.join();
                if holds_slot {
                    rules.running.store(false, Ordering::SeqCst);
                    holds_slot = false;
                }
                match joined {
                    Ok(out) => {
                        send_results(&w, &out, normal);
                    }
                    Err(_) => {
                        fatal = Some("the run failed (internal error)".into());
                        break 'conn;
                    }
                }
            }
        }
        if matches!(&phase, Phase::Done(t) if t.elapsed() > Duration::from_secs(30)) {
            break;
        }
    }
    if let Some(m) = fatal.filter(|m| !m.is_empty()) {
        eprintln!("flexio: server: {m}");
        send_lines(&w, LOG_ERR, &format!("flexio server: {m}\n"));
        send(&w, &Message::Quit, 0);
    }
    // A client gone mid-run stops the jobs (fio's would run on unseen).
    stop_run.store(true, Ordering::Relaxed);
    if let Phase::Running(h) = phase {
        let _ = h.join();
    }
    if holds_slot {
        rules.running.store(false, Ordering::SeqCst);
    }
    if let Ok(s) = w.lock() {
        s.shutdown();
    };
}

/// A new job source: parse and plan everything so far; START with the cumulative counts
/// and the job header lines, or the error as TEXT and QUIT (false).
fn accept_job(w: &Writer, jobs: &Jobs, normal: bool) -> bool {
    let prepared = jobs.prepare().and_then(|p| {
        let refused = jobs
            .policy
            .as_ref()
            .map(|r| r.check(&p))
            .unwrap_or_default();
        if refused.is_empty() {
            Ok(p)
        } else {
            Err(format!(
                "refused by the server:\n  {}",
                refused.join("\n  ")
            ))
        }
    });
    match prepared {
        Ok(p) => {
            for warn in &p.set.warnings {
                send(w, &text(LOG_ERR, &format!("flexio: warning: {warn}\n")), 0);
            }
            if normal {
                send_lines(w, LOG_INFO, &app::job_headers(&p.plans));
            }
            send(w, &Message::Start(start_counts(&p.plans)), 0)
        }
        Err(e) => {
            send_lines(w, LOG_ERR, &format!("flexio: {e}\n"));
            send(w, &Message::Quit, 0);
            false
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plans(text: &str) -> Vec<ThreadPlan> {
        let jobs = Jobs {
            args: Vec::new(),
            sources: vec![Source::Text("t.fio".into(), text.into())],
            client_prefix: None,
            policy: None,
        };
        jobs.prepare().unwrap().plans
    }

    #[test]
    fn start_counts_jobs_and_reports_as_fio() {
        let s = start_counts(&plans(
            "[global]\nioengine=null\nsize=1m\n[a]\nnumjobs=3\ngroup_reporting\n[b]\nnumjobs=2\n[c]\nstats=0\n",
        ));
        // a: 3 jobs, one report; b: 2 jobs, 2 reports; c: no report.
        assert_eq!((s.jobs, s.stat_outputs), (6, 3));
    }

    #[test]
    fn a_bad_job_text_is_an_error_naming_its_line() {
        let jobs = Jobs {
            args: Vec::new(),
            sources: vec![Source::Text(
                "client-job-1.fio".into(),
                "[a]\nrw=sideways\n".into(),
            )],
            client_prefix: None,
            policy: None,
        };
        let e = jobs.prepare().err().expect("an error");
        assert!(e.contains("client-job-1.fio:2"), "{e}");
    }
}
