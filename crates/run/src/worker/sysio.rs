//! What a job does to the system around its I/O before it starts: the I/O scheduler of
//! its device (`ioscheduler`) and memory pinned for the run (`lockmem`), with fio's
//! messages.

use crate::plan::FilePlan;
use flexio_engine::buffer::LockedMem;

/// Switch the device under the job's first file to scheduler `name` (fio's
/// `switch_ioscheduler`): write the name to its sysfs `queue/scheduler`, then read it back
/// and require it to be the active one. A target without such a file (no block device
/// under it, or a kernel without scheduler switching) is left as it is, with fio's note.
/// `Ok(Some(note))` when nothing could be switched.
pub fn switch_scheduler(
    files: &[FilePlan],
    name: &str,
) -> Result<Option<&'static str>, (i32, String)> {
    const NO_SWITCHING: &str = "fio: os or kernel doesn't support IO scheduler switching";
    let Some(f) = files.first() else {
        return Ok(None);
    };
    let path = crate::diskstats::queue_dir(&f.path).map(|q| q.join("scheduler"));
    let Some(path) = path.filter(|p| p.exists()) else {
        return Ok(Some(NO_SWITCHING));
    };
    switch_at(&path, name).map(|()| None)
}

/// Write scheduler `name` to the sysfs file `path` and require it to be the active one
/// (`[name]`) when read back.
fn switch_at(path: &std::path::Path, name: &str) -> Result<(), (i32, String)> {
    if let Err(e) = std::fs::write(path, name) {
        return Err((
            e.raw_os_error().unwrap_or(libc::EINVAL),
            format!("fio: unable to set io scheduler to {name}"),
        ));
    }
    let now = std::fs::read_to_string(path).unwrap_or_default();
    if !now.contains(&format!("[{name}]")) {
        return Err((libc::EINVAL, format!("fio: io scheduler {name} not found")));
    }
    Ok(())
}

/// fio leaves this much physical memory unlocked when `lockmem` asks for more.
const LOCKMEM_SPARE: u64 = 128 << 20;

/// How much of `bytes` to lock with `phys` bytes of physical memory (0 = unknown), and
/// fio's note when that is less.
fn lock_amount(bytes: u64, phys: u64) -> (u64, Option<String>) {
    if phys > 0 && bytes.saturating_add(LOCKMEM_SPARE) > phys {
        let want = phys.saturating_sub(LOCKMEM_SPARE);
        return (
            want,
            Some(format!("fio: limiting mlocked memory to {}MiB", want >> 20)),
        );
    }
    (bytes, None)
}

/// Pin `bytes` of memory for the job's run (`lockmem`); as fio, at most the physical
/// memory less 128 MiB (with fio's note, returned). The memory stays locked while the
/// value lives.
pub fn lock_memory(bytes: u64, job: &str) -> Result<(LockedMem, Option<String>), (i32, String)> {
    let (want, note) = lock_amount(bytes, flexio_engine::platform::total_memory());
    let len = usize::try_from(want).unwrap_or(usize::MAX);
    let m = LockedMem::new(len).map_err(|e| {
        (
            e.raw_os_error().unwrap_or(libc::ENOMEM),
            format!("fio: {job}: cannot lock {want} bytes of memory (lockmem): {e}"),
        )
    })?;
    Ok((m, note))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_files_and_no_sysfs_queue_switch_nothing() {
        assert_eq!(switch_scheduler(&[], "none"), Ok(None));
        // procfs has no block device under it: fio's note, nothing written.
        let f = FilePlan {
            path: "/proc/self/status".into(),
            need: 0,
            region: flexio_workload::Region { start: 0, len: 0 },
            block: None,
            seen: None,
        };
        assert_eq!(
            switch_scheduler(&[f], "none"),
            Ok(Some(
                "fio: os or kernel doesn't support IO scheduler switching"
            ))
        );
    }

    #[test]
    fn a_scheduler_must_be_active_after_the_switch() {
        let d = tempfile::tempdir().unwrap();
        // A plain file keeps what was written: no "[name]" comes back.
        let p = d.path().join("scheduler");
        std::fs::write(&p, "[mq-deadline] none").unwrap();
        assert_eq!(
            switch_at(&p, "bfq"),
            Err((libc::EINVAL, "fio: io scheduler bfq not found".into()))
        );
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "bfq");
        let e = switch_at(&d.path().join("no/scheduler"), "bfq").unwrap_err();
        assert_eq!(
            e,
            (
                libc::ENOENT,
                "fio: unable to set io scheduler to bfq".into()
            )
        );
    }

    #[test]
    fn lockmem_leaves_128_mib_unlocked() {
        assert_eq!(lock_amount(1 << 20, 4 << 30), (1 << 20, None));
        assert_eq!(lock_amount(1 << 40, 0), (1 << 40, None), "unknown memory");
        let (want, note) = lock_amount(4 << 30, 1 << 30);
        assert_eq!(want, (1 << 30) - (128 << 20));
        assert_eq!(
            note.as_deref(),
            Some("fio: limiting mlocked memory to 896MiB")
        );
        // Exactly at the limit: nothing is cut.
        assert_eq!(lock_amount(896 << 20, 1 << 30), (896 << 20, None));
    }

    #[test]
    fn lockmem_pins_and_releases() {
        let (m, note) = lock_memory(64 << 10, "j").unwrap();
        assert!(note.is_none());
        drop(m);
    }
}
