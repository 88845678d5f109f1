//! The operating system as flexio's portable code calls it: rustix's modules, under their
//! rustix names. rustix is the implementation on every system it supports. RTEMS, which
//! rustix does not support, gets `os_rtems.rs` instead: the part of rustix's interface that
//! the code built for RTEMS uses, with the same names and types, written over libc, and
//! answering `ENOSYS` for what RTEMS's C library lacks (the callers refuse those features
//! on RTEMS with their own message: "not supported by flexio on RTEMS").
//!
//! Code that RTEMS builds (the portable engines, `flexio-run`, the binary) calls `os::`;
//! code that only Linux or other Unix systems build may call rustix directly.

#[cfg(not(target_os = "rtems"))]
pub use rustix::{fd, fs, io, mm, param, process, system, thread, time};

#[cfg(target_os = "rtems")]
#[path = "os_rtems.rs"]
mod rtems;
#[cfg(target_os = "rtems")]
pub use rtems::{fd, fs, io, param, process, system, thread, time};

/// The RTEMS implementation, compiled on Linux for its unit tests: the C calls it makes are
/// POSIX ones Linux has too (its uname layout is RTEMS's own, so that one is not tested
/// here).
#[cfg(all(test, target_os = "linux"))]
#[allow(dead_code, unused_imports)]
#[path = "os_rtems.rs"]
mod rtems_on_linux;
