//! Helpers of the live conformance tests: finding fio, children that die with the test,
//! waiting with deadlines, free loopback ports.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

/// The fio binary, if installed. With FLEXIO_REQUIRE_FIO=1 a missing fio fails the test;
/// otherwise the test prints `SKIP:` and passes.
pub fn fio() -> Option<PathBuf> {
    let found = std::env::var_os("PATH").and_then(|p| {
        std::env::split_paths(&p)
            .map(|d| d.join("fio"))
            .find(|f| f.is_file())
    });
    if found.is_none() {
        if std::env::var("FLEXIO_REQUIRE_FIO").as_deref() == Ok("1") {
            panic!("fio is required (FLEXIO_REQUIRE_FIO=1) but not installed");
        }
        eprintln!("SKIP: fio is not installed; live protocol conformance skipped");
    }
    found
}

/// A child process killed (and reaped) when dropped, so a failing test leaves none.
pub struct Guard(pub Option<Child>);

impl Guard {
    pub fn spawn(cmd: &mut Command) -> Guard {
        Guard(Some(
            cmd.stdin(Stdio::null())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .expect("spawn"),
        ))
    }

    pub fn id(&self) -> u32 {
        self.0.as_ref().map(|c| c.id()).unwrap_or(0)
    }

    /// Wait for the child to exit within `limit`, then collect its output; on timeout the
    /// child is killed and the test fails.
    pub fn wait(mut self, limit: Duration) -> Output {
        let deadline = Instant::now() + limit;
        let mut child = self.0.take().expect("child");
        loop {
            if child.try_wait().expect("try_wait").is_some() {
                return child.wait_with_output().expect("output");
            }
            if Instant::now() > deadline {
                let _ = child.kill();
                let out = child.wait_with_output().expect("output");
                panic!(
                    "child did not exit within {limit:?}\nstdout:\n{}\nstderr:\n{}",
                    String::from_utf8_lossy(&out.stdout),
                    String::from_utf8_lossy(&out.stderr)
                );
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Stop the child now (SIGKILL) and return what it printed.
    pub fn stop(mut self) -> Output {
        let mut child = self.0.take().expect("child");
        let _ = child.kill();
        child.wait_with_output().expect("output")
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        if let Some(c) = &mut self.0 {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

/// Wait until `path` exists.
pub fn wait_for_path(path: &Path, limit: Duration) -> bool {
    let deadline = Instant::now() + limit;
    while Instant::now() < deadline {
        if path.exists() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    false
}

/// A loopback TCP port that was free a moment ago.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("bind 127.0.0.1:0")
}
