//! The sweep runner (`flexio sweep`): a job over the points of one or more axes (job
//! options, and the block-queue knobs of the job's own target devices), repeats
//! interleaved in a seeded shuffled order, each knob's old value journaled before it is
//! written and put back at the end, on failure, on SIGINT/SIGTERM, and after a crash by
//! [`restore_pending`]. The statistics and the tables are the command's (`src/cmd/sweep.rs`).

use crate::notes::write_atomic;
use flexio_workload::rng::Taus88;
use std::path::{Path, PathBuf};

/// The block-queue knobs a sweep may set (files under the device's `queue/`); any other
/// knob name is looked for among the active scheduler's tunables (`queue/iosched/`).
pub const QUEUE_KNOBS: &[&str] = &[
    "read_ahead_kb",
    "scheduler",
    "nr_requests",
    "max_sectors_kb",
    "rq_affinity",
    "nomerges",
    "wbt_lat_usec",
];

/// One axis: a job option or a device knob, and its values in order.
#[derive(Clone, Debug, PartialEq)]
pub struct Axis {
    pub name: String,
    pub values: Vec<String>,
    pub knob: bool,
}

/// One point: a value for each axis, in axis order.
#[derive(Clone, Debug, PartialEq)]
pub struct Point {
    pub values: Vec<(String, String)>,
}

impl Point {
    /// `read_ahead_kb=128 bs=1m`.
    pub fn label(&self) -> String {
        self.values
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join(" ")
    }
}

/// Parse `NAME=v1,v2,...`.
pub fn parse_axis(s: &str, knob: bool) -> Result<Axis, String> {
    let (name, vals) = s
        .split_once('=')
        .ok_or_else(|| format!("'{s}': an axis is NAME=value,value,..."))?;
    let values: Vec<String> = vals
        .split(',')
        .map(|v| v.trim().to_string())
        .filter(|v| !v.is_empty())
        .collect();
    if name.trim().is_empty() || values.is_empty() {
        return Err(format!("'{s}': an axis is NAME=value,value,..."));
    }
    Ok(Axis {
        name: name.trim().to_string(),
        values,
        knob,
    })
}

/// The cartesian product of the axes, the first axis varying slowest.
pub fn cartesian(axes: &[Axis]) -> Vec<Point> {
    let mut out = vec![Point { values: Vec::new() }];
    for a in axes {
        out = out
            .into_iter()
            .flat_map(|p| {
                a.values.iter().map(move |v| {
                    let mut q = p.clone();
                    q.values.push((a.name.clone(), v.clone()));
                    q
                })
            })
            .collect();
    }
    out
}

/// The order of the runs: `repeats` rounds, each every point once in an order shuffled
/// by `seed` (Fisher-Yates over fio's taus88), so that drift over the sweep spreads over
/// all points instead of looking like the effect of one.
pub fn schedule(points: usize, repeats: usize, seed: u32) -> Vec<usize> {
    let mut rng = Taus88::new(seed);
    let mut out = Vec::with_capacity(points * repeats);
    for _ in 0..repeats {
        let mut round: Vec<usize> = (0..points).collect();
        for i in (1..round.len()).rev() {
            let j = rng.below(i as u64 + 1) as usize;
            round.swap(i, j);
        }
        out.extend(round);
    }
    out
}

/// A job file's text with `opts` set in every job section (appended at each section's
/// end, so they override what the section and `[global]` say).
pub fn with_options(job: &str, opts: &[(String, String)]) -> String {
    if opts.is_empty() {
        return job.to_string();
    }
    let lines: String = opts.iter().map(|(k, v)| format!("{k}={v}\n")).collect();
    let mut out = String::new();
    let mut in_job = false;
    for l in job.lines() {
        let t = l.trim();
        if t.starts_with('[') && t.ends_with(']') {
            if in_job {
                out.push_str(&lines);
            }
            in_job = !t.eq_ignore_ascii_case("[global]");
        }
        out.push_str(l);
        out.push('\n');
    }
    if in_job {
        out.push_str(&lines);
    }
    out
}

/// A block device whose knobs the sweep sets: its name (`loop0`) and sysfs directory.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Device {
    pub name: String,
    pub sysfs: PathBuf,
}

/// The devices under `paths` (each once): the disk of a block device, or of the file
/// system a file is on.
pub fn devices_of(paths: &[PathBuf]) -> Result<Vec<Device>, String> {
    let mut out: Vec<Device> = Vec::new();
    for p in paths {
        let dir = crate::diskstats::disk_dir(p).ok_or_else(|| {
            format!(
                "{}: no block device under it (a tmpfs or a network file system has no queue knobs)",
                p.display()
            )
        })?;
        let name = dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        if !out.iter().any(|d| d.sysfs == dir) {
            out.push(Device { name, sysfs: dir });
        }
    }
    Ok(out)
}

