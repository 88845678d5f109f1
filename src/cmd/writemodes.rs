//! `flexio writemodes`: the same sequential write run four ways in one command, with the
//! CPU each costs beside its throughput (docs/studies/write-modes.md):
//!
//! * `buffered`: write(2) into the page cache; write-back happens whenever the kernel
//!   decides (the data is not durable when the job ends, and writing it is not timed);
//! * `bgsync`: the same writes while a syncer thread of this process calls fdatasync(2) on
//!   the file every `--bg-interval` (default 100 ms) for as long as the job runs: write-back
//!   pushed by a background syncer (it opens the file by name each time), the writer never
//!   waits for it itself;
//! * `osync`: the file opened with O_SYNC (fio's `sync=1`): every write returns once it is
//!   on stable storage;
//! * `fsync`: fsync(2) after every N writes (fio's `fsync=N`, default 32).
//!
//! Each mode is a fio job run in-process (`super::inproc`) on a fresh file; its CPU is the
//! job thread's usr/sys time (fio's `cpu` line), plus the syncer thread's for `bgsync`.

use super::args::{positive, size, time_ms, Output, Scratch};
use super::NOISY;
use flexio_run::inproc;
use serde_json::{json, Value};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The modes, in the order they run.
pub const MODES: [&str; 7] = [
    "buffered",
    "bgsync",
    "osync",
    "dsync",
    "fsync",
    "end_fsync",
    "direct",
];
/// The modes run when `--modes` is not given.
pub const DEFAULT_MODES: [&str; 4] = ["buffered", "bgsync", "osync", "fsync"];

/// Sequential writes several ways, each with its CPU
///
/// Sequential writes several ways in one run, each on a fresh file: buffered (page cache
/// only), bgsync (buffered while a syncer thread fdatasyncs the file throughout, one sync
/// every interval from the first write), osync (O_SYNC), dsync (O_DSYNC), fsync (fsync every
/// N writes), end_fsync (buffered, one fsync at the end, timed), direct (O_DIRECT). Prints
/// MiB/s, IOPS, completion latency and the usr/sys CPU of each (fio's cpu line, per job
/// thread; bgsync adds its syncer).
#[derive(clap::Parser, Debug, Clone)]
#[command(
    name = "writemodes",
    after_help = "Exit status: 0 done, 1 a mode failed, 2 bad arguments, 128 interrupted."
)]
pub struct Args {
    #[command(flatten)]
    pub scratch: Scratch,
    /// The scratch file (from --dir or --file)
    #[arg(skip)]
    pub file: PathBuf,
    /// Bytes written per mode
    #[arg(long, value_name = "SIZE", default_value = "64m", value_parser = size, allow_hyphen_values = true)]
    pub size: u64,
    /// Write size
    #[arg(long, value_name = "SIZE", default_value = "4k", value_parser = size, allow_hyphen_values = true)]
    pub bs: u64,
    /// fsync mode: fsync after every N writes
    #[arg(long, value_name = "N", default_value_t = 32, value_parser = positive::<u64>)]
    pub every: u64,
    /// bgsync mode: from one of the syncer's fdatasyncs to the next (0: back to back)
    #[arg(long = "bg-interval", value_name = "TIME", default_value = "100ms",
          value_parser = interval)]
    pub bg_interval: Duration,
    /// Stop a mode after this long even if --size is not written
    #[arg(long = "runtime", value_name = "TIME", default_value = "30s", value_parser = time_ms)]
    pub runtime_ms: u64,
    /// Which modes, e.g. buffered,osync, or all (with all, direct is left out, with a note,
    /// where the file system refuses O_DIRECT)
    #[arg(long = "modes", value_name = "LIST", default_value = "buffered,bgsync,osync,fsync",
          value_parser = modes)]
    modes_arg: Modes,
    /// The modes to run, in their order
    #[arg(skip)]
    pub modes: Vec<&'static str>,
    /// `--modes all`: modes the file system cannot do (O_DIRECT) are left out, not failed.
    #[arg(skip)]
    pub all_modes: bool,
    /// Run every mode N times, round after round: each row shows the median run, its MiB/s
    /// range, and ~ when runs disagree
    #[arg(long, value_name = "N", default_value_t = 1,
          value_parser = clap::value_parser!(u32).range(1..=100))]
    pub repeat: u32,
    /// Engine of the jobs
    #[arg(long, value_name = "NAME", default_value = "psync")]
    pub ioengine: String,
    /// Write the results as JSON (atomically)
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Write an HTML page: the table and the modes' MiB/s as bars
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
    #[command(flatten)]
    pub output: Output,
}

