//! Secret files (a token, a TLS key): only their owner may read them.

use std::path::Path;

/// Refuse a secret file (token, TLS key) that other users can read or write, or that
/// belongs to someone else.
pub fn check_private(path: &Path, what: &str) -> Result<(), String> {
    use std::os::unix::fs::MetadataExt;
    let m = std::fs::metadata(path).map_err(|e| format!("{what} {}: {e}", path.display()))?;
    if !m.is_file() {
        return Err(format!("{what} {}: not a regular file", path.display()));
    }
    if m.mode() & 0o077 != 0 {
        return Err(format!(
            "{what} {} can be read or written by other users (mode {:04o}); make it private: chmod 600 {}",
            path.display(),
            m.mode() & 0o7777,
            path.display()
        ));
    }
    let me = flexio_engine::os::process::geteuid().as_raw();
    if m.uid() != me && me != 0 {
        return Err(format!(
            "{what} {} belongs to another user (uid {}); it must be yours",
            path.display(),
            m.uid()
        ));
    }
    Ok(())
}