/// (reads completed, bytes read) of `devs` together, from their disk statistics.
pub fn device_reads(devs: &[Device]) -> (u64, u64) {
    devs.iter()
        .filter_map(|d| crate::diskstats::reads_of(&d.sysfs))
        .fold((0, 0), |a, r| (a.0 + r.0, a.1 + r.1))
}

/// The sysfs file of knob `knob` on `dev`: `queue/KNOB`, else the active scheduler's
/// tunable `queue/iosched/KNOB`.
pub fn knob_file(dev: &Device, knob: &str) -> Result<PathBuf, String> {
    if knob.contains('/') || knob.contains("..") {
        return Err(format!("'{knob}' is not a knob name"));
    }
    let q = dev.sysfs.join("queue").join(knob);
    if QUEUE_KNOBS.contains(&knob) && q.exists() {
        return Ok(q);
    }
    let t = dev.sysfs.join("queue/iosched").join(knob);
    if t.exists() {
        return Ok(t);
    }
    Err(format!(
        "{}: no knob '{knob}' (queue knobs: {}; or a tunable of the active scheduler under {})",
        dev.name,
        QUEUE_KNOBS.join(", "),
        dev.sysfs.join("queue/iosched").display()
    ))
}

/// A knob's current value (the active one of `scheduler`'s list).
pub fn read_knob(file: &Path) -> Result<String, String> {
    let s = std::fs::read_to_string(file).map_err(|e| format!("{}: {e}", file.display()))?;
    let s = s.trim();
    if file.file_name().is_some_and(|n| n == "scheduler") {
        if let Some(active) = crate::diskstats::active_scheduler(s) {
            return Ok(active.to_string());
        }
    }
    Ok(s.to_string())
}

fn write_knob(file: &Path, value: &str) -> std::io::Result<()> {
    std::fs::write(file, value)
}

/// Where flexio keeps state between runs: `$FLEXIO_STATE_DIR`, else
/// `$XDG_STATE_HOME/flexio`, else `~/.local/state/flexio`.
pub fn state_dir() -> PathBuf {
    if let Some(d) = std::env::var_os("FLEXIO_STATE_DIR") {
        return PathBuf::from(d);
    }
    if let Some(d) = std::env::var_os("XDG_STATE_HOME").filter(|d| !d.is_empty()) {
        return PathBuf::from(d).join("flexio");
    }
    let home = std::env::var_os("HOME").unwrap_or_else(|| "/root".into());
    PathBuf::from(home).join(".local/state/flexio")
}

/// The restore journal: each knob's value before the sweep first wrote it, one line
/// `device<TAB>knob<TAB>file<TAB>old value` each, rewritten atomically before every write.
pub fn journal_path() -> PathBuf {
    state_dir().join("sweep-restore.tsv")
}

#[derive(Clone, Debug, PartialEq)]
struct Entry {
    device: String,
    knob: String,
    file: PathBuf,
    old: String,
}

fn read_journal(path: &Path) -> Vec<Entry> {
    let Ok(text) = std::fs::read_to_string(path) else {
        return Vec::new();
    };
    text.lines()
        .filter_map(|l| {
            let mut f = l.splitn(4, '\t');
            Some(Entry {
                device: f.next()?.to_string(),
                knob: f.next()?.to_string(),
                file: PathBuf::from(f.next()?),
                old: f.next()?.to_string(),
            })
        })
        .collect()
}

fn write_journal(path: &Path, entries: &[Entry]) -> Result<(), String> {
    if entries.is_empty() {
        return match std::fs::remove_file(path) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                Err(format!("{}: {e}", path.display()))
            }
            _ => Ok(()),
        };
    }
    if let Some(d) = path.parent() {
        std::fs::create_dir_all(d).map_err(|e| format!("{}: {e}", d.display()))?;
    }
    let text: String = entries
        .iter()
        .map(|e| {
            format!(
                "{}\t{}\t{}\t{}\n",
                e.device,
                e.knob,
                e.file.display(),
                e.old
            )
        })
        .collect();
    write_atomic(path, text.as_bytes()).map_err(|e| format!("{}: {e}", path.display()))
}

/// Put back every value a journal at `path` holds (newest first), then remove it. Returns
/// a line per knob restored; a knob that cannot be restored stays in the journal and is
/// an error naming it.
pub fn restore_journal(path: &Path) -> Result<Vec<String>, String> {
    let mut said = Vec::new();
    let mut failed = Vec::new();
    let mut kept = Vec::new();
    for e in read_journal(path).into_iter().rev() {
        match write_knob(&e.file, &e.old) {
            Ok(()) => said.push(format!("{}: {} restored to {}", e.device, e.knob, e.old)),
            Err(err) => {
                failed.push(format!(
                    "{}: {} could not be restored to {} ({}): {err}; kept in {} for `flexio sweep --restore`",
                    e.device,
                    e.knob,
                    e.old,
                    e.file.display(),
                    path.display()
                ));
                kept.push(e);
            }
        }
    }
    kept.reverse();
    write_journal(path, &kept)?;
    if failed.is_empty() {
        Ok(said)
    } else {
        Err(failed.join("\n"))
    }
}

