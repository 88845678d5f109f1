//! `--idle-prof=system|percpu`: how idle the machine's CPUs were during the run, from the
//! kernel's own CPU accounting (/proc/stat: idle and iowait time over all time), so work the
//! per-thread `cpu` line cannot see (kernel flusher threads, interrupts, other processes)
//! shows. fio measures the same with a calibrated idle-priority loop; flexio needs no
//! calibration, and prints no "unit work" line.

use flexio_job::cli_extra::IdleProf;

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
pub fn normal_block(mode: IdleProf, system: f64, cpus: &[f64]) -> String {
    let mut s = format!("\nCPU idleness:\n  system: {system:3.2}%\n");
    if mode == IdleProf::Percpu {
        let per: Vec<String> = cpus.iter().map(|p| format!("{p:3.2}%")).collect();
        s.push_str(&format!("  percpu: {}\n", per.join(", ")));
    }
    s
}

/// fio's JSON member (`"cpu_idleness" : {...}`), as the last member of the document.
pub fn json_member(mode: IdleProf, system: f64, cpus: &[f64]) -> String {
    let mut s = format!(",\n  \"cpu_idleness\" : {{\n    \"system\" : {system:.6}");
    if mode == IdleProf::Percpu {
        for (i, p) in cpus.iter().enumerate() {
            s.push_str(&format!(",\n    \"cpu-{i}\" : {p:.6}"));
        }
    }
    s.push_str("\n  }");
    s
}

/// Add the idleness to a rendered report: the JSON document gets its member (before its
/// closing brace), the normal report its block at the end.
pub fn decorate(
    text: &str,
    mode: IdleProf,
    system: f64,
    cpus: &[f64],
    json: bool,
    normal: bool,
) -> String {
    let mut out = text.to_string();
    if json {
        if let Some(start) = out.find("{\n  \"fio version\"") {
            if let Some(end) = out[start..].find("\n}\n") {
                out.insert_str(start + end, &json_member(mode, system, cpus));
            }
        }
    }
    if normal {
        out.push_str(&normal_block(mode, system, cpus));
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
        assert_eq!(
            normal_block(IdleProf::Percpu, 22.2, &[11.15, 66.79]),
            "\nCPU idleness:\n  system: 22.20%\n  percpu: 11.15%, 66.79%\n"
        );
        let doc = "{\n  \"fio version\" : \"x\",\n  \"disk_util\" : []\n}\n";
        let d = decorate(doc, IdleProf::System, 44.363125, &[], true, false);
        assert_eq!(d, "{\n  \"fio version\" : \"x\",\n  \"disk_util\" : [],\n  \"cpu_idleness\" : {\n    \"system\" : 44.363125\n  }\n}\n");
    }
}
