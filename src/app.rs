//! One invocation of flexio: parse, plan, lay out, run the groups, report.

use crate::clock::Clock;
use crate::notes::Notes;
use crate::plan::{self, ThreadPlan};
use crate::progress::Progress;
use crate::worker::{self, RunCtx};
use crate::{defaults, diskstats, files, status};
use flexio_engine::CATALOG;
use flexio_job::options::ExitWhat;
use flexio_job::{cli, help, load, Eta, Format, Host, JobSet, LoadEnv};
use flexio_output::{json, normal, terse};
use flexio_stats::report::{self, JobResult};
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::time::Duration;

pub const VERSION: &str = concat!("flexio-", env!("CARGO_PKG_VERSION"));
/// The fio release whose formats flexio reproduces; machine-readable outputs carry it
/// where fio puts its version.
pub const FIO_COMPAT: &str = "fio-3.33";

/// Exit status for a run interrupted by a signal (fio's).
const EXIT_SIGNAL: i32 = 128;

fn host_env(name: &str) -> Option<String> {
    std::env::var(name).ok()
}

fn read_file(p: &Path) -> std::io::Result<Vec<u8>> {
    if p == Path::new("-") {
        let mut v = Vec::new();
        std::io::Read::read_to_end(&mut std::io::stdin(), &mut v)?;
        return Ok(v);
    }
    std::fs::read(p)
}

fn host() -> Host<'static> {
    let mem = flexio_engine::platform::total_memory();
    Host {
        ncpus: flexio_engine::sys::cpus_configured(),
        mb_memory: mem >> 20,
        pagesize: rustix::param::page_size() as u64,
        env: &host_env,
    }
}

fn load_env(h: Host<'_>) -> LoadEnv<'_> {
    LoadEnv {
        host: h,
        read: &read_file,
        catalog: &CATALOG,
    }
}

fn enghelp(arg: Option<&str>) -> Result<String, String> {
    match arg {
        None | Some("") => {
            let mut s = String::from("Available IO engines:\n");
            for e in flexio_engine::ENGINES {
                s.push_str(&format!("\t{}\n", e.name));
            }
            Ok(s)
        }
        Some(a) => {
            let (eng, opt) = match a.split_once(',') {
                Some((e, o)) => (e, Some(o)),
                None => (a, None),
            };
            CATALOG.check_engine(eng)?;
            let opts = CATALOG.engine_options(eng);
            if let Some(o) = opt {
                return opts
                    .iter()
                    .find(|d| d.name == o)
                    .map(|d| help::option_detail(d, &CATALOG))
                    .ok_or_else(|| format!("ioengine {eng} has no option '{o}'"));
            }
            if opts.is_empty() {
                return Ok(format!("IO engine {eng} has no options\n"));
            }
            Ok(opts
                .iter()
                .map(|d| format!("{:<24}: {}\n", d.name, d.help))
                .collect())
        }
    }
}

/// Hooks into a run for a remote session (`src/remote/`): the preamble goes to the client
/// instead of stdout, the session sees the threads' live progress, and the report is
/// returned (the client renders it) instead of printed.
pub trait RunEvents: Sync {
    /// Preamble text (job headers, "Starting N processes", layout messages).
    fn text(&self, s: &str);
    /// The run's threads and their live progress, once before the files are laid out.
    fn running(&self, plans: &[ThreadPlan], progress: &Arc<Vec<Progress>>);
    /// A stonewall segment (reporting group) is about to start (MPI: a barrier).
    fn segment_starts(&self, _segment: usize) {}
}

/// A run's results.
pub struct Outcome {
    /// Exit status (as `run` returns it).
    pub code: i32,
    /// The finished jobs' results, in plan order.
    pub results: Vec<JobResult>,
    /// The report built from them (`None` when the run stopped before it).
    pub report: Option<report::RunReport>,
    /// The run's wall time in ms (disk statistics' `msec`).
    pub disk_msec: u64,
}

impl Outcome {
    fn failed(code: i32) -> Outcome {
        Outcome {
            code,
            results: Vec::new(),
            report: None,
            disk_msec: 0,
        }
    }
}

/// A parsed and planned run, ready to start.
pub struct Prepared {
    pub cli: cli::Cli,
    pub set: JobSet,
    pub plans: Vec<ThreadPlan>,
}

/// Parse `args` (as on the command line) with job files read through `read`, load and plan
/// them: the seam a remote session drives (warnings are returned in `set.warnings`).
pub fn prepare(
    args: &[String],
    read: &dyn Fn(&Path) -> std::io::Result<Vec<u8>>,
) -> Result<Prepared, String> {
    let cli = cli::parse_args(args, &CATALOG).map_err(|e| e.to_string())?;
    prepare_cli(cli, read)
}

/// [`prepare`] from a parsed command line.
pub fn prepare_cli(
    cli: cli::Cli,
    read: &dyn Fn(&Path) -> std::io::Result<Vec<u8>>,
) -> Result<Prepared, String> {
    let env = LoadEnv {
        host: host(),
        read,
        catalog: &CATALOG,
    };
    let set = load::load(&cli, &env).map_err(|e| e.to_string())?;
    if set.jobs.is_empty() {
        return Err(
            "No job(s) defined (the job file has no job sections; a job starts with a [name] line)"
                .into(),
        );
    }
    let mut plans = plan::plan(&set, cli.switches.readonly).map_err(|e| e.to_string())?;
    crate::run_extra::after_plan(&cli.switches.extra, &mut plans);
    Ok(Prepared { cli, set, plans })
}

/// Run a prepared run with `events` receiving its preamble and progress; `terminate` stops
/// it early (the report of what ran is still built).
pub fn run_prepared(
    p: Prepared,
    events: &dyn RunEvents,
    terminate: Arc<AtomicBool>,
    signals: crate::signals::Signals,
) -> Outcome {
    execute(
        &p.cli,
        &p.set,
        p.plans,
        false,
        (terminate, signals),
        Some(events),
    )
}

/// What the run prints, and where.
struct Sink<'a> {
    formats: Vec<Format>,
    terse_version: u32,
    file: Option<PathBuf>,
    /// Report text collected for --output.
    buf: String,
    /// A remote session: the preamble goes there, the report is not printed.
    events: Option<&'a dyn RunEvents>,
}

