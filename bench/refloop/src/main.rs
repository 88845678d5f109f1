//! The limits a benchmark tool can approach, measured the same way in the same run:
//!
//! * `flexio-refloop pread FILE BS SECONDS`: random `pread`s of BS bytes from FILE, as
//!   fast as one thread can issue them, with nothing else per I/O but the offset;
//! * `flexio-refloop null SECONDS`: the loop alone (an I/O that costs nothing).
//!
//! Prints one JSON line: `{"ios": N, "seconds": S, "iops": X}`.
//!
//! * `flexio-refloop files OP DIR PREFIX N`: the file engines' operation (OP: `create`
//!   (open with O_CREAT and close), `stat`, `unlink`, `mkdir`, `rmdir`) on DIR/PREFIX0 ..
//!   DIR/PREFIX(N-1), one after the other: filecreate/filestat/filedelete/dircreate's bare
//!   loop (bench/compare.py).
//! * `flexio-refloop meta DIR FANOUT DEPTH FILES_PER_DIR OPS`: mdtree's life cycle as a
//!   bare loop of its system calls (`meta.rs`, for bench/metadata.py).

mod meta;

use std::hint::black_box;
use std::time::Instant;

fn xorshift(s: &mut u64) -> u64 {
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    *s
}

fn report(ios: u64, t: Instant) {
    let s = t.elapsed().as_secs_f64();
    println!(
        "{{\"ios\": {ios}, \"seconds\": {s:.6}, \"iops\": {:.1}}}",
        ios as f64 / s
    );
}

fn main() {
    let a: Vec<String> = std::env::args().collect();
    let usage =
        "usage: flexio-refloop pread FILE BS SECONDS | null SECONDS | files OP DIR PREFIX N | meta DIR FANOUT DEPTH FILES OPS";
    if std::env::var_os("REFLOOP_THREAD").is_some() {
        // Experiment: an idle second thread makes the process multi-threaded.
        std::thread::spawn(|| std::thread::sleep(std::time::Duration::from_secs(3600)));
    }
    match a.get(1).map(String::as_str) {
        Some("pread") if a.len() == 5 => {
            let f = std::fs::File::open(&a[2]).unwrap_or_else(|e| panic!("{}: {e}", a[2]));
            let bs: usize = a[3].parse().expect("BS");
            let secs: f64 = a[4].parse().expect("SECONDS");
            let blocks = (f.metadata().expect("stat").len() / bs as u64).max(1);
            // Page-aligned, like the tools' I/O buffers (an unaligned one copies slower or
            // faster depending on the CPU; the reference must not differ in that).
            let mut raw = vec![0u8; bs + 4096];
            let skip = raw.as_ptr().align_offset(4096);
            let buf = &mut raw[skip..skip + bs];
            let mut seed = 0x9e3779b97f4a7c15u64;
            // Experiment: REFLOOP_TOUCH=N reads and writes N random cache lines of a 256 KiB
            // table per I/O, the working set a tool's own per-I/O work brings between calls.
            let touch: usize = std::env::var("REFLOOP_TOUCH")
                .ok()
                .and_then(|v| v.parse().ok())
                .unwrap_or(0);
            let mut table = vec![0u64; 256 * 1024 / 8];
            let (t, mut ios) = (Instant::now(), 0u64);
            loop {
                for _ in 0..1024 {
                    let off = (xorshift(&mut seed) % blocks) * bs as u64;
                    let _ = rustix::io::pread(&f, &mut *buf, off).expect("pread");
                    for _ in 0..touch {
                        let i = (xorshift(&mut seed) as usize % (table.len() / 8)) * 8;
                        table[i] = table[i].wrapping_add(1);
                    }
                }
                black_box(&table);
                ios += 1024;
                if t.elapsed().as_secs_f64() >= secs {
                    break;
                }
            }
            report(ios, t);
        }
        Some("null") if a.len() == 3 => {
            let secs: f64 = a[2].parse().expect("SECONDS");
            let (t, mut ios) = (Instant::now(), 0u64);
            let mut seed = 1u64;
            loop {
                for _ in 0..65536 {
                    black_box(xorshift(&mut seed));
                }
                ios += 65536;
                if t.elapsed().as_secs_f64() >= secs {
                    break;
                }
            }
            report(ios, t);
        }
        Some("files") if a.len() == 6 => {
            use rustix::fs::{Mode, OFlags};
            let n: u64 = a[5].parse().expect("N");
            // The paths first: building them is not the operation.
            let paths: Vec<std::path::PathBuf> = (0..n)
                .map(|i| std::path::Path::new(&a[3]).join(format!("{}{i}", a[4])))
                .collect();
            // Experiment: REFLOOP_FILE_BYTES=N keeps N bytes of state per file and reads and
            // writes them each iteration, the per-file footprint a tool walks through.
            let per_file: usize = std::env::var("REFLOOP_FILE_BYTES")
                .ok()
                .and_then(|v| v.parse().ok())
                .unwrap_or(0);
            let mut state = vec![0u64; (per_file / 8).max(1) * paths.len()];
            let stride = (per_file / 8).max(1);
            // REFLOOP_TIMED=1 reads the clock before and after each call and counts the
            // time in a histogram, the least a tool that times every operation must add.
            let timed = std::env::var_os("REFLOOP_TIMED").is_some();
            let mut hist = vec![0u64; 4096];
            let t = Instant::now();
            for (i, p) in paths.iter().enumerate() {
                if per_file > 0 {
                    for w in &mut state[i * stride..(i + 1) * stride] {
                        *w = w.wrapping_add(1);
                    }
                }
                let t0 = timed.then(Instant::now);
                let r = match a[2].as_str() {
                    "create" => rustix::fs::open(
                        p,
                        OFlags::CREATE | OFlags::RDWR | OFlags::CLOEXEC,
                        Mode::from_raw_mode(0o600),
                    )
                    .map(drop),
                    "stat" => rustix::fs::stat(p).map(drop),
                    "unlink" => rustix::fs::unlink(p),
                    "mkdir" => rustix::fs::mkdir(p, Mode::from_raw_mode(0o700)),
                    "rmdir" => rustix::fs::rmdir(p),
                    op => panic!("{op}: create, stat, unlink, mkdir or rmdir"),
                };
                r.unwrap_or_else(|e| panic!("{}: {e}", p.display()));
                if let Some(t0) = t0 {
                    let ns = t0.elapsed().as_nanos() as usize;
                    hist[(ns >> 4).min(4095)] += 1;
                }
            }
            black_box(&hist);
            black_box(&state);
            report(n, t);
        }
        Some("meta") if a.len() == 7 => meta::run(&a[2..]),
        _ => {
            eprintln!("{usage}");
            std::process::exit(2);
        }
    }
}
