//! `mpirun -np N [--hostfile H] flexio --mpi JOB` (or `srun`): the job on every rank, one
//! merged result printed by rank 0 (cargo feature `mpi`).
//!
//! * Files: a job that names its file (`filename=`) shares it, each rank on its own segment
//!   of it (rank r at `offset + r * size`, as IOR's segmented shared file; rank 0 lays the
//!   whole file out first); otherwise every rank gets its own files (`<name>.rank<r>`).
//! * A barrier before each reporting group (stonewall segment) keeps the ranks in step.
//!   A rank whose run stopped early (exitall, a trigger, a failed setup) still joins the
//!   barriers of the segments it did not run, so no rank waits for it.
//! * `--mpi-stonewall`: a rank whose jobs of a segment ended tells the others, which stop
//!   theirs at once (IOR's stonewalling), so every rank's numbers cover the same window.
//! * Results: each rank encodes its run as a fio server would send it (JOB_OPT, TS, GS, DU,
//!   STOP frames), with its start and end stamps and its progress samples, and sends the
//!   bytes to rank 0, which presents them as the client does ([`super::present`]): "All
//!   clients" merged losslessly, per-rank runtimes and straggle, windows placed by the
//!   ranks' own stamps shifted by their measured clock offsets.
//! * Clock offsets: rank 0 measures each rank's wall clock with ping-pongs (the shortest
//!   round trip of a few).
//! * Liveness: every MPI wait is non-blocking. Ranks send rank 0 a heartbeat every second
//!   and rank 0 sends each rank one. A rank silent for [`LIVENESS`] while others wait (at a
//!   barrier, for its results) or run is given up on: rank 0 names it, tells the other
//!   ranks to stop (they send the results of what ran), prints what it has marked partial,
//!   and aborts the job. A rank that no longer hears rank 0 aborts naming rank 0. A rank
//!   that dies outright ends the job through mpirun, which names it.
//!
//! MPI is called from the main thread only (MPI_THREAD_FUNNELED); the run itself goes on
//! in a thread whose barrier requests the main thread carries out.

/// One line on stderr in one write: the ranks share mpirun's pipe, and a line written in
/// pieces (as `eprintln!` writes its arguments) interleaves with another rank's.
macro_rules! say {
    ($($t:tt)*) => {{
        use std::io::Write as _;
        let mut line = format!($($t)*);
        line.push('\n');
        let _ = std::io::stderr().lock().write_all(line.as_bytes());
    }};
}

use super::hosts::{HostResult, Shared};
use flexio_job::{Cli, Format};
use flexio_remote::convert::wire_run_of;
use flexio_remote::msg::Stop;
use flexio_remote::{Decoder, Message, Sender};
use flexio_run::plan::ThreadPlan;
use flexio_run::progress::Progress;
use flexio_run::session::{self as app, Observer};
use flexio_run::signals::Signals;
use mpi::collective::SystemOperation;
use mpi::point_to_point::MatchedReceiveVec;
use mpi::request::StaticScope;
use mpi::topology::SimpleCommunicator;
use mpi::traits::*;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// A rank (or rank 0, seen from a rank) silent this long while others wait has failed.
pub const LIVENESS: Duration = Duration::from_secs(10);
/// Heartbeat cadence.
const BEAT: Duration = Duration::from_secs(1);
/// Progress samples: this often (doubled whenever [`MAX_SAMPLES`] is reached).
const SAMPLE_EVERY: Duration = Duration::from_millis(200);
const MAX_SAMPLES: usize = 20_000;

/// Message tags (clear of the default tag 0 used before the run).
const TAG_BEAT: mpi::Tag = 900;
/// Rank 0 to the others: stop the run now (a rank failed), send what ran.
const TAG_STOP: mpi::Tag = 901;
/// A rank's results to rank 0.
const TAG_RESULT: mpi::Tag = 902;
/// "This rank ended segment `seg`" is `TAG_ENDED + seg`.
const TAG_ENDED: mpi::Tag = 1000;

/// This process's wall clock (ns), shifted by the test-only skew.
fn wall_ns() -> i64 {
    let t = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as i64)
        .unwrap_or(0);
    t + super::test_skew_ns()
}