impl Sink<'_> {
    fn normal(&self) -> bool {
        self.formats.contains(&Format::Normal)
    }
    /// Report text: collected for --output, else written to stdout now.
    fn emit(&mut self, text: &str) {
        if self.events.is_some() {
            return;
        }
        if self.file.is_some() {
            self.buf.push_str(text);
        } else {
            let mut o = std::io::stdout().lock();
            let _ = o.write_all(text.as_bytes());
            let _ = o.flush();
        }
    }
    /// Normal-format preamble lines (job headers, version, Starting, layout).
    fn preamble(&mut self, s: &str) {
        if !self.normal() {
            return;
        }
        if let Some(ev) = self.events {
            ev.text(s);
        } else if self.file.is_some() {
            self.buf.push_str(s);
        } else {
            let mut o = std::io::stdout().lock();
            let _ = o.write_all(s.as_bytes());
            let _ = o.flush();
        }
    }
}

/// Entry point; returns the exit status.
pub fn run(args: Vec<String>) -> i32 {
    // Signals first: an interrupt at any point after this (engine probes, file layout)
    // still ends with a report.
    let terminate = Arc::new(AtomicBool::new(false));
    let sigs = (terminate.clone(), crate::signals::install(terminate));
    if let Some(code) = crate::cmd::dispatch(&args) {
        return code;
    }
    let cli = match cli::parse_args(&args, &CATALOG) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("flexio: {e}");
            return 1;
        }
    };
    let sw = &cli.switches;
    if sw.version {
        println!("{VERSION} ({FIO_COMPAT} compatible)");
        return 0;
    }
    if sw.help {
        print!("{VERSION}\n{}{}", cli::usage(), crate::cmd::usage());
        return 0;
    }
    if let Some(path) = &sw.inflate_log {
        // fio's --inflate-log: a log.fz as the text lines of the log, on stdout.
        return match crate::logz::inflate_file(std::path::Path::new(path)) {
            Ok(text) => {
                use std::io::Write;
                let mut out = std::io::stdout().lock();
                if out
                    .write_all(text.as_bytes())
                    .and_then(|_| out.flush())
                    .is_err()
                {
                    return 1;
                }
                0
            }
            Err(e) => {
                eprintln!("flexio: --inflate-log: {e}");
                1
            }
        };
    }
    if let Some(arg) = &sw.cmdhelp {
        return match arg.as_deref() {
            None | Some("") | Some("all") => {
                print!("{}", help::list_all(&CATALOG));
                0
            }
            Some(name) => match help::cmdhelp(name, &CATALOG) {
                Ok(s) => {
                    print!("{s}");
                    0
                }
                Err(e) => {
                    eprintln!("flexio: {e}");
                    1
                }
            },
        };
    }
    if let Some(arg) = &sw.enghelp {
        return match enghelp(arg.as_deref()) {
            Ok(s) => {
                print!("{s}");
                0
            }
            Err(e) => {
                eprintln!("flexio: {e}");
                1
            }
        };
    }
    if let Some(code) = crate::selftest::early(&sw.extra) {
        return code;
    }
    crate::debug::init(&sw.extra);
    if let Some(code) = crate::remote::dispatch(&cli, &sigs) {
        return code;
    }
    if sw.parse_only {
        return crate::parse_only::run(&cli, &load_env(host()));
    }
    if crate::jobless::options_without_job(&cli) {
        return crate::jobless::no_jobs_defined(
            "job options were given but no job: a job starts with --name=<name> (or give a job file); a bare `flexio` runs the default benchmark",
        );
    }
    let default_mode = crate::jobless::wants_default_benchmark(&cli);
    let set = if default_mode {
        match defaults::load(&cli, load_env(host())) {
            Ok(s) => s,
            Err(e) => {
                eprintln!("flexio: {e}");
                return 1;
            }
        }
    } else {
        match load::load(&cli, &load_env(host())) {
            Ok(s) => s,
            Err(e) => {
                eprintln!("flexio: {e}");
                return 1;
            }
        }
    };
    for n in &set.notes {
        eprintln!("flexio: {n}");
    }
    if set.jobs.is_empty() && !default_mode {
        // fio: a job file without job sections (empty, comments, [global] only).
        return crate::jobless::no_jobs_defined(if set.notes.is_empty() {
            "the job file has no job sections; a job starts with a [name] line"
        } else {
            "every job is disabled (numjobs=0)"
        });
    }
    crate::debug::parse_lines(&set);
    for w in &set.warnings {
        eprintln!("flexio: warning: {w}");
    }
    if sw.warnings_fatal && !set.warnings.is_empty() {
        eprintln!("flexio: warnings are fatal (--warnings-fatal)");
        return 1;
    }
    if sw.showcmd {
        print!("{}", flexio_job::showcmd::showcmd(&set));
        return 0;
    }
    // merge_blktrace_file: each job's blktraces merged into one before planning (which then
    // reads the merged trace); --merge-blktrace-only stops there.
    for def in &set.jobs {
        if let Err(e) = plan::replay::merge(def) {
            eprintln!("flexio: {e}");
            return 1;
        }
    }
    if sw.merge_blktrace_only {
        return 0;
    }
    let mut plans = match plan::plan(&set, sw.readonly) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("flexio: {e}");
            return 1;
        }
    };
    crate::run_extra::after_plan(&sw.extra, &mut plans);
    let code = execute(&cli, &set, plans, default_mode, sigs, None).code;
    if default_mode {
        defaults::cleanup();
    }
    code
}

