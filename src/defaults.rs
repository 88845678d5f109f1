//! The default benchmark: what `flexio` runs without a job (examples/default.fio, built in),
//! and the summary table printed after it.

use flexio_job::{cli::Cli, JobError, JobSet, LoadEnv};
use flexio_output::num2str::{num2str, Unit};
use flexio_stats::report::RunReport;
use std::path::Path;

/// The built-in profile (also shipped as examples/default.fio).
pub const PROFILE: &str = include_str!("../examples/default.fio");
/// The scratch file the profile uses, in the current directory.
pub const SCRATCH: &str = "flexio-default.scratch";

/// Whether O_DIRECT works for a file in the current directory.
fn direct_supported() -> bool {
    use flexio_engine::os::fs::{Mode, OFlags};
    let probe = ".flexio-direct-probe";
    let r = flexio_engine::os::fs::open(
        probe,
        OFlags::CREATE | OFlags::RDWR | OFlags::DIRECT | OFlags::CLOEXEC,
        Mode::from_raw_mode(0o600),
    );
    let _ = std::fs::remove_file(probe);
    r.is_ok()
}

/// Load the built-in profile, with the command line's global options applied first.
pub fn load(cli: &Cli, env: LoadEnv) -> Result<JobSet, JobError> {
    let builtin = Path::new("<built-in default benchmark>");
    let read = |p: &Path| -> std::io::Result<Vec<u8>> {
        if p == builtin {
            Ok(PROFILE.as_bytes().to_vec())
        } else {
            std::fs::read(p)
        }
    };
    let env = LoadEnv { read: &read, ..env };
    let mut c = Cli {
        switches: cli.switches.clone(),
        sections: cli.sections.clone(),
        job_files: vec![(0, builtin.display().to_string())],
    };
    c.switches.sections.clear();
    let mut set = flexio_job::load::load(&c, &env)?;
    if !direct_supported() {
        eprintln!("flexio: note: this file system does not support O_DIRECT; the default benchmark uses buffered I/O (results include the page cache)");
        for j in &mut set.jobs {
            j.opts.direct = false;
        }
    }
    eprintln!("flexio: no job given: running the default benchmark (about a minute) on ./{SCRATCH}; see examples/default.fio");
    Ok(set)
}

/// Remove the scratch file.
pub fn cleanup() {
    let _ = std::fs::remove_file(SCRATCH);
}

fn lat(ns: f64) -> String {
    if ns >= 1e9 {
        format!("{:.2} s", ns / 1e9)
    } else if ns >= 1e6 {
        format!("{:.2} ms", ns / 1e6)
    } else if ns >= 1e3 {
        format!("{:.1} us", ns / 1e3)
    } else {
        format!("{ns:.0} ns")
    }
}

/// A table a person can read at a glance.
pub fn summary(r: &RunReport) -> String {
    let mut s = String::from("\nflexio default benchmark summary\n");
    s.push_str(&format!(
        "{:<16}{:>12}{:>10}{:>12}{:>12}{:>12}\n",
        "workload", "bandwidth", "IOPS", "lat avg", "lat p99", "lat max"
    ));
    for j in &r.jobs {
        for d in &j.dirs {
            if d.io_bytes == 0 {
                continue;
            }
            let p99 = d.clat.percentiles.as_ref().and_then(|v| {
                v.iter()
                    .find(|(p, _)| (*p - 99.0).abs() < 1e-9)
                    .map(|x| x.1 as f64)
            });
            s.push_str(&format!(
                "{:<16}{:>12}{:>10}{:>12}{:>12}{:>12}\n",
                j.name,
                num2str(d.bw_bytes, 4, 1, true, Unit::BytePerSec),
                num2str(d.iops_int, 4, 1, false, Unit::None),
                lat(d.clat.mean_ns),
                p99.map(lat).unwrap_or_else(|| "-".into()),
                lat(d.clat.max_ns as f64),
            ));
        }
    }
    s.push_str("(latency is completion latency; the full fio-style report is above)\n");
    s
}
