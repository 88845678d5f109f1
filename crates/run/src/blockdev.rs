//! Block devices as targets: their size and logical block size, and whether something else
//! uses them (a mounted file system on the device or one of its partitions, swap, a holder
//! such as device-mapper, or an exclusive opener), so that destructive jobs can refuse.

use flexio_engine::os;
use flexio_engine::os::fs::{Mode, OFlags, SeekFrom};
use std::os::fd::AsFd;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::Path;

/// What flexio knows about a device node target: a block device, or a character device
/// (`/dev/null`, `/dev/zero`), which fio runs on too. Either is used as it is: never laid
/// out, truncated, renamed or unlinked.
#[derive(Clone, Debug)]
pub struct BlockInfo {
    /// The block device's size (0 for a character device: it has none, the job's `size=`
    /// gives the region).
    pub size: u64,
    /// Logical block size: O_DIRECT offsets and lengths must be multiples of it.
    pub lbs: u32,
    /// Kernel name (`loop0`, `vda`, `vda1`; a character device's path).
    pub name: String,
    /// A character device rather than a block device.
    pub char_dev: bool,
}

impl BlockInfo {
    /// A character device at `path` (nothing is opened: fio only stats them too).
    pub fn char_device(path: &Path) -> BlockInfo {
        BlockInfo {
            size: 0,
            lbs: 1,
            name: path.display().to_string(),
            char_dev: true,
        }
    }
}

/// `Some` if `path` is a block or a character device.
pub fn probe(path: &Path) -> std::io::Result<Option<BlockInfo>> {
    match std::fs::metadata(path) {
        Ok(m) => probe_with(path, &m),
        Err(_) => Ok(None),
    }
}

/// [`probe`] for a path already looked at: `m` is its metadata (planning stats each file
/// once and uses the answer for the device check, the file type and the size).
pub fn probe_with(path: &Path, m: &std::fs::Metadata) -> std::io::Result<Option<BlockInfo>> {
    if m.file_type().is_char_device() {
        return Ok(Some(BlockInfo::char_device(path)));
    }
    if !m.file_type().is_block_device() {
        return Ok(None);
    }
    let fd = os::fs::open(path, OFlags::RDONLY | OFlags::CLOEXEC, Mode::empty())
        .map_err(|e| std::io::Error::from_raw_os_error(e.raw_os_error()))?;
    let size = os::fs::seek(&fd, SeekFrom::End(0))
        .map_err(|e| std::io::Error::from_raw_os_error(e.raw_os_error()))?;
    let lbs = flexio_engine::platform::logical_block_size(fd.as_fd());
    let rdev = m.rdev();
    let name = sysfs_dir(os::fs::major(rdev), os::fs::minor(rdev))
        .and_then(|d| d.file_name().map(|n| n.to_string_lossy().into_owned()))
        .unwrap_or_else(|| path.display().to_string());
    Ok(Some(BlockInfo {
        size,
        lbs,
        name,
        char_dev: false,
    }))
}

/// /sys/dev/block/M:m resolved to the device's sysfs directory.
pub fn sysfs_dir(major: u32, minor: u32) -> Option<std::path::PathBuf> {
    std::fs::canonicalize(format!("/sys/dev/block/{major}:{minor}")).ok()
}

fn devno_of_dir(dir: &Path) -> Option<String> {
    std::fs::read_to_string(dir.join("dev"))
        .ok()
        .map(|s| s.trim().to_string())
}

/// Why a block device must not be written to, or `None` if nothing appears to use it.
pub fn in_use(path: &Path) -> Option<String> {
    let m = std::fs::metadata(path).ok()?;
    let rdev = m.rdev();
    let dir = sysfs_dir(os::fs::major(rdev), os::fs::minor(rdev))?;
    let name = dir.file_name()?.to_string_lossy().into_owned();
    // The device and its partitions.
    let mut devs: Vec<(String, String)> = Vec::new();
    if let Some(d) = devno_of_dir(&dir) {
        devs.push((name.clone(), d));
    }
    if let Ok(rd) = std::fs::read_dir(&dir) {
        for e in rd.flatten() {
            let p = e.path();
            if p.join("partition").exists() {
                if let Some(d) = devno_of_dir(&p) {
                    devs.push((e.file_name().to_string_lossy().into_owned(), d));
                }
            }
        }
    }
    let mounts = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
    for line in mounts.lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        if f.len() > 4 {
            if let Some((n, _)) = devs.iter().find(|(_, d)| d == f[2]) {
                return Some(format!("{n} holds a mounted file system (at {})", f[4]));
            }
        }
    }
    let swaps = std::fs::read_to_string("/proc/swaps").unwrap_or_default();
    for line in swaps.lines().skip(1) {
        if let Some(dev) = line.split_whitespace().next() {
            if let Ok(sm) = std::fs::metadata(dev) {
                if sm.file_type().is_block_device() {
                    let d = format!("{}:{}", os::fs::major(sm.rdev()), os::fs::minor(sm.rdev()));
                    if let Some((n, _)) = devs.iter().find(|(_, x)| *x == d) {
                        return Some(format!("{n} is in use as swap"));
                    }
                }
            }
        }
    }
    for (n, _) in &devs {
        let holders = std::path::PathBuf::from(format!("/sys/class/block/{n}/holders"));
        if let Some(h) = std::fs::read_dir(&holders)
            .ok()
            .and_then(|mut r| r.next())
            .and_then(|e| e.ok())
        {
            return Some(format!(
                "{n} is held by {}",
                h.file_name().to_string_lossy()
            ));
        }
    }
    // Anything else that claimed the device exclusively.
    match os::fs::open(
        path,
        OFlags::RDONLY | OFlags::EXCL | OFlags::CLOEXEC,
        Mode::empty(),
    ) {
        Err(e) if e == os::io::Errno::BUSY => Some(format!(
            "{name} is in use (opened exclusively by another program)"
        )),
        _ => None,
    }
}