/// What the run thread asks of the main thread, which alone calls MPI.
enum Ask {
    /// A segment is about to start: a barrier, answered on `done`.
    Barrier(usize),
    /// This rank's jobs of the segment ended (`--mpi-stonewall`: tell the other ranks).
    Ended(usize),
}

/// The run's hooks: rank 0 prints the preamble; each segment start asks the main thread
/// for a barrier and waits for it; with `--mpi-stonewall` a segment stops once another
/// rank has ended it (`stop_seg`, set by the main thread); the threads' progress is handed
/// to the main thread, which samples it.
struct Events {
    rank: i32,
    ask: Mutex<mpsc::Sender<Ask>>,
    done: Mutex<mpsc::Receiver<()>>,
    stonewall: bool,
    stop_seg: Arc<AtomicI64>,
    progress: Arc<Mutex<Option<Arc<Vec<Progress>>>>>,
}

impl Observer for Events {
    fn text(&self, s: &str) {
        if self.rank == 0 {
            out!("{s}");
        }
    }
    fn running(&self, _: &[ThreadPlan], progress: &Arc<Vec<Progress>>) {
        if let Ok(mut p) = self.progress.lock() {
            *p = Some(progress.clone());
        }
    }
    fn segment_starts(&self, segment: usize) {
        if let (Ok(a), Ok(d)) = (self.ask.lock(), self.done.lock()) {
            if a.send(Ask::Barrier(segment)).is_ok() {
                let _ = d.recv();
            }
        }
    }
    fn segment_stop(&self, segment: usize) -> bool {
        self.stonewall && self.stop_seg.load(Ordering::Relaxed) >= segment as i64
    }
    fn segment_ends(&self, segment: usize) {
        if self.stonewall {
            if let Ok(a) = self.ask.lock() {
                let _ = a.send(Ask::Ended(segment));
            }
        }
    }
}

/// How many tasks the launcher says it started (mpirun, srun, a PMI/PMIx launcher), with
/// the variable that says so.
fn launcher_tasks() -> Option<(&'static str, u64)> {
    [
        "OMPI_COMM_WORLD_SIZE",
        "SLURM_STEP_NUM_TASKS",
        "PMI_SIZE",
        "PMIX_SIZE",
    ]
    .into_iter()
    .find_map(|v| Some((v, std::env::var(v).ok()?.trim().parse().ok()?)))
}

fn per_rank(p: &std::path::Path, rank: i32) -> PathBuf {
    let mut s = p.as_os_str().to_owned();
    s.push(format!(".rank{rank}"));
    PathBuf::from(s)
}

/// The main thread's side of the run: messages, heartbeats, liveness.
struct Ctl<'a> {
    world: &'a SimpleCommunicator,
    rank: i32,
    size: i32,
    names: Vec<String>,
    last_heard: Vec<Instant>,
    next_beat: Instant,
    /// The run is being stopped because a rank failed: barriers are skipped.
    stopping: bool,
    /// Set to stop this rank's run.
    run_term: Arc<AtomicBool>,
    stop_seg: Arc<AtomicI64>,
    /// Segments whose end this rank announced (`--mpi-stonewall`).
    ended_sent: Vec<bool>,
    stonewall: bool,
    /// Rank 0: each rank's results as they arrive, and the ranks given up on.
    results: Vec<Option<Vec<u8>>>,
    failed: Vec<Option<String>>,
}

