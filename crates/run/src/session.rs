//! One run: parse and load job files or options, plan them, lay out the files, run the
//! reporting groups (stonewall segments), and build the typed report. The seam every front
//! end drives: the command line (`flexio`), a server's session, an MPI rank, a study.
//! Rendering the report (normal, JSON, terse) is the caller's: [`Outcome::report`] is the
//! model the output formats print.

use crate::clock::Clock;
use crate::notes::Notes;
use crate::plan::{self, ThreadPlan};
use crate::progress::Progress;
use crate::worker::{self, RunCtx};
use crate::{diskstats, files, status};
use flexio_engine::CATALOG;
use flexio_job::options::ExitWhat;
use flexio_job::{cli, load, Eta, Format, Host, JobSet, LoadEnv};
use flexio_output::normal;
use flexio_stats::report::{self, JobResult};
use std::io::IsTerminal;
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
pub const EXIT_SIGNAL: i32 = 128;

fn host_env(name: &str) -> Option<String> {
    std::env::var(name).ok()
}

/// Reads a job file (`-`: standard input).
pub fn read_file(p: &Path) -> std::io::Result<Vec<u8>> {
    if p == Path::new("-") {
        let mut v = Vec::new();
        std::io::Read::read_to_end(&mut std::io::stdin(), &mut v)?;
        return Ok(v);
    }
    std::fs::read(p)
}

/// This machine's facts the job language needs (`$ncpus`, `$mb_memory`, `$pagesize`, the
/// environment).
pub fn host() -> Host<'static> {
    let mem = flexio_engine::platform::total_memory();
    Host {
        ncpus: flexio_engine::sys::cpus_configured(),
        mb_memory: mem >> 20,
        pagesize: flexio_engine::os::param::page_size() as u64,
        env: &host_env,
    }
}

/// The job loader's environment: `h`, files read through [`read_file`], the catalog of
/// every option and engine.
pub fn load_env(h: Host<'_>) -> LoadEnv<'_> {
    LoadEnv {
        host: h,
        read: &read_file,
        catalog: &CATALOG,
    }
}

/// What a run tells whoever started it, as it happens: the command line prints it, a
/// server forwards it to its client, an MPI rank synchronises on it, a study ignores it.
/// Every method has a default that does nothing, so an observer names only what it uses.
pub trait Observer: Sync {
    /// fio's normal-format preamble (job headers, "Starting N processes", layout
    /// messages), each piece as it happens; only when the run's formats include the normal
    /// one.
    fn text(&self, _s: &str) {}
    /// The run's own terminal: the job headers and the version line go into the preamble,
    /// and the live status line is drawn on stderr when it is a terminal (`--eta`).
    fn console(&self) -> bool {
        false
    }
    /// fio's informational notes go to stdout (they share it with the normal report)
    /// rather than stderr.
    fn info_to_stdout(&self) -> bool {
        false
    }
    /// The text of the `--output` file as the run collects it, where it takes fio's notes
    /// (informational ones only there, errors there and on stderr).
    fn output(&self) -> Option<Arc<std::sync::Mutex<String>>> {
        None
    }
    /// The run's threads and their live progress, once before the files are laid out.
    fn running(&self, _plans: &[ThreadPlan], _progress: &Arc<Vec<Progress>>) {}
    /// An interval report: `--status-interval`, SIGUSR1 or a `fio-dump-status` file asked
    /// for the statistics so far (the same model as the final report).
    fn interval(&self, _report: &report::RunReport) {}
    /// A stonewall segment (reporting group) is about to start (MPI: a barrier).
    fn segment_starts(&self, _segment: usize) {}
    /// Polled while a segment runs: `true` stops its jobs now, as their runtime ending
    /// would (MPI `--mpi-stonewall`: another rank finished the segment first).
    fn segment_stop(&self, _segment: usize) -> bool {
        false
    }
    /// Every job of the segment has ended on this host.
    fn segment_ends(&self, _segment: usize) {}
    /// How often the run should hand [`Observer::live`] a sample (`None`, the default:
    /// never). Sampling copies each running thread's statistics once per period, off its
    /// I/O path.
    fn live_every(&self) -> Option<Duration> {
        None
    }
    /// A live sample: every thread's statistics so far, each period and once more at the
    /// end with the final ones (`flexio_stats::live::Tracker` turns them into intervals).
    fn live(&self, _sample: &LiveSample) {}
}

/// The statistics of the run's threads at one moment ([`Observer::live`]).
pub struct LiveSample<'a> {
    /// The run's threads, in plan order.
    pub plans: &'a [ThreadPlan],
    /// Per thread (plan order): its statistics so far (final once it ended); `None` before
    /// it started.
    pub jobs: Vec<Option<JobResult>>,
    /// Per thread: it has ended, and its entry in `jobs` is its final result.
    pub done: Vec<bool>,
    /// Since the run's start, in ns of the run's clock.
    pub elapsed_ns: u64,
    /// Wall-clock time of the sample, ms since the Unix epoch.
    pub unix_ms: u64,
    /// The run has ended: these are the final statistics.
    pub last: bool,
}

