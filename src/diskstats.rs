//! The "Disk stats" block: block devices under the job's files, sampled from
//! `/sys/block/<dev>/stat` at the start and end of the run.

use flexio_stats::report::DiskReport;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// One device being watched.
#[derive(Clone, Debug)]
pub struct Disk {
    pub name: String,
    stat_path: PathBuf,
    start: [u64; 11],
}

fn read_stat(p: &Path) -> Option<[u64; 11]> {
    let s = std::fs::read_to_string(p).ok()?;
    let v: Vec<u64> = s
        .split_whitespace()
        .filter_map(|x| x.parse().ok())
        .collect();
    if v.len() < 11 {
        return None;
    }
    let mut out = [0u64; 11];
    out.copy_from_slice(&v[..11]);
    Some(out)
}

/// The sysfs directory of the whole disk holding `path` (partitions map to their disk);
/// for a block device, the device itself.
fn device_dir(path: &Path) -> Option<PathBuf> {
    use std::os::unix::fs::FileTypeExt;
    let probe = if path.exists() {
        path.to_path_buf()
    } else {
        path.parent()?.to_path_buf()
    };
    let probe = if probe.as_os_str().is_empty() {
        PathBuf::from(".")
    } else {
        probe
    };
    let meta = std::fs::metadata(&probe).ok()?;
    let dev = if meta.file_type().is_block_device() {
        meta.rdev()
    } else {
        meta.dev()
    };
    let (maj, min) = (rustix::fs::major(dev), rustix::fs::minor(dev));
    if maj == 0 {
        return None; // tmpfs, overlay and other anonymous devices
    }
    let dir = std::fs::canonicalize(format!("/sys/dev/block/{maj}:{min}")).ok()?;
    if dir.join("partition").exists() {
        return dir.parent().map(Path::to_path_buf);
    }
    Some(dir)
}

/// The file behind a loop device (from sysfs), if `dir` is one.
fn loop_backing(dir: &Path) -> Option<PathBuf> {
    let f = std::fs::read_to_string(dir.join("loop/backing_file")).ok()?;
    let f = f.trim().trim_end_matches(" (deleted)");
    (!f.is_empty()).then(|| PathBuf::from(f))
}

/// Devices under these paths, in first-seen order; for a loop device also the disk that
/// holds its backing file (the device "under" it).
pub fn watch(paths: &[PathBuf]) -> Vec<Disk> {
    let mut out: Vec<Disk> = Vec::new();
    let mut todo: Vec<PathBuf> = paths.to_vec();
    let mut i = 0;
    while i < todo.len() && i < 256 {
        let p = todo[i].clone();
        i += 1;
        let Some(dir) = device_dir(&p) else { continue };
        if let Some(backing) = loop_backing(&dir) {
            todo.push(backing);
        }
        let name = dir
            .file_name()
            .map(|n| n.to_string_lossy().to_string())
            .unwrap_or_default();
        if out.iter().any(|d| d.name == name) {
            continue;
        }
        let stat_path = dir.join("stat");
        if let Some(start) = read_stat(&stat_path) {
            out.push(Disk {
                name,
                stat_path,
                start,
            });
        }
    }
    out
}

/// Restart the measurement (after file layout, just before the jobs run).
pub fn restart(disks: &mut [Disk]) {
    for d in disks {
        if let Some(s) = read_stat(&d.stat_path) {
            d.start = s;
        }
    }
}

/// Deltas since the start over `elapsed_ms`.
pub fn finish(disks: &[Disk], elapsed_ms: u64) -> Vec<DiskReport> {
    disks
        .iter()
        .filter_map(|d| {
            let end = read_stat(&d.stat_path)?;
            let dl = |i: usize| end[i].saturating_sub(d.start[i]);
            let util = if elapsed_ms > 0 {
                (dl(9) as f64 * 100.0 / elapsed_ms as f64).min(100.0)
            } else {
                0.0
            };
            Some(DiskReport {
                name: d.name.clone(),
                read_ios: dl(0),
                write_ios: dl(4),
                read_merges: dl(1),
                write_merges: dl(5),
                read_ticks: dl(3),
                write_ticks: dl(7),
                in_queue: dl(10),
                util,
            })
        })
        .collect()
}

/// The active I/O scheduler of the disk under `path`, as (device name, scheduler).
pub fn scheduler_of(path: &Path) -> Option<(String, String)> {
    let dir = device_dir(path)?;
    let name = dir.file_name()?.to_string_lossy().into_owned();
    let s = std::fs::read_to_string(dir.join("queue/scheduler")).ok()?;
    let active = s
        .split_whitespace()
        .find(|w| w.starts_with('['))?
        .trim_matches(|c| c == '[' || c == ']')
        .to_string();
    Some((name, active))
}

/// Notes for jobs that set I/O priorities where nothing honours them (once per device).
pub fn priority_notes(paths: &[PathBuf]) -> Vec<String> {
    let mut seen: Vec<String> = Vec::new();
    let mut notes = Vec::new();
    for p in paths {
        match scheduler_of(p) {
            Some((dev, sched)) => {
                if seen.contains(&dev) {
                    continue;
                }
                seen.push(dev.clone());
                if !matches!(sched.as_str(), "bfq" | "mq-deadline") {
                    notes.push(format!(
                        "flexio: note: I/O priorities are ignored on {dev}: its scheduler '{sched}' does not honour them (bfq and mq-deadline do)"
                    ));
                }
            }
            None => {
                let key = p.display().to_string();
                if !seen.contains(&key) {
                    seen.push(key);
                    notes.push(format!(
                        "flexio: note: I/O priorities have no effect on {}: it is not on a block device",
                        p.display()
                    ));
                }
            }
        }
    }
    notes
}