fn execute(
    cli: &cli::Cli,
    set: &JobSet,
    plans: Vec<ThreadPlan>,
    default_mode: bool,
    (terminate, signalled): (Arc<AtomicBool>, crate::signals::Signals),
    events: Option<&dyn RunEvents>,
) -> Outcome {
    let sw = &cli.switches;
    let mut sink = Sink {
        formats: sw.formats.clone(),
        terse_version: sw.terse_version,
        file: sw
            .output
            .as_ref()
            .map(PathBuf::from)
            .filter(|_| events.is_none()),
        buf: String::new(),
        events,
    };
    if sink.terse_version == 2 && sink.formats.contains(&Format::Terse) {
        eprintln!("flexio: terse version 2 is not supported by flexio (use 3, 4 or 5)");
        return Outcome::failed(1);
    }
    let stdout_normal_only =
        sink.file.is_none() && sink.formats == [Format::Normal] && events.is_none();
    let notes = Notes {
        info_to_stdout: stdout_normal_only,
    };
    // Job headers, once per job definition (not per clone), as fio prints them at parse time.
    if sink.normal() {
        // A server sends the headers when it parses the jobs, and no version line.
        let mut pre = String::new();
        if events.is_none() {
            pre = job_headers(&plans);
            pre.push_str(VERSION);
            pre.push('\n');
        }
        let nthreads = plans.iter().filter(|p| p.control.thread).count();
        let nprocs = plans.len() - nthreads;
        let plural = |n: usize, one: &str, many: &str| {
            if n == 1 {
                format!("{n} {one}")
            } else {
                format!("{n} {many}")
            }
        };
        let starting = match (nthreads, nprocs) {
            (0, p) => plural(p, "process", "processes"),
            (t, 0) => plural(t, "thread", "threads"),
            (t, p) => format!(
                "{} and {}",
                plural(t, "thread", "threads"),
                plural(p, "process", "processes")
            ),
        };
        pre.push_str(&format!("Starting {starting}\n"));
        sink.preamble(&pre);
    }
    let clock = choose_clock(set, &notes);
    let (read_ns, resolution_ns) = clock.self_test();
    let clock_info = flexio_stats::report::ClockInfo {
        source: clock.source().name().to_string(),
        read_ns,
        resolution_ns,
    };
    let genesis = clock.now();
    let mut extras = crate::run_extra::RunExtras::start(&sw.extra, genesis);
    let reporter = Reporter {
        formats: sink.formats.clone(),
        terse_version: sink.terse_version,
        global_echo: set.global_echo.clone(),
        clock,
        genesis,
        clock_info,
    };
    let progress: Arc<Vec<Progress>> =
        Arc::new(plans.iter().map(|_| Progress::default()).collect());
    if let Some(ev) = events {
        ev.running(&plans, &progress);
    }
    // ---- file layout, serialized in the main thread (create_serialize)
    let mut setup_failed = vec![false; plans.len()];
    for (i, t) in plans.iter().enumerate() {
        if t.io.layout_in_thread {
            continue; // laid out by the job thread itself
        }
        if terminate.load(Ordering::Relaxed) {
            break;
        }
        let which = files::files_to_lay_out(t);
        if which.is_empty() {
            continue;
        }
        sink.preamble(&format!("{}\n", files::layout_message(t, &which)));
        if let Err(e) = files::lay_out(t, &which, sw.readonly) {
            let errno = e.raw_os_error().unwrap_or(libc::EIO);
            let text = if e.raw_os_error().is_some() {
                crate::notes::strerror(errno)
            } else {
                e.to_string()
            };
            eprintln!("flexio: {}: file layout failed: {text}", t.name);
            eprintln!("fio: pid=0, err={errno}/file:files.rs, func=layout, error={text}");
            setup_failed[i] = true;
        }
    }
    // Log files start empty (threads sharing a name with per_job_logs=0 then append).
    let mut log_paths: Vec<PathBuf> = plans
        .iter()
        .flat_map(|t| {
            let m = &t.meter;
            let logs = m.logs.iter().flat_map(|l| l.paths());
            logs.chain(m.interval_log.iter().map(|(p, _)| p.clone()))
        })
        .collect();
    log_paths.sort();
    log_paths.dedup();
    if let Err(e) = worker::create_log_files(&log_paths) {
        eprintln!("flexio: cannot create log files: {e}");
        return Outcome::failed(1);
    }
    for j in &set.jobs {
        if crate::plan::blockalign_differs(&j.opts) && !j.opts.norandommap {
            notes.err("fio: Any use of blockalign= turns off randommap");
        }
    }
    for t in &plans {
        if t.depth_note {
            notes.info("note: both iodepth >= 1 and synchronous I/O engine are selected, queue depth will be capped at 1");
        }
        if t.control.time_based_without_runtime {
            notes.warn("fio: time_based requires a runtime/timeout setting");
        }
    }
    // ---- disks under the files
    let paths: Vec<PathBuf> = plans
        .iter()
        .filter(|t| !t.caps.diskless && t.control.disk_util)
        .flat_map(|t| t.files.iter().map(|f| f.path.clone()))
        .collect();
    let prio_paths: Vec<PathBuf> = plans
        .iter()
        .filter(|t| t.control.uses_prio)
        .filter(|t| !t.caps.diskless)
        .flat_map(|t| t.files.iter().map(|f| f.path.clone()))
        .collect();
    for n in diskstats::priority_notes(&prio_paths) {
        notes.warn(&n);
    }
    let mut disks = diskstats::watch(&paths);
    diskstats::restart(&mut disks);
    let disk_start = clock.now();
    // ---- status line
    let status_done = Arc::new(AtomicBool::new(false));
    let show_eta = match sw.eta {
        Eta::Always => true,
        Eta::Never => false,
        Eta::Auto => std::io::stderr().is_terminal(),
    } && events.is_none();
    let agg_log = match sw.extra.bandwidth_log {
        true => match status::AggLog::create(Path::new(".")) {
            Ok(l) => Some(l),
            Err(e) => {
                eprintln!("flexio: cannot create the aggregate bandwidth logs: {e}");
                return Outcome::failed(1);
            }
        },
        false => None,
    };
    let status_thread = (show_eta || agg_log.is_some()).then(|| {
        status::spawn(
            plans.clone(),
            progress.clone(),
            status_done.clone(),
            status::Show {
                line: show_eta,
                interval: Duration::from_millis(sw.eta_interval_ms),
                newline_every: sw.eta_newline_ms.map(Duration::from_millis),
                agg_log,
            },
        )
    });
    // ---- run the stonewall segments in order
    let snapshot_req = Arc::new(crate::progress::AtomicU64::new(0));
    let status_every = sw.status_interval_ms.map(|ms| ms * 1_000_000);
    let mut next_status = status_every.map(|iv| clock.now() + iv);
    let mut next_dump_check = 0u64;
    let mut results: Vec<Option<JobResult>> = vec![None; plans.len()];
    let nseg = plans
        .iter()
        .map(|p| p.segment)
        .max()
        .map(|m| m + 1)
        .unwrap_or(0);
    // exit_what=all: a job with exitall ended everything; later segments do not run.
    let mut quit_all = false;
    // A waitee is done when it has a result, never got to run, or belongs to an earlier
    // segment.
    let seg_of: Vec<usize> = plans.iter().map(|p| p.segment).collect();
    let failed_setup = setup_failed.clone();
    let waitee_done_in = |w: usize, results: &[Option<JobResult>], seg: usize| {
        results[w].is_some() || failed_setup[w] || seg_of[w] < seg
    };
    for seg in 0..nseg {
        if let Some(ev) = events {
            ev.segment_starts(seg);
        }
        if terminate.load(Ordering::Relaxed) || quit_all || extras.trigger.fired() {
            break;
        }
        let waitee_done = |w: usize, results: &[Option<JobResult>]| waitee_done_in(w, results, seg);
        let members: Vec<usize> = (0..plans.len())
            .filter(|i| plans[*i].segment == seg && !setup_failed[*i])
            .collect();
        // One stop flag per reporting group of the segment (exit_what=group stops one).
        let mut groups: Vec<u32> = members.iter().map(|i| plans[*i].groupid).collect();
        groups.sort_unstable();
        groups.dedup();
        let ctxs: Vec<RunCtx> = groups
            .iter()
            .map(|_| RunCtx {
                terminate: Arc::new(AtomicBool::new(false)),
                clock,
                notes,
                readonly: sw.readonly,
                snapshot_req: snapshot_req.clone(),
            })
            .collect();
        let ctx_of = |i: usize| {
            let g = groups.binary_search(&plans[i].groupid).unwrap_or(0);
            &ctxs[g]
        };
        let stop_all = || {
            for c in &ctxs {
                c.terminate.store(true, Ordering::Relaxed);
            }
        };
        let mut ss_units = crate::steady_judge::units(&plans, &members);
        flexio_engine::api::STOP_WAITS.store(false, Ordering::Relaxed);
        flexio_engine::api::IO_JOBS_PENDING.store(
            members.iter().filter(|i| !plans[**i].caps.noio).count(),
            Ordering::Relaxed,
        );
        let (tx, rx) = mpsc::channel::<(usize, JobResult)>();
        std::thread::scope(|s| {
            let spawn = |i: usize, tx: mpsc::Sender<(usize, JobResult)>| {
                let plan = &plans[i];
                let ctx = ctx_of(i);
                let pr = &progress[i];
                let name = format!("flexio-{}", plan.thread_number);
                std::thread::Builder::new()
                    .name(name)
                    .spawn_scoped(s, move || {
                        // A bug in a job thread fails that job, not the whole run.
                        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                            worker::run_thread(plan, ctx, pr)
                        }))
                        .unwrap_or_else(|_| {
                            let mut st = flexio_stats::ThreadStats::default();
                            st.set_error(
                                libc::EFAULT,
                                "file:worker.rs, func=job thread, error=internal error (panic)"
                                    .into(),
                            );
                            worker::result_of(plan, pr.tid.load(Ordering::Relaxed), st)
                        });
                        let _ = tx.send((i, r));
                    })
                    .expect("spawning a job thread");
            };
            // wait_for: a job starts once every thread of its waitee has ended.
            let mut waiting: Vec<usize> = Vec::new();
            for &i in &members {
                if plans[i]
                    .control
                    .wait_for
                    .iter()
                    .all(|w| waitee_done(*w, &results))
                {
                    spawn(i, tx.clone());
                } else {
                    waiting.push(i);
                }
            }
            let mut tx = Some(tx);
            if waiting.is_empty() {
                tx = None;
            }
            let mut left = members.len();
            while left > 0 {
                match rx.recv_timeout(Duration::from_millis(20)) {
                    Ok((i, r)) => {
                        left -= 1;
                        if r.stats.failed() {
                            notes.info(&format!(
                                "fio: pid={}, err={}/{}",
                                r.pid, r.stats.error, r.stats.verror
                            ));
                            if plans[i].control.exitall_on_error {
                                stop_all();
                            }
                        }
                        if plans[i].control.exitall {
                            match plans[i].control.exit_what {
                                ExitWhat::Group => {
                                    ctx_of(i).terminate.store(true, Ordering::Relaxed)
                                }
                                ExitWhat::Stonewall => stop_all(),
                                ExitWhat::All => {
                                    stop_all();
                                    quit_all = true;
                                }
                            }
                        }
                        results[i] = Some(r);
                        if let Some(t) = &tx {
                            let (ready, still): (Vec<usize>, Vec<usize>) =
                                waiting.iter().partition(|&&k| {
                                    plans[k]
                                        .control
                                        .wait_for
                                        .iter()
                                        .all(|w| waitee_done(*w, &results))
                                });
                            for k in ready {
                                spawn(k, t.clone());
                            }
                            waiting = still;
                            if waiting.is_empty() {
                                tx = None;
                            }
                        }
                    }
                    Err(mpsc::RecvTimeoutError::Timeout) => {
                        if terminate.load(Ordering::Relaxed) {
                            stop_all();
                        }
                    }
                    Err(mpsc::RecvTimeoutError::Disconnected) => break,
                }
                if extras.trigger.poll(clock.now()) {
                    stop_all();
                }
                if ctxs.iter().any(|c| c.terminate.load(Ordering::Relaxed)) {
                    flexio_engine::api::STOP_WAITS.store(true, Ordering::Relaxed);
                }
                for u in &mut ss_units {
                    if u.poll(&progress, |m| results[m].is_some()) {
                        notes.info(&u.verdict(&plans[u.members[0]].name));
                    }
                }
                let mut dump = false;
                if let (Some(at), Some(iv)) = (next_status, status_every) {
                    if clock.now() >= at {
                        dump = true;
                        next_status = Some(at + iv);
                    }
                }
                // SIGUSR1, or a file named fio-dump-status in the temporary directory
                // (removed once seen), as with fio.
                if signalled.take_usr1()
                    || crate::signals::dump_file_requested(&mut next_dump_check, clock.now())
                {
                    dump = true;
                }
                if dump {
                    let snap = gather_snapshots(&plans, &progress, &results, &snapshot_req);
                    let rep = reporter.report(&snap, Vec::new());
                    let text = reporter.render(&rep, false);
                    sink.emit(&text);
                }
            }
        });
        // Steady state: samples that arrived with the last results, then the verdicts.
        for u in &mut ss_units {
            let newly = u.poll(&progress, |_| true);
            if newly || !u.state.attained {
                notes.info(&u.verdict(&plans[u.members[0]].name));
            }
            for &m in &u.members {
                if let Some(r) = &mut results[m] {
                    r.steadystate = Some(u.state.clone());
                }
            }
        }
    }
    if quit_all {
        // exit_what=all: fio still reports the jobs it never started, with nothing done.
        for (i, r) in results.iter_mut().enumerate() {
            if r.is_none() && !setup_failed[i] {
                *r = Some(worker::result_of(
                    &plans[i],
                    0,
                    flexio_stats::ThreadStats::default(),
                ));
            }
        }
    }
    status_done.store(true, Ordering::Relaxed);
    if let Some(h) = status_thread {
        let _ = h.join();
    }
    // Self-check: a job that spent most of its time in flexio's own code measured flexio.
    for (i, r) in results.iter().enumerate() {
        let Some(r) = r else { continue };
        let s = &r.stats;
        let wall = s.total_run_time_ms as f64 * 1e6;
        if plans[i].engine == "null" || s.issued_rwt() == 0 || wall < 1e8 {
            continue;
        }
        let engine = s.engine_ns as f64 * 100.0 / wall;
        let wait = s.wait_ns as f64 * 100.0 / wall;
        let tool = 100.0 - engine - wait;
        if tool > 50.0 {
            notes.warn(&format!(
                "flexio: {}: {tool:.0}% of the job's time was spent in flexio itself ({engine:.0}% in the engine, {wait:.0}% in rate or think-time waits): its results are bound by the tool, not the target",
                r.name
            ));
        }
    }
    // Jobs that never ran (interrupted before their turn) still remove the files they were
    // told to remove.
    for (i, t) in plans.iter().enumerate() {
        if results[i].is_none() && (t.io.unlink || t.io.unlink_each_loop) && !t.caps.diskless {
            for f in t.files.iter().filter(|f| f.block.is_none()) {
                let _ = std::fs::remove_file(&f.path);
            }
        }
    }
    let interrupted = signalled.any();
    if interrupted {
        notes.info(&format!(
            "fio: terminating on signal {}",
            signalled.number()
        ));
    }
    // ---- report
    let now = clock.now();
    let disk_reports = diskstats::finish(&disks, (now - disk_start) / 1_000_000);
    let done: Vec<JobResult> = results.iter().flatten().cloned().collect();
    let rep = reporter.report(&done, disk_reports);
    let mut text = extras.decorate(
        reporter.render(&rep, true),
        sink.formats
            .iter()
            .any(|f| matches!(f, Format::Json | Format::JsonPlus)),
        sink.normal(),
    );
    if default_mode {
        text.push_str(&defaults::summary(&rep));
    }
    sink.emit(&text);
    if let Some(p) = &sink.file {
        if let Err(e) = crate::notes::write_atomic(p, sink.buf.as_bytes()) {
            eprintln!("flexio: cannot write output file '{}': {e}", p.display());
            return Outcome::failed(1);
        }
    }
    if let (Some(page), None) = (&sw.report, events) {
        // The report reads the run as any other result: its json+ text and the log files
        // the jobs wrote (relative names are relative to the working directory).
        let jp = json::report(&rep, true, VERSION);
        match crate::cmd::report::write_run_report(&jp, Path::new("."), Path::new(page)) {
            Ok(()) => eprintln!("flexio: wrote the run's report to {page}"),
            Err(e) => {
                eprintln!("flexio: cannot write the report '{page}': {e}");
                return Outcome::failed(1);
            }
        }
    }
    let failed = done.iter().filter(|r| r.stats.failed()).count()
        + setup_failed.iter().filter(|f| **f).count();
    Outcome {
        // fio returns the count modulo 256; flexio caps it so that failures never read as
        // success.
        code: if interrupted {
            EXIT_SIGNAL
        } else {
            failed.min(255) as i32
        },
        results: done,
        report: Some(rep),
        disk_msec: (now - disk_start) / 1_000_000,
    }
}