impl Ctl<'_> {
    fn send(&self, to: i32, tag: mpi::Tag) {
        // One byte: small sends complete at once (eager), whatever the receiver does.
        self.world
            .process_at_rank(to)
            .send_with_tag(&[0u8][..], tag);
    }

    /// Heartbeats out, messages in, liveness.
    fn poll(&mut self) {
        let now = Instant::now();
        if now >= self.next_beat {
            self.next_beat = now + BEAT;
            if self.rank == 0 {
                // Not to ranks that delivered (they are finishing) or failed.
                for r in 1..self.size {
                    if self.failed[r as usize].is_none() && self.results[r as usize].is_none() {
                        self.send(r, TAG_BEAT);
                    }
                }
            } else {
                self.send(0, TAG_BEAT);
            }
        }
        while let Some(m) = self.world.any_process().immediate_matched_probe() {
            let (data, st) = m.matched_receive_vec::<u8>();
            let src = st.source_rank();
            if let Some(t) = self.last_heard.get_mut(src as usize) {
                *t = Instant::now();
            }
            match st.tag() {
                TAG_BEAT => {}
                TAG_STOP => self.stop(),
                TAG_RESULT => {
                    if let Some(r) = self.results.get_mut(src as usize) {
                        *r = Some(data);
                    }
                }
                t if t >= TAG_ENDED => {
                    self.stop_seg
                        .fetch_max((t - TAG_ENDED) as i64, Ordering::Relaxed);
                }
                _ => {}
            }
        }
        if self.rank == 0 {
            for r in 1..self.size as usize {
                if self.results[r].is_none()
                    && self.failed[r].is_none()
                    && self.last_heard[r].elapsed() > LIVENESS
                {
                    let why = format!("silent for {} s (hung or unreachable)", LIVENESS.as_secs());
                    say!(
                        "flexio: rank {r} ({}) is {why}; stopping the other ranks",
                        self.names[r]
                    );
                    self.failed[r] = Some(why);
                    if !self.stopping {
                        self.stop();
                        for o in 1..self.size {
                            if self.failed[o as usize].is_none() {
                                self.send(o, TAG_STOP);
                            }
                        }
                    }
                }
            }
        } else if self.last_heard[0].elapsed() > LIVENESS {
            say!(
                "flexio: rank {} ({}): rank 0 ({}) has been silent for {} s; giving up",
                self.rank,
                self.names[self.rank as usize],
                self.names[0],
                LIVENESS.as_secs()
            );
            let _ = std::io::Write::flush(&mut std::io::stdout());
            self.world.abort(1);
        }
    }

    fn stop(&mut self) {
        self.stopping = true;
        self.run_term.store(true, Ordering::Relaxed);
    }

    /// `--mpi-stonewall`: tell the other ranks this one ended `seg` (once).
    fn ended(&mut self, seg: usize) {
        if !self.stonewall {
            return;
        }
        if self.ended_sent.len() <= seg {
            self.ended_sent.resize(seg + 1, false);
        }
        if std::mem::replace(&mut self.ended_sent[seg], true) {
            return;
        }
        for r in (0..self.size).filter(|r| *r != self.rank) {
            self.send(r, TAG_ENDED + seg as mpi::Tag);
        }
    }

    /// A barrier for `seg` outside the run (a segment this rank's run did not reach).
    fn barrier(&mut self) {
        if self.stopping {
            return;
        }
        let mut req = self.world.immediate_barrier();
        loop {
            match req.test() {
                Ok(_) => return,
                Err(r) => req = r,
            }
            self.poll();
            if self.stopping {
                // The barrier cannot complete (a rank failed); the job ends by abort.
                std::mem::forget(req);
                return;
            }
            std::thread::sleep(Duration::from_millis(1));
        }
    }
}

