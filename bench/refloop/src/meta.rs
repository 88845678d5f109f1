//! `flexio-refloop meta DIR FANOUT DEPTH FILES_PER_DIR OPS`: the bare loop of mdtree's life
//! cycle: the same system calls in the same order on the same tree (`DIR/refloop.tree`),
//! each timed alone with `Instant` (paths built outside the timed window), no statistics
//! beyond a count, a sum and the first/last time per operation. `OPS` is mdtree's `md_ops`
//! list (`all` or names with `:`). Prints one JSON line:
//! `{"mkdir": {"count": N, "total_ns": T, "span_ns": S}, ...}`.

use rustix::fs::{Access, Mode, OFlags};
use std::mem::MaybeUninit;
use std::time::Instant;

const KINDS: [&str; 15] = [
    "mkdir", "create", "write", "close", "dirfsync", "stat", "access", "chmod", "open", "readdir",
    "link", "symlink", "rename", "unlink", "rmdir",
];

#[derive(Default, Clone, Copy)]
struct Acc {
    count: u64,
    total: u64,
    first: u64,
    last: u64,
}

struct Timer {
    base: Instant,
    acc: [Acc; 15],
}

impl Timer {
    /// Time `f` as operation `k`.
    #[inline]
    fn op<T>(&mut self, k: usize, f: impl FnOnce() -> rustix::io::Result<T>) -> T {
        let t0 = self.base.elapsed().as_nanos() as u64;
        let r = f();
        let t1 = self.base.elapsed().as_nanos() as u64;
        let a = &mut self.acc[k];
        a.count += 1;
        a.total += t1 - t0;
        if a.first == 0 {
            a.first = t0.max(1);
        }
        a.last = t1;
        r.unwrap_or_else(|e| panic!("{}: {e}", KINDS[k]))
    }
}

fn k(name: &str) -> usize {
    KINDS.iter().position(|n| *n == name).unwrap()
}

pub fn run(a: &[String]) {
    let dir = &a[0];
    let fanout: u32 = a[1].parse().expect("FANOUT");
    let depth: u32 = a[2].parse().expect("DEPTH");
    let per: u32 = a[3].parse().expect("FILES_PER_DIR");
    let ops: Vec<&str> = if a[4] == "all" {
        vec![
            "dirfsync", "stat", "access", "chmod", "open", "readdir", "link", "symlink", "rename",
        ]
    } else {
        a[4].split(':').collect()
    };
    let on = |n: &str| ops.contains(&n);
    // Directories in pre-order (parents first), with their level.
    let mut dirs: Vec<(String, u32)> = Vec::new();
    let mut stack = vec![(format!("{dir}/refloop.tree"), 0u32)];
    while let Some((p, l)) = stack.pop() {
        if l < depth {
            for c in (0..fanout).rev() {
                stack.push((format!("{p}/d{c}"), l + 1));
            }
        }
        dirs.push((p, l));
    }
    let files: Vec<(String, String)> = dirs
        .iter()
        .flat_map(|(d, _)| (0..per).map(move |j| (format!("{d}/f{j}"), format!("f{j}"))))
        .collect();
    let mut t = Timer {
        base: Instant::now(),
        acc: [Acc::default(); 15],
    };
    let mut buf = vec![MaybeUninit::<u8>::uninit(); 64 * 1024];
    let (mut pa, mut pb) = (String::new(), String::new());
    for (d, _) in &dirs {
        t.op(k("mkdir"), || {
            rustix::fs::mkdir(d.as_str(), Mode::from_raw_mode(0o755))
        });
    }
    for (f, _) in &files {
        let fd = t.op(k("create"), || {
            rustix::fs::open(
                f.as_str(),
                OFlags::CREATE | OFlags::EXCL | OFlags::WRONLY | OFlags::CLOEXEC,
                Mode::from_raw_mode(0o644),
            )
        });
        t.op(k("close"), || {
            drop(fd);
            Ok(())
        });
    }
    if on("dirfsync") {
        for (d, _) in &dirs {
            let fd = rustix::fs::open(
                d.as_str(),
                OFlags::RDONLY | OFlags::DIRECTORY,
                Mode::empty(),
            )
            .unwrap();
            t.op(k("dirfsync"), || rustix::fs::fsync(&fd));
        }
    }
    for (name, kind) in [("stat", 0), ("access", 1), ("chmod", 2)] {
        if !on(name) {
            continue;
        }
        for (f, _) in &files {
            match kind {
                0 => t.op(k(name), || rustix::fs::stat(f.as_str()).map(|_| ())),
                1 => t.op(k(name), || {
                    rustix::fs::access(f.as_str(), Access::READ_OK | Access::WRITE_OK)
                }),
                _ => t.op(k(name), || {
                    rustix::fs::chmod(f.as_str(), Mode::from_raw_mode(0o600))
                }),
            }
        }
    }
    if on("open") {
        for (f, _) in &files {
            let fd = t.op(k("open"), || {
                rustix::fs::open(f.as_str(), OFlags::RDONLY | OFlags::CLOEXEC, Mode::empty())
            });
            t.op(k("close"), || {
                drop(fd);
                Ok(())
            });
        }
    }
    if on("readdir") {
        for (d, _) in &dirs {
            let fd = rustix::fs::open(
                d.as_str(),
                OFlags::RDONLY | OFlags::DIRECTORY,
                Mode::empty(),
            )
            .unwrap();
            t.op(k("readdir"), || {
                let mut it = rustix::fs::RawDir::new(&fd, &mut buf);
                let mut n = 0u64;
                while let Some(e) = it.next() {
                    e?;
                    n += 1;
                }
                Ok(n)
            });
        }
    }
    for (name, suffix) in [("link", ".l"), ("symlink", ".s"), ("rename", ".r")] {
        if !on(name) {
            continue;
        }
        for (f, short) in &files {
            pb.clear();
            pb.push_str(f);
            pb.push_str(suffix);
            match name {
                "link" => t.op(k(name), || rustix::fs::link(f.as_str(), pb.as_str())),
                "symlink" => t.op(k(name), || rustix::fs::symlink(short.as_str(), pb.as_str())),
                _ => t.op(k(name), || rustix::fs::rename(f.as_str(), pb.as_str())),
            }
        }
    }
    for (f, _) in &files {
        for (suffix, want) in [
            (if on("rename") { ".r" } else { "" }, true),
            (".l", on("link")),
            (".s", on("symlink")),
        ] {
            if want {
                pa.clear();
                pa.push_str(f);
                pa.push_str(suffix);
                t.op(k("unlink"), || rustix::fs::unlink(pa.as_str()));
            }
        }
    }
    for (d, _) in dirs.iter().rev() {
        t.op(k("rmdir"), || rustix::fs::rmdir(d.as_str()));
    }
    let parts: Vec<String> = KINDS
        .iter()
        .zip(t.acc.iter())
        .map(|(n, a)| {
            format!(
                "\"{n}\": {{\"count\": {}, \"total_ns\": {}, \"span_ns\": {}}}",
                a.count,
                a.total,
                a.last.saturating_sub(a.first)
            )
        })
        .collect();
    println!("{{{}}}", parts.join(", "));
}
