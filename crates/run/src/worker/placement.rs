//! Thread placement: CPU affinity, nice value and I/O priority of the calling job thread.

use crate::plan::Placement;
use flexio_engine::os;

/// Apply `p` to the calling thread; the error is (errno, one line saying what failed, the
/// function fio names in the job's error: `setgid`, `setuid`, else `thread placement`).
///
/// `Ok(Some(line))` is a warning the job goes on after: the kernel refused the NUMA memory
/// policy (fio says `set_mempolicy: <error>` and runs the job).
pub fn apply(p: &Placement) -> Result<Option<String>, (i32, String, &'static str)> {
    // As fio: the group first, while the thread may still change it, then the user; both
    // before anything else the job does. The system calls change this thread's
    // credentials only (files it opens from now on are opened as that user).
    if let Some(gid) = p.gid {
        flexio_engine::platform::set_thread_gid(gid).map_err(|e| {
            (
                e.raw_os_error().unwrap_or(libc::EINVAL),
                format!("cannot set group id {gid}: {e}"),
                "setgid",
            )
        })?;
    }
    if let Some(uid) = p.uid {
        flexio_engine::platform::set_thread_uid(uid).map_err(|e| {
            (
                e.raw_os_error().unwrap_or(libc::EINVAL),
                format!("cannot set user id {uid}: {e}"),
                "setuid",
            )
        })?;
    }
    apply_placement(p).map_err(|(e, w)| (e, w, "thread placement"))?;
    if let Some((mode, nodes)) = &p.mem_policy {
        if let Err(e) = flexio_engine::platform::set_mempolicy(*mode, nodes) {
            let errno = e.raw_os_error().unwrap_or(libc::EINVAL);
            return Ok(Some(format!(
                "set_mempolicy: {}",
                crate::notes::strerror(errno)
            )));
        }
    }
    Ok(None)
}

fn apply_placement(p: &Placement) -> Result<(), (i32, String)> {
    if let Some(cpus) = &p.cpus {
        let mut set = os::thread::CpuSet::new();
        for c in cpus {
            set.set(*c);
        }
        os::thread::sched_setaffinity(None, &set).map_err(|e| {
            (
                e.raw_os_error(),
                format!("cannot set CPU affinity to {cpus:?}: {e}"),
            )
        })?;
    }
    if p.nice != 0 {
        os::process::setpriority_process(None, p.nice)
            .map_err(|e| (e.raw_os_error(), format!("cannot set nice {}: {e}", p.nice)))?;
    }
    if let Some(name) = &p.comm {
        // The kernel keeps the first 15 bytes.
        flexio_engine::platform::set_thread_name(name).map_err(|e| {
            (
                e.raw_os_error().unwrap_or(libc::EINVAL),
                format!("cannot set the thread name (comm) to {name:?}: {e}"),
            )
        })?;
    }
    if let Some((class, level, prio_hint)) = p.ioprio {
        flexio_engine::sys::ioprio_set_self(class, level, prio_hint).map_err(|e| {
            let why = if e.raw_os_error() == Some(libc::EPERM) {
                " (the real-time class needs CAP_SYS_ADMIN)"
            } else if prio_hint != 0 && e.raw_os_error() == Some(libc::EINVAL) {
                " (priority hints need Linux 6.10 or later)"
            } else {
                ""
            };
            let hint_txt = if prio_hint != 0 {
                format!(" hint {prio_hint}")
            } else {
                String::new()
            };
            (
                e.raw_os_error().unwrap_or(libc::EINVAL),
                format!("cannot set I/O priority class {class} level {level}{hint_txt}: {e}{why}"),
            )
        })?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn applies_to_the_calling_thread_only() {
        // On a thread of its own, so the test runner's thread keeps its placement.
        let allowed = os::thread::sched_getaffinity(None).unwrap();
        let cpu = (0..os::thread::CpuSet::MAX_CPU)
            .find(|c| allowed.is_set(*c))
            .unwrap();
        let r = std::thread::spawn(move || {
            apply(&Placement {
                cpus: Some(vec![cpu]),
                nice: 1,
                ioprio: Some((2, 7, 0)),
                comm: Some(std::ffi::CString::new("flexio-comm-test-long").unwrap()),
                ..Default::default()
            })
            .unwrap();
            let set = os::thread::sched_getaffinity(None).unwrap();
            let n = (0..os::thread::CpuSet::MAX_CPU)
                .filter(|c| set.is_set(*c))
                .count();
            let comm = std::fs::read_to_string("/proc/thread-self/comm").unwrap();
            assert_eq!(comm.trim_end(), "flexio-comm-tes", "15 bytes kept");
            (n, set.is_set(cpu))
        })
        .join()
        .unwrap();
        assert_eq!(r, (1, true));
        // A CPU that does not exist is a clear error, not a panic.
        let e = std::thread::spawn(|| {
            apply(&Placement {
                cpus: Some(vec![os::thread::CpuSet::MAX_CPU - 1]),
                ..Default::default()
            })
        })
        .join()
        .unwrap();
        let (errno, msg, func) = e.unwrap_err();
        assert_eq!((errno, func), (libc::EINVAL, "thread placement"));
        assert!(msg.contains("cannot set CPU affinity"), "{msg}");
    }
}
