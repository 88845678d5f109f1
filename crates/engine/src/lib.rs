//! flexio's I/O engines (fio's `ioengine_ops`) and the buffer and system-call code they need.
//! This crate holds all of flexio's `unsafe` code; every block carries a SAFETY comment.
//!
//! # The engine contract
//!
//! The core prepares an [`IoReq`] and calls [`Engine::queue`]:
//!
//! * [`Queued::Completed`]`(res)`: done synchronously; `res` is bytes moved or `-errno`.
//! * [`Queued::Queued`]: accepted; it completes later through [`Engine::reap`] after the
//!   core calls [`Engine::commit`] (engines may submit in `queue` already).
//! * [`Queued::Busy`]: no room now; the core commits, reaps, and retries the request.
//!
//! The request's buffer stays valid and unmoved until the request completes. Engines are
//! chosen once per job through [`with_engine`], which hands a concrete type to a generic
//! visitor, so the hot loop is monomorphised per engine (no dynamic dispatch per I/O).
//!
//! # Layout
//!
//! `api.rs` is the contract; each engine is one file in `engines/` that implements
//! [`Engine`] and [`EngineDef`] (name, help, its private options, construction, kernel
//! probe); `registry.rs` lists the engine files and types, one line per file, and derives
//! everything else from that list. Adding an engine is one new file and one registry line.
//! `cmdprio.rs` is an option group shared by engines; `buffer.rs` and `sys.rs` hold the
//! aligned buffers and the system calls rustix lacks; `platform.rs` the Linux-only
//! interfaces with their fallbacks elsewhere; `tls.rs` (cargo feature `tls`) the TLS client
//! the http and nbd engines use; `os.rs` the operating system as the portable code calls it
//! (rustix, or on RTEMS, which rustix does not support, `os_rtems.rs`: the same interface
//! over libc).

pub mod api;
pub mod buffer;
pub mod cmdprio;
#[cfg(any(target_os = "linux", target_os = "android"))]
pub(crate) mod device;
pub mod os;
pub mod platform;
pub mod registry;
pub mod sha256;
pub mod sys;
#[cfg(feature = "tls")]
pub mod tls;

pub use api::*;
// The registry's functions and the engine modules it declares (`flexio_engine::null`, ...).
pub use registry::*;

pub(crate) fn from_rustix(r: os::io::Result<usize>) -> i64 {
    match r {
        Ok(n) => n as i64,
        Err(e) => -(e.raw_os_error() as i64),
    }
}