/// `--modes`: the modes named (in their run order), and whether `all` was asked for.
#[derive(Debug, Clone)]
struct Modes(Vec<&'static str>, bool);

fn modes(v: &str) -> Result<Modes, String> {
    let mut m = Vec::new();
    let all = v.trim() == "all";
    if all {
        m.extend(MODES);
    }
    for t in v
        .split(',')
        .map(str::trim)
        .filter(|t| !t.is_empty() && *t != "all")
    {
        let Some(x) = MODES.iter().find(|x| **x == t) else {
            return Err(format!(
                "unknown mode '{t}' (one of {}, or all)",
                MODES.join(", ")
            ));
        };
        m.push(*x);
    }
    if m.is_empty() {
        return Err("no mode given".into());
    }
    Ok(Modes(
        MODES.into_iter().filter(|x| m.contains(x)).collect(),
        all,
    ))
}

fn interval(v: &str) -> Result<Duration, String> {
    if v.trim() == "0" {
        return Ok(Duration::ZERO);
    }
    time_ms(v).map(Duration::from_millis)
}

/// `flexio writemodes`'s arguments (the scratch file's folder must exist).
pub fn parse_args(args: &[String]) -> Result<Args, clap::Error> {
    super::args::try_parse(args, |mut a: Args, _| {
        if a.bs > a.size {
            return Err(format!(
                "--bs ({}) is larger than --size ({})",
                a.bs, a.size
            ));
        }
        Modes(a.modes, a.all_modes) = a.modes_arg.clone();
        a.file = a.scratch.path("writemodes")?;
        Ok(a)
    })
}

/// One mode's figures (one run).
#[derive(Clone, Debug, Default)]
pub struct ModeResult {
    pub mode: &'static str,
    /// The `--repeat` round (1-based).
    pub round: u32,
    pub bytes: u64,
    pub ios: u64,
    pub runtime_ns: u64,
    pub clat_mean_ns: f64,
    pub clat_p99_ns: u64,
    /// CPU in percent of one CPU over the job's run time, syncer thread included.
    pub usr_pct: f64,
    pub sys_pct: f64,
    /// The job's run time the CPU percentages are relative to (ns).
    pub cpu_window_ns: u64,
    /// fsync/fdatasync calls: the job's own (fsync mode) or the syncer's (bgsync).
    pub syncs: u64,
    pub sync_mean_ns: f64,
    /// Write requests the device under the file completed during the job (None when the
    /// file is not on a block device, e.g. tmpfs).
    pub dev_write_ios: Option<u64>,
}

impl ModeResult {
    pub fn mib_s(&self) -> f64 {
        self.bytes as f64 / 1048576.0 / (self.runtime_ns.max(1) as f64 / 1e9)
    }
    pub fn iops(&self) -> f64 {
        self.ios as f64 / (self.runtime_ns.max(1) as f64 / 1e9)
    }
}

fn job(a: &Args, mode: &str) -> String {
    let mut j = format!(
        "[{mode}]\nioengine={}\nfilename={}\nrw=write\nbs={}\nsize={}\nruntime={}ms\nfallocate=none\n",
        a.ioengine,
        a.file.display(),
        a.bs,
        a.size,
        a.runtime_ms
    );
    match mode {
        "osync" => j.push_str("sync=1\n"),
        "dsync" => j.push_str("sync=dsync\n"),
        "fsync" => j.push_str(&format!("fsync={}\n", a.every)),
        "end_fsync" => j.push_str("end_fsync=1\n"),
        "direct" => j.push_str("direct=1\n"),
        _ => {}
    }
    j
}

/// RTEMS has no O_DIRECT.
#[cfg(target_os = "rtems")]
fn direct_ok(_file: &Path) -> bool {
    false
}

/// Whether the scratch file's file system takes O_DIRECT (tmpfs before Linux 6.6 and many
/// FUSE file systems refuse it with EINVAL).
#[cfg(not(target_os = "rtems"))]
fn direct_ok(file: &Path) -> bool {
    use std::os::unix::fs::OpenOptionsExt;
    let probe = file.with_extension("direct-probe");
    let ok = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .custom_flags(libc::O_DIRECT)
        .open(&probe)
        .is_ok();
    let _ = std::fs::remove_file(&probe);
    ok
}

/// The bgsync mode's syncer: from the moment the job has created the file until told to
/// stop, open the file by name and fdatasync it, one sync every `interval` measured from
/// the start of the last (back to back with 0), so that it syncs throughout the mode
/// however short. By name, because the job lays the file out itself and may replace it: a
/// descriptor opened earlier could sync an unlinked inode. It is looking for the file
/// before the job starts (`ready`), and a file the job created syncs at least once even
/// when the job ended first (a mode of a millisecond on tmpfs beside a busy machine).
/// Returns (syncs, their summed ns, usr µs, sys µs) of its thread; only the fdatasync calls
/// are timed.
fn syncer(
    file: PathBuf,
    interval: Duration,
    stop: Arc<AtomicBool>,
    ready: std::sync::mpsc::Sender<()>,
) -> std::thread::JoinHandle<Result<(u64, u64, u64, u64), String>> {
    std::thread::spawn(move || {
        let u0 = flexio_engine::sys::thread_usage().map_err(|e| e.to_string())?;
        let (mut n, mut ns) = (0u64, 0u64);
        let _ = ready.send(());
        while n == 0 || !stop.load(Ordering::Relaxed) {
            let stopped = stop.load(Ordering::Relaxed);
            let f = match std::fs::OpenOptions::new().write(true).open(&file) {
                Ok(f) => f,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                    if stopped {
                        // The job ended without the file.
                        break;
                    }
                    // Not created yet: look again soon.
                    std::thread::sleep(Duration::from_micros(200));
                    continue;
                }
                Err(e) => return Err(format!("syncer: {}: {e}", file.display())),
            };
            let t = Instant::now();
            f.sync_data()
                .map_err(|e| format!("syncer: fdatasync: {e}"))?;
            let took = t.elapsed();
            ns += took.as_nanos() as u64;
            n += 1;
            let mut left = interval.saturating_sub(took);
            // Sleep in short steps so that the end of the mode is not waited for.
            while !left.is_zero() && !stop.load(Ordering::Relaxed) {
                let step = left.min(Duration::from_millis(5));
                std::thread::sleep(step);
                left -= step;
            }
        }
        let d = flexio_engine::sys::thread_usage()
            .map_err(|e| e.to_string())?
            .delta(&u0);
        Ok((n, ns, d.utime_us, d.stime_us))
    })
}

