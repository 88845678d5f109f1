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

/// The knob of a file system's own readahead: `read_ahead_kb` of its backing-device info
/// (`/sys/class/bdi/MAJ:MIN`), which every file opened on it starts its readahead window
/// from (`blockdev --getfra`). On a disk's file system it is the disk's own `read_ahead_kb`;
/// FUSE, NFS and other file systems without a disk have only this one.
pub const FS_READ_AHEAD: &str = "fs_read_ahead_kb";

/// Knobs of the request queue: on a stacked device that queues no requests itself (a
/// bio-based dm or md device: no scheduler to choose) they are set on its slaves.
const REQUEST_KNOBS: &[&str] = &[
    "scheduler",
    "nr_requests",
    "nomerges",
    "rq_affinity",
    "wbt_lat_usec",
];

/// Where a sweep sets knobs: a block device (`loop0`, with its sysfs directory) or, for
/// [`FS_READ_AHEAD`], the backing-device info of a target's file system.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Device {
    pub name: String,
    pub sysfs: PathBuf,
    /// A backing-device info directory, not a disk.
    pub bdi: bool,
}

/// The devices under `paths` (each once): the disk of a block device, or of the file
/// system a file is on, wherever there is one; and, when `knobs` names
/// [`FS_READ_AHEAD`], each file system's backing-device info. A knob other than that
/// needs a disk under every path.
pub fn devices_of(paths: &[PathBuf], knobs: &[&str]) -> Result<Vec<Device>, String> {
    let need_disk = knobs.iter().any(|k| *k != FS_READ_AHEAD);
    let need_bdi = knobs.contains(&FS_READ_AHEAD);
    let mut out: Vec<Device> = Vec::new();
    for p in paths {
        match crate::diskstats::disk_dir(p) {
            Some(dir) => {
                let name = dir
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default();
                if !out.iter().any(|d| d.sysfs == dir) {
                    out.push(Device {
                        name,
                        sysfs: dir,
                        bdi: false,
                    });
                }
            }
            None if need_disk => {
                return Err(format!(
                    "{}: no block device under it (a tmpfs, FUSE or network file system has no queue knobs; its readahead is {FS_READ_AHEAD})",
                    p.display()
                ))
            }
            None => {}
        }
        if need_bdi {
            let (id, dir) = bdi_of(Path::new("/sys"), p).ok_or_else(|| {
                format!(
                    "{}: its file system has no backing-device info under /sys/class/bdi (no {FS_READ_AHEAD} to set)",
                    p.display()
                )
            })?;
            if !out.iter().any(|d| d.sysfs == dir) {
                out.push(Device {
                    name: format!("bdi {id}"),
                    sysfs: dir,
                    bdi: true,
                });
            }
        }
    }
    Ok(out)
}

/// The backing-device info of the file system holding `path` (of the device itself for a
/// block device): `MAJ:MIN` and its directory under `sys`'s `class/bdi`.
fn bdi_of(sys: &Path, path: &Path) -> Option<(String, PathBuf)> {
    let (maj, min) = crate::diskstats::numbers_of(path, true)?;
    let id = format!("{maj}:{min}");
    let dir = sys.join("class/bdi").join(&id);
    dir.join("read_ahead_kb").exists().then_some((id, dir))
}

/// (reads completed, bytes read) of the disks among `devs` together, from their disk
/// statistics.
pub fn device_reads(devs: &[Device]) -> (u64, u64) {
    devs.iter()
        .filter(|d| !d.bdi)
        .filter_map(|d| crate::diskstats::reads_of(&d.sysfs))
        .fold((0, 0), |a, r| (a.0 + r.0, a.1 + r.1))
}

/// Wait until the disks among `devs` are idle: nothing in flight and no request completed
/// for `quiet_ms` (looks 50 ms apart; an IOPS cap releases queued requests in slices of up
/// to 100 ms, so 300 ms is safe behind one). Readahead a job started can still be queued
/// when the job ends (behind an IOPS cap, for one), and its reads belong to that run, not
/// the next. Gives up after `max`; returns whether the disks settled (`quiet_ms` 0: no
/// wait, true).
pub fn settle(devs: &[Device], quiet_ms: u64, max: std::time::Duration) -> bool {
    let look = || -> (u64, u64) {
        devs.iter()
            .filter(|d| !d.bdi)
            .filter_map(|d| crate::diskstats::activity_of(&d.sysfs))
            .fold((0, 0), |a, r| (a.0 + r.0, a.1 + r.1))
    };
    if quiet_ms == 0 || !devs.iter().any(|d| !d.bdi) {
        return true;
    }
    let looks = quiet_ms.div_ceil(50);
    let start = std::time::Instant::now();
    let mut last = look();
    let mut quiet = 0;
    loop {
        std::thread::sleep(std::time::Duration::from_millis(50));
        let now = look();
        quiet = if now == last && now.1 == 0 {
            quiet + 1
        } else {
            0
        };
        if quiet == looks {
            return true;
        }
        if start.elapsed() >= max {
            return false;
        }
        last = now;
    }
}

