//! The file systems the study tests run on, each created and removed by the test: tmpfs,
//! ext4 on a loop device, and a FUSE pass-through (bindfs over a directory on the machine's
//! disk). `FsTarget::new` returns `None` with a visible `SKIP:` reason when the machine
//! cannot provide one, unless `FLEXIO_REQUIRE_FS=1` (CI) makes it a failure.

#![allow(dead_code)]

use super::loopdev::LoopDev;
use std::path::{Path, PathBuf};
use std::process::Command;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FsKind {
    Tmpfs,
    Ext4Loop,
    Fuse,
}

impl FsKind {
    pub const ALL: [FsKind; 3] = [FsKind::Tmpfs, FsKind::Ext4Loop, FsKind::Fuse];

    pub fn name(self) -> &'static str {
        match self {
            FsKind::Tmpfs => "tmpfs",
            FsKind::Ext4Loop => "ext4-loop",
            FsKind::Fuse => "fuse-bindfs",
        }
    }
}

/// A mounted, empty file system; unmounted (and its device removed) on drop.
pub struct FsTarget {
    pub kind: FsKind,
    mnt: PathBuf,
    mounted: bool,
    _loop: Option<LoopDev>,
    _dir: tempfile::TempDir,
}

fn skip(kind: FsKind, why: String) -> Option<FsTarget> {
    if std::env::var("FLEXIO_REQUIRE_FS").as_deref() == Ok("1") {
        panic!("{}: {why} (FLEXIO_REQUIRE_FS=1)", kind.name());
    }
    eprintln!("SKIP: {}: {why}", kind.name());
    None
}

fn run(cmd: &mut Command) -> Result<(), String> {
    match cmd.output() {
        Ok(o) if o.status.success() => Ok(()),
        Ok(o) => Err(format!(
            "{:?} failed: {}",
            cmd,
            String::from_utf8_lossy(&o.stderr).trim()
        )),
        Err(e) => Err(format!("{:?}: {e}", cmd.get_program())),
    }
}

impl FsTarget {
    /// A fresh file system of about `size` bytes (tmpfs and ext4; FUSE passes through to
    /// the machine's disk).
    pub fn new(kind: FsKind, size: u64) -> Option<FsTarget> {
        if let Some(why) = super::loopdev::unavailable() {
            // Mounting needs root like loop devices do.
            return skip(kind, why);
        }
        let base = std::env::var("FLEXIO_TEST_DISK_DIR")
            .unwrap_or_else(|_| std::env::temp_dir().display().to_string());
        let dir = tempfile::Builder::new()
            .prefix("flexio-fs")
            .tempdir_in(base)
            .unwrap();
        let mnt = dir.path().join("mnt");
        std::fs::create_dir_all(&mnt).unwrap();
        let mut t = FsTarget {
            kind,
            mnt: mnt.clone(),
            mounted: false,
            _loop: None,
            _dir: dir,
        };
        let r = match kind {
            FsKind::Tmpfs => run(Command::new("mount")
                .args(["-t", "tmpfs", "-o"])
                .arg(format!("size={size}"))
                .arg("flexio-test")
                .arg(&mnt)),
            FsKind::Ext4Loop => {
                let Some(mut l) = LoopDev::new(size) else {
                    return skip(kind, "no loop device".into());
                };
                if !l.mount() {
                    return skip(kind, "mkfs.ext4 or mount failed".into());
                }
                // The loop device owns that mount; expose its mount point.
                t.mnt = l.mountpoint().unwrap().to_path_buf();
                t._loop = Some(l);
                Ok(())
            }
            FsKind::Fuse => {
                if Command::new("bindfs").arg("--version").output().is_err() {
                    return skip(
                        kind,
                        "bindfs is not installed (apt-get install bindfs)".into(),
                    );
                }
                let under = t._dir.path().join("under");
                std::fs::create_dir_all(&under).unwrap();
                run(Command::new("bindfs")
                    .arg("--no-allow-other")
                    .arg(&under)
                    .arg(&mnt))
            }
        };
        match r {
            Ok(()) => {
                t.mounted = kind != FsKind::Ext4Loop;
                Some(t)
            }
            Err(why) => skip(kind, why),
        }
    }

    /// The mount point (an empty directory of the file system).
    pub fn path(&self) -> &Path {
        &self.mnt
    }

    /// The file system type the kernel reports for the mount point (`tmpfs`, `ext4`,
    /// `fuse`), read from /proc/self/mounts.
    pub fn fstype(&self) -> Option<String> {
        let mounts = std::fs::read_to_string("/proc/self/mounts").ok()?;
        let want = self.mnt.canonicalize().ok()?;
        mounts.lines().rev().find_map(|l| {
            let mut f = l.split(' ');
            let _src = f.next()?;
            let at = f.next()?;
            let ty = f.next()?;
            (Path::new(at) == want).then(|| ty.to_string())
        })
    }
}

impl Drop for FsTarget {
    fn drop(&mut self) {
        if self.mounted {
            let _ = Command::new("umount").arg(&self.mnt).status();
        }
    }
}
