//! Where things are printed. Notes that fio prints on stdout go to stdout only when the
//! normal format is the only one on stdout; with machine-readable output every note and
//! warning goes to stderr so stdout stays parseable. Result files are written atomically.

use std::io::{self, Write};
use std::path::Path;

pub use flexio_output::normal::strerror;

#[derive(Clone, Copy, Debug)]
pub struct Notes {
    pub info_to_stdout: bool,
}

impl Notes {
    /// An informational line fio prints on stdout.
    pub fn info(&self, s: &str) {
        if self.info_to_stdout {
            let mut o = io::stdout().lock();
            let _ = writeln!(o, "{s}");
            let _ = o.flush();
        } else {
            eprintln!("{s}");
        }
    }
    pub fn warn(&self, s: &str) {
        eprintln!("{s}");
    }
    pub fn err(&self, s: &str) {
        eprintln!("{s}");
    }
}

/// Write `data` to `path` atomically: a temporary file in the same directory, fsync, rename.
/// A crash never leaves a truncated result file behind.
pub fn write_atomic(path: &Path, data: &[u8]) -> io::Result<()> {
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let name = path.file_name().ok_or_else(|| {
        io::Error::new(io::ErrorKind::InvalidInput, "output path has no file name")
    })?;
    let tmp = dir.join(format!(
        ".{}.flexio-tmp.{}",
        name.to_string_lossy(),
        std::process::id()
    ));
    let r = (|| {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(data)?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    if r.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn atomic_write_replaces() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("r.json");
        write_atomic(&p, b"one").unwrap();
        write_atomic(&p, b"two").unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"two");
        assert_eq!(std::fs::read_dir(d.path()).unwrap().count(), 1);
    }
}
