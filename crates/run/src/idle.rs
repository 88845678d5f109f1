//! `--idle-prof=system|percpu`: how idle the machine's CPUs were during the run, from the
//! kernel's own CPU accounting (/proc/stat: idle and iowait time over all time), so work the
//! per-thread `cpu` line cannot see (kernel flusher threads, interrupts, other processes)
//! shows. fio measures the same by counting units of work an idle-priority thread per CPU
//! gets done; flexio reads the kernel's figure instead, and still calibrates fio's unit of
//! work (one page of bytes written, timed per CPU) for fio's `unit work` line and
//! `--idle-prof=calibrate`.

use flexio_engine::os;
use flexio_job::cli_extra::IdleProf;
use std::time::Instant;

/// Calibration runs per CPU, and units timed per run (the fastest run counts).
const CALIBRATE_RUNS: usize = 10;
const CALIBRATE_UNITS: usize = 1000;

/// fio's unit of work: every byte of a page written once, from a moving start.
fn unit_of_work(page: &mut [u8], j: usize) {
    let n = page.len();
    for k in 0..n {
        page[(k + j) % n] = k as u8;
    }
}

/// µs one unit of work takes on the calling thread: the fastest of [`CALIBRATE_RUNS`] runs
/// of [`CALIBRATE_UNITS`] units, per unit.
fn calibrate_here(page_size: usize) -> f64 {
    let mut page = vec![0u8; page_size.max(1)];
    let mut best = f64::MAX;
    for _ in 0..CALIBRATE_RUNS {
        let t0 = Instant::now();
        for j in 0..CALIBRATE_UNITS {
            unit_of_work(&mut page, j);
            std::hint::black_box(&mut page);
        }
        best = best.min(t0.elapsed().as_secs_f64() * 1e6);
    }
    best / CALIBRATE_UNITS as f64
}

/// The unit of work calibrated on every CPU the process may use (a thread pinned to each,
/// all at once as fio does): mean and standard deviation over the CPUs, in µs.
pub fn calibrate() -> (f64, f64) {
    let page = os::param::page_size();
    let cpus: Vec<usize> = match os::thread::sched_getaffinity(None) {
        Ok(set) => (0..os::thread::CpuSet::MAX_CPU)
            .filter(|c| set.is_set(*c))
            .collect(),
        Err(_) => Vec::new(),
    };
    let units: Vec<f64> = if cpus.is_empty() {
        vec![calibrate_here(page)]
    } else {
        std::thread::scope(|s| {
            let hs: Vec<_> = cpus
                .iter()
                .map(|&cpu| {
                    s.spawn(move || {
                        let mut set = os::thread::CpuSet::new();
                        set.set(cpu);
                        let _ = os::thread::sched_setaffinity(None, &set);
                        calibrate_here(page)
                    })
                })
                .collect();
            hs.into_iter().filter_map(|h| h.join().ok()).collect()
        })
    };
    mean_stddev(&units)
}

/// Mean and sample standard deviation.
fn mean_stddev(v: &[f64]) -> (f64, f64) {
    if v.is_empty() {
        return (0.0, 0.0);
    }
    let n = v.len() as f64;
    let mean = v.iter().sum::<f64>() / n;
    let var = if v.len() > 1 {
        v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0)
    } else {
        0.0
    };
    (mean, var.sqrt())
}

/// fio's `unit work` line.
pub fn unit_line(unit: (f64, f64)) -> String {
    format!("  unit work: mean={:.2}us, stddev={:.2}\n", unit.0, unit.1)
}

/// `--idle-prof=calibrate`: fio's output (the calibration only, no run).
pub fn calibrate_text(unit: (f64, f64)) -> String {
    format!("CPU idleness:\n{}", unit_line(unit))
}

/// (idle, total) jiffies of the whole system and of each CPU.
#[derive(Clone, Debug, Default)]
pub struct CpuTimes {
    pub system: (u64, u64),
    pub cpus: Vec<(u64, u64)>,
}

/// Parse /proc/stat's `cpu` lines: idle = idle + iowait; total = user .. steal.
pub fn parse_stat(text: &str) -> CpuTimes {
    let mut t = CpuTimes::default();
    for l in text.lines() {
        let mut f = l.split_whitespace();
        let Some(name) = f.next().filter(|n| n.starts_with("cpu")) else {
            continue;
        };
        let v: Vec<u64> = f.take(8).filter_map(|x| x.parse().ok()).collect();
        if v.len() < 5 {
            continue;
        }
        let pair = (v[3] + v[4], v.iter().sum());
        if name == "cpu" {
            t.system = pair;
        } else {
            t.cpus.push(pair);
        }
    }
    t
}

pub fn read() -> CpuTimes {
    parse_stat(&std::fs::read_to_string("/proc/stat").unwrap_or_default())
}