fn remove(p: &Path) {
    let _ = std::fs::remove_file(p);
}

/// Run one mode on a fresh file.
pub fn run_mode(a: &Args, mode: &'static str) -> Result<ModeResult, String> {
    remove(&a.file);
    let bg = if mode == "bgsync" {
        let stop = Arc::new(AtomicBool::new(false));
        let (ready, started) = std::sync::mpsc::channel();
        let h = syncer(a.file.clone(), a.bg_interval, stop.clone(), ready);
        let _ = started.recv();
        Some((stop, h))
    } else {
        None
    };
    let r = inproc::run_job(&job(a, mode));
    let bg = bg.map(|(stop, h)| {
        stop.store(true, Ordering::Relaxed);
        h.join()
            .unwrap_or_else(|_| Err("syncer: internal error".into()))
    });
    remove(&a.file);
    let r = r?;
    let (bg_syncs, bg_ns, bg_usr, bg_sys) = match bg {
        Some(x) => x?,
        None => (0, 0, 0, 0),
    };
    let st = &r.result.stats;
    let d = &st.dirs[1];
    let w = &r.report.dirs[1];
    // CPU in percent of one CPU over the job's exact run time (fio's formula divides by
    // whole milliseconds, too coarse for a job of a few ms).
    let runt_us = (st.total_run_time_ns as f64 / 1000.0).max(1.0);
    let pct = |us: u64| us as f64 * 100.0 / runt_us;
    let p99 = w
        .clat
        .percentiles
        .as_ref()
        .and_then(|v| v.iter().find(|x| x.0 == 99.0).map(|x| x.1))
        .unwrap_or(w.clat.max_ns)
        .clamp(w.clat.min_ns, w.clat.max_ns);
    let (syncs, sync_mean_ns) = if mode == "bgsync" {
        (bg_syncs, bg_ns as f64 / bg_syncs.max(1) as f64)
    } else {
        (r.report.sync.total_ios, r.report.sync.lat.mean_ns)
    };
    Ok(ModeResult {
        mode,
        round: 1,
        bytes: d.io_bytes,
        ios: d.total_ios,
        runtime_ns: d.runtime_ns,
        clat_mean_ns: w.clat.mean_ns,
        clat_p99_ns: p99,
        usr_pct: pct(st.usr_time_us + bg_usr),
        sys_pct: pct(st.sys_time_us + bg_sys),
        cpu_window_ns: st.total_run_time_ns,
        syncs,
        sync_mean_ns,
        dev_write_ios: r.disks.first().map(|d| d.write_ios),
    })
}

