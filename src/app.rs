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
/// The fio releases whose formats flexio reproduces; machine-readable outputs carry the one
/// of the run (`--compat`) where fio puts its version. fio 3.33's is also the client/server
/// protocol's.
pub const FIO_COMPAT: &str = "fio-3.33";
pub const FIO_LATEST: &str = "fio-3.42";

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

fn enghelp(arg: Option<&str>, compat: flexio_job::Compat) -> Result<String, String> {
    match arg {
        None | Some("") => {
            let mut s = String::from("Available IO engines:\n");
            // The engines of the fio `--compat` reproduces.
            for name in CATALOG.engine_names_at(compat) {
                s.push_str(&format!("\t{name}\n"));
            }
            Ok(s)
        }
        Some(a) => {
            let (eng, opt) = match a.split_once(',') {
                Some((e, o)) => (e, Some(o)),
                None => (a, None),
            };
            CATALOG.check_engine_at(eng, compat)?;
            // The engine's options in the fio `--compat` reproduces.
            let opts = CATALOG.engine_options_at(eng, compat);
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
    /// Polled while a segment runs: `true` stops its jobs now, as their runtime ending
    /// would (MPI `--mpi-stonewall`: another rank finished the segment first).
    fn segment_stop(&self, _segment: usize) -> bool {
        false
    }
    /// Every job of the segment has ended on this host.
    fn segment_ends(&self, _segment: usize) {}
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
    prepare_cli_with(cli, read, &|_| {})
}

/// [`prepare`] for a server's client: `adjust` sees the job set before it is planned
/// (`unique_filename` puts the client's address before generated file names).
pub fn prepare_with(
    args: &[String],
    read: &dyn Fn(&Path) -> std::io::Result<Vec<u8>>,
    adjust: &dyn Fn(&mut flexio_job::JobSet),
) -> Result<Prepared, String> {
    let cli = cli::parse_args(args, &CATALOG).map_err(|e| e.to_string())?;
    prepare_cli_with(cli, read, adjust)
}

fn prepare_cli_with(
    cli: cli::Cli,
    read: &dyn Fn(&Path) -> std::io::Result<Vec<u8>>,
    adjust: &dyn Fn(&mut flexio_job::JobSet),
) -> Result<Prepared, String> {
    let env = LoadEnv {
        host: host(),
        read,
        catalog: &CATALOG,
    };
    let mut set = load::load(&cli, &env).map_err(|e| e.to_string())?;
    adjust(&mut set);
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
    /// Only the normal format, on stdout: fio's notes go there too.
    fn stdout_normal_only(&self) -> bool {
        self.file.is_none() && self.formats == [Format::Normal] && self.events.is_none()
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

/// The switches that print something and exit (--version, --help, --inflate-log,
/// --cmdhelp, --enghelp): their exit status, or `None` to go on.
fn informational(sw: &cli::Switches) -> Option<i32> {
    if sw.version {
        println!("{VERSION} ({FIO_LATEST} compatible; {FIO_COMPAT} with --compat=3.33)");
        return Some(0);
    }
    if sw.help {
        print!("{VERSION}\n{}{}", cli::usage(), crate::cmd::usage());
        return Some(0);
    }
    if let Some(path) = &sw.inflate_log {
        // fio's --inflate-log: a log.fz as the text lines of the log, on stdout.
        return Some(
            match crate::logz::inflate_file(std::path::Path::new(path)) {
                Ok(text) => {
                    let mut out = std::io::stdout().lock();
                    let written = out.write_all(text.as_bytes()).and_then(|_| out.flush());
                    i32::from(written.is_err())
                }
                Err(e) => {
                    eprintln!("flexio: --inflate-log: {e}");
                    1
                }
            },
        );
    }
    let text = if let Some(arg) = &sw.cmdhelp {
        match arg.as_deref() {
            None | Some("") | Some("all") => Ok(help::list_all(&CATALOG)),
            Some(name) => help::cmdhelp(name, &CATALOG),
        }
    } else if let Some(arg) = &sw.enghelp {
        let compat = sw
            .compat
            .or_else(|| {
                let v = std::env::var(flexio_job::compat::ENV).ok()?;
                flexio_job::Compat::parse(&v).ok()
            })
            .unwrap_or_default();
        enghelp(arg.as_deref(), compat)
    } else {
        return None;
    };
    Some(match text {
        Ok(s) => {
            print!("{s}");
            0
        }
        Err(e) => {
            eprintln!("flexio: {e}");
            1
        }
    })
}

/// The compatibility level as the job set will resolve it (`--compat`, else
/// `FLEXIO_COMPAT`, else the newest fio), for the switches acted on before the jobs are
/// loaded (an invalid `FLEXIO_COMPAT` is reported by the load).
fn early_compat(sw: &cli::Switches) -> flexio_job::Compat {
    sw.compat.unwrap_or_else(|| {
        std::env::var(flexio_job::compat::ENV)
            .ok()
            .and_then(|v| flexio_job::Compat::parse(&v).ok())
            .unwrap_or_default()
    })
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
    if sw.extra.latency_log {
        // fio's words; it exits without running anything.
        eprintln!("fio: --latency-log is deprecated. Use per-job latency log options.");
        return 1;
    }
    let compat = early_compat(sw);
    if compat.is_fio333() {
        let errors = sw.extra.fio333_errors();
        if !errors.is_empty() {
            for e in errors {
                eprintln!("{e}");
            }
            eprintln!("flexio: (fio 3.33, --compat=3.33, has no such switch or value)");
            return 1;
        }
    }
    if let Some(code) = informational(sw) {
        return code;
    }
    if let Some(code) = crate::selftest::early(&sw.extra, compat) {
        return code;
    }
    crate::debug::init(&sw.extra);
    if let Some(code) = crate::remote::dispatch(&cli, &sigs) {
        return code;
    }
    if sw.report.is_some() && !crate::cmd::BUILT {
        eprintln!("flexio: {}", crate::cmd::not_built("--report"));
        return 1;
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
    let mut sink = Sink::new(sw, events);
    let notes = Notes {
        info_to_stdout: sink.stdout_normal_only(),
    };
    // Printed while fio parses the job, before its header line.
    for n in plans.iter().flat_map(|t| &t.info_notes) {
        notes.info(n);
    }
    if sink.normal() {
        // A server sends the headers when it parses the jobs, and no version line.
        sink.preamble(&starting_text(&plans, events.is_none()));
    }
    let clock = choose_clock(&plans, &notes);
    // gtod_cpu: a timekeeper thread keeps the time for the run (stopped when it ends).
    let (clock, _timekeeper) = match plans.iter().find_map(|t| t.control.gtod_cpu) {
        Some(cpu) => {
            let (c, k) = crate::clock::Timekeeper::start(clock, cpu as usize);
            (c, Some(k))
        }
        None => (clock, None),
    };
    let genesis = clock.now();
    let mut extras = crate::run_extra::RunExtras::start(&sw.extra, genesis);
    let reporter = Reporter::new(&sink, set, clock, genesis);
    let progress: Arc<Vec<Progress>> =
        Arc::new(plans.iter().map(|_| Progress::default()).collect());
    if let Some(ev) = events {
        ev.running(&plans, &progress);
    }
    let setup_failed = lay_out_in_main_thread(&plans, &mut sink, sw.readonly, &terminate);
    if let Err(e) = create_log_files(&plans) {
        eprintln!("flexio: cannot create log files: {e}");
        return Outcome::failed(1);
    }
    plan_notes(&plans, &notes);
    let disks = watch_disks(&plans, &notes);
    let disk_start = clock.now();
    let Some(status) = StatusThread::start(sw, &plans, &progress, events) else {
        return Outcome::failed(1);
    };
    let mut run = Segments {
        plans: &plans,
        progress: &progress,
        setup_failed: &setup_failed,
        ctx: SegmentCtx {
            clock,
            notes,
            readonly: sw.readonly,
            snapshot_req: Arc::new(crate::progress::AtomicU64::new(0)),
        },
        terminate: &terminate,
        signalled: &signalled,
        events,
        extras: &mut extras,
        reporter: &reporter,
        sink: &mut sink,
        status_every: sw.status_interval_ms.map(|ms| ms * 1_000_000),
        next_status: None,
        next_dump_check: 0,
        results: vec![None; plans.len()],
        quit_all: false,
    };
    run.next_status = run.status_every.map(|iv| clock.now() + iv);
    run.run_all();
    if run.quit_all {
        run.report_never_started();
    }
    let results = std::mem::take(&mut run.results);
    status.stop();
    self_check(&plans, &results, &notes);
    remove_files_of_unrun_jobs(&plans, &results);
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
    sink.emit(&reporter.final_text(&rep, &extras, default_mode));
    if write_outputs(&sink, sw.report.as_deref(), events, &rep).is_err() {
        return Outcome::failed(1);
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

impl<'a> Sink<'a> {
    fn new(sw: &cli::Switches, events: Option<&'a dyn RunEvents>) -> Sink<'a> {
        Sink {
            formats: sw.formats.clone(),
            terse_version: sw.terse_version,
            file: sw
                .output
                .as_ref()
                .map(PathBuf::from)
                .filter(|_| events.is_none()),
            buf: String::new(),
            events,
        }
    }
}

/// The normal output's preamble: the job headers and the version line (`headers`), then
/// "Starting N threads/processes".
fn starting_text(plans: &[ThreadPlan], headers: bool) -> String {
    let mut pre = String::new();
    if headers {
        pre = job_headers(plans);
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
    pre
}

/// File layout, serialized in the main thread (create_serialize; jobs with
/// `layout_in_thread` lay out their own). Returns which jobs failed it.
fn lay_out_in_main_thread(
    plans: &[ThreadPlan],
    sink: &mut Sink,
    readonly: bool,
    terminate: &AtomicBool,
) -> Vec<bool> {
    let mut setup_failed = vec![false; plans.len()];
    for (i, t) in plans.iter().enumerate() {
        if terminate.load(Ordering::Relaxed) {
            break;
        }
        let which = if t.io.layout_in_thread {
            Vec::new() // laid out by the job thread itself
        } else {
            files::files_to_lay_out(t)
        };
        // zonemode=zbd: fio's notes on regions rounded to zones, after the layout.
        let zone_notes = || t.zbd.iter().flat_map(|z| z.notes.iter());
        if which.is_empty() {
            for n in zone_notes() {
                sink.preamble(&format!("{n}\n"));
            }
            continue;
        }
        sink.preamble(&format!("{}\n", files::layout_message(t, &which)));
        if let Err(e) = files::lay_out(t, &which, readonly) {
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
        for n in zone_notes() {
            sink.preamble(&format!("{n}\n"));
        }
    }
    setup_failed
}

/// Log files start empty (threads sharing a name with per_job_logs=0 then append).
fn create_log_files(plans: &[ThreadPlan]) -> std::io::Result<()> {
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
    worker::create_log_files(&log_paths)
}

/// fio's notes about the jobs as planned.
fn plan_notes(plans: &[ThreadPlan], notes: &Notes) {
    for _ in plans.iter().filter(|t| t.blockalign_note) {
        notes.err("fio: Any use of blockalign= turns off randommap");
    }
    for t in plans {
        if t.depth_note {
            notes.info("note: both iodepth >= 1 and synchronous I/O engine are selected, queue depth will be capped at 1");
        }
        if t.control.time_based_without_runtime {
            notes.warn("fio: time_based requires a runtime/timeout setting");
        }
    }
}

/// The disks under the jobs' files, their counters taken now (with the scheduler notes for
/// jobs that set priorities).
fn watch_disks(plans: &[ThreadPlan], notes: &Notes) -> Vec<diskstats::Disk> {
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
    disks
}

/// The status line and the aggregate bandwidth logs, drawn and sampled by their own thread.
struct StatusThread {
    done: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl StatusThread {
    /// `None` (the error said) when the aggregate bandwidth logs cannot be created.
    fn start(
        sw: &cli::Switches,
        plans: &[ThreadPlan],
        progress: &Arc<Vec<Progress>>,
        events: Option<&dyn RunEvents>,
    ) -> Option<StatusThread> {
        let done = Arc::new(AtomicBool::new(false));
        let show_eta = match sw.eta {
            Eta::Always => true,
            Eta::Never => false,
            Eta::Auto => std::io::stderr().is_terminal(),
        } && events.is_none();
        let fio333 = plans.first().is_some_and(|p| p.compat.is_fio333());
        let agg_log = match &sw.extra.bandwidth_log {
            Some(name) => {
                match status::AggLog::create(Path::new("."), name.as_deref().unwrap_or("agg")) {
                    Ok(l) => Some(l),
                    Err(e) => {
                        eprintln!("flexio: cannot create the aggregate bandwidth logs: {e}");
                        return None;
                    }
                }
            }
            None => None,
        };
        // fio 3.33 samples them only while it computes its status line: with it off the
        // files stay empty. The newest fio fills them either way.
        let agg_log = agg_log.filter(|_| show_eta || !fio333);
        let thread = (show_eta || agg_log.is_some()).then(|| {
            status::spawn(
                plans.to_vec(),
                progress.clone(),
                done.clone(),
                status::Show {
                    line: show_eta,
                    interval: Duration::from_millis(sw.eta_interval_ms),
                    newline_every: sw.eta_newline_ms.map(Duration::from_millis),
                    agg_log,
                },
            )
        });
        Some(StatusThread { done, thread })
    }

    fn stop(self) {
        self.done.store(true, Ordering::Relaxed);
        if let Some(h) = self.thread {
            let _ = h.join();
        }
    }
}

/// What every job thread of a segment shares ([`RunCtx`] per reporting group).
#[derive(Clone)]
struct SegmentCtx {
    clock: Clock,
    notes: Notes,
    readonly: bool,
    snapshot_req: Arc<crate::progress::AtomicU64>,
}

/// The run's job threads, stonewall segment after segment: what the segments need and
/// what they collect.
struct Segments<'r, 's> {
    plans: &'r [ThreadPlan],
    progress: &'r [Progress],
    setup_failed: &'r [bool],
    ctx: SegmentCtx,
    terminate: &'r AtomicBool,
    signalled: &'r crate::signals::Signals,
    events: Option<&'r dyn RunEvents>,
    extras: &'r mut crate::run_extra::RunExtras,
    reporter: &'r Reporter,
    sink: &'r mut Sink<'s>,
    /// --status-interval in ns, and when the next dump is due.
    status_every: Option<u64>,
    next_status: Option<u64>,
    /// When the fio-dump-status file is looked for next.
    next_dump_check: u64,
    results: Vec<Option<JobResult>>,
    /// exit_what=all: a job with exitall ended everything; later segments do not run.
    quit_all: bool,
}

/// The reporting groups of a segment, each with its stop flag (exit_what=group stops one).
struct GroupCtxs {
    groups: Vec<u32>,
    ctxs: Vec<RunCtx>,
}

impl GroupCtxs {
    fn of(&self, plan: &ThreadPlan) -> &RunCtx {
        let g = self.groups.binary_search(&plan.groupid).unwrap_or(0);
        &self.ctxs[g]
    }
    fn stop_all(&self) {
        for c in &self.ctxs {
            c.terminate.store(true, Ordering::Relaxed);
        }
    }
}

impl Segments<'_, '_> {
    fn run_all(&mut self) {
        let nseg = self
            .plans
            .iter()
            .map(|p| p.segment)
            .max()
            .map(|m| m + 1)
            .unwrap_or(0);
        for seg in 0..nseg {
            if let Some(ev) = self.events {
                ev.segment_starts(seg);
            }
            if self.terminate.load(Ordering::Relaxed)
                || self.quit_all
                || self.extras.trigger.fired()
            {
                break;
            }
            self.run_segment(seg);
        }
    }

    /// A waitee is done when it has a result, never got to run, or belongs to an earlier
    /// segment.
    fn waitee_done(&self, w: usize, seg: usize) -> bool {
        self.results[w].is_some() || self.setup_failed[w] || self.plans[w].segment < seg
    }

    /// Whether thread `i` may start (wait_for: every thread of its waitee has ended).
    fn may_start(&self, i: usize, seg: usize) -> bool {
        self.plans[i]
            .control
            .wait_for
            .iter()
            .all(|w| self.waitee_done(*w, seg))
    }

    fn group_ctxs(&self, members: &[usize]) -> GroupCtxs {
        let mut groups: Vec<u32> = members.iter().map(|i| self.plans[*i].groupid).collect();
        groups.sort_unstable();
        groups.dedup();
        let c = &self.ctx;
        let ctxs = groups
            .iter()
            .map(|_| RunCtx {
                terminate: Arc::new(AtomicBool::new(false)),
                clock: c.clock,
                notes: c.notes,
                readonly: c.readonly,
                snapshot_req: c.snapshot_req.clone(),
            })
            .collect();
        GroupCtxs { groups, ctxs }
    }

    /// Run one stonewall segment's threads until they have all ended.
    fn run_segment(&mut self, seg: usize) {
        let plans = self.plans;
        let progress = self.progress;
        let members: Vec<usize> = (0..plans.len())
            .filter(|i| plans[*i].segment == seg && !self.setup_failed[*i])
            .collect();
        let g = self.group_ctxs(&members);
        let mut ss_units = crate::steady_judge::units(plans, &members);
        flexio_engine::api::STOP_WAITS.store(false, Ordering::Relaxed);
        flexio_engine::api::IO_JOBS_PENDING.store(
            members.iter().filter(|i| !plans[**i].caps.noio).count(),
            Ordering::Relaxed,
        );
        let (tx, rx) = mpsc::channel::<(usize, JobResult)>();
        std::thread::scope(|s| {
            let spawn = |i: usize, tx: mpsc::Sender<(usize, JobResult)>| {
                let (plan, ctx, pr) = (&plans[i], g.of(&plans[i]), &progress[i]);
                std::thread::Builder::new()
                    .name(format!("flexio-{}", plan.thread_number))
                    .spawn_scoped(s, move || {
                        let _ = tx.send((i, job_thread(plan, ctx, pr)));
                    })
                    .expect("spawning a job thread");
            };
            // wait_for: a job starts once every thread of its waitee has ended.
            let (now, mut waiting): (Vec<usize>, Vec<usize>) =
                members.iter().partition(|&&i| self.may_start(i, seg));
            // Flow groups' members that start now begin their I/O together.
            let mut flows: Vec<(u32, u64)> = Vec::new();
            for &i in &now {
                if let Some((id, _, _)) = plans[i].control.flow {
                    match flows.iter_mut().find(|f| f.0 == id) {
                        Some(f) => f.1 += 1,
                        None => flows.push((id, 1)),
                    }
                }
            }
            for (id, n) in flows {
                worker::flow::expect(id, n);
            }
            for i in now {
                spawn(i, tx.clone());
            }
            let mut tx = (!waiting.is_empty()).then_some(tx);
            let mut left = members.len();
            while left > 0 {
                match rx.recv_timeout(Duration::from_millis(20)) {
                    Ok((i, r)) => {
                        left -= 1;
                        self.ended(i, r, &g);
                        if let Some(t) = &tx {
                            let (ready, still): (Vec<usize>, Vec<usize>) =
                                waiting.iter().partition(|&&k| self.may_start(k, seg));
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
                        if self.terminate.load(Ordering::Relaxed) {
                            g.stop_all();
                        }
                    }
                    Err(mpsc::RecvTimeoutError::Disconnected) => break,
                }
                self.between(seg, &g, &mut ss_units);
            }
        });
        if let Some(ev) = self.events {
            ev.segment_ends(seg);
        }
        // Steady state: samples that arrived with the last results, then the verdicts.
        for u in &mut ss_units {
            let newly = u.poll(progress, |_| true);
            if newly || !u.state.attained {
                self.ctx.notes.info(&u.verdict(&plans[u.members[0]].name));
            }
            for &m in &u.members {
                if let Some(r) = &mut self.results[m] {
                    r.steadystate = Some(u.state.clone());
                }
            }
        }
    }

    /// Thread `i` ended with `r`: its error line, exitall, its result kept.
    fn ended(&mut self, i: usize, r: JobResult, g: &GroupCtxs) {
        let c = &self.plans[i].control;
        if r.stats.failed() {
            self.ctx.notes.info(&format!(
                "fio: pid={}, err={}/{}",
                r.pid, r.stats.error, r.stats.verror
            ));
            if c.exitall_on_error {
                g.stop_all();
            }
        }
        if c.exitall {
            match c.exit_what {
                ExitWhat::Group => g
                    .of(&self.plans[i])
                    .terminate
                    .store(true, Ordering::Relaxed),
                ExitWhat::Stonewall => g.stop_all(),
                ExitWhat::All => {
                    g.stop_all();
                    self.quit_all = true;
                }
            }
        }
        self.results[i] = Some(r);
    }

    /// Between results: triggers, a remote stop, steady state, status dumps.
    fn between(&mut self, seg: usize, g: &GroupCtxs, ss_units: &mut [crate::steady_judge::SsUnit]) {
        let clock = self.ctx.clock;
        if self.extras.trigger.poll(clock.now()) {
            g.stop_all();
        }
        if self.events.is_some_and(|ev| ev.segment_stop(seg)) {
            g.stop_all();
        }
        if g.ctxs.iter().any(|c| c.terminate.load(Ordering::Relaxed)) {
            flexio_engine::api::STOP_WAITS.store(true, Ordering::Relaxed);
        }
        for u in ss_units.iter_mut() {
            if u.poll(self.progress, |m| self.results[m].is_some()) {
                self.ctx
                    .notes
                    .info(&u.verdict(&self.plans[u.members[0]].name));
            }
        }
        let mut dump = false;
        if let (Some(at), Some(iv)) = (self.next_status, self.status_every) {
            if clock.now() >= at {
                dump = true;
                self.next_status = Some(at + iv);
            }
        }
        // SIGUSR1, or a file named fio-dump-status in the temporary directory (removed once
        // seen), as with fio.
        if self.signalled.take_usr1()
            || crate::signals::dump_file_requested(&mut self.next_dump_check, clock.now())
        {
            dump = true;
        }
        if dump {
            let snap = gather_snapshots(
                self.plans,
                self.progress,
                &self.results,
                &self.ctx.snapshot_req,
            );
            let rep = self.reporter.report(&snap, Vec::new());
            let text = self.reporter.render(&rep, false);
            self.sink.emit(&text);
        }
    }

    /// exit_what=all: fio still reports the jobs it never started, with nothing done.
    fn report_never_started(&mut self) {
        for (i, r) in self.results.iter_mut().enumerate() {
            if r.is_none() && !self.setup_failed[i] {
                *r = Some(worker::result_of(
                    &self.plans[i],
                    0,
                    flexio_stats::ThreadStats::default(),
                ));
            }
        }
    }
}

/// One job thread's work and result. A bug in a job thread fails that job, not the whole
/// run.
fn job_thread(plan: &ThreadPlan, ctx: &RunCtx, pr: &Progress) -> JobResult {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        worker::run_thread(plan, ctx, pr)
    }))
    .unwrap_or_else(|_| {
        let mut st = flexio_stats::ThreadStats::default();
        st.set_error(
            libc::EFAULT,
            "file:worker.rs, func=job thread, error=internal error (panic)".into(),
        );
        worker::result_of(plan, pr.tid.load(Ordering::Relaxed), st)
    })
}

/// Self-check: a job that spent most of its time in flexio's own code measured flexio.
fn self_check(plans: &[ThreadPlan], results: &[Option<JobResult>], notes: &Notes) {
    for (i, r) in results.iter().enumerate() {
        let Some(r) = r else { continue };
        let s = &r.stats;
        let wall = s.run_time_ns() as f64;
        if plans[i].caps.measures_tool || s.issued_rwt() == 0 || wall < 1e8 {
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
}

/// Jobs that never ran (interrupted before their turn) still remove the files they were
/// told to remove.
fn remove_files_of_unrun_jobs(plans: &[ThreadPlan], results: &[Option<JobResult>]) {
    for (i, t) in plans.iter().enumerate() {
        if results[i].is_none() && (t.io.unlink || t.io.unlink_each_loop) && !t.caps.diskless {
            for f in t.files.iter().filter(|f| f.block.is_none()) {
                let _ = std::fs::remove_file(&f.path);
            }
        }
    }
}

/// The --output file (atomically) and the --report page; `Err` once the error is said.
fn write_outputs(
    sink: &Sink,
    report_page: Option<&str>,
    events: Option<&dyn RunEvents>,
    rep: &report::RunReport,
) -> Result<(), ()> {
    if let Some(p) = &sink.file {
        if let Err(e) = crate::notes::write_atomic(p, sink.buf.as_bytes()) {
            eprintln!("flexio: cannot write output file '{}': {e}", p.display());
            return Err(());
        }
    }
    if let (Some(page), None, true) = (report_page, events, crate::cmd::BUILT) {
        // The report reads the run as any other result: its json+ text and the log files
        // the jobs wrote (relative names are relative to the working directory).
        let jp = json::report(rep, true, VERSION);
        match crate::cmd::report::write_run_report(&jp, Path::new("."), Path::new(page)) {
            Ok(()) => eprintln!("flexio: wrote the run's report to {page}"),
            Err(e) => {
                eprintln!("flexio: cannot write the report '{page}': {e}");
                return Err(());
            }
        }
    }
    Ok(())
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
fn choose_clock(plans: &[ThreadPlan], notes: &Notes) -> Clock {
    use crate::clock::Source;
    use flexio_job::options::ClockSourceOpt;
    let want = plans.iter().find_map(|t| t.control.clocksource);
    let c = match want {
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
    };
    crate::debug_log!(
        crate::debug::Cat::Time,
        "clocksource: {}",
        c.source().name()
    );
    c
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
    /// fio 3.33's report layout (`--compat=3.33`) or the newest fio's.
    layout: report::Layout,
}

impl Reporter {
    fn new(sink: &Sink, set: &JobSet, clock: Clock, genesis: u64) -> Reporter {
        let (read_ns, resolution_ns) = clock.self_test();
        Reporter {
            formats: sink.formats.clone(),
            terse_version: sink.terse_version,
            global_echo: set.global_echo.clone(),
            clock,
            genesis,
            layout: if set.compat.is_fio333() {
                report::Layout::Fio333
            } else {
                report::Layout::Latest
            },
            clock_info: flexio_stats::report::ClockInfo {
                source: clock.source().name().to_string(),
                read_ns,
                resolution_ns,
            },
        }
    }

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
            match self.layout {
                report::Layout::Fio333 => FIO_COMPAT,
                report::Layout::Latest => FIO_LATEST,
            },
            (
                secs,
                wall.as_millis() as i64,
                flexio_engine::sys::ctime(secs),
            ),
            elapsed_s,
        );
        rep.clock = self.clock_info.clone();
        rep.set_layout(self.layout);
        rep
    }

    /// The final report's text, with what the run's extras add (and the built-in
    /// benchmark's summary).
    fn final_text(
        &self,
        rep: &report::RunReport,
        extras: &crate::run_extra::RunExtras,
        default_mode: bool,
    ) -> String {
        let json = self
            .formats
            .iter()
            .any(|f| matches!(f, Format::Json | Format::JsonPlus));
        let normal = self.formats.contains(&Format::Normal);
        let mut text = extras.decorate(self.render(rep, true), json, normal);
        if default_mode {
            text.push_str(&defaults::summary(rep));
        }
        text
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