fn pct(a: (u64, u64), b: (u64, u64)) -> f64 {
    let total = b.1.saturating_sub(a.1);
    if total == 0 {
        return 100.0;
    }
    b.0.saturating_sub(a.0) as f64 * 100.0 / total as f64
}

/// Idleness in percent between two readings: the system's and each CPU's.
pub fn idleness(a: &CpuTimes, b: &CpuTimes) -> (f64, Vec<f64>) {
    let cpus = a
        .cpus
        .iter()
        .zip(&b.cpus)
        .map(|(x, y)| pct(*x, *y))
        .collect();
    (pct(a.system, b.system), cpus)
}

/// fio's normal-output block.
pub fn normal_block(mode: IdleProf, system: f64, cpus: &[f64], unit: (f64, f64)) -> String {
    let mut s = format!("\nCPU idleness:\n  system: {system:3.2}%\n");
    if mode == IdleProf::Percpu {
        let per: Vec<String> = cpus.iter().map(|p| format!("{p:3.2}%")).collect();
        s.push_str(&format!("  percpu: {}\n", per.join(", ")));
    }
    s.push_str(&unit_line(unit));
    s
}

/// fio's JSON member (`"cpu_idleness" : {...}`), as the last member of the document.
pub fn json_member(mode: IdleProf, system: f64, cpus: &[f64], unit: (f64, f64)) -> String {
    let mut s = format!(",\n  \"cpu_idleness\" : {{\n    \"system\" : {system:.6}");
    if mode == IdleProf::Percpu {
        for (i, p) in cpus.iter().enumerate() {
            s.push_str(&format!(",\n    \"cpu-{i}\" : {p:.6}"));
        }
    }
    s.push_str(&format!(
        ",\n    \"unit_mean\" : {:.6},\n    \"unit_stddev\" : {:.6}",
        unit.0, unit.1
    ));
    s.push_str("\n  }");
    s
}

/// Add the idleness to a rendered report: the JSON document gets its member (before its
/// closing brace), the normal report its block at the end.
#[allow(clippy::too_many_arguments)]
pub fn decorate(
    text: &str,
    mode: IdleProf,
    system: f64,
    cpus: &[f64],
    unit: (f64, f64),
    json: bool,
    normal: bool,
) -> String {
    let mut out = text.to_string();
    if json {
        if let Some(start) = out.find("{\n  \"fio version\"") {
            if let Some(end) = out[start..].find("\n}\n") {
                out.insert_str(start + end, &json_member(mode, system, cpus, unit));
            }
        }
    }
    if normal {
        out.push_str(&normal_block(mode, system, cpus, unit));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_and_idleness() {
        let a = parse_stat(
            "cpu  10 0 10 80 0 0 0 0 0 0\ncpu0 5 0 5 40 0 0 0 0\ncpu1 5 0 5 40 0 0 0 0\nintr 5\n",
        );
        let b = parse_stat(
            "cpu  20 0 20 150 10 0 0 0 0 0\ncpu0 15 0 15 60 10 0 0 0\ncpu1 5 0 5 90 0 0 0 0\n",
        );
        let (sys, cpus) = idleness(&a, &b);
        assert!((sys - 80.0).abs() < 1e-9, "{sys}");
        assert_eq!(cpus, vec![60.0, 100.0]);
        // fio 3.33's layout (captured: `system: 19.32%`, `percpu: 36.62%, 2.01%`,
        // `unit work: mean=10.21us, stddev=4.73`).
        assert_eq!(
            normal_block(IdleProf::Percpu, 22.2, &[11.15, 66.79], (10.21, 4.73)),
            "\nCPU idleness:\n  system: 22.20%\n  percpu: 11.15%, 66.79%\n  unit work: mean=10.21us, stddev=4.73\n"
        );
        let doc = "{\n  \"fio version\" : \"x\",\n  \"disk_util\" : []\n}\n";
        let d = decorate(
            doc,
            IdleProf::System,
            44.363125,
            &[],
            (16.8505, 2.810749),
            true,
            false,
        );
        assert_eq!(d, "{\n  \"fio version\" : \"x\",\n  \"disk_util\" : [],\n  \"cpu_idleness\" : {\n    \"system\" : 44.363125,\n    \"unit_mean\" : 16.850500,\n    \"unit_stddev\" : 2.810749\n  }\n}\n");
        assert_eq!(
            calibrate_text((11.0, 5.98)),
            "CPU idleness:\n  unit work: mean=11.00us, stddev=5.98\n"
        );
    }

    #[test]
    fn calibration_times_a_unit() {
        let (mean, sd) = calibrate();
        // A page of byte writes takes between a nanosecond and a second on anything.
        assert!(mean > 0.001 && mean < 1e6, "{mean}");
        assert!(sd >= 0.0 && sd.is_finite());
        assert_eq!(mean_stddev(&[1.0, 3.0]), (2.0, 2f64.sqrt()));
        assert_eq!(mean_stddev(&[5.0]), (5.0, 0.0));
    }
}