/// Restore what an earlier sweep left set (it was killed): `flexio sweep --restore` and
/// the start of every sweep.
pub fn restore_pending() -> Result<Vec<String>, String> {
    restore_journal(&journal_path())
}

/// The knobs a sweep has set, journaled: [`Knobs::set`] records the old value before the
/// first write of each knob, [`Knobs::restore`] (also on drop) puts them all back.
pub struct Knobs {
    journal: PathBuf,
    entries: Vec<Entry>,
}

impl Knobs {
    pub fn new(journal: PathBuf) -> Knobs {
        Knobs {
            journal,
            entries: Vec::new(),
        }
    }

    /// Set `knob` of `dev` to `value`; the old value is journaled first. A value the
    /// kernel refuses is an error naming the device, the knob and the value.
    pub fn set(&mut self, dev: &Device, knob: &str, value: &str) -> Result<(), String> {
        let file = knob_file(dev, knob)?;
        if !self.entries.iter().any(|e| e.file == file) {
            let old = read_knob(&file)?;
            self.entries.push(Entry {
                device: dev.name.clone(),
                knob: knob.to_string(),
                file: file.clone(),
                old,
            });
            write_journal(&self.journal, &self.entries)?;
        }
        write_knob(&file, value).map_err(|e| {
            format!(
                "{}: the kernel refused {knob}={value} ({}): {e}",
                dev.name,
                file.display()
            )
        })
    }

    /// Put every knob back (newest first) and clear the journal; the lines say what was
    /// restored.
    pub fn restore(&mut self) -> Result<Vec<String>, String> {
        if self.entries.is_empty() {
            return Ok(Vec::new());
        }
        self.entries.clear();
        restore_journal(&self.journal)
    }
}

impl Drop for Knobs {
    fn drop(&mut self) {
        if let Err(e) = self.restore() {
            eprintln!("flexio: sweep: {e}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn axes_points_and_order() {
        let a = parse_axis("bs=4k,64k", false).unwrap();
        let b = parse_axis("read_ahead_kb=128,4096,8192", true).unwrap();
        assert!(parse_axis("bs", false).is_err());
        assert!(parse_axis("bs=", false).is_err());
        let p = cartesian(&[a, b]);
        assert_eq!(p.len(), 6);
        assert_eq!(p[0].label(), "bs=4k read_ahead_kb=128");
        assert_eq!(p[5].label(), "bs=64k read_ahead_kb=8192");
        let s = schedule(6, 3, 7);
        assert_eq!(s.len(), 18);
        for r in s.chunks(6) {
            let mut v = r.to_vec();
            v.sort();
            assert_eq!(v, [0, 1, 2, 3, 4, 5]);
        }
        assert_eq!(s, schedule(6, 3, 7));
        assert_ne!(s, schedule(6, 3, 8));
    }

    #[test]
    fn options_go_at_the_end_of_every_job_section() {
        let job = "[global]\nbs=4k\n[a]\nrw=read\n[b]\nbs=8k\n";
        let o = [("bs".to_string(), "1m".to_string())];
        assert_eq!(
            with_options(job, &o),
            "[global]\nbs=4k\n[a]\nrw=read\nbs=1m\n[b]\nbs=8k\nbs=1m\n"
        );
    }

    #[test]
    fn the_journal_restores_what_it_holds() {
        let d = tempfile::tempdir().unwrap();
        let knob = d.path().join("read_ahead_kb");
        std::fs::write(&knob, "128\n").unwrap();
        let journal = d.path().join("state/j.tsv");
        let dev = Device {
            name: "fake".into(),
            sysfs: d.path().to_path_buf(),
        };
        let e = Entry {
            device: dev.name.clone(),
            knob: "read_ahead_kb".into(),
            file: knob.clone(),
            old: read_knob(&knob).unwrap(),
        };
        write_journal(&journal, &[e]).unwrap();
        std::fs::write(&knob, "4096").unwrap();
        let said = restore_journal(&journal).unwrap();
        assert_eq!(said, ["fake: read_ahead_kb restored to 128"]);
        assert_eq!(std::fs::read_to_string(&knob).unwrap(), "128");
        assert!(!journal.exists());
        assert!(restore_journal(&journal).unwrap().is_empty());
    }
}
