//! fio's client/server mode over fio 3.33's wire protocol (`crates/remote`):
//! `--server[=ADDR]` runs jobs sent by a client ([`server`]), `--client=ADDR` drives servers
//! and merges their results ([`client`], [`present`]). Both ends speak to fio 3.33 as well.

pub mod auth;
pub mod client;
pub mod confine;
#[doc(hidden)]
pub mod fuzzing;
pub mod hosts;
#[cfg(feature = "mpi")]
pub mod mpi;
pub mod net;
pub mod present;
pub mod secret;
pub mod server;
#[cfg(feature = "tls")]
pub mod tls;
#[cfg(not(feature = "tls"))]
#[path = "tls_none.rs"]
pub mod tls;

use flexio_job::Cli;
use flexio_run::signals::Signals;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

/// Run the client or the server when the command line asks for one.
pub fn dispatch(cli: &Cli, sigs: &(Arc<AtomicBool>, Signals)) -> Option<i32> {
    let r = &cli.switches.remote;
    if r.server.is_some() && !r.clients.is_empty() {
        eprintln!("flexio: can't be both client and server (--server and --client)");
        return Some(1);
    }
    if r.server.is_some() {
        return Some(server::main(r, sigs));
    }
    if let Some(first) = r.security.server_only().first() {
        eprintln!("flexio: {first} only applies to --server");
        return Some(1);
    }
    if r.security.authenticates() && r.clients.is_empty() {
        eprintln!("flexio: --auth-token-file and --tls-* apply to --server and --client");
        return Some(1);
    }
    if r.mpi {
        if r.server.is_some() || !r.clients.is_empty() {
            eprintln!("flexio: --mpi cannot be combined with --server or --client");
            return Some(1);
        }
        #[cfg(feature = "mpi")]
        return Some(mpi::main(cli.clone(), sigs));
        #[cfg(not(feature = "mpi"))]
        {
            eprintln!("flexio: --mpi: this flexio was built without MPI support (build it with `cargo build --features mpi`, OpenMPI installed)");
            return Some(1);
        }
    }
    if r.daemonize.is_some() {
        eprintln!("flexio: --daemonize only applies to --server");
        return Some(1);
    }
    if !r.clients.is_empty() {
        return Some(client::main(cli, sigs));
    }
    None
}

/// Wall-clock time (seconds, microseconds), as TEXT messages carry it (shifted by the
/// test-only skew).
pub(crate) fn wall_now() -> (u64, u64) {
    let d = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    let ns = (d.as_nanos() as i128 + test_skew_ns() as i128).max(0) as u128;
    (
        (ns / 1_000_000_000) as u64,
        ((ns % 1_000_000_000) / 1000) as u64,
    )
}

/// Tests only: `FLEXIO_TEST_CLOCK_SKEW_MS` (a signed number of ms) shifts the wall-clock
/// stamps this process sends to its peers (a server's TEXT stamps, an MPI rank's stamps),
/// as a host whose clock is off would, so tests can show the offset measured and what it
/// changes. Not a user setting: it fakes a wrong clock.
pub(crate) fn test_skew_ns() -> i64 {
    static SKEW: std::sync::OnceLock<i64> = std::sync::OnceLock::new();
    *SKEW.get_or_init(|| {
        std::env::var("FLEXIO_TEST_CLOCK_SKEW_MS")
            .ok()
            .and_then(|v| v.trim().parse::<i64>().ok())
            .map_or(0, |ms| ms.saturating_mul(1_000_000))
    })
}
