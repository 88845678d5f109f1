//! The study tests' file systems (tests/common/fstargets.rs) mount as what they claim to be,
//! take a file, and go away.

use crate::common;
use common::fstargets::{FsKind, FsTarget};

#[test]
fn each_study_file_system_mounts_with_its_type() {
    for kind in FsKind::ALL {
        let Some(t) = FsTarget::new(kind, 64 << 20) else {
            continue;
        };
        let ty = t.fstype().expect("mount point listed in /proc/self/mounts");
        let want = match kind {
            FsKind::Tmpfs => "tmpfs",
            FsKind::Ext4Loop => "ext4",
            FsKind::Fuse => "fuse",
        };
        assert!(ty.starts_with(want), "{}: mounted as {ty}", kind.name());
        let f = t.path().join("f");
        std::fs::write(&f, b"data").unwrap();
        assert_eq!(std::fs::read(&f).unwrap(), b"data");
        let mnt = t.path().to_path_buf();
        drop(t);
        let mounts = std::fs::read_to_string("/proc/self/mounts").unwrap();
        assert!(
            !mounts.contains(mnt.to_str().unwrap()),
            "{} still mounted",
            kind.name()
        );
    }
}
