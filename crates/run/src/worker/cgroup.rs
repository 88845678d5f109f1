//! `cgroup`, `cgroup_weight`, `cgroup_nodelete`: the job thread joins a cgroup, created
//! under the hierarchy's mount if it does not exist, as fio 3.33 does. fio takes the first
//! mount in /proc/mounts that is either a cgroup v1 hierarchy with the blkio controller or
//! a cgroup v2 (unified) hierarchy:
//!
//! * v1: the thread joins by its own id (`tasks`), so each job thread is placed on its own,
//!   as fio places its job processes; `cgroup_weight` goes to `blkio.weight`. Leaving, the
//!   thread moves back to the hierarchy's root.
//! * v2: a cgroup holds whole processes (`cgroup.procs`: fio writes its job's pid, or with
//!   `thread` the thread's id, which moves the whole process). flexio's jobs are threads of
//!   one process, so the process joins the cgroup while one or more jobs that name it run,
//!   and goes back where it was when the last leaves; a job naming another v2 cgroup while
//!   the process is in one is refused (EBUSY) rather than moving the other jobs with it.
//!   `cgroup_weight` does not work with cgroup v2 in fio (3.33 and the newest): fio prints
//!   `fio: cgroup weit doesn't work with cgroup2` (sic) and the job ends at once, without
//!   I/O and without an error; flexio does the same.
//!
//! The last thread to leave a cgroup flexio created removes it (unless `cgroup_nodelete`).

use crate::plan::CgroupPlan;
use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// Cgroups this process created (removed when empty, unless asked to keep them).
static CREATED: Mutex<Option<HashSet<PathBuf>>> = Mutex::new(None);

/// The cgroup v2 the process was moved into: (the cgroup, jobs in it, where the process
/// was before).
static V2: Mutex<Option<(PathBuf, usize, PathBuf)>> = Mutex::new(None);

/// The hierarchy fio uses.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Hier {
    /// cgroup v1 with blkio, at this mount point.
    V1(PathBuf),
    /// cgroup v2, at this mount point.
    V2(PathBuf),
}

/// The first blkio (v1) or unified (v2) hierarchy of a `/proc/mounts` text, as fio looks.
fn find_mount(mounts: &str) -> Option<Hier> {
    mounts.lines().find_map(|l| {
        let f: Vec<&str> = l.split_whitespace().collect();
        if f.len() < 4 {
            return None;
        }
        let dir = PathBuf::from(unescape_mount(f[1]));
        match f[2] {
            "cgroup" if f[3].split(',').any(|o| o == "blkio") => Some(Hier::V1(dir)),
            "cgroup2" => Some(Hier::V2(dir)),
            _ => None,
        }
    })
}

/// /proc/mounts writes blanks in paths as octal escapes.
fn unescape_mount(s: &str) -> String {
    s.replace("\\040", " ")
        .replace("\\011", "\t")
        .replace("\\012", "\n")
}

/// The process's cgroup v2 (the `0::` line of /proc/self/cgroup), below `mount`.
fn v2_home(mount: &Path) -> PathBuf {
    let text = std::fs::read_to_string("/proc/self/cgroup").unwrap_or_default();
    let rel = text
        .lines()
        .find_map(|l| l.strip_prefix("0::"))
        .unwrap_or("/");
    mount.join(rel.trim().trim_start_matches('/'))
}

/// A thread's membership, to leave at the end of the job.
pub struct Joined {
    root: PathBuf,
    dir: PathBuf,
    nodelete: bool,
    v2: bool,
}