/// One mode over its runs: the median run (the lower middle one by MiB/s: a run that
/// happened, so its figures agree with each other), every run's MiB/s in round order, and
/// whether they disagree ([`NOISY`]).
pub struct ModeSummary<'a> {
    pub median: &'a ModeResult,
    pub runs_mib_s: Vec<f64>,
    pub noisy: bool,
}

pub fn summarise(res: &[ModeResult]) -> Vec<ModeSummary<'_>> {
    let mut names: Vec<&str> = Vec::new();
    for r in res {
        if !names.contains(&r.mode) {
            names.push(r.mode);
        }
    }
    names
        .iter()
        .map(|m| {
            let mut runs: Vec<&ModeResult> = res.iter().filter(|r| r.mode == *m).collect();
            let runs_mib_s = runs.iter().map(|r| r.mib_s()).collect::<Vec<_>>();
            runs.sort_by(|x, y| x.mib_s().total_cmp(&y.mib_s()));
            let median = runs[(runs.len() - 1) / 2];
            let (lo, hi) = (runs[0].mib_s(), runs[runs.len() - 1].mib_s());
            ModeSummary {
                median,
                noisy: super::runs_disagree(runs.len(), lo, hi, median.mib_s()),
                runs_mib_s,
            }
        })
        .collect()
}

fn ns_text(v: f64) -> String {
    if v >= 1e6 {
        format!("{:.2}ms", v / 1e6)
    } else if v >= 1e3 {
        format!("{:.1}us", v / 1e3)
    } else {
        format!("{v:.0}ns")
    }
}

/// The table: one row per mode.
pub fn table(a: &Args, res: &[ModeResult]) -> String {
    let mut o = format!(
        "flexio writemodes: {} ({}, {} B writes, {} MiB per mode, fsync every {}, syncer every {} ms)\n",
        a.file.display(),
        a.ioengine,
        a.bs,
        a.size >> 20,
        a.every,
        a.bg_interval.as_millis()
    );
    if a.repeat > 1 {
        let _ = writeln!(
            o,
            "each row: the median of {} runs by MiB/s, the runs' range beside it (~: they disagree by more than {:.0}%)",
            a.repeat,
            NOISY * 100.0
        );
    }
    let _ = write!(
        o,
        "{:<10}{:>8}{:>10}{:>10}{:>11}{:>11}{:>8}{:>8}{:>8}{:>11}{:>11}",
        "mode",
        "MiB",
        "MiB/s",
        "IOPS",
        "clat mean",
        "clat p99",
        "usr%",
        "sys%",
        "syncs",
        "sync mean",
        "dev writes"
    );
    if a.repeat > 1 {
        let _ = write!(o, "  MiB/s range");
    }
    o.push('\n');
    for x in summarise(res) {
        let r = x.median;
        let _ = write!(
            o,
            "{:<10}{:>8.1}{:>10.1}{:>10.0}{:>11}{:>11}{:>8.1}{:>8.1}{:>8}{:>11}{:>11}",
            r.mode,
            r.bytes as f64 / 1048576.0,
            r.mib_s(),
            r.iops(),
            ns_text(r.clat_mean_ns),
            ns_text(r.clat_p99_ns as f64),
            r.usr_pct,
            r.sys_pct,
            r.syncs,
            if r.syncs > 0 {
                ns_text(r.sync_mean_ns)
            } else {
                "-".into()
            },
            r.dev_write_ios
                .map_or_else(|| "-".to_string(), |n| n.to_string())
        );
        if a.repeat > 1 {
            let (lo, hi) = x
                .runs_mib_s
                .iter()
                .fold((f64::MAX, 0.0f64), |(l, h), v| (l.min(*v), h.max(*v)));
            let _ = write!(o, "  {lo:.1}-{hi:.1}{}", if x.noisy { " ~" } else { "" });
        }
        o.push('\n');
    }
    o
}