/// An observer that wants nothing (a study's runs, a program that reads only the results).
pub struct Quiet;

impl Observer for Quiet {}

/// A run's results.
pub struct Outcome {
    /// Exit status, as `flexio` returns it: the number of failed jobs (at most 255), 128
    /// when a signal ended the run.
    pub code: i32,
    /// The finished jobs' results, in plan order.
    pub results: Vec<JobResult>,
    /// The report built from them, the model every output format renders (`None` when
    /// the run stopped before it).
    pub report: Option<report::RunReport>,
    /// The run's wall time in ms (disk statistics' `msec`).
    pub disk_msec: u64,
    /// What the run's extras measured (`--idle-prof`, triggers): they add their lines to
    /// the rendered report ([`crate::run_extra::RunExtras::decorate`]).
    pub extras: Option<crate::run_extra::RunExtras>,
}

impl Outcome {
    fn failed(code: i32) -> Outcome {
        Outcome {
            code,
            results: Vec::new(),
            report: None,
            disk_msec: 0,
            extras: None,
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

/// The name a job given as text has in messages (`job text:3: ...`).
pub const JOB_TEXT: &str = "job text";

/// [`prepare`] for a job given as text (a fio job file's contents) rather than a file;
/// `args` are further options as they would stand on the command line before the job
/// file (`--output-format=json`, `--compat=3.33`, ...). Files the text includes are read
/// from the file system.
pub fn prepare_job_text(text: &str, args: &[&str]) -> Result<Prepared, String> {
    let mut argv: Vec<String> = args.iter().map(|a| a.to_string()).collect();
    argv.push(JOB_TEXT.to_string());
    let read = |p: &Path| {
        if p == Path::new(JOB_TEXT) {
            Ok(text.as_bytes().to_vec())
        } else {
            std::fs::read(p)
        }
    };
    prepare(&argv, &read)
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
    if cfg!(target_os = "rtems") {
        if let Some(why) = plan::rtems::run_refusal(&cli.switches.extra) {
            return Err(why);
        }
    }
    let mut set = load::load(&cli, &env).map_err(|e| e.to_string())?;
    adjust(&mut set);
    plan::draw_seeds(&mut set);
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

/// Run a prepared run: `observer` sees its preamble, progress and interval reports;
/// `terminate` stops it early (the report of what ran is still built); `signals` are the
/// signals [`crate::signals::install`] watches (SIGUSR1 asks for an interval report).
pub fn run_prepared(
    p: Prepared,
    observer: &dyn Observer,
    terminate: Arc<AtomicBool>,
    signals: crate::signals::Signals,
) -> Outcome {
    run_planned(&p.cli, &p.set, p.plans, (terminate, signals), observer)
}

impl Prepared {
    /// The resolved plan: one [`ThreadPlan`] per job thread (clones of `numjobs` each have
    /// their own), with every option resolved into the sections the parts of the run read.
    pub fn plans(&self) -> &[ThreadPlan] {
        &self.plans
    }

    /// Run it ([`run_prepared`]) under the process-wide interrupt flag ([`interrupt`]):
    /// SIGINT or SIGTERM ends the run as on the command line (the report of what ran is
    /// still built), and every later run in the process with it.
    pub fn run(self, observer: &dyn Observer) -> Outcome {
        let (terminate, signals) = interrupt().clone();
        run_prepared(self, observer, terminate, signals)
    }
}

/// The interrupt flag shared by every in-process run of a program that embeds flexio
/// (SIGINT and SIGTERM set it, once [`crate::signals::install`]ed here on first use): the
/// current run stops, and a study stops after it.
pub fn interrupt() -> &'static (Arc<AtomicBool>, crate::signals::Signals) {
    static SIGS: std::sync::OnceLock<(Arc<AtomicBool>, crate::signals::Signals)> =
        std::sync::OnceLock::new();
    SIGS.get_or_init(|| {
        let t = Arc::new(AtomicBool::new(false));
        let s = crate::signals::install(t.clone());
        (t, s)
    })
}

/// The preamble goes to the observer only where fio prints it: in the normal format.
struct Preamble<'a> {
    normal: bool,
    observer: &'a dyn Observer,
}

impl Preamble<'_> {
    fn text(&self, s: &str) {
        if self.normal {
            self.observer.text(s);
        }
    }
}

/// Run the plans of a loaded job set (what [`run_prepared`] runs; the command line plans
/// itself to handle `--showcmd` and the blktrace merge before it).
pub fn run_planned(
    cli: &cli::Cli,
    set: &JobSet,
    plans: Vec<ThreadPlan>,
    (terminate, signalled): (Arc<AtomicBool>, crate::signals::Signals),
    observer: &dyn Observer,
) -> Outcome {
    let sw = &cli.switches;
    let preamble = Preamble {
        normal: sw.formats.contains(&Format::Normal),
        observer,
    };
    let notes = Notes {
        info_to_stdout: observer.info_to_stdout(),
        output: observer.output(),
    };
    // fio prints a thread's notes as it parses the thread's options, before the header line
    // (or `...`) that follows them. A server sends the headers when it parses the jobs,
    // and no version line.
    let console = observer.console();
    let heads = if console {
        header_pieces(&plans)
    } else {
        vec![String::new(); plans.len()]
    };
    for (t, head) in plans.iter().zip(&heads) {
        for n in &t.info_notes {
            notes.info(n);
        }
        if !head.is_empty() {
            preamble.text(head);
        }
    }
    preamble.text(&starting_tail(&plans, console));
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
    let reporter = Reporter::new(set, &plans, clock, genesis);
    let progress: Arc<Vec<Progress>> =
        Arc::new(plans.iter().map(|_| Progress::default()).collect());
    observer.running(&plans, &progress);
    let setup_failed = lay_out_in_main_thread(&plans, &preamble, &notes, sw.readonly, &terminate);
    if let Err(e) = create_log_files(&plans) {
        notes.err(&format!("flexio: cannot create log files: {e}"));
        return Outcome::failed(1);
    }
    plan_notes(&plans, &notes);
    let disks = watch_disks(&plans, &notes);
    let disk_start = clock.now();
    let Some(status) = StatusThread::start(sw, &plans, &progress, observer.console()) else {
        return Outcome::failed(1);
    };
    let mut run = Segments {
        plans: &plans,
        progress: &progress,
        setup_failed: &setup_failed,
        ctx: SegmentCtx {
            clock,
            notes: notes.clone(),
            readonly: sw.readonly,
            snapshot_req: Arc::new(crate::progress::AtomicU64::new(0)),
        },
        terminate: &terminate,
        signalled: &signalled,
        observer,
        extras: &mut extras,
        reporter: &reporter,
        status_every: sw.status_interval_ms.map(|ms| ms * 1_000_000),
        next_status: None,
        next_dump_check: 0,
        results: vec![None; plans.len()],
        quit_all: false,
        live_every: observer
            .live_every()
            .map(|d| (d.as_nanos() as u64).max(1_000_000)),
        next_live: 0,
        genesis,
    };
    run.next_status = run.status_every.map(|iv| clock.now() + iv);
    run.next_live = genesis + run.live_every.unwrap_or(0);
    run.run_all();
    if run.quit_all {
        run.report_never_started();
    }
    if run.live_every.is_some() {
        run.live_sample(run.results.clone(), true);
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
    for n in &rep.notes {
        notes.info(n);
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
        extras: Some(extras),
    }
}

/// The normal output's preamble: the job headers and the version line (`headers`), then
/// "Starting N threads/processes".
pub fn starting_text(plans: &[ThreadPlan], headers: bool) -> String {
    let mut pre = String::new();
    if headers {
        pre = job_headers(plans);
    }
    pre + &starting_tail(plans, headers)
}

/// [`starting_text`] after the job headers: the version line (with the headers) and
/// `Starting N processes`.
fn starting_tail(plans: &[ThreadPlan], headers: bool) -> String {
    let mut pre = String::new();
    if headers {
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
    preamble: &Preamble,
    notes: &Notes,
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
                preamble.text(&format!("{n}\n"));
            }
            continue;
        }
        preamble.text(&format!("{}\n", files::layout_message(t, &which)));
        if let Err(e) = files::lay_out(t, &which, readonly) {
            let errno = e.raw_os_error().unwrap_or(libc::EIO);
            let text = if e.raw_os_error().is_some() {
                crate::notes::strerror(errno)
            } else {
                e.to_string()
            };
            notes.err(&format!("flexio: {}: file layout failed: {text}", t.name));
            notes.err(&format!(
                "fio: pid=0, err={errno}/file:files.rs, func=layout, error={text}"
            ));
            setup_failed[i] = true;
        }
        for n in zone_notes() {
            preamble.text(&format!("{n}\n"));
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
        for n in &t.gen_notes {
            notes.info(n);
        }
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
    // One path per device, by planning's look at the files (a job of 100,000 files on one
    // file system is one path here, looked at once more).
    fn one_each<'a>(files: impl IntoIterator<Item = &'a crate::plan::FilePlan>) -> Vec<PathBuf> {
        crate::plan::one_per_device(&crate::plan::device_keys(files))
            .into_iter()
            .map(|(p, _, _)| p.to_path_buf())
            .collect()
    }
    let paths = one_each(
        plans
            .iter()
            .filter(|t| !t.engine.caps.diskless && t.control.disk_util)
            .flat_map(|t| t.files.iter()),
    );
    let prio_paths = one_each(
        plans
            .iter()
            .filter(|t| t.control.uses_prio)
            .filter(|t| !t.engine.caps.diskless)
            .flat_map(|t| t.files.iter()),
    );
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
        console: bool,
    ) -> Option<StatusThread> {
        let done = Arc::new(AtomicBool::new(false));
        let show_eta = match sw.eta {
            Eta::Always => true,
            Eta::Never => false,
            Eta::Auto => std::io::stderr().is_terminal(),
        } && console;
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
struct Segments<'r> {
    plans: &'r [ThreadPlan],
    progress: &'r [Progress],
    setup_failed: &'r [bool],
    ctx: SegmentCtx,
    terminate: &'r AtomicBool,
    signalled: &'r crate::signals::Signals,
    observer: &'r dyn Observer,
    extras: &'r mut crate::run_extra::RunExtras,
    reporter: &'r Reporter,
    /// --status-interval in ns, and when the next dump is due.
    status_every: Option<u64>,
    next_status: Option<u64>,
    /// When the fio-dump-status file is looked for next.
    next_dump_check: u64,
    results: Vec<Option<JobResult>>,
    /// exit_what=all: a job with exitall ended everything; later segments do not run.
    quit_all: bool,
    /// Observer::live_every in ns, and when the next sample is due.
    live_every: Option<u64>,
    next_live: u64,
    genesis: u64,
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

impl Segments<'_> {
    fn run_all(&mut self) {
        let nseg = self
            .plans
            .iter()
            .map(|p| p.segment)
            .max()
            .map(|m| m + 1)
            .unwrap_or(0);
        for seg in 0..nseg {
            self.observer.segment_starts(seg);
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
                notes: c.notes.clone(),
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
            members
                .iter()
                .filter(|i| !plans[**i].engine.caps.noio)
                .count(),
            Ordering::Relaxed,
        );
        let (tx, rx) = mpsc::channel::<(usize, JobResult)>();
        // wait_for: a job starts once every thread of its waitee has ended.
        let (now, mut waiting): (Vec<usize>, Vec<usize>) =
            members.iter().partition(|&&i| self.may_start(i, seg));
        // The threads that start now go on together once all exist.
        let gate = worker::StartGate::new(now.len());
        std::thread::scope(|s| {
            let gate = &gate;
            let spawn = |i: usize, tx: mpsc::Sender<(usize, JobResult)>, with_gate: bool| {
                let (plan, ctx, pr) = (&plans[i], g.of(&plans[i]), &progress[i]);
                let waits = with_gate.then_some(gate);
                std::thread::Builder::new()
                    .name(format!("flexio-{}", plan.thread_number))
                    .spawn_scoped(s, move || {
                        let _ = tx.send((i, job_thread(plan, ctx, pr, waits)));
                    })
                    .unwrap_or_else(|e| {
                        // The threads already made must not wait for this one.
                        gate.open();
                        panic!("spawning a job thread: {e}")
                    });
            };
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
                spawn(i, tx.clone(), true);
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
                                spawn(k, t.clone(), false);
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
        self.observer.segment_ends(seg);
        // Steady state: samples that arrived with the last results, then the verdicts.
        for u in &mut ss_units {
            let newly = u.poll(progress, |_| true);
            // A stop already said why; flexio's additions are told at the end.
            if (newly || !u.state.attained || u.state.watch.active()) && !u.told {
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
        if self.observer.segment_stop(seg) {
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
                u.told = true;
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
            let snap: Vec<JobResult> = snap.into_iter().flatten().collect();
            let rep = self.reporter.report(&snap, Vec::new());
            self.observer.interval(&rep);
        }
        if let Some(iv) = self.live_every {
            let now = clock.now();
            if now >= self.next_live {
                // Due times stay on the period's grid; a late sample does not shift them.
                self.next_live += iv * ((now - self.next_live) / iv + 1);
                let jobs = gather_snapshots(
                    self.plans,
                    self.progress,
                    &self.results,
                    &self.ctx.snapshot_req,
                );
                self.live_sample(jobs, false);
            }
        }
    }

    fn live_sample(&self, jobs: Vec<Option<JobResult>>, last: bool) {
        let unix_ms = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_millis() as u64)
            .unwrap_or(0);
        self.observer.live(&LiveSample {
            plans: self.plans,
            jobs,
            done: self.results.iter().map(Option::is_some).collect(),
            elapsed_ns: self.ctx.clock.now().saturating_sub(self.genesis),
            unix_ms,
            last,
        });
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
fn job_thread(
    plan: &ThreadPlan,
    ctx: &RunCtx,
    pr: &Progress,
    gate: Option<&worker::StartGate>,
) -> JobResult {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        worker::run_thread(plan, ctx, pr, gate)
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
        if plans[i].engine.caps.measures_tool || wall < 1e8 {
            continue;
        }
        let Some(share) = s.tool_share() else {
            continue;
        };
        let engine = s.engine_ns as f64 * 100.0 / wall;
        let wait = s.wait_ns as f64 * 100.0 / wall;
        let tool = share * 100.0;
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
        if results[i].is_none() && t.io.unlink && !t.engine.caps.diskless {
            for f in t.files.iter().filter(|f| f.block.is_none()) {
                let _ = std::fs::remove_file(&f.path);
            }
        }
    }
}
/// The job header lines ("name: (g=0): rw=..."), once per job definition (not per clone).
pub fn job_headers(plans: &[ThreadPlan]) -> String {
    header_pieces(plans).concat()
}

/// The job header lines, thread by thread: a job's first thread has its header line, its
/// last clone fio's `...` (fio adds the clones counting down and prints it at the one
/// numbered 1), the others nothing. Engines that move no data print their own line
/// instead (fio's NOIO engines).
fn header_pieces(plans: &[ThreadPlan]) -> Vec<String> {
    let mut pieces = Vec::with_capacity(plans.len());
    for (i, t) in plans.iter().enumerate() {
        let h = &t.header;
        let last_clone = !h.first && plans.get(i + 1).map_or(true, |next| next.header.first);
        let piece = if t.engine.caps.noio {
            String::new()
        } else if h.first {
            normal::job_header(
                &t.name,
                t.groupid,
                h.rw,
                h.bs,
                h.bs_by_pattern,
                &t.engine.name,
                h.iodepth,
                t.report.kb_base,
                t.report.sig_figs,
            )
        } else if last_clone {
            "...\n".to_string()
        } else {
            String::new()
        };
        pieces.push(piece);
    }
    pieces
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
/// jobs that have finished, per thread (a job busy in one long I/O answers late: its
/// previous copy, if any, is used; `None` for a thread without either).
fn gather_snapshots(
    plans: &[ThreadPlan],
    progress: &[Progress],
    results: &[Option<JobResult>],
    req: &crate::progress::AtomicU64,
) -> Vec<Option<JobResult>> {
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
    let mut out = Vec::with_capacity(plans.len());
    for (i, p) in plans.iter().enumerate() {
        out.push(if let Some(r) = &results[i] {
            Some(r.clone())
        } else {
            let stats = progress[i].snapshot.lock().ok().and_then(|s| s.clone());
            stats.map(|st| worker::result_of(p, progress[i].tid.load(Ordering::Relaxed), st))
        });
    }
    out
}

/// Builds the reports (the final one and the interval ones).
struct Reporter {
    global_echo: Vec<(String, String)>,
    clock: Clock,
    genesis: u64,
    clock_info: flexio_stats::report::ClockInfo,
    /// fio 3.33's report layout (`--compat=3.33`) or the newest fio's.
    layout: report::Layout,
    /// Where the results come from, read once at the start.
    provenance: Vec<(String, flexio_stats::report::Fact)>,
}

impl Reporter {
    fn new(set: &JobSet, plans: &[ThreadPlan], clock: Clock, genesis: u64) -> Reporter {
        let (read_ns, resolution_ns) = clock.self_test();
        // The file engines (filecreate, dircreate, ...) are diskless in fio's sense (no
        // layout, no disk statistics), but the file system they work on is what they measure.
        let targets = crate::plan::device_keys(
            plans
                .iter()
                .filter(|t| {
                    let c = &t.engine.caps;
                    !c.diskless || c.file_op || c.dirs
                })
                .flat_map(|t| t.files.iter()),
        );
        let compat = if set.compat.is_fio333() {
            "3.33"
        } else {
            "latest"
        };
        Reporter {
            provenance: {
                let mut p = crate::provenance::collect_keyed(&targets, compat);
                p.push(("job".to_string(), crate::provenance::job(set)));
                p
            },
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
        rep.provenance = self.provenance.clone();
        rep.set_layout(self.layout);
        rep
    }
}
