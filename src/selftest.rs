//! fio's self-tests: `--crctest[=list]` (speed of the checksum functions) and
//! `--cpuclock-test` (the clock's calibration and whether the TSC is monotonic across CPUs).

use crate::clock::{Clock, Source};
use crate::verify::{sum, Generation, Kind};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// fio 3.33's hashes, in the order `--crctest` tests them, and the checksum flexio computes for each it has.
const HASHES: &[(&str, Option<Kind>)] = &[
    ("md5", Some(Kind::Md5)),
    ("crc64", Some(Kind::Crc64)),
    ("crc32", Some(Kind::Crc32)),
    ("crc32c", Some(Kind::Crc32c)),
    ("crc16", Some(Kind::Crc16)),
    ("crc7", Some(Kind::Crc7)),
    ("sha1", Some(Kind::Sha1)),
    ("sha256", Some(Kind::Sha256)),
    ("sha512", Some(Kind::Sha512)),
    ("xxhash", Some(Kind::Xxhash)),
    ("murmur3", None),
    ("jhash", None),
    ("fnv", None),
    ("sha3-224", Some(Kind::Sha3_224)),
    ("sha3-256", Some(Kind::Sha3_256)),
    ("sha3-384", Some(Kind::Sha3_384)),
    ("sha3-512", Some(Kind::Sha3_512)),
];

/// The switches that do their work instead of a run (`--debug=help`, `--crctest`,
/// `--cpuclock-test`, `--idle-prof=calibrate`): `Some(exit status)` when one was given.
pub fn early(x: &flexio_job::cli_extra::Extra) -> Option<i32> {
    if x.debug_help {
        println!(
            "fio: dumping debug options:{},all",
            flexio_job::cli_extra::DEBUG_CATEGORIES.join(",")
        );
        return Some(0);
    }
    if let Some(list) = &x.crctest {
        return Some(crctest(list.as_deref(), Duration::from_millis(250)));
    }
    if x.cpuclock_test {
        return Some(cpuclock_test(200_000));
    }
    if x.idle_prof == Some(flexio_job::cli_extra::IdleProf::Calibrate) {
        println!("CPU idleness:");
        eprintln!("flexio: --idle-prof=calibrate: nothing to calibrate: flexio measures idleness from the kernel's CPU accounting (/proc/stat)");
        return Some(0);
    }
    None
}

/// One line of fio's crctest table: `name:` padded with tabs, then MiB/s.
pub fn crc_line(name: &str, mib_s: f64) -> String {
    let tabs = if name.len() + 1 < 8 { "\t\t" } else { "\t" };
    format!("{name}:{tabs}{mib_s:8.2} MiB/sec\n")
}

/// `--crctest[=a,b]`: hash a 1 MiB buffer for about `per_hash` each; the table on stdout.
/// Hashes fio has and flexio does not are named on stderr (an explicit request for one is
/// an error). Returns the exit status.
pub fn crctest(list: Option<&str>, per_hash: Duration) -> i32 {
    let wanted: Vec<&str> = match list {
        Some(l) => l.split(',').filter(|s| !s.is_empty()).collect(),
        None => Vec::new(),
    };
    for w in &wanted {
        match HASHES.iter().find(|h| h.0 == *w) {
            None => {
                eprintln!(
                    "flexio: unknown hash `{w}`. Available: {}",
                    flexio_has().join(", ")
                );
                return 1;
            }
            Some((_, None)) => {
                eprintln!(
                    "flexio: hash `{w}` is not supported by flexio (it has: {})",
                    flexio_has().join(", ")
                );
                return 1;
            }
            Some(_) => {}
        }
    }
    let mut buf = vec![0u8; 1 << 20];
    let mut x = 0x2545_f491_4f6c_dd1d_u64;
    for c in buf.chunks_mut(8) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        c.copy_from_slice(&x.to_ne_bytes()[..c.len()]);
    }
    let mut out = String::new();
    let mut skipped = Vec::new();
    let mut sum = [0u8; 128];
    for (name, kind) in HASHES {
        if !wanted.is_empty() && !wanted.contains(name) {
            continue;
        }
        let Some(kind) = kind else {
            skipped.push(*name);
            continue;
        };
        let len = kind.csum_len();
        let t0 = Instant::now();
        let mut bytes = 0u64;
        while bytes == 0 || t0.elapsed() < per_hash {
            sum::field(Generation::Latest, *kind, &buf, &mut sum[..len]);
            bytes += buf.len() as u64;
        }
        std::hint::black_box(&sum);
        let mib_s = bytes as f64 / (1 << 20) as f64 / t0.elapsed().as_secs_f64();
        out.push_str(&crc_line(name, mib_s));
    }
    print!("{out}");
    if !skipped.is_empty() {
        eprintln!(
            "flexio: not tested (fio hashes flexio does not have): {}",
            skipped.join(", ")
        );
    }
    0
}