/// The JSON document.
pub fn json_doc(a: &Args, res: &[ModeResult], error: Option<&str>) -> String {
    let one = |r: &ModeResult| {
        json!({
            "mode": r.mode,
            "mib_s": (r.mib_s() * 1000.0).round() / 1000.0,
            "iops": (r.iops() * 10.0).round() / 10.0,
            "bytes": r.bytes,
            "ios": r.ios,
            "runtime_ns": r.runtime_ns,
            "clat_mean_ns": (r.clat_mean_ns * 10.0).round() / 10.0,
            "clat_p99_ns": r.clat_p99_ns,
            "usr_pct": (r.usr_pct * 100.0).round() / 100.0,
            "sys_pct": (r.sys_pct * 100.0).round() / 100.0,
            "cpu_window_ns": r.cpu_window_ns,
            "syncs": r.syncs,
            "sync_mean_ns": (r.sync_mean_ns * 10.0).round() / 10.0,
            "dev_write_ios": r.dev_write_ios,
            "round": r.round,
        })
    };
    let modes: Vec<_> = summarise(res)
        .iter()
        .map(|x| {
            let mut v = one(x.median);
            v["runs_mib_s"] = json!(x
                .runs_mib_s
                .iter()
                .map(|m| (m * 1000.0).round() / 1000.0)
                .collect::<Vec<_>>());
            v["noisy"] = json!(x.noisy);
            v
        })
        .collect();
    let doc = json!({
        "flexio writemodes": 1,
        "flexio version": env!("CARGO_PKG_VERSION"),
        "file": a.file.display().to_string(),
        "ioengine": a.ioengine,
        "bs": a.bs,
        "size": a.size,
        "fsync_every": a.every,
        "bg_interval_ms": a.bg_interval.as_millis() as u64,
        "repeat": a.repeat,
        "complete": error.is_none(),
        "error": error,
        "modes": modes,
        "runs": if a.repeat > 1 {
            json!(res.iter().map(one).collect::<Vec<_>>())
        } else {
            Value::Null
        },
    });
    let mut s = serde_json::to_string_pretty(&doc).unwrap_or_default();
    s.push('\n');
    s
}

