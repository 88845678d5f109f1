//! Where things are printed. Notes that fio prints on stdout go to stdout only when the
//! normal format is the only one on stdout; with machine-readable output every note and
//! warning goes to stderr so stdout stays parseable. With `--output=F` of the normal format
//! alone, informational notes go into F and errors to stderr and F, as fio's do. Result
//! files are written atomically.

use std::io::{self, Write};
use std::path::Path;
use std::sync::{Arc, Mutex};

pub use flexio_output::normal::strerror;

/// Write `bytes` to stdout in one locked write and flush. Every write of flexio's own
/// output to stdout goes through here (or [`print()`]): a reader that has gone
/// (`flexio --help | head -3`: EPIPE) ends flexio at once, killed by SIGPIPE as fio is
/// ([`flexio_engine::sys::die_of_sigpipe`]), instead of a panic ("failed printing to
/// stdout") or a run that goes on without its reader. SIGPIPE itself stays ignored, so the
/// sockets of the remote modes and the engines keep getting EPIPE as an error. Other errors
/// are returned. (flexio's subcommands print through `cmd::out`, which ends their output
/// quietly and lets them finish their work and set their status.)
pub fn stdout(bytes: &[u8]) -> io::Result<()> {
    let mut o = io::stdout().lock();
    let r = o.write_all(bytes).and_then(|()| o.flush());
    if let Err(e) = &r {
        if e.kind() == io::ErrorKind::BrokenPipe {
            flexio_engine::sys::die_of_sigpipe();
        }
    }
    r
}

/// [`stdout`] for text whose other write errors have nowhere to go (fio ignores them too).
pub fn print(text: &str) {
    let _ = stdout(text.as_bytes());
}

/// Where a run's notes go. fio (with `--thread`, as flexio's jobs always run) sends its
/// informational lines (`log_info`: "note: ...", "fio: pid=..., err=...") to its output and
/// its errors (`log_err`) to stderr and its output too; with `--output=F` the output is F.
/// `output` is F's text as the run collects it, when there is one.
#[derive(Clone, Debug, Default)]
pub struct Notes {
    pub info_to_stdout: bool,
    pub output: Option<Arc<Mutex<String>>>,
}

impl Notes {
    /// An informational line fio prints on its output.
    pub fn info(&self, s: &str) {
        if self.to_output(s) {
            return;
        }
        if self.info_to_stdout {
            print(&format!("{s}\n"));
        } else {
            eprintln!("{s}");
        }
    }
    pub fn warn(&self, s: &str) {
        self.err(s);
    }
    /// An error line: on stderr, and in the `--output` file as well.
    pub fn err(&self, s: &str) {
        eprintln!("{s}");
        self.to_output(s);
    }

    /// Add a line to the `--output` file's text; false when there is none.
    fn to_output(&self, s: &str) -> bool {
        let Some(out) = &self.output else {
            return false;
        };
        if let Ok(mut o) = out.lock() {
            o.push_str(s);
            o.push('\n');
        }
        true
    }
}

/// Write `data` to `path` atomically: a temporary file in the same directory, fsync, rename.
/// A crash never leaves a truncated result file behind.
///
/// Only regular files are replaced. A symbolic link is followed (the link stays, the file it
/// names is replaced, in that file's directory); a target that exists and is not a regular
/// file (`/dev/null`, `/dev/stdout`, a FIFO, a terminal) is written through in place, since
/// renaming over it would replace the device node itself. An existing file keeps its mode.
pub fn write_atomic(path: &Path, data: &[u8]) -> io::Result<()> {
    let target = match std::fs::canonicalize(path) {
        Ok(p) => p,
        Err(_) => path.to_path_buf(),
    };
    let existing = std::fs::metadata(&target).ok();
    if let Some(m) = &existing {
        if !m.is_file() {
            let mut f = std::fs::OpenOptions::new().write(true).open(&target)?;
            f.write_all(data)?;
            return f.flush();
        }
    }
    let dir = target
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let name = target.file_name().ok_or_else(|| {
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
        if let Some(m) = &existing {
            f.set_permissions(m.permissions())?;
        }
        f.sync_all()?;
        std::fs::rename(&tmp, &target)
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

    /// `--output=/dev/null` once renamed a regular file over the device node. A FIFO stands
    /// in for the device here: it must stay a FIFO and receive the data.
    #[test]
    fn atomic_write_writes_through_special_files() {
        use std::os::unix::fs::FileTypeExt;
        let d = tempfile::tempdir().unwrap();
        let fifo = d.path().join("pipe");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        assert!(made.unwrap().success(), "mkfifo failed");
        let reader = {
            let fifo = fifo.clone();
            std::thread::spawn(move || std::fs::read(fifo).unwrap())
        };
        write_atomic(&fifo, b"through").unwrap();
        assert_eq!(reader.join().unwrap(), b"through");
        let m = std::fs::symlink_metadata(&fifo).unwrap();
        assert!(m.file_type().is_fifo(), "{:?}", m.file_type());
        assert_eq!(std::fs::read_dir(d.path()).unwrap().count(), 1);
    }

    #[test]
    fn atomic_write_follows_symlinks_and_keeps_mode() {
        use std::os::unix::fs::PermissionsExt;
        let d = tempfile::tempdir().unwrap();
        let real = d.path().join("real.json");
        std::fs::write(&real, b"old").unwrap();
        std::fs::set_permissions(&real, std::fs::Permissions::from_mode(0o640)).unwrap();
        let link = d.path().join("link.json");
        std::os::unix::fs::symlink(&real, &link).unwrap();
        write_atomic(&link, b"new").unwrap();
        assert!(std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink());
        assert_eq!(std::fs::read(&real).unwrap(), b"new");
        let mode = std::fs::metadata(&real).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o640);
    }
}
