//! flexio-faultfs (tools/faultfs) mounted by the tests themselves: a FUSE file system that
//! serves one file, `data`, and injects the faults its arguments ask for.

use std::io::BufRead;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

/// A mounted flexio-faultfs; stopped (it unmounts itself on SIGTERM) and lazily unmounted
/// in case it could not, when dropped.
pub struct FaultFs {
    child: Child,
    pub mnt: PathBuf,
    _dir: tempfile::TempDir,
    log: PathBuf,
}

impl FaultFs {
    /// Mount flexio-faultfs with `args` on a fresh directory. Where it cannot be mounted
    /// here, `skip` is told why and `None` comes back (a missing flexio-faultfs binary is
    /// reported by [`super::faultfs_bin`] itself).
    pub fn mount(args: &[&str], skip: impl FnOnce(&str)) -> Option<FaultFs> {
        if !Path::new("/dev/fuse").exists() {
            skip("/dev/fuse is missing (modprobe fuse)");
            return None;
        }
        let bin = super::faultfs_bin()?;
        let dir = tempfile::tempdir().unwrap();
        let mnt = dir.path().join("mnt");
        std::fs::create_dir(&mnt).unwrap();
        let log = dir.path().join("faultfs.log");
        let mut child = Command::new(bin)
            .arg(&mnt)
            .args(args)
            .stdout(Stdio::piped())
            .stderr(std::fs::File::create(&log).unwrap())
            .spawn()
            .unwrap();
        let mut line = String::new();
        let mut out = std::io::BufReader::new(child.stdout.take().unwrap());
        let _ = out.read_line(&mut line);
        if line.trim() != "ready" {
            let _ = child.wait();
            let text = std::fs::read_to_string(&log).unwrap_or_default();
            skip(&format!("flexio-faultfs did not mount: {text}"));
            return None;
        }
        Some(FaultFs {
            child,
            mnt,
            _dir: dir,
            log,
        })
    }

    /// The file it serves.
    pub fn data(&self) -> PathBuf {
        self.mnt.join("data")
    }

    /// What it logged (its stderr: the faults it injected).
    pub fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }
}

impl Drop for FaultFs {
    fn drop(&mut self) {
        let _ = rustix::process::kill_process(
            rustix::process::Pid::from_raw(self.child.id() as i32).unwrap(),
            rustix::process::Signal::TERM,
        );
        let _ = self.child.wait();
        // faultfs unmounts itself on SIGTERM; this is for the case where it could not.
        let _ = Command::new("umount")
            .arg("-l")
            .arg(&self.mnt)
            .stderr(Stdio::null())
            .status();
    }
}