/// The job header lines ("name: (g=0): rw=..."), once per job definition (not per clone).
pub fn job_headers(plans: &[ThreadPlan]) -> String {
    let mut pre = String::new();
    // Engines that move no data print their own line instead (fio's NOIO engines).
    for t in plans.iter().filter(|t| t.header.first && !t.caps.noio) {
        let h = &t.header;
        pre.push_str(&normal::job_header(
            &t.name,
            t.groupid,
            h.rw,
            h.bs,
            h.bs_by_pattern,
            &t.engine,
            h.iodepth,
            t.report.kb_base,
            t.report.sig_figs,
        ));
        if h.numjobs > 1 {
            pre.push_str("...\n");
        }
    }
    pre
}

/// The run's clock: `clocksource` from the first job that sets it, else the TSC where it is
/// usable, else CLOCK_MONOTONIC.
fn choose_clock(set: &JobSet, notes: &Notes) -> Clock {
    use crate::clock::Source;
    use flexio_job::options::ClockSourceOpt;
    let want = set.jobs.iter().find_map(|j| j.opts.clocksource);
    match want {
        Some(ClockSourceOpt::Gettimeofday) => Clock::with_source(Source::Gettimeofday),
        Some(ClockSourceOpt::ClockGettime) => Clock::with_source(Source::Monotonic),
        Some(ClockSourceOpt::Cpu) => match crate::clock::tsc_usable() {
            Ok(()) => Clock::with_source(Source::Tsc),
            Err(why) => {
                notes.warn(&format!(
                    "flexio: clocksource=cpu: the TSC cannot be trusted here ({why}); using clock_gettime"
                ));
                Clock::with_source(Source::Monotonic)
            }
        },
        None => Clock::new(),
    }
}

