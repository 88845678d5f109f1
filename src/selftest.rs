//! fio's self-tests: `--crctest[=list]` (speed of the checksum functions) and
//! `--cpuclock-test` (the clock's calibration and whether the TSC is monotonic across CPUs).

mod hashes;

use flexio_engine::os;
use flexio_run::clock::{Clock, Source};
use flexio_run::verify::{sum, Generation, Kind};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// What `--crctest` times: a verify checksum, or one of the three hashes only it uses.
#[derive(Clone, Copy)]
enum Hash {
    Verify(Kind),
    Murmur3,
    Jhash,
    Fnv,
}

/// fio 3.33's hashes, in the order `--crctest` tests them.
const HASHES: &[(&str, Hash)] = &[
    ("md5", Hash::Verify(Kind::Md5)),
    ("crc64", Hash::Verify(Kind::Crc64)),
    ("crc32", Hash::Verify(Kind::Crc32)),
    ("crc32c", Hash::Verify(Kind::Crc32c)),
    ("crc16", Hash::Verify(Kind::Crc16)),
    ("crc7", Hash::Verify(Kind::Crc7)),
    ("sha1", Hash::Verify(Kind::Sha1)),
    ("sha256", Hash::Verify(Kind::Sha256)),
    ("sha512", Hash::Verify(Kind::Sha512)),
    ("xxhash", Hash::Verify(Kind::Xxhash)),
    ("murmur3", Hash::Murmur3),
    ("jhash", Hash::Jhash),
    ("fnv", Hash::Fnv),
    ("sha3-224", Hash::Verify(Kind::Sha3_224)),
    ("sha3-256", Hash::Verify(Kind::Sha3_256)),
    ("sha3-384", Hash::Verify(Kind::Sha3_384)),
    ("sha3-512", Hash::Verify(Kind::Sha3_512)),
];

/// Hash `buf` once with `h` (the result kept from the optimiser).
fn hash_once(h: Hash, buf: &[u8], sum: &mut [u8; 128]) {
    match h {
        Hash::Verify(kind) => {
            let len = kind.csum_len();
            sum::field(Generation::Latest, kind, buf, &mut sum[..len]);
        }
        Hash::Murmur3 => sum[..4].copy_from_slice(&hashes::murmur3_32(buf, 0x8989).to_ne_bytes()),
        Hash::Jhash => sum[..4].copy_from_slice(&hashes::jhash(buf, 0x8989).to_ne_bytes()),
        Hash::Fnv => sum[..8].copy_from_slice(&hashes::fnv64(buf, 0x8989).to_ne_bytes()),
    }
    std::hint::black_box(&sum);
}

/// The switches that do their work instead of a run (`--debug=help`, `--crctest`,
/// `--cpuclock-test`, `--idle-prof=calibrate`): `Some(exit status)` when one was given.
pub fn early(x: &flexio_job::cli_extra::Extra, compat: flexio_job::Compat) -> Option<i32> {
    use flexio_job::cli_extra::{DEBUG_CATEGORIES, FIO333_DEBUG_CATEGORIES};
    if x.debug_help {
        let known = if compat.is_fio333() {
            &DEBUG_CATEGORIES[..FIO333_DEBUG_CATEGORIES]
        } else {
            DEBUG_CATEGORIES
        };
        outln!("fio: dumping debug options:{},all", known.join(","));
        return Some(0);
    }
    if let Some(list) = &x.crctest {
        return Some(crctest(list.as_deref(), Duration::from_millis(250)));
    }
    if x.cpuclock_test {
        return Some(cpuclock_test(200_000));
    }
    if x.idle_prof == Some(flexio_job::cli_extra::IdleProf::Calibrate) {
        // fio's calibration only: the unit of work's time over the CPUs.
        out!(
            "{}",
            flexio_run::idle::calibrate_text(flexio_run::idle::calibrate())
        );
        return Some(0);
    }
    None
}

