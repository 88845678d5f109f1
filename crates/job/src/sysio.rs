//! Options that reach into the system beside the I/O itself: where the I/O buffers live
//! (`mem`/`iomem`, `hugepage-size`), memory pinned for the run (`lockmem`), the write
//! life-time hint (`write_hint`), the device's I/O scheduler (`ioscheduler`) and
//! `sync_file_range`. Typed here, in [`JobOptions::sysio`](crate::JobOptions).

/// `mem` / `iomem`: what backs the I/O buffers (fio's memory types).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum MemType {
    /// malloc(3): the default.
    #[default]
    Malloc,
    /// A System V shared memory segment (`shmhuge`: on huge pages).
    Shm { huge: bool },
    /// mmap(2): anonymous, or of a file (`mmap:/path`); `mmapshared` maps MAP_SHARED,
    /// `mmaphuge` takes huge pages (a hugetlbfs file when a path is given).
    Mmap {
        shared: bool,
        huge: bool,
        file: Option<String>,
    },
}

impl MemType {
    /// fio's name of the type (without the file).
    pub fn name(&self) -> &'static str {
        match self {
            MemType::Malloc => "malloc",
            MemType::Shm { huge: false } => "shm",
            MemType::Shm { huge: true } => "shmhuge",
            MemType::Mmap { huge: true, .. } => "mmaphuge",
            MemType::Mmap { shared: true, .. } => "mmapshared",
            MemType::Mmap { .. } => "mmap",
        }
    }

    /// Whether the memory comes in huge pages (sizes round up to `hugepage-size`).
    pub fn huge(&self) -> bool {
        matches!(
            self,
            MemType::Shm { huge: true } | MemType::Mmap { huge: true, .. }
        )
    }
}

/// The `mem` values `--cmdhelp` shows (fio's help texts).
pub const MEM_CHOICES: &[(&str, &str)] = &[
    ("malloc", "Use malloc(3) for IO buffers"),
    ("shm", "Use shared memory segments for IO buffers"),
    ("shmhuge", "Like shm, but use huge pages"),
    ("mmap", "Use mmap(2) (file or anon) for IO buffers"),
    ("mmapshared", "Like mmap, but use the shared flag"),
    ("mmaphuge", "Like mmap, but use huge pages"),
];

/// Parse a `mem` value: a type, for the mmap types optionally `:file`.
pub fn parse_mem(s: &str) -> Result<MemType, String> {
    let (kind, file) = match s.split_once(':') {
        Some((k, f)) => (k, Some(f)),
        None => (s, None),
    };
    let file = file.filter(|f| !f.is_empty()).map(str::to_string);
    let mmap = |shared, huge, file| MemType::Mmap { shared, huge, file };
    let t = match kind {
        "malloc" => MemType::Malloc,
        "shm" => MemType::Shm { huge: false },
        "shmhuge" => MemType::Shm { huge: true },
        "mmap" => return Ok(mmap(false, false, file)),
        "mmapshared" => return Ok(mmap(true, false, file)),
        "mmaphuge" => return Ok(mmap(false, true, file)),
        "cudamalloc" => {
            return Err(
                "mem=cudamalloc is not supported by flexio: it needs CUDA (GPU memory)".into(),
            )
        }
        other => {
            let names: Vec<&str> = MEM_CHOICES.iter().map(|(n, _)| *n).collect();
            return Err(format!(
                "'{other}' is not a valid value; valid values: {}",
                names.join(", ")
            ));
        }
    };
    if file.is_some() {
        return Err(format!(
            "mem={kind} takes no file (only mmap, mmapshared and mmaphuge do)"
        ));
    }
    Ok(t)
}

/// `write_hint` values: the kernel's RWH_WRITE_LIFE_* numbers.
pub const WRITE_HINTS: &[(&str, u64)] = &[
    ("none", 1),
    ("short", 2),
    ("medium", 3),
    ("long", 4),
    ("extreme", 5),
];

/// `sync_file_range` flags (the kernel's SYNC_FILE_RANGE_* bits).
pub const SFR_WAIT_BEFORE: u32 = 1;
pub const SFR_WRITE: u32 = 2;
pub const SFR_WAIT_AFTER: u32 = 4;

