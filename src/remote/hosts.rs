//! What the client collects and shares: each server's results ([`HostResult`]), the
//! session threads' shared state ([`Shared`]) and where the text goes ([`Out`]). The
//! sessions (`client.rs`, `mpi.rs`) fill them; `present.rs` turns them into the report.

use flexio_remote::msg::{DiskUtil, Eta, JobOpt, ProbeReply};
use flexio_remote::ts::{GroupStats, ThreadStat};
use std::sync::atomic::AtomicBool;
use std::sync::Mutex;

/// What one server sent, and how its session ended.
#[derive(Debug, Default)]
pub struct HostResult {
    /// The address as given.
    pub addr: String,
    /// Its name: the probe's hostname (else the address).
    pub name: String,
    /// The address's host part (a socket's path), as fio's client names the server in
    /// JSON (`hostname`); MPI: the rank's name.
    pub host: String,
    /// TCP port (0 for a Unix socket).
    pub port: u16,
    pub probe: Option<ProbeReply>,
    pub global_opts: Vec<JobOpt>,
    /// Each TS with the JOB_OPTs that preceded it, and its arrival (ns, client wall clock).
    pub ts: Vec<(Vec<JobOpt>, ThreadStat, i128)>,
    pub gs: Vec<GroupStats>,
    pub du: Vec<DiskUtil>,
    /// START's report count (cumulative, the last one received).
    pub stat_outputs: u32,
    /// STOP {error, signal}.
    pub stop: Option<(u32, u32)>,
    /// Why the session failed (the run is then partial).
    pub error: Option<String>,
    /// Clock offset of the server's wall clock against ours (ns, server − client) and its
    /// uncertainty (± ns), from the TEXT stamps; MPI: from ping-pongs.
    pub offset: Option<(i128, i128)>,
    /// The shortest SEND_ETA round trip (ns).
    pub rtt: Option<i128>,
    /// First SERVER_START (client wall clock, ns); MPI: the rank's first barrier, on rank
    /// 0's clock.
    pub started_at: Option<i128>,
    /// MPI: the rank's end of run on rank 0's clock (client mode: its results' arrival).
    pub ended_at: Option<i128>,
    /// Cumulative progress (time ns on the same clock, bytes and I/Os per direction):
    /// client mode integrates the ETA replies' rates over the time between replies; MPI
    /// ranks sample their own counters.
    pub progress: Vec<(i128, [u64; 3], [u64; 3])>,
}

/// Shared between the server threads.
pub struct Shared {
    /// Set when the run must stop (a server failed, or a signal): every session sends QUIT.
    pub stop: AtomicBool,
    /// Output so far (TEXT lines are printed as they come, prefixed by the server name).
    pub out: Out,
    pub normal: bool,
    pub terse: bool,
    /// MPI (the ranks' stamps place the windows) rather than client mode.
    pub mpi: bool,
    /// The latest ETA reply of each server whose session is still going (the live
    /// status line sums them).
    pub etas: Mutex<Vec<Option<Eta>>>,
    /// The trigger fired (`--trigger-file` / `--trigger-timeout`): each session sends
    /// VTRIGGER with `trigger_remote` (`--trigger-remote`, empty without).
    pub triggered: AtomicBool,
    pub trigger_remote: String,
}

/// Where the client's text goes: stdout as it comes, or a buffer for `--output`.
pub struct Out {
    buf: Option<Mutex<String>>,
    lock: Mutex<()>,
}

impl Out {
    pub fn new(to_file: bool) -> Out {
        Out {
            buf: to_file.then(|| Mutex::new(String::new())),
            lock: Mutex::new(()),
        }
    }
    pub fn text(&self, s: &str) {
        if let Some(b) = &self.buf {
            if let Ok(mut b) = b.lock() {
                b.push_str(s);
            }
            return;
        }
        let _g = self.lock.lock();
        flexio_run::notes::print(s);
    }
    pub fn take(&self) -> String {
        self.buf
            .as_ref()
            .and_then(|b| b.lock().ok().map(|mut b| std::mem::take(&mut *b)))
            .unwrap_or_default()
    }
}
