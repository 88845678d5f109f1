//! The "Disk stats" block: block devices under the job's files, sampled from
//! `/sys/block/<dev>/stat` at the start and end of the run. As fio, a device with slaves
//! (md RAID, device-mapper: a non-empty `slaves/` directory) brings its slaves into the
//! list, recursively, each right after the device that found it, and is reported with the
//! per-slave averages of its direct slaves and the busiest one's utilisation.

use flexio_stats::report::{DiskAggr, DiskReport};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// At most this many devices are watched (a bound on malformed or cyclic sysfs trees).
const MAX_DISKS: usize = 256;

/// One device being watched.
#[derive(Clone, Debug)]
pub struct Disk {
    pub name: String,
    /// The device numbers it was found by (a partition's own, as fio keeps them).
    dev: (u32, u32),
    stat_path: PathBuf,
    start: [u64; 11],
    /// Positions in the watched list of the slaves summed into this device's aggregate.
    slaves: Vec<usize>,
}

impl Disk {
    /// Names of the slaves summed into this device's aggregate.
    pub fn slave_names<'a>(&self, all: &'a [Disk]) -> Vec<&'a str> {
        self.slaves.iter().map(|&i| all[i].name.as_str()).collect()
    }
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

/// The device numbers of `path` (or of its directory while it does not exist yet): the
/// file system's device, or with `own` a block device's own numbers.
pub(crate) fn numbers_of(path: &Path, own: bool) -> Option<(u32, u32)> {
    use std::os::unix::fs::FileTypeExt;
    // One look at the path, and at its directory only when it is missing.
    let meta = match std::fs::metadata(path) {
        Ok(m) => m,
        Err(_) => {
            let dir = path.parent()?;
            std::fs::metadata(if dir.as_os_str().is_empty() {
                Path::new(".")
            } else {
                dir
            })
            .ok()?
        }
    };
    let dev = if own && meta.file_type().is_block_device() {
        meta.rdev()
    } else {
        meta.dev()
    };
    Some((
        flexio_engine::os::fs::major(dev),
        flexio_engine::os::fs::minor(dev),
    ))
}

/// The device numbers of the disk holding `path` (for a block device, the device itself).
fn device_numbers(path: &Path) -> Option<(u32, u32)> {
    let (maj, min) = numbers_of(path, true)?;
    crate::debug_log!(
        crate::debug::Cat::Diskutil,
        "{} belongs to maj/min {maj}/{min}",
        path.display()
    );
    (maj != 0).then_some((maj, min)) // 0: tmpfs, overlay and other anonymous devices
}

/// A device directory as the disk to watch: a partition maps to its disk.
pub(crate) fn whole_disk(dir: PathBuf) -> PathBuf {
    if dir.join("partition").exists() {
        if let Some(p) = dir.parent() {
            return p.to_path_buf();
        }
    }
    dir
}

/// The sysfs directory of the whole disk holding `path`.
fn device_dir(sys: &Path, path: &Path) -> Option<PathBuf> {
    let (maj, min) = device_numbers(path)?;
    let dir = std::fs::canonicalize(sys.join(format!("dev/block/{maj}:{min}"))).ok()?;
    Some(whole_disk(dir))
}

/// The file behind a loop device (from sysfs), if `dir` is one.
fn loop_backing(dir: &Path) -> Option<PathBuf> {
    let f = std::fs::read_to_string(dir.join("loop/backing_file")).ok()?;
    let f = f.trim().trim_end_matches(" (deleted)");
    (!f.is_empty()).then(|| PathBuf::from(f))
}

/// `major:minor` from a sysfs `dev` file.
fn read_dev(p: &Path) -> Option<(u32, u32)> {
    let s = std::fs::read_to_string(p).ok()?;
    let (a, b) = s.trim().split_once(':')?;
    Some((a.parse().ok()?, b.parse().ok()?))
}

/// The list being built, in fio's order.
struct Watch {
    disks: Vec<Disk>,
}

impl Watch {
    fn find(&self, dev: (u32, u32)) -> Option<usize> {
        self.disks.iter().position(|d| d.dev == dev)
    }