/// The values `--cmdhelp` shows for `sync_file_range` (fio's texts).
pub const SFR_CHOICES: &[(&str, &str)] = &[
    ("wait_before", "SYNC_FILE_RANGE_WAIT_BEFORE"),
    ("write", "SYNC_FILE_RANGE_WRITE"),
    ("wait_after", "SYNC_FILE_RANGE_WAIT_AFTER"),
];

/// Parse `sync_file_range=flag[,flag...][:N]` into (flags, every N writes); N defaults
/// to 1, and 0 turns it off (fio accepts it and issues none).
pub fn parse_sync_file_range(s: &str, kb: crate::value::KbBase) -> Result<(u32, u64), String> {
    let (names, n) = match s.split_once(':') {
        Some((a, b)) => (a, Some(b)),
        None => (s, None),
    };
    let mut flags = 0;
    for f in names.split(',') {
        flags |= match f.trim() {
            "wait_before" => SFR_WAIT_BEFORE,
            "write" => SFR_WRITE,
            "wait_after" => SFR_WAIT_AFTER,
            other => {
                return Err(format!(
                    "'{other}' is not a valid value; valid values: wait_before, write, wait_after"
                ))
            }
        };
    }
    let n = match n {
        None => 1,
        Some(t) => {
            let n = crate::value::parse_int(t.trim(), kb)?;
            if n < 0 {
                return Err(format!(
                    "sync_file_range needs a count of at least 0, not {n}"
                ));
            }
            n as u64
        }
    };
    Ok((flags, n))
}

/// The values of this module's options.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SysIoOptions {
    pub mem: MemType,
    /// `hugepage-size`: huge-page memory is sized in multiples of it.
    pub hugepage_size: u64,
    /// `lockmem`: bytes to mlock for the run (0 = none).
    pub lockmem: u64,
    /// `write_hint` (RWH_WRITE_LIFE_*), if given.
    pub write_hint: Option<u64>,
    /// `ioscheduler`: the scheduler to switch the target's device to.
    pub ioscheduler: Option<String>,
    /// `sync_file_range`: flags and every how many writes (None or 0: off).
    pub sync_file_range: Option<(u32, u64)>,
}

impl Default for SysIoOptions {
    fn default() -> Self {
        SysIoOptions {
            mem: MemType::Malloc,
            hugepage_size: 2 << 20,
            lockmem: 0,
            write_hint: None,
            ioscheduler: None,
            sync_file_range: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mem_values() {
        assert_eq!(parse_mem("malloc"), Ok(MemType::Malloc));
        assert_eq!(parse_mem("shmhuge"), Ok(MemType::Shm { huge: true }));
        assert_eq!(
            parse_mem("mmap:/tmp/f"),
            Ok(MemType::Mmap {
                shared: false,
                huge: false,
                file: Some("/tmp/f".into())
            })
        );
        assert_eq!(parse_mem("mmaphuge").unwrap().name(), "mmaphuge");
        assert!(parse_mem("mmaphuge").unwrap().huge());
        assert_eq!(parse_mem("mmapshared").unwrap().name(), "mmapshared");
        assert!(parse_mem("shm:/x").unwrap_err().contains("takes no file"));
        assert!(parse_mem("cudamalloc")
            .unwrap_err()
            .contains("not supported by flexio"));
        assert!(parse_mem("heap").unwrap_err().contains("valid values"));
    }

    const K: crate::value::KbBase = crate::value::KbBase::K1024;

    #[test]
    fn sync_file_range_values() {
        assert_eq!(
            parse_sync_file_range("wait_before,write:8", K),
            Ok((SFR_WAIT_BEFORE | SFR_WRITE, 8))
        );
        assert_eq!(
            parse_sync_file_range("wait_after", K),
            Ok((SFR_WAIT_AFTER, 1))
        );
        assert_eq!(parse_sync_file_range("write:0", K), Ok((SFR_WRITE, 0)));
        assert!(parse_sync_file_range("write:-1", K).is_err());
        assert!(parse_sync_file_range("flush:4", K).is_err());
    }
}
