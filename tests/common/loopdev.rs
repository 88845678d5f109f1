//! Loop devices created (and removed) by the tests themselves.

use std::path::{Path, PathBuf};
use std::process::Command;

/// A loop device over a sparse backing file; detached and deleted on drop.
pub struct LoopDev {
    pub dev: PathBuf,
    pub backing: PathBuf,
    _dir: tempfile::TempDir,
    mounted: Option<PathBuf>,
}

/// Why loop devices cannot be used here, if they cannot.
pub fn unavailable() -> Option<String> {
    if rustix_uid() != 0 {
        return Some("loop devices need root".into());
    }
    if !Path::new("/dev/loop-control").exists() {
        return Some("no /dev/loop-control (loop driver not available)".into());
    }
    if Command::new("losetup").arg("--version").output().is_err() {
        return Some("losetup is not installed".into());
    }
    None
}

fn rustix_uid() -> u32 {
    let out = Command::new("id").arg("-u").output().ok();
    out.and_then(|o| String::from_utf8_lossy(&o.stdout).trim().parse().ok())
        .unwrap_or(u32::MAX)
}

impl LoopDev {
    /// A new loop device of `size` bytes, or `None` (with a visible reason) when the machine
    /// cannot provide one.
    pub fn new(size: u64) -> Option<LoopDev> {
        Self::with_options(size, false)
    }

    /// As `new`; with `direct_io` the loop driver bypasses the page cache of the backing
    /// file, so I/O reaches the disk (losetup --direct-io=on).
    pub fn with_options(size: u64, direct_io: bool) -> Option<LoopDev> {
        if let Some(why) = unavailable() {
            eprintln!("SKIP: {why}");
            return None;
        }
        // Backing file on the machine's disk (not tmpfs) so the disk appears under the loop.
        let base = std::env::var("FLEXIO_TEST_DISK_DIR")
            .unwrap_or_else(|_| std::env::temp_dir().display().to_string());
        let dir = tempfile::Builder::new()
            .prefix("flexio-loop")
            .tempdir_in(base)
            .unwrap();
        let backing = dir.path().join("backing.img");
        let f = std::fs::File::create(&backing).unwrap();
        f.set_len(size).unwrap();
        drop(f);
        let mut cmd = Command::new("losetup");
        cmd.args(["-f", "--show"]);
        if direct_io {
            cmd.arg("--direct-io=on");
        }
        let out = cmd.arg(&backing).output().unwrap();
        if !out.status.success() {
            eprintln!(
                "SKIP: losetup failed: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            return None;
        }
        let dev = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
        Some(LoopDev {
            dev,
            backing,
            _dir: dir,
            mounted: None,
        })
    }

    pub fn path(&self) -> &str {
        self.dev.to_str().unwrap()
    }

    /// Kernel name (`loop3`).
    pub fn name(&self) -> String {
        self.dev.file_name().unwrap().to_string_lossy().into_owned()
    }

    /// Put a file system on it and mount it (for the refusal tests).
    pub fn mount(&mut self) -> bool {
        let ok = Command::new("mkfs.ext4")
            .args(["-q", "-F"])
            .arg(&self.dev)
            .status()
            .map(|s| s.success())
            .unwrap_or(false);
        if !ok {
            eprintln!("SKIP: mkfs.ext4 unavailable or failed");
            return false;
        }
        let mnt = self._dir.path().join("mnt");
        std::fs::create_dir_all(&mnt).unwrap();
        let ok = Command::new("mount")
            .arg(&self.dev)
            .arg(&mnt)
            .status()
            .map(|s| s.success())
            .unwrap_or(false);
        if ok {
            self.mounted = Some(mnt);
        }
        ok
    }

    /// Where `mount` mounted it.
    pub fn mountpoint(&self) -> Option<&Path> {
        self.mounted.as_deref()
    }

    /// Set the device's I/O scheduler; false if the kernel refuses.
    pub fn set_scheduler(&self, s: &str) -> bool {
        std::fs::write(format!("/sys/block/{}/queue/scheduler", self.name()), s).is_ok()
    }
}

impl Drop for LoopDev {
    fn drop(&mut self) {
        if let Some(m) = self.mounted.take() {
            let _ = Command::new("umount").arg(&m).status();
        }
        let _ = Command::new("losetup").arg("-d").arg(&self.dev).status();
    }
}