/// Ask every running job for its statistics so far and collect them with those of the
/// jobs that have finished (a job busy in one long I/O answers late: its previous copy, if
/// any, is used).
fn gather_snapshots(
    plans: &[ThreadPlan],
    progress: &[Progress],
    results: &[Option<JobResult>],
    req: &crate::progress::AtomicU64,
) -> Vec<JobResult> {
    let gen = req.fetch_add(1, Ordering::AcqRel) + 1;
    let deadline = std::time::Instant::now() + Duration::from_millis(300);
    let running = |i: usize| {
        results[i].is_none()
            && progress[i].tid.load(Ordering::Relaxed) != 0
            && progress[i].state_char() != '_'
    };
    while std::time::Instant::now() < deadline {
        if (0..plans.len())
            .filter(|i| running(*i))
            .all(|i| progress[i].snap_gen.load(Ordering::Acquire) >= gen)
        {
            break;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    let mut out = Vec::new();
    for (i, p) in plans.iter().enumerate() {
        if let Some(r) = &results[i] {
            out.push(r.clone());
        } else if let Some(stats) = progress[i].snapshot.lock().ok().and_then(|s| s.clone()) {
            out.push(worker::result_of(
                p,
                progress[i].tid.load(Ordering::Relaxed),
                stats,
            ));
        }
    }
    out
}

/// Builds and renders reports (final ones and --status-interval ones).
struct Reporter {
    formats: Vec<Format>,
    terse_version: u32,
    global_echo: Vec<(String, String)>,
    clock: Clock,
    genesis: u64,
    clock_info: flexio_stats::report::ClockInfo,
}

impl Reporter {
    fn report(
        &self,
        results: &[JobResult],
        disks: Vec<flexio_stats::report::DiskReport>,
    ) -> report::RunReport {
        let wall = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default();
        let secs = wall.as_secs() as i64;
        let elapsed_s = (self.clock.now() - self.genesis).div_ceil(1_000_000_000);
        let mut rep = report::build(
            results,
            disks,
            self.global_echo.clone(),
            FIO_COMPAT,
            (
                secs,
                wall.as_millis() as i64,
                flexio_engine::sys::ctime(secs),
            ),
            elapsed_s,
        );
        rep.clock = self.clock_info.clone();
        rep
    }

    /// fio prints terse, then JSON, then normal.
    fn render(&self, rep: &report::RunReport, _final: bool) -> String {
        let mut text = String::new();
        if self.formats.contains(&Format::Terse) {
            text.push_str(&terse::report(rep, self.terse_version));
        }
        if self.formats.contains(&Format::JsonPlus) {
            text.push_str(&json::report(rep, true, VERSION));
        } else if self.formats.contains(&Format::Json) {
            text.push_str(&json::report(rep, false, VERSION));
        }
        if self.formats.contains(&Format::Normal) {
            text.push_str(&normal::report(rep));
        }
        text
    }
}