/// The sysfs files of knob `knob` for `dev`, each with the name of the device it belongs
/// to: `queue/KNOB`, else the active scheduler's tunable `queue/iosched/KNOB`; on a
/// stacked device that has no scheduler of its own (dm, md), the request-queue knobs and
/// the scheduler's tunables are its slaves'. [`FS_READ_AHEAD`] is a backing-device info's
/// `read_ahead_kb`; a knob that does not apply to `dev`'s kind gives no file.
pub fn knob_files(dev: &Device, knob: &str) -> Result<Vec<(String, PathBuf)>, String> {
    if knob.contains('/') || knob.contains("..") || knob.is_empty() {
        return Err(format!("'{knob}' is not a knob name"));
    }
    if dev.bdi || knob == FS_READ_AHEAD {
        return Ok(if dev.bdi && knob == FS_READ_AHEAD {
            vec![(dev.name.clone(), dev.sysfs.join("read_ahead_kb"))]
        } else {
            Vec::new()
        });
    }
    let mut out = Vec::new();
    resolve_knob(&dev.sysfs, knob, 0, &mut out)?;
    Ok(out)
}

fn disk_name(dir: &Path) -> String {
    dir.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// The whole disks a stacked device at `dir` sits on (`slaves/`), in directory order.
fn slave_disks(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir.join("slaves")) else {
        return Vec::new();
    };
    let mut v: Vec<PathBuf> = entries
        .filter_map(|e| std::fs::canonicalize(e.ok()?.path()).ok())
        .map(crate::diskstats::whole_disk)
        .collect();
    v.sort();
    v.dedup();
    v
}

/// A device that queues no requests itself: it has slaves and no scheduler to choose.
fn bio_based(dir: &Path, slaves: &[PathBuf]) -> bool {
    if slaves.is_empty() {
        return false;
    }
    match std::fs::read_to_string(dir.join("queue/scheduler")) {
        Ok(s) => s.split_whitespace().count() <= 1,
        Err(_) => true,
    }
}

