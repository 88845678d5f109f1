//! `verify_state_save` / `verify_state_load` files, byte for byte as fio writes them: one
//! file per job, `<prefix>-<job name with '/' as '.'>-<job index>-verify.state` with
//! prefix `local` (or `<aux path>/local`), holding a header and one record. The record
//! itself, both versions, is `flexio_remote::vstate`'s model (the one the client/server
//! protocol carries; its layouts are described there): this module names the files, gives
//! fio's messages when one cannot be read, and holds the rules a verify pass follows with
//! a loaded state.
//!
//! v3's comps are, file by file, each file's last min(writes completed, `depth`) completed
//! writes (newest first; a file with fewer gives empty slots, offset 0) and numberio the
//! writes issued; fio 3.33 verifies until, within the last `depth` reads of
//! that count, an offset is not among them. v7's numberio is the writes issued;
//! `inflight[0..iodepth]` the numberios in flight (u64::MAX: none), entries beyond the
//! job's iodepth failed writes; the newest fio stops at the first block whose numberio
//! is at least numberio or was in flight, and skips failed ones.

use super::header::Generation;
pub use flexio_remote::vstate::{RandState, StateV3, StateV7, VerifyState, EMPTY};
use flexio_remote::vstate::{StateError, STATE_VERSION, STATE_VERSION_NEWEST};
use std::path::{Path, PathBuf};

/// The generator state a thread starts from, as its state record holds it.
pub fn rand_state(t: flexio_workload::rng::TausState) -> RandState {
    match t {
        flexio_workload::rng::TausState::T32(s) => RandState::Taus88(s),
        flexio_workload::rng::TausState::T64(s) => RandState::Taus258(s),
    }
}

/// What the verify pass does with a block.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Decision {
    Verify,
    Skip,
    /// Stop verifying (the newest fio prints the message on stdout).
    Stop(Option<String>),
}

/// fio's state file name for job `name` with job index `index` (0-based).
pub fn file_name(name: &str, index: u32) -> String {
    format!("local-{}-{index}-verify.state", name.replace('/', "."))
}

/// The state file's path, under `aux` (`--aux-path`) when given.
pub fn path(aux: Option<&Path>, name: &str, index: u32) -> PathBuf {
    let f = file_name(name, index);
    match aux {
        Some(d) => d.join(f),
        None => PathBuf::from(f),
    }
}

/// Read a state file of generation `gen`, with fio's messages on failure. `iodepth`
/// splits a v7 record's slots into in-flight writes and failed writes.
pub fn decode(gen: Generation, b: &[u8], iodepth: u32) -> Result<VerifyState, String> {
    let want = match gen {
        Generation::Fio333 => STATE_VERSION,
        Generation::Latest => STATE_VERSION_NEWEST,
    };
    VerifyState::decode(b, want, iodepth).map_err(|e| match e {
        StateError::Header => "fio: failed reading verify state header".to_string(),
        StateError::Version(version) => {
            let hint = match version {
                3 => " (a fio 3.33 state file: --compat=3.33 reads it)",
                7 => " (a newest-fio state file: it needs the default format, not --compat=3.33)",
                _ => "",
            };
            format!("fio: unsupported ({version}) version in verify state header{hint}")
        }
        StateError::Record => "fio: failed reading verity state".to_string(),
        StateError::Crc => "fio: verify state is corrupt".to_string(),
        StateError::Fields => {
            "fio: verify state is corrupt (record shorter than its fields)".to_string()
        }
    })
}

/// fio 3.33's rule, asked before verifying the read of `offset` in file `fileno` after
/// `reads_done` verify reads: stop once within the last `depth` writes an offset is not
/// among the completed ones.
pub fn should_stop(s: &StateV3, reads_done: u64, fileno: u64, offset: u64) -> bool {
    let depth = s.depth as u64;
    let before_window = reads_done < depth || s.numberio.saturating_sub(reads_done) > depth;
    if before_window && s.numberio > depth {
        return false;
    }
    !s.comps.iter().any(|&(f, o)| f == fileno && o == offset)
}

/// The newest fio's rule for the block written as `numberio`.
pub fn decide(s: &StateV7, numberio: u64) -> Decision {
    if s.failed.contains(&numberio) {
        return Decision::Skip;
    }
    if numberio >= s.numberio {
        return Decision::Stop(Some(format!(
            "Stop verify because seq {numberio} >= {}",
            s.numberio
        )));
    }
    if s.inflight.contains(&numberio) {
        return Decision::Stop(Some(format!(
            "Stop verify because seq {numberio} was an inflight write"
        )));
    }
    Decision::Verify
}

/// Write a state file atomically.
pub fn save(path: &Path, s: &VerifyState) -> std::io::Result<()> {
    crate::notes::write_atomic(path, &s.encode())
}

/// Read a state file (fio's messages, prefixed by the path on failure to open).
pub fn load(path: &Path, gen: Generation, iodepth: u32) -> Result<VerifyState, String> {
    let b = std::fs::read(path).map_err(|e| {
        // fio prints strerror() alone, without Rust's " (os error N)".
        let text = e.to_string();
        let text = text.split(" (os error").next().unwrap_or(&text).to_string();
        format!(
            "fio: open state file: {text}\nfio: state file: {} (for_write=0)",
            path.display()
        )
    })?;
    decode(gen, &b, iodepth)
}

#[cfg(test)]
#[path = "state_tests.rs"]
mod tests;