    /// Adds the device at `dir` (a whole disk) found by `dev`, then its slaves. A name
    /// already listed (another partition of a listed disk) is not added again.
    fn add(&mut self, dev: (u32, u32), dir: &Path) {
        let name = dir
            .file_name()
            .map(|n| n.to_string_lossy().to_string())
            .unwrap_or_default();
        if self.disks.len() >= MAX_DISKS || self.disks.iter().any(|d| d.name == name) {
            return;
        }
        let stat_path = dir.join("stat");
        let Some(start) = read_stat(&stat_path) else {
            return;
        };
        crate::debug_log!(
            crate::debug::Cat::Diskutil,
            "add {name} to list, stat file: {}",
            stat_path.display()
        );
        self.disks.push(Disk {
            name,
            dev,
            stat_path,
            start,
            slaves: Vec::new(),
        });
        let master = self.disks.len() - 1;
        self.add_slaves(master, dir);
    }

    /// fio's walk of `<dir>/slaves/`, in directory order: each entry is a link to the
    /// slave's directory, whose `dev` (or `device/dev`) gives its numbers. A slave already
    /// listed is skipped, and not summed into this device; a new one is added (with its
    /// own slaves) and summed. An unreadable link or `dev` file ends the walk.
    fn add_slaves(&mut self, master: usize, dir: &Path) {
        let slaves_dir = dir.join("slaves");
        let Ok(entries) = std::fs::read_dir(&slaves_dir) else {
            return;
        };
        for e in entries {
            let Ok(e) = e else { return };
            let Ok(target) = std::fs::read_link(e.path()) else {
                return;
            };
            let slave_dir = slaves_dir.join(target);
            let dev = read_dev(&slave_dir.join("dev"))
                .or_else(|| read_dev(&slave_dir.join("device/dev")));
            let Some(dev) = dev else { return };
            if self.find(dev).is_some() {
                continue;
            }
            let Ok(slave_dir) = std::fs::canonicalize(&slave_dir) else {
                continue;
            };
            self.add(dev, &whole_disk(slave_dir));
            if let Some(i) = self.find(dev) {
                self.disks[master].slaves.push(i);
            }
        }
    }
}

/// Devices under these paths, in first-seen order, each followed by its slaves; for a
/// loop device also the disk that holds its backing file (the device "under" it).
pub fn watch(paths: &[PathBuf]) -> Vec<Disk> {
    watch_in(Path::new("/sys"), paths, device_numbers)
}

/// [`watch`] with the sysfs tree at `sys` and `numbers` giving the device numbers of the
/// disk holding a path.
pub fn watch_in(
    sys: &Path,
    paths: &[PathBuf],
    numbers: impl Fn(&Path) -> Option<(u32, u32)>,
) -> Vec<Disk> {
    let mut w = Watch { disks: Vec::new() };
    let mut todo: Vec<PathBuf> = paths.to_vec();
    let mut i = 0;
    // Every path is looked at (the list stops growing at MAX_DISKS devices, not paths:
    // a device after 256 files on another one is still watched); each device once.
    let mut tried: Vec<(u32, u32)> = Vec::new();
    while i < todo.len() && w.disks.len() < MAX_DISKS {
        let p = todo[i].clone();
        i += 1;
        let Some(dev) = numbers(&p) else {
            continue;
        };
        if tried.contains(&dev) || w.find(dev).is_some() {
            continue;
        }
        tried.push(dev);
        let Ok(dir) = std::fs::canonicalize(sys.join(format!("dev/block/{}:{}", dev.0, dev.1)))
        else {
            continue;
        };
        let dir = whole_disk(dir);
        if let Some(backing) = loop_backing(&dir) {
            todo.push(backing);
        }
        w.add(dev, &dir);
    }
    w.disks
}

/// Restart the measurement (after file layout, just before the jobs run).
pub fn restart(disks: &mut [Disk]) {
    for d in disks {
        if let Some(s) = read_stat(&d.stat_path) {
            d.start = s;
        }
    }
}

