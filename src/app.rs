//! One invocation of flexio: parse, plan, lay out, run the groups, report.

use crate::defaults;
use flexio_engine::CATALOG;
use flexio_job::{cli, help, load, Format};
use flexio_output::{json, normal, terse};
use flexio_run::session::{host, load_env, run_planned, Observer, FIO_COMPAT, FIO_LATEST, VERSION};
use flexio_run::{plan, report};
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};

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
/// What a run on the command line prints, and where: the preamble and the reports on
/// stdout, or collected for `--output`.
struct Sink {
    formats: Vec<Format>,
    terse_version: u32,
    file: Option<PathBuf>,
    /// Report text collected for --output (the run's notes join it: [`Observer::output`]).
    buf: Arc<Mutex<String>>,
    /// The live outputs (--metrics-listen, --interval-stream, --live).
    #[cfg(feature = "live")]
    live: Option<crate::live::Live>,
    /// Text for stdout held while the live view owns the terminal.
    held: Mutex<Option<String>>,
}

impl Sink {
    fn new(sw: &cli::Switches) -> Sink {
        Sink {
            formats: sw.formats.clone(),
            terse_version: sw.terse_version,
            file: sw.output.as_ref().map(PathBuf::from),
            buf: Arc::new(Mutex::new(String::new())),
            #[cfg(feature = "live")]
            live: None,
            held: Mutex::new(None),
        }
    }

    /// The live view ends: the text it held goes out.
    fn release(&self) {
        let held = self.held.lock().ok().and_then(|mut h| h.take());
        if let Some(t) = held {
            self.emit(&t);
        }
    }

    /// Report text: collected for --output, else written to stdout now.
    fn emit(&self, text: &str) {
        if let Ok(mut h) = self.held.lock() {
            if let Some(h) = h.as_mut() {
                h.push_str(text);
                return;
            }
        }
        if self.file.is_some() {
            if let Ok(mut b) = self.buf.lock() {
                b.push_str(text);
            }
        } else {
            flexio_run::notes::print(text);
        }
    }