/// Entry point of `--mpi`; returns this rank's exit status.
pub fn main(cli: Cli, sigs: &(Arc<AtomicBool>, Signals)) -> i32 {
    let Some((universe, _)) = mpi::initialize_with_threading(mpi::Threading::Funneled) else {
        say!("flexio: --mpi: MPI could not be initialised (run flexio under mpirun or srun)");
        return 1;
    };
    let world = universe.world();
    let rank = world.rank();
    let size = world.size();
    if let Some((var, n)) = launcher_tasks().filter(|(_, n)| *n > 1 && size == 1) {
        say!(
            "flexio: --mpi: MPI sees 1 rank, but the launcher started {n} tasks ({var}={n}): \
             the MPI library did not join the launcher's job, so every task would run alone \
             and use the same file names (under srun, try `srun --mpi=pmix`, or start \
             flexio with mpirun)"
        );
        return 1;
    }
    let host = flexio_engine::os::system::uname()
        .nodename()
        .to_string_lossy()
        .into_owned();
    let mut prep = app::prepare_cli(cli.clone(), &|p| std::fs::read(p));
    // Every rank must agree to run, or none does.
    let ok = i32::from(prep.is_ok());
    let mut all_ok = 0i32;
    world.all_reduce_into(&ok, &mut all_ok, SystemOperation::min());
    if all_ok == 0 {
        if let Err(e) = &prep {
            say!("flexio: rank {rank} ({host}): {e}");
        } else if rank == 0 {
            say!("flexio: --mpi: another rank could not prepare the job; nothing ran");
        }
        return 1;
    }
    let Ok(p) = prep.as_mut() else { return 1 };
    let nseg = p.plans.iter().map(|t| t.segment + 1).max().unwrap_or(0);
    let shared_global = p.set.global_echo.iter().any(|(k, _)| k == "filename");
    let mut full: Vec<(usize, u64)> = Vec::new();
    for (i, t) in p.plans.iter_mut().enumerate() {
        let shared = shared_global || t.echo.iter().any(|(k, _)| k == "filename");
        for f in t.files.iter_mut().filter(|f| f.block.is_none()) {
            if shared {
                let seg = f.region.len;
                f.region.start += rank as u64 * seg;
                f.need = f.need.max(f.region.start + seg);
                full.push((i, f.region.start + (size - rank) as u64 * seg));
            } else {
                f.path = per_rank(&f.path, rank);
            }
        }
    }
    // A shared file is laid out once, whole, by rank 0, before anyone uses it.
    if rank == 0 && !full.is_empty() {
        for t in p.plans.iter() {
            if t.io.layout_in_thread {
                continue;
            }
            let mut whole = t.clone();
            for f in whole.files.iter_mut() {
                if let Some((_, n)) = full.iter().find(|(i, _)| p.plans[*i].name == t.name) {
                    f.need = f.need.max(*n);
                }
            }
            let which = flexio_run::files::files_to_lay_out(&whole);
            if let Err(e) = flexio_run::files::lay_out(&whole, &which, cli.switches.readonly) {
                say!("flexio: rank 0: laying out the shared file failed: {e}");
            }
        }
    }
    if rank == 0 && cli.switches.formats.contains(&Format::Normal) && cli.switches.output.is_none()
    {
        outln!("{}{}", app::job_headers(&p.plans), app::VERSION);
    }
    world.barrier();
    // Clock offsets: rank 0 pings each rank a few times; the rank answers with its wall
    // clock and its host name. The shortest round trip bounds the offset best.
    let mut offsets: Vec<Option<(i128, i128)>> = vec![None; size as usize];
    let mut names: Vec<String> = (0..size).map(|r| format!("rank{r}")).collect();
    names[rank as usize] = format!("rank{rank}@{host}");
    for r in 1..size {
        for _ in 0..4 {
            if rank == 0 {
                let t0 = wall_ns();
                world.process_at_rank(r).send(&t0);
                let (answer, _) = world.process_at_rank(r).receive_vec::<u8>();
                let t1 = wall_ns();
                if answer.len() >= 8 {
                    let tr = i64::from_le_bytes(answer[..8].try_into().unwrap_or([0; 8]));
                    let mid = (t0 as i128 + t1 as i128) / 2;
                    let unc = (t1 as i128 - t0 as i128) / 2 + 1;
                    if !matches!(offsets[r as usize], Some((_, u)) if u <= unc) {
                        offsets[r as usize] = Some((tr as i128 - mid, unc));
                    }
                    names[r as usize] =
                        format!("rank{r}@{}", String::from_utf8_lossy(&answer[8..]));
                }
            } else if rank == r {
                let _ = world.process_at_rank(0).receive::<i64>();
                let mut answer = wall_ns().to_le_bytes().to_vec();
                answer.extend_from_slice(host.as_bytes());
                world.process_at_rank(0).send(&answer[..]);
            }
        }
    }
    offsets[0] = Some((0, 0));
    // The run, in a thread; this thread carries out its barriers, and with
    // --mpi-stonewall tells the other ranks when this one ended a segment and hears theirs.
    let stonewall = cli.switches.remote.mpi_stonewall;
    let stop_seg = Arc::new(AtomicI64::new(-1));
    let live: Arc<Mutex<Option<Arc<Vec<Progress>>>>> = Arc::new(Mutex::new(None));
    let (ask_tx, ask_rx) = mpsc::channel::<Ask>();
    let (done_tx, done_rx) = mpsc::channel::<()>();
    let ev = Events {
        rank,
        ask: Mutex::new(ask_tx),
        done: Mutex::new(done_rx),
        stonewall,
        stop_seg: stop_seg.clone(),
        progress: live.clone(),
    };
    let Ok(prepared) = prep else { return 1 };
    let run_term = Arc::new(AtomicBool::new(false));
    let term = run_term.clone();
    let signals = sigs.1.clone();
    // The channel ends when the run thread drops its hooks.
    let h = std::thread::spawn(move || app::run_prepared(prepared, &ev, term, signals));
    let mut ctl = Ctl {
        world: &world,
        rank,
        size,
        names,
        last_heard: vec![Instant::now(); size as usize],
        next_beat: Instant::now(),
        stopping: false,
        run_term,
        stop_seg,
        ended_sent: Vec::new(),
        stonewall,
        results: vec![None; size as usize],
        failed: vec![None; size as usize],
    };
    let mut barriers_done = 0usize;
    let mut started: Option<i64> = None;
    let mut pending: Option<(usize, mpi::request::Request<'static, ()>)> = None;
    let mut samples: Vec<(i64, [u64; 3], [u64; 3])> = Vec::new();
    let mut sample_every = SAMPLE_EVERY;
    let mut next_sample = Instant::now();
    loop {
        if sigs.0.load(Ordering::Relaxed) {
            ctl.run_term.store(true, Ordering::Relaxed);
        }
        let wait = if pending.is_some() { 1 } else { 5 };
        match ask_rx.recv_timeout(Duration::from_millis(wait)) {
            Ok(Ask::Barrier(seg)) => {
                if ctl.stopping {
                    let _ = done_tx.send(());
                } else {
                    pending = Some((seg, world.immediate_barrier()));
                }
            }
            Ok(Ask::Ended(seg)) => ctl.ended(seg),
            Err(mpsc::RecvTimeoutError::Timeout) => {}
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
        }
        if let Some((seg, req)) = pending.take() {
            match req.test() {
                Ok(_) => {
                    barriers_done = seg + 1;
                    started.get_or_insert_with(wall_ns);
                    let _ = done_tx.send(());
                }
                Err(req) if ctl.stopping => {
                    std::mem::forget(req);
                    let _ = done_tx.send(());
                }
                Err(req) => pending = Some((seg, req)),
            }
        }
        ctl.poll();
        if Instant::now() >= next_sample {
            next_sample = Instant::now() + sample_every;
            if let Some(pr) = live.lock().ok().and_then(|p| p.clone()) {
                if started.is_some() {
                    let mut s = (wall_ns(), [0u64; 3], [0u64; 3]);
                    for p in pr.iter() {
                        for d in 0..3 {
                            s.1[d] += p.bytes[d].load(Ordering::Relaxed);
                            s.2[d] += p.ios[d].load(Ordering::Relaxed);
                        }
                    }
                    samples.push(s);
                    if samples.len() >= MAX_SAMPLES {
                        samples = samples.into_iter().step_by(2).collect();
                        sample_every *= 2;
                    }
                }
            }
        }
    }
    let out = match h.join() {
        Ok(o) => o,
        Err(_) => {
            say!("flexio: rank {rank}: the run failed (internal error)");
            world.abort(1);
        }
    };
    let end = wall_ns();
    // The segments this rank's run did not reach (it stopped early): their barriers and,
    // with --mpi-stonewall, their ends, so that no rank waits for this one.
    for seg in 0..nseg {
        if seg >= barriers_done {
            ctl.barrier();
        }
        ctl.ended(seg);
    }
    // This rank's results, as a server sends them, then its stamps and samples.
    let mut frames = Vec::new();
    let mut push = |m: Message| frames.extend(m.to_frames(0));
    if let Some(rep) = &out.report {
        let wr = wire_run_of(&out.results, rep, out.disk_msec);
        for o in wr.global_opts {
            push(Message::JobOpt(o));
        }
        for (opts, ts) in wr.reports {
            for o in opts {
                push(Message::JobOpt(o));
            }
            push(Message::Ts(Box::new(ts)));
        }
        for g in wr.groups {
            push(Message::Gs(g));
        }
        for d in wr.disks {
            push(Message::Du(d));
        }
    }
    push(Message::Stop(Stop {
        error: out.code.max(0) as u32,
        signal: 0,
    }));
    let payload = encode(&frames, started, end, &samples);
    if rank != 0 {
        // A non-blocking send (its buffer lives on), so that rank 0's silence is noticed.
        let buf: &'static [u8] = Box::leak(payload.into_boxed_slice());
        let mut req =
            world
                .process_at_rank(0)
                .immediate_send_with_tag(StaticScope, buf, TAG_RESULT);
        loop {
            match req.test() {
                Ok(_) => break,
                Err(r) => req = r,
            }
            ctl.poll();
            std::thread::sleep(Duration::from_millis(2));
        }
        if ctl.stopping {
            // Rank 0 prints what it has and ends the job (abort); until then keep
            // answering, and give up if it falls silent.
            loop {
                ctl.poll();
                std::thread::sleep(Duration::from_millis(5));
            }
        }
        return out.code;
    }
    ctl.results[0] = Some(payload);
    while (1..size as usize).any(|r| ctl.results[r].is_none() && ctl.failed[r].is_none()) {
        ctl.poll();
        std::thread::sleep(Duration::from_millis(2));
    }
    let mut hosts = Vec::new();
    for (r, offset) in offsets.iter().enumerate() {
        let mut h = match &ctl.results[r] {
            Some(b) => host_of(b, r, *offset),
            None => HostResult {
                addr: format!("rank {r}"),
                ..Default::default()
            },
        };
        h.name = ctl.names[r].clone();
        h.host = h.name.clone();
        if let Some(why) = &ctl.failed[r] {
            h.error = Some(format!("{why}; its results never arrived"));
        }
        hosts.push(h);
    }
    let sw = &cli.switches;
    let sh = Shared {
        stop: AtomicBool::new(false),
        out: super::present::Out::new(sw.output.is_some()),
        normal: sw.formats.contains(&Format::Normal),
        terse: sw.formats.contains(&Format::Terse),
        mpi: true,
        etas: Mutex::new(Vec::new()),
        triggered: AtomicBool::new(false),
        trigger_remote: String::new(),
    };
    if sh.normal {
        for h in hosts.iter().filter(|h| !h.ts.is_empty()) {
            let rep = super::present::host_report(h).0;
            sh.out.text(&format!("<{}> \n", h.name));
            sh.out.text(&flexio_output::clients::host_block(&rep));
        }
    }
    let code = super::present::finish(&cli, &sh, &mut hosts, sigs.1.any());
    if ctl.stopping {
        // A rank is hung: MPI_Finalize would wait for it forever.
        let _ = std::io::Write::flush(&mut std::io::stdout());
        world.abort(code.max(1));
    }
    code
}

/// A rank's payload: its frames, then its start (i64::MIN: none) and end stamps and its
/// progress samples (time, bytes and I/Os per direction), little-endian.
fn encode(
    frames: &[u8],
    start: Option<i64>,
    end: i64,
    samples: &[(i64, [u64; 3], [u64; 3])],
) -> Vec<u8> {
    let mut b = Vec::with_capacity(frames.len() + 24 + samples.len() * 56);
    b.extend_from_slice(&(frames.len() as u64).to_le_bytes());
    b.extend_from_slice(frames);
    b.extend_from_slice(&start.unwrap_or(i64::MIN).to_le_bytes());
    b.extend_from_slice(&end.to_le_bytes());
    b.extend_from_slice(&(samples.len() as u64).to_le_bytes());
    for (t, bytes, ios) in samples {
        b.extend_from_slice(&t.to_le_bytes());
        for v in bytes.iter().chain(ios) {
            b.extend_from_slice(&v.to_le_bytes());
        }
    }
    b
}

/// The parts of a payload: frames, start, end, samples (None if malformed).
type Parts<'a> = (&'a [u8], Option<i64>, i64, Vec<(i64, [u64; 3], [u64; 3])>);