/// One line of fio's crctest table: `name:` padded with tabs, then MiB/s.
pub fn crc_line(name: &str, mib_s: f64) -> String {
    let tabs = if name.len() + 1 < 8 { "\t\t" } else { "\t" };
    format!("{name}:{tabs}{mib_s:8.2} MiB/sec\n")
}

/// `--crctest[=a,b]`: hash a 1 MiB buffer for about `per_hash` each; the table on stdout,
/// in fio's order and layout. Returns the exit status.
pub fn crctest(list: Option<&str>, per_hash: Duration) -> i32 {
    let wanted: Vec<&str> = match list {
        Some(l) => l.split(',').filter(|s| !s.is_empty()).collect(),
        None => Vec::new(),
    };
    for w in &wanted {
        if !HASHES.iter().any(|h| h.0 == *w) {
            let names: Vec<&str> = HASHES.iter().map(|h| h.0).collect();
            eprintln!(
                "flexio: unknown hash `{w}`. Available: {}",
                names.join(", ")
            );
            return 1;
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
    let mut sum = [0u8; 128];
    for (name, hash) in HASHES {
        if !wanted.is_empty() && !wanted.contains(name) {
            continue;
        }
        let t0 = Instant::now();
        let mut bytes = 0u64;
        while bytes == 0 || t0.elapsed() < per_hash {
            hash_once(*hash, &buf, &mut sum);
            bytes += buf.len() as u64;
        }
        let mib_s = bytes as f64 / (1 << 20) as f64 / t0.elapsed().as_secs_f64();
        out.push_str(&crc_line(name, mib_s));
    }
    out!("{out}");
    0
}

/// `--cpuclock-test`: whether flexio trusts the TSC (and why not), the calibration against
/// CLOCK_MONOTONIC, and a cross-CPU check: one thread per CPU, pinned, takes turns reading
/// the clock under a lock; every reading must be at least the previous one, whichever CPU
/// took it. Prints fio's `cs:` lines; exit status 0 on a pass.
pub fn cpuclock_test(per_cpu_reads: u64) -> i32 {
    let pid = std::process::id();
    match flexio_run::clock::tsc_usable() {
        Ok(()) => outln!("cs: reliable_tsc: yes"),
        Err(why) => outln!("cs: reliable_tsc: no ({why})"),
    }
    let source = if flexio_run::clock::tsc_usable().is_ok() {
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
    outln!(
        "time     {pid:<5} clock={}, ns per monotonic ns: mean={mean:.6}, S={sd:.6}, N={}",
        source.name(),
        ratios.len()
    );
    let cpus: Vec<usize> = (0..os::thread::CpuSet::MAX_CPU)
        .filter(|c| {
            os::thread::sched_getaffinity(None)
                .map(|s| s.is_set(*c))
                .unwrap_or(false)
        })
        .collect();
    outln!("cs: Testing {} CPUs", cpus.len());
    let last = Mutex::new(0u64);
    let failed = AtomicBool::new(false);
    let results: Vec<(usize, u64, u64)> = std::thread::scope(|s| {
        let handles: Vec<_> = cpus
            .iter()
            .map(|&cpu| {
                let (last, failed, clock) = (&last, &failed, &clock);
                s.spawn(move || {
                    let mut set = os::thread::CpuSet::new();
                    set.set(cpu);
                    let _ = os::thread::sched_setaffinity(None, &set);
                    let mut first = None;
                    for _ in 0..per_cpu_reads {
                        let mut l = last.lock().unwrap_or_else(|e| e.into_inner());
                        let t = clock.now();
                        if t < *l {
                            outln!("cs: CPU clock mismatch on cpu {cpu}: {t} < {}", *l);
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
        outln!("cs: cpu {cpu:>2}: {seen} clocks seen, first {first}");
    }
    if failed.load(Ordering::Relaxed) {
        outln!("cs: Failed!");
        1
    } else {
        outln!("cs: Pass!");
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