fn resolve_knob(
    dir: &Path,
    knob: &str,
    depth: usize,
    out: &mut Vec<(String, PathBuf)>,
) -> Result<(), String> {
    let slaves = slave_disks(dir);
    let stacked = bio_based(dir, &slaves);
    let q = dir.join("queue").join(knob);
    let t = dir.join("queue/iosched").join(knob);
    let own = if QUEUE_KNOBS.contains(&knob) {
        (!(stacked && REQUEST_KNOBS.contains(&knob)) && q.exists()).then_some(q)
    } else {
        (!stacked && t.exists()).then_some(t)
    };
    if let Some(f) = own {
        if !out.iter().any(|(_, g)| *g == f) {
            out.push((disk_name(dir), f));
        }
        return Ok(());
    }
    if stacked && depth < 8 {
        for s in &slaves {
            resolve_knob(s, knob, depth + 1, out)?;
        }
        return Ok(());
    }
    Err(format!(
        "{}: no knob '{knob}' (queue knobs: {}, {FS_READ_AHEAD}; or a tunable of the active scheduler under {})",
        disk_name(dir),
        QUEUE_KNOBS.join(", "),
        dir.join("queue/iosched").display()
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

    /// Set `knob` of `dev` (on every device [`knob_files`] resolves it to) to `value`; each
    /// old value is journaled first. A value the kernel refuses is an error naming the
    /// device, the knob and the value.
    pub fn set(&mut self, dev: &Device, knob: &str, value: &str) -> Result<(), String> {
        for (device, file) in knob_files(dev, knob)? {
            if !self.entries.iter().any(|e| e.file == file) {
                let old = read_knob(&file)?;
                self.entries.push(Entry {
                    device: device.clone(),
                    knob: knob.to_string(),
                    file: file.clone(),
                    old,
                });
                write_journal(&self.journal, &self.entries)?;
            }
            write_knob(&file, value).map_err(|e| {
                format!(
                    "{device}: the kernel refused {knob}={value} ({}): {e}",
                    file.display()
                )
            })?;
        }
        Ok(())
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
            bdi: false,
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

    /// A fabricated sysfs: dm-0 (no scheduler of its own) on a partition of sda and on
    /// loop1; knobs of the request queue go to the slaves, readahead stays on dm-0.
    #[test]
    fn stacked_devices_pass_request_knobs_to_their_slaves() {
        let t = tempfile::tempdir().unwrap();
        let sys = t.path();
        let w = |p: &str, s: &str| {
            let p = sys.join(p);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, s).unwrap();
        };
        w("block/sda/queue/scheduler", "[mq-deadline] none\n");
        w("block/sda/queue/nr_requests", "64\n");
        w("block/sda/queue/read_ahead_kb", "128\n");
        w("block/sda/queue/iosched/read_expire", "500\n");
        w("block/sda/sda1/partition", "1\n");
        w("block/loop1/queue/scheduler", "[none] mq-deadline\n");
        w("block/loop1/queue/nr_requests", "128\n");
        w("block/loop1/queue/read_ahead_kb", "128\n");
        w("block/dm-0/queue/scheduler", "none\n");
        w("block/dm-0/queue/read_ahead_kb", "128\n");
        w("block/dm-0/queue/max_sectors_kb", "1280\n");
        std::fs::create_dir_all(sys.join("block/dm-0/slaves")).unwrap();
        std::os::unix::fs::symlink("../../sda/sda1", sys.join("block/dm-0/slaves/sda1")).unwrap();
        std::os::unix::fs::symlink("../../loop1", sys.join("block/dm-0/slaves/loop1")).unwrap();
        let dm = Device {
            name: "dm-0".into(),
            sysfs: sys.join("block/dm-0"),
            bdi: false,
        };
        let names = |k: &str| -> Result<Vec<String>, String> {
            Ok(knob_files(&dm, k)?.into_iter().map(|(d, _)| d).collect())
        };
        assert_eq!(names("read_ahead_kb").unwrap(), ["dm-0"]);
        assert_eq!(names("max_sectors_kb").unwrap(), ["dm-0"]);
        assert_eq!(names("scheduler").unwrap(), ["loop1", "sda"]);
        assert_eq!(names("nr_requests").unwrap(), ["loop1", "sda"]);
        let f = knob_files(&dm, "scheduler").unwrap();
        assert_eq!(read_knob(&f[1].1).unwrap(), "mq-deadline");
        // A tunable of a scheduler one slave does not run: an error naming that slave.
        let e = names("read_expire").unwrap_err();
        assert!(e.starts_with("loop1: no knob 'read_expire'"), "{e}");
        assert!(names("no_such_knob").is_err());
        assert!(names("../x").is_err());
        // The file system's readahead is a bdi's, not a disk's.
        assert!(names(FS_READ_AHEAD).unwrap().is_empty());
        let bdi = Device {
            name: "bdi 0:55".into(),
            sysfs: sys.join("class/bdi/0:55"),
            bdi: true,
        };
        let f = knob_files(&bdi, FS_READ_AHEAD).unwrap();
        assert_eq!(f[0].1, sys.join("class/bdi/0:55/read_ahead_kb"));
        assert!(knob_files(&bdi, "scheduler").unwrap().is_empty());
    }

    /// A file's file system has a backing-device info: found from the file's st_dev.
    #[test]
    fn a_files_bdi_is_found_from_its_device_numbers() {
        use std::os::unix::fs::MetadataExt;
        let t = tempfile::tempdir().unwrap();
        let f = t.path().join("x");
        std::fs::write(&f, "x").unwrap();
        let dev = std::fs::metadata(&f).unwrap().dev();
        let id = format!(
            "{}:{}",
            flexio_engine::os::fs::major(dev),
            flexio_engine::os::fs::minor(dev)
        );
        let sys = t.path().join("sys");
        std::fs::create_dir_all(sys.join("class/bdi").join(&id)).unwrap();
        assert_eq!(bdi_of(&sys, &f), None, "no read_ahead_kb: no bdi");
        std::fs::write(sys.join("class/bdi").join(&id).join("read_ahead_kb"), "128").unwrap();
        let (got, dir) = bdi_of(&sys, &f).unwrap();
        assert_eq!(got, id);
        assert_eq!(dir, sys.join("class/bdi").join(&id));
        // A file not there yet: its directory's file system.
        assert_eq!(bdi_of(&sys, &t.path().join("later")).unwrap().0, id);
    }
}