pub fn run(args: &[String]) -> i32 {
    let a = match super::args::report_error(parse_args(args), 2) {
        Ok(a) => a,
        Err(code) => return code,
    };
    let mut a = a;
    if a.modes.contains(&"direct") && !direct_ok(&a.file) {
        if a.all_modes {
            eprintln!(
                "flexio writemodes: note: {} refuses O_DIRECT: the direct mode is left out",
                a.file.parent().unwrap_or(Path::new(".")).display()
            );
            a.modes.retain(|m| *m != "direct");
        } else {
            eprintln!(
                "flexio writemodes: direct: {} refuses O_DIRECT (EINVAL); leave the mode out or write elsewhere",
                a.file.parent().unwrap_or(Path::new(".")).display()
            );
            return 1;
        }
    }
    let mut res = Vec::new();
    let mut err = None;
    'rounds: for round in 1..=a.repeat {
        for m in &a.modes {
            if a.repeat > 1 {
                eprintln!("flexio writemodes: {m} (run {round}/{})", a.repeat);
            } else {
                eprintln!("flexio writemodes: {m}");
            }
            match run_mode(&a, m) {
                Ok(mut r) => {
                    r.round = round;
                    res.push(r)
                }
                Err(e) => {
                    err = Some(format!("{m}: {e}"));
                    break 'rounds;
                }
            }
        }
    }
    remove(&a.file);
    let doc = json_doc(&a, &res, err.as_deref());
    if let Some(p) = &a.json {
        if let Err(e) = flexio_run::notes::write_atomic(p, doc.as_bytes()) {
            eprintln!("flexio writemodes: cannot write {}: {e}", p.display());
            return 1;
        }
    }
    if let Some(p) = &a.html {
        let study = flexio_analysis::studies::Study {
            label: a.file.display().to_string(),
            doc: serde_json::from_str(&doc).unwrap_or_default(),
        };
        let page = flexio_analysis::report::render(
            &[],
            None,
            &flexio_analysis::report::ReportOptions {
                title: "flexio writemodes".into(),
                sections: vec![flexio_analysis::studies::html(&study)],
            },
        );
        if let Err(e) = super::report::write_page(p, &page) {
            eprintln!("flexio writemodes: {e}");
            return 1;
        }
    }
    if a.output.json() {
        cmd_out!("{doc}");
    } else {
        cmd_out!("{}", table(&a, &res));
    }
    if res.iter().any(|r| r.cpu_window_ns < 1_000_000_000) {
        eprintln!(
            "flexio writemodes: note: a mode ran for less than a second; the kernel splits CPU time into usr and sys by timer ticks (getrusage), so its usr%/sys% are coarse: write more (--size) for steadier figures"
        );
    }
    match err {
        None => 0,
        Some(e) if inproc::interrupted() => {
            eprintln!("flexio writemodes: {e}");
            128
        }
        Some(e) => {
            eprintln!("flexio writemodes: {e}");
            1
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(|x| x.to_string()).collect()
    }

    fn parse_args(v: &[String]) -> Result<Args, String> {
        super::parse_args(v).map_err(|e| e.to_string())
    }

    #[test]
    fn arguments_and_jobs() {
        let d = tempfile::tempdir().unwrap();
        let dir = d.path().display().to_string();
        let a = parse_args(&s(&["--dir", &dir, "--every=8", "--bg-interval=20ms"])).unwrap();
        assert_eq!(a.modes, DEFAULT_MODES.to_vec());
        assert!(job(&a, "dsync").contains("sync=dsync\n"));
        assert!(job(&a, "end_fsync").contains("end_fsync=1\n"));
        assert!(job(&a, "direct").contains("direct=1\n"));
        let all = parse_args(&s(&["--dir", &dir, "--modes=all", "--repeat=3"])).unwrap();
        assert_eq!(all.modes, MODES.to_vec());
        assert!(all.all_modes);
        assert_eq!(all.repeat, 3);
        let b = parse_args(&s(&["--dir", &dir, "--bg-interval=0"])).unwrap();
        assert_eq!(b.bg_interval, Duration::ZERO);
        assert_eq!(a.bg_interval, Duration::from_millis(20));
        assert!(job(&a, "osync").contains("sync=1\n"));
        assert!(job(&a, "fsync").contains("fsync=8\n"));
        assert!(!job(&a, "bgsync").contains("sync="));
        assert!(job(&a, "buffered").contains("runtime=30000ms\n"));
        let a = parse_args(&s(&["--dir", &dir, "--modes", "fsync,buffered"])).unwrap();
        assert_eq!(a.modes, vec!["buffered", "fsync"]);
        for (args, msg) in [
            (vec!["--modes=fast"], "unknown mode 'fast'"),
            (vec!["--every=0"], "positive"),
            (vec!["--bg-interval=soon"], "positive time"),
            (vec!["--bs=8k", "--size=4k"], "larger than"),
            (vec!["--size=1.5m"], "fractional"),
            (vec!["--nope"], "unexpected argument '--nope'"),
            (vec!["--repeat=0"], "0 is not in 1..=100"),
            (vec!["--runtime=0"], "'0' is not a positive time"),
            (vec!["--modes="], "no mode given"),
        ] {
            let mut v = s(&["--dir", &dir]);
            v.extend(s(&args));
            let e = parse_args(&v).unwrap_err();
            assert!(e.contains(msg), "{args:?}: {e}");
        }
    }
}