    /// A report in the run's formats: fio prints terse, then JSON, then normal.
    fn render(&self, rep: &report::RunReport) -> String {
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

    /// The final report's text, with what the run's extras add (and the built-in
    /// benchmark's summary).
    fn final_text(
        &self,
        rep: &report::RunReport,
        extras: Option<&flexio_run::run_extra::RunExtras>,
        default_mode: bool,
    ) -> String {
        let json = self
            .formats
            .iter()
            .any(|f| matches!(f, Format::Json | Format::JsonPlus));
        let normal = self.formats.contains(&Format::Normal);
        let mut text = self.render(rep);
        if let Some(x) = extras {
            text = x.decorate(text, json, normal);
        }
        if default_mode {
            text.push_str(&defaults::summary(rep));
        }
        text
    }
}

impl Observer for Sink {
    fn text(&self, s: &str) {
        self.emit(s);
    }
    fn console(&self) -> bool {
        true
    }
    /// Only the normal format, on stdout: fio's notes go there too.
    fn info_to_stdout(&self) -> bool {
        self.file.is_none() && self.formats == [Format::Normal]
    }
    /// An `--output` file of the normal format alone takes fio's notes, as fio writes
    /// them there; one with a machine-readable format stays parseable (notes to stderr).
    fn output(&self) -> Option<Arc<Mutex<String>>> {
        (self.formats == [Format::Normal])
            .then(|| self.file.as_ref().map(|_| Arc::clone(&self.buf)))
            .flatten()
    }
    fn interval(&self, rep: &report::RunReport) {
        self.emit(&self.render(rep));
    }
    #[cfg(feature = "live")]
    fn running(
        &self,
        plans: &[flexio_run::plan::ThreadPlan],
        progress: &Arc<Vec<flexio_run::progress::Progress>>,
    ) {
        if let Some(l) = &self.live {
            l.running(plans, progress);
        }
    }
    #[cfg(feature = "live")]
    fn live_every(&self) -> Option<std::time::Duration> {
        self.live.as_ref().map(|l| l.every())
    }
    #[cfg(feature = "live")]
    fn live(&self, sample: &flexio_run::LiveSample) {
        if let Some(l) = &self.live {
            l.sample(sample);
        }
    }
}

/// The live switches checked before anything runs: built in, not in a remote mode; `--live`
/// without a terminal falls back to fio's status line.
fn check_live(cli: &mut cli::Cli) -> Result<(), String> {
    let sw = &mut cli.switches;
    if !sw.live.any() {
        return Ok(());
    }
    if !cfg!(feature = "live") {
        return Err(
            "--metrics-listen, --interval-stream and --live are not built into this flexio: they need the cargo feature `live` (the small static builds leave them out)".into(),
        );
    }
    let r = &sw.remote;
    if !r.clients.is_empty() || r.server.is_some() || r.mpi {
        return Err("--metrics-listen, --interval-stream and --live are not supported by flexio with --client, --server or --mpi yet".into());
    }
    #[cfg(feature = "live")]
    if sw.live.view {
        if crate::live::have_terminal() {
            sw.eta = flexio_job::Eta::Never;
        } else {
            eprintln!("flexio: --live needs a terminal on standard input and output: showing fio's status line instead");
            sw.live.view = false;
            sw.eta = flexio_job::Eta::Always;
        }
    }
    Ok(())
}

/// The switches that print something and exit (--version, --help, --inflate-log,
/// --cmdhelp, --enghelp): their exit status, or `None` to go on.
fn informational(sw: &cli::Switches) -> Option<i32> {
    if sw.version {
        outln!("{VERSION} ({FIO_LATEST} compatible; {FIO_COMPAT} with --compat=3.33)");
        return Some(0);
    }
    if sw.help {
        out!("{VERSION}\n{}{}", cli::usage(), crate::cmd::usage());
        return Some(0);
    }
    if let Some(path) = &sw.inflate_log {
        // fio's --inflate-log: a log.fz as the text lines of the log, on stdout; its
        // records read in the layout of the fio --compat names where they can be.
        let layout = flexio_run::logz::Layout::of(early_compat(sw));
        return Some(
            match flexio_run::logz::inflate_file(std::path::Path::new(path), layout) {
                Ok(text) => i32::from(flexio_run::notes::stdout(text.as_bytes()).is_err()),
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
            out!("{s}");
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
    let sigs = (terminate.clone(), flexio_run::signals::install(terminate));
    // `flexio rerun ID`: a stored run's resolved job, run as any job file.
    #[cfg(feature = "tools")]
    if args.first().map(String::as_str) == Some("rerun") {
        return match crate::cmd::results::rerun_argv(&args[1..]) {
            Ok((argv, _dir)) => run(argv),
            Err(code) => code,
        };
    }
    if let Some(code) = crate::cmd::dispatch(&args) {
        return code;
    }
    let mut cli = match cli::parse_args(&args, &CATALOG) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("flexio: {e}");
            return 1;
        }
    };
    if let Err(e) = check_live(&mut cli) {
        eprintln!("flexio: {e}");
        return 1;
    }
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
    flexio_run::debug::init(&sw.extra);
    if let Err(e) = crate::cmd::store_needs_save(&sw.store, &sw.save) {
        eprintln!("flexio: {e}");
        return 1;
    }
    let remote = &sw.remote;
    if sw.save.is_some() && (!remote.clients.is_empty() || remote.server.is_some() || remote.mpi) {
        eprintln!(
            "flexio: --save is not supported by flexio with --client, --server or --mpi yet: save the JSON output and store it with `flexio import`"
        );
        return 1;
    }
    if let Some(code) = crate::remote::dispatch(&cli, &sigs) {
        return code;
    }
    if sw.report.is_some() && !crate::cmd::BUILT {
        eprintln!("flexio: {}", crate::cmd::not_built("--report"));
        return 1;
    }
    if sw.save.is_some() && !crate::cmd::BUILT {
        eprintln!("flexio: {}", crate::cmd::not_built("--save"));
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
    let mut set = if default_mode {
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
    plan::draw_seeds(&mut set);
    flexio_run::debug::parse_lines(&set);
    for w in &set.warnings {
        eprintln!("flexio: warning: {w}");
    }
    if sw.warnings_fatal && !set.warnings.is_empty() {
        eprintln!("flexio: warnings are fatal (--warnings-fatal)");
        return 1;
    }
    if sw.showcmd {
        out!("{}", flexio_job::showcmd::showcmd(&set));
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
    flexio_run::run_extra::after_plan(&sw.extra, &mut plans);
    #[allow(unused_mut)]
    let mut sink = Sink::new(sw);
    #[cfg(feature = "live")]
    if sw.live.any() {
        match crate::live::Live::start(&sw.live, sw.live.view, sigs.0.clone()) {
            Ok(l) => {
                if l.holds_terminal() {
                    if let Ok(mut h) = sink.held.lock() {
                        *h = Some(String::new());
                    }
                }
                sink.live = Some(l);
            }
            Err(e) => {
                eprintln!("flexio: {e}");
                return 1;
            }
        }
    }
    let out = run_planned(&cli, &set, plans, sigs, &sink);
    #[cfg(feature = "live")]
    if let Some(l) = sink.live.take() {
        l.stop_exporter();
    }
    sink.release();
    let code = match &out.report {
        Some(rep) => {
            sink.emit(&sink.final_text(rep, out.extras.as_ref(), default_mode));
            if write_outputs(&sink, sw.report.as_deref(), rep).is_err() || !save(sw, &args, rep) {
                1
            } else {
                out.code
            }
        }
        None => out.code,
    };
    if default_mode {
        defaults::cleanup();
    }
    code
}

/// `--save[=LABEL]`: the run's json+ result into the results store, after its own outputs
/// are written; `false` once a failure is said.
fn save(sw: &cli::Switches, args: &[String], rep: &report::RunReport) -> bool {
    let Some(label) = &sw.save else {
        return true;
    };
    let jp = json::report(rep, true, VERSION);
    let runs = vec![(crate::cmd::command_line(args), jp)];
    match crate::cmd::save_batch(sw.store.as_deref(), "run", label.as_deref(), runs) {
        Ok(m) => {
            eprintln!(
                "flexio: {m}{}",
                label
                    .as_ref()
                    .map(|l| format!(" (label '{l}')"))
                    .unwrap_or_default()
            );
            true
        }
        Err(e) => {
            eprintln!("flexio: the result was not saved: {e}");
            false
        }
    }
}

/// The --output file (atomically) and the --report page; `Err` once the error is said.
fn write_outputs(
    sink: &Sink,
    report_page: Option<&str>,
    rep: &report::RunReport,
) -> Result<(), ()> {
    if let Some(p) = &sink.file {
        let text = sink.buf.lock().map(|b| b.clone()).unwrap_or_default();
        if let Err(e) = flexio_run::notes::write_atomic(p, text.as_bytes()) {
            eprintln!("flexio: cannot write output file '{}': {e}", p.display());
            return Err(());
        }
    }
    #[cfg(not(feature = "tools"))]
    let _ = (report_page, rep);
    #[cfg(feature = "tools")]
    if let Some(page) = report_page {
        // The report reads the run as any other result: its json+ text and the log files
        // the jobs wrote (relative names are relative to the working directory).
        let jp = json::report(rep, true, VERSION);
        let (here, page_path) = (std::path::Path::new("."), std::path::Path::new(page));
        match crate::cmd::report::write_run_report(&jp, here, page_path) {
            Ok(()) => eprintln!("flexio: wrote the run's report to {page}"),
            Err(e) => {
                eprintln!("flexio: cannot write the report '{page}': {e}");
                return Err(());
            }
        }
    }
    Ok(())
}