/// Why joining failed: (errno, message, fio's function name). errno 0: fio's cgroup v2
/// weight case, where the job ends before its I/O without an error after printing the
/// message as it is.
pub type JoinError = (i32, String, &'static str);

/// Join `p`'s cgroup.
pub fn join(p: &CgroupPlan, tid: i32) -> Result<Joined, JoinError> {
    let mounts = std::fs::read_to_string("/proc/mounts").unwrap_or_default();
    let Some(hier) = find_mount(&mounts) else {
        return Err((
            libc::EINVAL,
            "cgroup blkio does not appear to be mounted".into(),
            "cgroup mount",
        ));
    };
    let (root, v2) = match hier {
        Hier::V1(r) => (r, false),
        Hier::V2(r) => (r, true),
    };
    let dir = root.join(p.name.trim_start_matches('/'));
    let io = |e: std::io::Error, what: &str, func: &'static str| {
        (
            e.raw_os_error().unwrap_or(libc::EIO),
            format!("{what} {}: {e}", dir.display()),
            func,
        )
    };
    match std::fs::create_dir(&dir) {
        Ok(()) => {
            let mut c = CREATED.lock().unwrap_or_else(|e| e.into_inner());
            c.get_or_insert_with(HashSet::new).insert(dir.clone());
        }
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(io(e, "cannot create cgroup", "cgroup make path")),
    }
    let j = Joined {
        root: root.clone(),
        dir: dir.clone(),
        nodelete: p.nodelete,
        v2,
    };
    if let Some(w) = p.weight {
        if v2 {
            j.leave(false);
            return Err((
                0,
                "fio: cgroup weit doesn't work with cgroup2".into(),
                "cgroup weight",
            ));
        }
        if let Err(e) = write_existing(&dir.join("blkio.weight"), &w.to_string()) {
            j.leave(false);
            return Err(io(e, "cannot set blkio.weight of", "cgroup open weight"));
        }
    }
    if v2 {
        let mut st = V2.lock().unwrap_or_else(|e| e.into_inner());
        match st.as_mut() {
            Some((d, n, _)) if *d == dir => *n += 1,
            Some((d, _, _)) => {
                let other = d.display().to_string();
                drop(st);
                j.leave(false);
                return Err((
                    libc::EBUSY,
                    format!(
                        "cannot join cgroup {}: cgroup v2 holds whole processes, and flexio's jobs are threads of one process, which is in {other} for another running job",
                        dir.display()
                    ),
                    "cgroup write pid",
                ));
            }
            None => {
                let home = v2_home(&root);
                if let Err(e) = write_existing(&dir.join("cgroup.procs"), &tid.to_string()) {
                    drop(st);
                    j.leave(false);
                    return Err(io(e, "cannot join cgroup", "cgroup write pid"));
                }
                *st = Some((dir.clone(), 1, home));
            }
        }
        return Ok(j);
    }
    if let Err(e) = write_existing(&dir.join("tasks"), &tid.to_string()) {
        j.leave(false);
        return Err(io(e, "cannot join cgroup", "cgroup open tasks"));
    }
    Ok(j)
}

/// Write to a control file, opened as fio opens it (`fopen(.., "w")`: cgroupfs refuses to
/// create a missing one with EACCES, as fio reports).
fn write_existing(path: &Path, text: &str) -> std::io::Result<()> {
    use std::io::Write;
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .open(path)?;
    f.write_all(text.as_bytes())
}

impl Joined {
    /// Leave (`moved`: the thread had joined): v1, the thread goes back to the root; v2,
    /// the last job of the process's cgroup takes the process back where it was. An empty
    /// cgroup flexio created is removed unless cgroup_nodelete.
    pub fn leave(&self, moved: bool) {
        let tid = flexio_engine::platform::thread_id();
        if moved && self.v2 {
            let mut st = V2.lock().unwrap_or_else(|e| e.into_inner());
            if let Some((d, n, home)) = st.as_mut() {
                if *d == self.dir {
                    *n -= 1;
                    if *n == 0 {
                        let _ = write_existing(&home.join("cgroup.procs"), &tid.to_string());
                        *st = None;
                    }
                }
            }
        } else if moved {
            let _ = write_existing(&self.root.join("tasks"), &tid.to_string());
        }
        if self.nodelete {
            return;
        }
        let mut c = CREATED.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(set) = c.as_mut() {
            // Busy while other threads are still in it: the last one removes it.
            if set.contains(&self.dir) && std::fs::remove_dir(&self.dir).is_ok() {
                set.remove(&self.dir);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_first_blkio_or_unified_hierarchy() {
        let m = "tmpfs /sys/fs/cgroup tmpfs rw 0 0\n\
                 cgroup /sys/fs/cgroup/cpu cgroup rw,relatime,cpu 0 0\n\
                 cgroup /sys/fs/cgroup/blkio cgroup rw,relatime,blkio 0 0\n\
                 cgroup2 /sys/fs/cgroup/unified cgroup2 rw 0 0\n";
        assert_eq!(
            find_mount(m),
            Some(Hier::V1(PathBuf::from("/sys/fs/cgroup/blkio")))
        );
        assert_eq!(
            find_mount("cgroup2 /sys/fs/cgroup cgroup2 rw 0 0\n"),
            Some(Hier::V2(PathBuf::from("/sys/fs/cgroup")))
        );
        // fio takes whichever comes first.
        let m = "cgroup2 /a\\040b cgroup2 rw 0 0\ncgroup /b cgroup rw,blkio 0 0\n";
        assert_eq!(find_mount(m), Some(Hier::V2(PathBuf::from("/a b"))));
        assert_eq!(find_mount("cgroup /c cgroup rw,cpu 0 0\n"), None);
    }
}