fn decode(b: &[u8]) -> Option<Parts<'_>> {
    let word = |at: usize| -> Option<u64> {
        Some(u64::from_le_bytes(b.get(at..at + 8)?.try_into().ok()?))
    };
    let n = usize::try_from(word(0)?).ok()?;
    let frames = b.get(8..8usize.checked_add(n)?)?;
    let mut at = 8 + n;
    let start = word(at)? as i64;
    let end = word(at + 8)? as i64;
    let count = usize::try_from(word(at + 16)?).ok()?;
    at += 24;
    let mut samples = Vec::new();
    for _ in 0..count {
        let t = word(at)? as i64;
        let mut v = [0u64; 6];
        for (k, x) in v.iter_mut().enumerate() {
            *x = word(at + 8 + 8 * k)?;
        }
        samples.push((t, [v[0], v[1], v[2]], [v[3], v[4], v[5]]));
        at += 56;
    }
    Some((frames, (start != i64::MIN).then_some(start), end, samples))
}

/// One rank's results from the bytes it sent; its stamps moved onto rank 0's clock.
fn host_of(b: &[u8], rank: usize, offset: Option<(i128, i128)>) -> HostResult {
    let mut h = HostResult {
        addr: format!("rank {rank}"),
        offset,
        ..Default::default()
    };
    let Some((frames, start, end, samples)) = decode(b) else {
        h.error = Some("its results could not be decoded (malformed payload)".into());
        return h;
    };
    let shift = |t: i64| t as i128 - offset.map(|o| o.0).unwrap_or(0);
    h.started_at = start.map(shift);
    h.ended_at = Some(shift(end));
    h.progress = samples
        .iter()
        .map(|(t, b, i)| (shift(*t), *b, *i))
        .collect();
    let mut dec = Decoder::default();
    dec.push(frames);
    let mut opts = Vec::new();
    loop {
        let raw = match dec.next_message() {
            Ok(Some(r)) => r,
            Ok(None) => break,
            Err(e) => {
                h.error = Some(format!("its results could not be decoded: {e}"));
                break;
            }
        };
        match Message::decode(&raw, Sender::Server) {
            Ok(Message::JobOpt(o)) if o.global => h.global_opts.push(o),
            Ok(Message::JobOpt(o)) => opts.push(o),
            Ok(Message::Ts(ts)) => h.ts.push((std::mem::take(&mut opts), *ts, shift(end))),
            Ok(Message::Gs(g)) => h.gs.push(g),
            Ok(Message::Du(d)) => h.du.push(d),
            Ok(Message::Stop(s)) => h.stop = Some((s.error, s.signal)),
            Ok(_) => {}
            Err(e) => h.error = Some(format!("its results could not be decoded: {e}")),
        }
    }
    if h.stop.is_none() && h.error.is_none() {
        h.error = Some("its results are incomplete".into());
    }
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn payload_round_trip_and_malformed_input() {
        let frames = Message::Stop(Stop {
            error: 5,
            signal: 0,
        })
        .to_frames(0);
        let samples = vec![(10, [1, 2, 3], [4, 5, 6]), (20, [7, 8, 9], [10, 11, 12])];
        let b = encode(&frames, Some(3), 40, &samples);
        let (f, s, e, smp) = decode(&b).unwrap();
        assert_eq!((f, s, e), (&frames[..], Some(3), 40));
        assert_eq!(smp, samples);
        let h = host_of(&b, 2, Some((1000, 5)));
        assert_eq!(h.stop, Some((5, 0)));
        assert_eq!(h.started_at, Some(3 - 1000));
        assert_eq!(h.ended_at, Some(40 - 1000));
        assert_eq!(h.progress[1].0, 20 - 1000);
        assert!(h.error.is_none());
        assert_eq!(decode(&encode(&frames, None, 1, &[])).unwrap().1, None);
        for cut in [0, 7, 9, b.len() - 1] {
            assert!(decode(&b[..cut]).is_none(), "cut at {cut}");
            assert!(host_of(&b[..cut], 1, None).error.is_some());
        }
        let mut huge = b.clone();
        huge[..8].copy_from_slice(&u64::MAX.to_le_bytes());
        assert!(decode(&huge).is_none());
    }
}