/// Deltas since the start over `elapsed_ms`; a device with slaves gets fio's aggregate:
/// sums over its direct slaves and the highest slave utilisation (io_ticks × 100 / ms,
/// capped at 100 only after the maximum is taken). A device whose counters cannot be
/// read at the end is left out (summed as zeros into its master's aggregate).
pub fn finish(disks: &[Disk], elapsed_ms: u64) -> Vec<DiskReport> {
    let deltas: Vec<Option<[u64; 11]>> = disks
        .iter()
        .map(|d| {
            let end = read_stat(&d.stat_path)?;
            Some(std::array::from_fn(|i| end[i].saturating_sub(d.start[i])))
        })
        .collect();
    disks
        .iter()
        .zip(&deltas)
        .filter_map(|(d, dl)| {
            let dl = (*dl)?;
            let util = if elapsed_ms > 0 {
                (dl[9] as f64 * 100.0 / elapsed_ms as f64).min(100.0)
            } else {
                0.0
            };
            Some(DiskReport {
                name: d.name.clone(),
                read_ios: dl[0],
                write_ios: dl[4],
                read_sectors: dl[2],
                write_sectors: dl[6],
                read_merges: dl[1],
                write_merges: dl[5],
                read_ticks: dl[3],
                write_ticks: dl[7],
                in_queue: dl[10],
                util,
                aggr: aggregate(&d.slaves, &deltas, elapsed_ms),
            })
        })
        .collect()
}

/// fio's aggregate of the slaves at `slaves` (positions in `deltas`); none without slaves.
fn aggregate(slaves: &[usize], deltas: &[Option<[u64; 11]>], elapsed_ms: u64) -> Option<DiskAggr> {
    if slaves.is_empty() {
        return None;
    }
    let mut a = DiskAggr::default();
    for &i in slaves {
        let dl = deltas[i].unwrap_or_default();
        a.ios[0] = a.ios[0].wrapping_add(dl[0]);
        a.ios[1] = a.ios[1].wrapping_add(dl[4]);
        a.merges[0] = a.merges[0].wrapping_add(dl[1]);
        a.merges[1] = a.merges[1].wrapping_add(dl[5]);
        a.sectors[0] = a.sectors[0].wrapping_add(dl[2]);
        a.sectors[1] = a.sectors[1].wrapping_add(dl[6]);
        a.ticks[0] = a.ticks[0].wrapping_add(dl[3]);
        a.ticks[1] = a.ticks[1].wrapping_add(dl[7]);
        a.in_queue = a.in_queue.wrapping_add(dl[10]);
        a.slaves += 1;
        // fio's integer product, then a float division (no time: infinite, or NaN for no
        // busy time, which never wins the comparison).
        let util = 100u64.wrapping_mul(dl[9]) as f64 / elapsed_ms as f64;
        if util > a.max_util {
            a.max_util = util;
        }
    }
    if a.max_util > 100.0 {
        a.max_util = 100.0;
    }
    Some(a)
}

/// The sysfs directory of the whole disk under `path` (a block device, or a file through
/// its file system's device; a path that does not exist yet by its directory).
pub fn disk_dir(path: &Path) -> Option<PathBuf> {
    device_dir(Path::new("/sys"), path)
}

/// The sysfs `queue` directory of the disk under `path` (where its scheduler is set).
pub fn queue_dir(path: &Path) -> Option<PathBuf> {
    disk_dir(path).map(|d| d.join("queue"))
}

/// The active scheduler in a `queue/scheduler` file's text (`mq-deadline [none] kyber`).
pub fn active_scheduler(text: &str) -> Option<&str> {
    text.split_whitespace()
        .find(|w| w.starts_with('['))
        .map(|w| w.trim_matches(|c| c == '[' || c == ']'))
}

/// (reads completed, bytes read) of the disk at sysfs directory `dir`, from its `stat`.
pub fn reads_of(dir: &Path) -> Option<(u64, u64)> {
    read_stat(&dir.join("stat")).map(|s| (s[0], s[2] * 512))
}

/// (requests completed, requests in flight) of the disk at sysfs directory `dir`.
pub fn activity_of(dir: &Path) -> Option<(u64, u64)> {
    read_stat(&dir.join("stat")).map(|s| (s[0] + s[4], s[8]))
}