fn flexio_has() -> Vec<&'static str> {
    HASHES
        .iter()
        .filter(|h| h.1.is_some())
        .map(|h| h.0)
        .collect()
}

/// `--cpuclock-test`: whether flexio trusts the TSC (and why not), the calibration against
/// CLOCK_MONOTONIC, and a cross-CPU check: one thread per CPU, pinned, takes turns reading
/// the clock under a lock; every reading must be at least the previous one, whichever CPU
/// took it. Prints fio's `cs:` lines; exit status 0 on a pass.
pub fn cpuclock_test(per_cpu_reads: u64) -> i32 {
    let pid = std::process::id();
    match crate::clock::tsc_usable() {
        Ok(()) => println!("cs: reliable_tsc: yes"),
        Err(why) => println!("cs: reliable_tsc: no ({why})"),
    }
    let source = if crate::clock::tsc_usable().is_ok() {
        Source::Tsc
    } else {
        Source::Monotonic
    };
    let clock = Clock::with_source(source);
    // Calibration: ns of the clock per ns of CLOCK_MONOTONIC over ten 10 ms windows.
    let mut ratios = Vec::new();
    for _ in 0..10 {
        let (c0, m0) = (clock.now(), Instant::now());
        std::thread::sleep(Duration::from_millis(10));
        let (c1, m1) = (clock.now(), m0.elapsed());
        ratios.push((c1 - c0) as f64 / m1.as_nanos().max(1) as f64);
    }
    let n = ratios.len() as f64;
    let mean = ratios.iter().sum::<f64>() / n;
    let sd = (ratios.iter().map(|r| (r - mean).powi(2)).sum::<f64>() / n).sqrt();
    println!(
        "time     {pid:<5} clock={}, ns per monotonic ns: mean={mean:.6}, S={sd:.6}, N={}",
        source.name(),
        ratios.len()
    );
    let cpus: Vec<usize> = (0..rustix::thread::CpuSet::MAX_CPU)
        .filter(|c| {
            rustix::thread::sched_getaffinity(None)
                .map(|s| s.is_set(*c))
                .unwrap_or(false)
        })
        .collect();
    println!("cs: Testing {} CPUs", cpus.len());
    let last = Mutex::new(0u64);
    let failed = AtomicBool::new(false);
    let results: Vec<(usize, u64, u64)> = std::thread::scope(|s| {
        let handles: Vec<_> = cpus
            .iter()
            .map(|&cpu| {
                let (last, failed, clock) = (&last, &failed, &clock);
                s.spawn(move || {
                    let mut set = rustix::thread::CpuSet::new();
                    set.set(cpu);
                    let _ = rustix::thread::sched_setaffinity(None, &set);
                    let mut first = None;
                    for _ in 0..per_cpu_reads {
                        let mut l = last.lock().unwrap_or_else(|e| e.into_inner());
                        let t = clock.now();
                        if t < *l {
                            println!("cs: CPU clock mismatch on cpu {cpu}: {t} < {}", *l);
                            failed.store(true, Ordering::Relaxed);
                        }
                        *l = t;
                        first.get_or_insert(t);
                    }
                    (cpu, per_cpu_reads, first.unwrap_or(0))
                })
            })
            .collect();
        handles.into_iter().filter_map(|h| h.join().ok()).collect()
    });
    for (cpu, seen, first) in results {
        println!("cs: cpu {cpu:>2}: {seen} clocks seen, first {first}");
    }
    if failed.load(Ordering::Relaxed) {
        println!("cs: Failed!");
        1
    } else {
        println!("cs: Pass!");
        0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crc_line_layout_is_fios() {
        assert_eq!(crc_line("md5", 230.43), "md5:\t\t  230.43 MiB/sec\n");
        assert_eq!(crc_line("murmur3", 2275.66), "murmur3:\t 2275.66 MiB/sec\n");
        assert_eq!(crc_line("crc32c", 4434.36), "crc32c:\t\t 4434.36 MiB/sec\n");
    }
}
