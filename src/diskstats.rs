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

/// The sysfs directory of the whole disk holding `path` (partitions map to their disk).
fn device_dir(path: &Path) -> Option<PathBuf> {
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
    let dev = std::fs::metadata(&probe).ok()?.dev();
    let (maj, min) = (rustix::fs::major(dev), rustix::fs::minor(dev));
    if maj == 0 {
        return None; // tmpfs, overlay and other anonymous devices
    }
    let link = PathBuf::from(format!("/sys/dev/block/{maj}:{min}"));
    let dir = std::fs::canonicalize(&link).ok()?;
    if dir.join("partition").exists() {
        return dir.parent().map(Path::to_path_buf);
    }
    Some(dir)
}

/// Devices under these paths, in first-seen order.
pub fn watch(paths: &[PathBuf]) -> Vec<Disk> {
    let mut out: Vec<Disk> = Vec::new();
    for p in paths {
        let Some(dir) = device_dir(p) else { continue };
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