/// The active I/O scheduler of the disk under `path`, as (device name, scheduler).
pub fn scheduler_of(path: &Path) -> Option<(String, String)> {
    let dir = disk_dir(path)?;
    let name = dir.file_name()?.to_string_lossy().into_owned();
    let s = std::fs::read_to_string(dir.join("queue/scheduler")).ok()?;
    Some((name, active_scheduler(&s)?.to_string()))
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

#[cfg(test)]
mod tests {
    use super::*;
    use flexio_output::{json, normal, terse};
    use flexio_stats::report::Layout;
    use std::os::unix::fs::symlink;

    /// A device in the synthetic sysfs tree: name, numbers, slaves, and its counters' deltas
    /// over the run (read ios, merges, sectors, ticks, write ios, merges, sectors, ticks,
    /// in flight, io_ticks, time in queue).
    struct Dev {
        name: &'static str,
        dev: (u32, u32),
        slaves: &'static [&'static str],
        delta: [u64; 11],
    }

    const ELAPSED_MS: u64 = 1000;

    /// dm-0 over loop0 and dm-1, dm-1 over loop1 (whose busy time exceeds the run).
    const DEVS: [Dev; 4] = [
        Dev {
            name: "dm-0",
            dev: (253, 0),
            slaves: &["loop0", "dm-1"],
            delta: [100, 0, 800, 30, 50, 0, 400, 20, 0, 452, 50],
        },
        Dev {
            name: "loop0",
            dev: (7, 0),
            slaves: &[],
            delta: [120, 3, 960, 40, 60, 1, 480, 10, 0, 875, 50],
        },
        Dev {
            name: "dm-1",
            dev: (253, 1),
            slaves: &["loop1"],
            delta: [81, 0, 649, 5, 39, 0, 313, 7, 0, 300, 13],
        },
        Dev {
            name: "loop1",
            dev: (7, 1),
            slaves: &[],
            delta: [81, 2, 649, 6, 39, 0, 313, 9, 0, 1200, 20],
        },
    ];

    fn stat_line(v: impl Iterator<Item = u64>) -> String {
        let mut s: Vec<String> = v.map(|x| format!("{x:>8}")).collect();
        s.extend(["0", "0", "0", "0", "0", "0"].map(String::from)); // discard, flush fields
        s.join(" ") + "\n"
    }

    /// Start counters (distinct per device and field).
    fn start_of(k: usize) -> [u64; 11] {
        std::array::from_fn(|i| 1000 * (k as u64 + 1) + 7 * i as u64)
    }

    /// The tree under `root`: devices/virtual/block/<name>/{dev,stat,slaves/}, slaves as
    /// relative links, dev/block/<maj:min> links.
    fn build_sysfs(root: &Path) {
        let block = root.join("devices/virtual/block");
        std::fs::create_dir_all(root.join("dev/block")).unwrap();
        for (k, d) in DEVS.iter().enumerate() {
            let dir = block.join(d.name);
            std::fs::create_dir_all(dir.join("slaves")).unwrap();
            std::fs::create_dir_all(dir.join("queue")).unwrap();
            std::fs::write(dir.join("dev"), format!("{}:{}\n", d.dev.0, d.dev.1)).unwrap();
            std::fs::write(dir.join("stat"), stat_line(start_of(k).into_iter())).unwrap();
            for s in d.slaves {
                symlink(format!("../../{s}"), dir.join("slaves").join(s)).unwrap();
            }
            symlink(
                format!("../../devices/virtual/block/{}", d.name),
                root.join(format!("dev/block/{}:{}", d.dev.0, d.dev.1)),
            )
            .unwrap();
        }
    }

    /// The counters at the end of the run.
    fn advance(root: &Path) {
        let block = root.join("devices/virtual/block");
        for (k, d) in DEVS.iter().enumerate() {
            let end = start_of(k).into_iter().zip(d.delta).map(|(a, b)| a + b);
            std::fs::write(block.join(d.name).join("stat"), stat_line(end)).unwrap();
        }
    }

    /// Paths of the jobs' files: `/fake/<name>/f` lies on device <name>.
    fn numbers(p: &Path) -> Option<(u32, u32)> {
        let name = p.components().nth(2)?.as_os_str().to_str()?;
        DEVS.iter().find(|d| d.name == name).map(|d| d.dev)
    }

    /// The slaves of `name` in directory order (the order fio reads them in).
    fn dir_order(root: &Path, name: &str) -> Vec<String> {
        std::fs::read_dir(root.join("devices/virtual/block").join(name).join("slaves"))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect()
    }

    /// Devices in fio's order: each device, then (depth first) its new slaves in directory
    /// order.
    fn expected_order(root: &Path, name: &str, out: &mut Vec<String>) {
        if out.iter().any(|n| n == name) {
            return;
        }
        out.push(name.to_string());
        for s in dir_order(root, name) {
            expected_order(root, &s, out);
        }
    }

    fn setup() -> (tempfile::TempDir, Vec<Disk>) {
        let t = tempfile::tempdir().unwrap();
        build_sysfs(t.path());
        let disks = watch_in(t.path(), &[PathBuf::from("/fake/dm-0/f")], numbers);
        (t, disks)
    }

    #[test]
    fn slaves_are_found_recursively_in_fios_order() {
        let (t, disks) = setup();
        let names: Vec<&str> = disks.iter().map(|d| d.name.as_str()).collect();
        let mut want = Vec::new();
        expected_order(t.path(), "dm-0", &mut want);
        assert_eq!(names, want);
        assert_eq!(names.len(), 4);
        let by = |n: &str| disks.iter().find(|d| d.name == n).unwrap();
        let mut dm0 = by("dm-0").slave_names(&disks);
        dm0.sort_unstable();
        assert_eq!(dm0, ["dm-1", "loop0"]);
        assert_eq!(by("dm-1").slave_names(&disks), ["loop1"]);
        assert!(by("loop0").slaves.is_empty() && by("loop1").slaves.is_empty());
        assert_eq!(by("dm-1").dev, (253, 1));
    }

    #[test]
    fn aggregate_is_the_slaves_average_and_busiest_util() {
        let (t, mut disks) = setup();
        restart(&mut disks);
        advance(t.path());
        let reps = finish(&disks, ELAPSED_MS);
        let by = |n: &str| reps.iter().find(|d| d.name == n).unwrap();
        let dm0 = by("dm-0");
        assert_eq!((dm0.read_ios, dm0.write_ios, dm0.in_queue), (100, 50, 50));
        assert!((dm0.util - 45.2).abs() < 1e-9, "{}", dm0.util);
        // Over loop0 and dm-1 (not loop1, dm-1's own slave).
        let a = dm0.aggr.as_ref().unwrap();
        assert_eq!(a.slaves, 2);
        assert_eq!(
            (a.ios, a.merges, a.sectors),
            ([201, 99], [3, 1], [1609, 793])
        );
        assert_eq!((a.ticks, a.in_queue), ([45, 17], 63));
        assert_eq!(
            (a.avg(a.ios[1]), a.avg(a.merges[0]), a.avg(a.in_queue)),
            (49, 1, 31)
        );
        assert_eq!(a.max_util, 87.5, "loop0's 875 ms of 1000");
        // loop1 was busy 1200 ms of 1000: 120 %, capped after the maximum is taken.
        let b = by("dm-1").aggr.as_ref().unwrap();
        assert_eq!((b.slaves, b.ios, b.max_util), (1, [81, 39], 100.0));
        assert_eq!(by("loop1").util, 100.0);
        assert!(by("loop0").aggr.is_none() && by("loop1").aggr.is_none());
        // No elapsed time: no util for the device itself, and the slaves' 100*x/0 is
        // infinite (capped to 100) as in fio.
        let z = finish(&disks, 0);
        assert_eq!(z[0].util, 0.0);
        assert_eq!(z[0].aggr.as_ref().unwrap().max_util, 100.0);
    }

    #[test]
    fn a_slave_listed_before_its_master_is_not_summed() {
        let t = tempfile::tempdir().unwrap();
        build_sysfs(t.path());
        let paths = [
            PathBuf::from("/fake/loop0/f"),
            PathBuf::from("/fake/dm-0/f"),
        ];
        let disks = watch_in(t.path(), &paths, numbers);
        let names: Vec<&str> = disks.iter().map(|d| d.name.as_str()).collect();
        assert_eq!(&names[..2], ["loop0", "dm-0"]);
        assert_eq!(names.len(), 4);
        assert_eq!(disks[1].slave_names(&disks), ["dm-1"]);
    }

    #[test]
    fn a_partition_slave_is_its_disk() {
        let t = tempfile::tempdir().unwrap();
        let root = t.path();
        let block = root.join("devices/pci0/block");
        let vdb1 = block.join("vdb/vdb1");
        std::fs::create_dir_all(&vdb1).unwrap();
        std::fs::create_dir_all(block.join("vdb/queue")).unwrap();
        std::fs::write(vdb1.join("partition"), "1\n").unwrap();
        std::fs::write(vdb1.join("dev"), "252:17\n").unwrap();
        std::fs::write(block.join("vdb/dev"), "252:16\n").unwrap();
        for d in [&vdb1, &block.join("vdb")] {
            std::fs::write(d.join("stat"), stat_line([1u64; 11].into_iter())).unwrap();
        }
        let md = root.join("devices/virtual/block/md0");
        std::fs::create_dir_all(md.join("slaves")).unwrap();
        std::fs::write(md.join("dev"), "9:0\n").unwrap();
        std::fs::write(md.join("stat"), stat_line([2u64; 11].into_iter())).unwrap();
        symlink("../../../../pci0/block/vdb/vdb1", md.join("slaves/vdb1")).unwrap();
        std::fs::create_dir_all(root.join("dev/block")).unwrap();
        symlink(
            "../../devices/virtual/block/md0",
            root.join("dev/block/9:0"),
        )
        .unwrap();
        let disks = watch_in(root, &[PathBuf::from("/x")], |_| Some((9, 0)));
        let names: Vec<&str> = disks.iter().map(|d| d.name.as_str()).collect();
        assert_eq!(names, ["md0", "vdb"]);
        assert_eq!(disks[0].slave_names(&disks), ["vdb"]);
        assert_eq!(disks[1].stat_path, block.join("vdb/stat"));
    }

    #[test]
    fn a_disk_after_hundreds_of_files_on_another_is_watched() {
        let t = tempfile::tempdir().unwrap();
        let root = t.path();
        for (name, dev) in [("vda", "253:0"), ("vdb", "253:16")] {
            let d = root.join("devices/pci0/block").join(name);
            std::fs::create_dir_all(&d).unwrap();
            std::fs::write(d.join("dev"), format!("{dev}\n")).unwrap();
            std::fs::write(d.join("stat"), stat_line([1u64; 11].into_iter())).unwrap();
            std::fs::create_dir_all(root.join("dev/block")).unwrap();
            symlink(
                format!("../../devices/pci0/block/{name}"),
                root.join("dev/block").join(dev),
            )
            .unwrap();
        }
        // 300 files on vda (more than MAX_DISKS), then one on vdb; each device is looked
        // up once.
        let mut paths: Vec<PathBuf> = (0..300).map(|i| PathBuf::from(format!("/a/{i}"))).collect();
        paths.push(PathBuf::from("/b/0"));
        let looked = std::cell::Cell::new(0);
        let disks = watch_in(root, &paths, |p| {
            looked.set(looked.get() + 1);
            Some(if p.starts_with("/b") {
                (253, 16)
            } else {
                (253, 0)
            })
        });
        let names: Vec<&str> = disks.iter().map(|d| d.name.as_str()).collect();
        assert_eq!(names, ["vda", "vdb"]);
        assert_eq!(looked.get(), 301);
    }

    /// The whole path: the synthetic tree's counters through the formatters, byte for byte.
    #[test]
    fn disk_lines_in_every_format() {
        let (t, mut disks) = setup();
        restart(&mut disks);
        advance(t.path());
        let reps = finish(&disks, ELAPSED_MS);
        let lines = |layout| {
            let mut s = String::new();
            normal::disk_block(&mut s, layout, &reps);
            s
        };
        let (new, old) = (lines(Layout::Latest), lines(Layout::Fio333));
        let line_of = |text: &str, n: &str| {
            text.lines()
                .find(|l| l.trim_start().starts_with(&format!("{n}:")))
                .unwrap()
                .to_string()
        };
        assert!(new.starts_with("\nDisk stats (read/write):\n"), "{new}");
        assert_eq!(
            line_of(&new, "dm-0"),
            "    dm-0: ios=100/50, sectors=800/400, merge=0/0, ticks=30/20, in_queue=50, util=45.20%, \
             aggrios=100/49, aggsectors=804/396, aggrmerge=1/0, aggrticks=22/8, aggrin_queue=31, aggrutil=87.50%"
        );
        assert_eq!(
            line_of(&old, "dm-0"),
            "    dm-0: ios=100/50, merge=0/0, ticks=30/20, in_queue=50, util=45.20%, \
             aggrios=100/49, aggrmerge=1/0, aggrticks=22/8, aggrin_queue=31, aggrutil=87.50%"
        );
        assert_eq!(
            line_of(&new, "dm-1"),
            "    dm-1: ios=81/39, sectors=649/313, merge=0/0, ticks=5/7, in_queue=13, util=30.00%, \
             aggrios=81/39, aggsectors=649/313, aggrmerge=2/0, aggrticks=6/9, aggrin_queue=20, aggrutil=100.00%"
        );
        assert_eq!(
            line_of(&new, "loop0"),
            "  loop0: ios=120/60, sectors=960/480, merge=3/1, ticks=40/10, in_queue=50, util=87.50%"
        );
        assert_eq!(
            line_of(&old, "loop1"),
            "  loop1: ios=81/39, merge=2/0, ticks=6/9, in_queue=20, util=100.00%"
        );
        // The lines come in the watched order.
        let order: Vec<&str> = new
            .lines()
            .skip(2)
            .map(|l| l.trim_start().split(':').next().unwrap())
            .collect();
        let want: Vec<&str> = disks.iter().map(|d| d.name.as_str()).collect();
        assert_eq!(order, want);

        let obj = |layout| json::print(&json::disk_obj(layout, &reps[0]).into_j());
        assert_eq!(
            obj(Layout::Latest),
            "{\n  \"name\" : \"dm-0\",\n  \"read_ios\" : 100,\n  \"write_ios\" : 50,\n  \
             \"read_sectors\" : 800,\n  \"write_sectors\" : 400,\n  \"read_merges\" : 0,\n  \
             \"write_merges\" : 0,\n  \"read_ticks\" : 30,\n  \"write_ticks\" : 20,\n  \
             \"in_queue\" : 50,\n  \"util\" : 45.200000,\n  \"aggr_read_ios\" : 100,\n  \
             \"aggr_write_ios\" : 49,\n  \"aggr_read_sectors\" : 804,\n  \
             \"aggr_write_sectors\" : 396,\n  \"aggr_read_merges\" : 1,\n  \
             \"aggr_write_merge\" : 0,\n  \"aggr_read_ticks\" : 22,\n  \
             \"aggr_write_ticks\" : 8,\n  \"aggr_in_queue\" : 31,\n  \
             \"aggr_util\" : 87.500000\n}\n"
        );
        assert_eq!(
            obj(Layout::Fio333),
            "{\n  \"name\" : \"dm-0\",\n  \"read_ios\" : 100,\n  \"write_ios\" : 50,\n  \
             \"read_merges\" : 0,\n  \"write_merges\" : 0,\n  \"read_ticks\" : 30,\n  \
             \"write_ticks\" : 20,\n  \"in_queue\" : 50,\n  \"util\" : 45.200000,\n  \
             \"aggr_read_ios\" : 100,\n  \"aggr_write_ios\" : 49,\n  \
             \"aggr_read_merges\" : 1,\n  \"aggr_write_merge\" : 0,\n  \
             \"aggr_read_ticks\" : 22,\n  \"aggr_write_ticks\" : 8,\n  \
             \"aggr_in_queue\" : 31,\n  \"aggr_util\" : 87.500000\n}\n"
        );
        let slave = json::print(&json::disk_obj(Layout::Latest, &reps[1]).into_j());
        assert!(!slave.contains("aggr_"), "{slave}");

        let mut t = String::new();
        terse::disks(&mut t, &reps);
        let mut want = String::new();
        for d in &disks {
            want += match d.name.as_str() {
                "dm-0" => ";dm-0;100;50;0;0;30;20;50;45.20%;slaves;100;49;1;0;22;8;31;87.50%",
                "loop0" => ";loop0;120;60;3;1;40;10;50;87.50%",
                "dm-1" => ";dm-1;81;39;0;0;5;7;13;30.00%;slaves;81;39;2;0;6;9;20;100.00%",
                _ => ";loop1;81;39;2;0;6;9;20;100.00%",
            };
        }
        assert_eq!(t, want);
    }
}
