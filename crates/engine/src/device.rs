//! The device nodes of the passthrough engines (sg, io_uring_cmd, mtd): which nodes a job
//! names, and the checks their probes make before any job runs, so that a machine without
//! such a device stops the run with one line naming what is missing.

use crate::api::EngineConfig;
use std::os::unix::fs::FileTypeExt;

/// What a node is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Node {
    Block,
    Char,
}

/// The job's file names (`filename=a:b`, `\:` keeps a colon), as the probe sees them.
pub(crate) fn target_names(cfg: &EngineConfig) -> Vec<String> {
    let Some(f) = cfg.filename.as_deref() else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut chars = f.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.peek() == Some(&':') => {
                cur.push(':');
                chars.next();
            }
            ':' => out.push(std::mem::take(&mut cur)),
            c => cur.push(c),
        }
    }
    out.push(cur);
    out.retain(|s| !s.is_empty());
    out
}

/// The node at `path`: a missing one is "no such device: the ENGINE engine needs NEEDS";
/// anything that is not a device node is refused with `not_node`.
pub(crate) fn node(path: &str, engine: &str, needs: &str, not_node: &str) -> Result<Node, String> {
    match std::fs::metadata(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Err(format!(
            "{path}: no such device: the {engine} engine needs {needs}"
        )),
        Err(e) => Err(format!("{path}: {e}: the {engine} engine needs {needs}")),
        Ok(m) if m.file_type().is_block_device() => Ok(Node::Block),
        Ok(m) if m.file_type().is_char_device() => Ok(Node::Char),
        Ok(m) => {
            let what = if m.is_dir() {
                "a directory"
            } else if m.is_file() {
                "a regular file"
            } else {
                "not a device node"
            };
            Err(format!("{not_node} ({path} is {what})"))
        }
    }
}

/// Every file of the job, checked by `check`; no file name at all is refused too (the
/// generated names fio would use are never device nodes).
pub(crate) fn each_target(
    cfg: &EngineConfig,
    engine: &str,
    needs: &str,
    mut check: impl FnMut(&str) -> Result<(), String>,
) -> Result<(), String> {
    let names = target_names(cfg);
    if names.is_empty() {
        return Err(format!(
            "the {engine} engine needs filename= naming {needs}"
        ));
    }
    for n in &names {
        check(n)?;
    }
    Ok(())
}

/// Open a node for a probe (read-only, non-blocking: nothing is transferred).
pub(crate) fn open_probe(path: &str) -> std::io::Result<std::os::fd::OwnedFd> {
    use rustix::fs::{Mode, OFlags};
    rustix::fs::open(
        path,
        OFlags::RDONLY | OFlags::NONBLOCK | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .map_err(std::io::Error::from)
}

/// The integrity (protection information) profile of the block device at `path`, from
/// sysfs; `Err` says why it has none. (Asked by the io_uring engine.)
#[cfg_attr(not(feature = "io_uring"), allow(dead_code))]
pub(crate) fn integrity(path: &str) -> Result<String, String> {
    use std::os::unix::fs::MetadataExt;
    let m = std::fs::metadata(path).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => "no such device".to_string(),
        _ => e.to_string(),
    })?;
    if !m.file_type().is_block_device() {
        return Err("not a block device".into());
    }
    let (maj, min) = (libc::major(m.rdev()), libc::minor(m.rdev()));
    let f = format!("/sys/dev/block/{maj}:{min}/integrity/format");
    match std::fs::read_to_string(&f) {
        Ok(s) if s.trim() != "none" && !s.trim().is_empty() => Ok(s.trim().to_string()),
        Ok(_) => Err(format!("its integrity format is none ({f})")),
        Err(_) => Err(format!("it has no integrity profile ({f})")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_nodes() {
        let cfg = EngineConfig {
            filename: Some("/dev/sg0:/dev/sg1:a\\:b".into()),
            ..EngineConfig::default()
        };
        assert_eq!(target_names(&cfg), ["/dev/sg0", "/dev/sg1", "a:b"]);
        assert!(target_names(&EngineConfig::default()).is_empty());
        let e = node("/dev/flexio-none", "sg", "a SCSI device", "x").unwrap_err();
        assert_eq!(
            e,
            "/dev/flexio-none: no such device: the sg engine needs a SCSI device"
        );
        assert_eq!(node("/dev/null", "sg", "", "").unwrap(), Node::Char);
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join("f");
        std::fs::write(&f, b"x").unwrap();
        let e = node(f.to_str().unwrap(), "sg", "", "sg wants devices").unwrap_err();
        assert!(
            e.starts_with("sg wants devices (") && e.ends_with("is a regular file)"),
            "{e}"
        );
        let e =
            each_target(&EngineConfig::default(), "mtd", "an MTD device", |_| Ok(())).unwrap_err();
        assert_eq!(
            integrity(f.to_str().unwrap()).unwrap_err(),
            "not a block device"
        );
        assert_eq!(integrity("/dev/flexio-none").unwrap_err(), "no such device");
        assert_eq!(e, "the mtd engine needs filename= naming an MTD device");
    }
}
