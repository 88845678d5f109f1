//! `flexio pts TARGET`: the SNIA Solid State Storage Performance Test Specification's IOPS,
//! throughput and latency tests as one command (docs/studies/pts.md): purge, workload-
//! independent preconditioning, then rounds over the test's matrix of read/write mixes
//! and block sizes until the tracking variable is in steady state by the PTS rule
//! (`flexio_analysis::pts`) or the round limit, and the tables of the measurement window.
//!
//! Every step is a fio job run in this process (`flexio_run::inproc`). It destroys the
//! target's data: it refuses a mounted device and wants `--i-understand-this-erases`.

use super::args::{positive, time_ms, Output};
use flexio_analysis::pts::{self, TestDef};
use flexio_job::value::{parse_size, KbBase};
use flexio_run::inproc;
use serde_json::{json, Value};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// The SNIA PTS on TARGET until steady state (it erases TARGET)
///
/// The SNIA PTS (Solid State Storage Performance Test Specification) on TARGET, a block
/// device or a file, which it overwrites: purge (BLKDISCARD of the whole device, or a full
/// overwrite where discard is refused), preconditioning (sequential 128 KiB writes of twice
/// its capacity), then rounds over the test's matrix (every read/write mix x block size,
/// one after the other, random I/O) until the tracking variable is in steady state by the
/// PTS rule (5 rounds within 20% of their average, the fitted line's rise within 10%) or 25
/// rounds. Prints the rounds, the verdict and the measurement window's table. Anything
/// other than the PTS's settings is listed as a deviation in the output.
#[derive(clap::Parser, Debug, Clone)]
#[command(
    name = "pts",
    after_help = "Exit status: 0 steady state reached, 1 not reached or a step failed, 2 bad \
                  arguments, 128 interrupted."
)]
pub struct Args {
    /// The block device or file to test (every byte is overwritten)
    #[arg(value_name = "TARGET", value_hint = clap::ValueHint::FilePath)]
    target: PathBuf,
    /// Required: every byte of TARGET is overwritten
    #[arg(long = "i-understand-this-erases")]
    erase: bool,
    /// iops (tracking: 4 KiB 100% write IOPS), throughput (sequential 1024/128 KiB, tracking
    /// 1024 KiB write MB/s) or latency (QD 1, tracking 4 KiB write mean latency)
    #[arg(long, value_name = "NAME", default_value = "iops", value_parser = test_def)]
    test: TestDef,
    /// Each cell of a round runs this long (PTS: 60s) [default: 60s, 5s on devices under 4 GiB]
    #[arg(long = "round-time", value_name = "TIME", value_parser = round_ms)]
    round_ms: Option<u64>,
    /// At most N rounds (PTS: 25)
    #[arg(long = "max-rounds", value_name = "N", default_value_t = pts::MAX_ROUNDS,
          value_parser = positive::<usize>)]
    max_rounds: usize,
    /// Preconditioning writes N x the capacity (PTS: 2)
    #[arg(long, value_name = "N", default_value_t = 2, value_parser = positive::<u32>)]
    passes: u32,
    /// Block sizes of the matrix, e.g. 4k,64k [default: the test's]
    #[arg(long, value_name = "LIST", value_parser = block_sizes, allow_hyphen_values = true)]
    bs: Option<::std::vec::Vec<u64>>,
    /// Read percentages of the matrix, e.g. 100,65,0 [default: the test's]
    #[arg(long, value_name = "LIST", value_parser = mixes)]
    mixes: Option<::std::vec::Vec<u32>>,
    /// Outstanding I/Os [default: 32, latency 1]
    #[arg(long, value_name = "N", value_parser = positive::<u32>)]
    iodepth: Option<u32>,
    /// The engine (psync runs at depth 1)
    #[arg(long, value_name = "NAME", default_value = "libaio")]
    ioengine: String,
    /// Write the results as JSON (atomically); `flexio report` draws it
    #[arg(long, value_name = "FILE")]
    json: Option<PathBuf>,
    #[command(flatten)]
    output: Output,
}

fn test_def(v: &str) -> Result<TestDef, String> {
    TestDef::of(v).ok_or(format!("'{v}' is not iops, throughput or latency"))
}

fn round_ms(v: &str) -> Result<u64, String> {
    time_ms(v).and_then(|ms| {
        (ms >= 1000)
            .then_some(ms)
            .ok_or_else(|| format!("'{v}' is shorter than 1s"))
    })
}

fn block_sizes(v: &str) -> Result<Vec<u64>, String> {
    v.split(',')
        .map(|b| match parse_size(b.trim(), KbBase::K1024) {
            Ok(n) if n > 0 && n % 512 == 0 => Ok(n),
            Ok(_) => Err(format!("{b} is not a multiple of 512 bytes")),
            Err(e) => Err(e.to_string()),
        })
        .collect()
}

fn mixes(v: &str) -> Result<Vec<u32>, String> {
    v.split(',')
        .map(|m| {
            m.trim()
                .parse()
                .ok()
                .filter(|n| *n <= 100)
                .ok_or(format!("'{m}' is not a read percentage (0-100)"))
        })
        .collect()
}

/// The target's size and logical block size; refuses a device in use.
fn target_of(p: &Path) -> Result<(u64, u32), String> {
    match flexio_run::blockdev::probe(p) {
        Ok(Some(b)) if !b.char_dev => {
            if let Some(why) = flexio_run::blockdev::in_use(p) {
                return Err(format!(
                    "{}: {why}; flexio pts erases its target and refuses a device in use",
                    p.display()
                ));
            }
            Ok((b.size, b.lbs))
        }
        Ok(Some(_)) => Err(format!(
            "{}: a character device; name a block device or a file",
            p.display()
        )),
        Ok(None) => {
            let m = std::fs::metadata(p).map_err(|e| format!("{}: {e}", p.display()))?;
            if !m.is_file() || m.len() == 0 {
                return Err(format!(
                    "{}: not a block device or a non-empty file",
                    p.display()
                ));
            }
            Ok((m.len(), 512))
        }
        Err(e) => Err(format!("{}: {e}", p.display())),
    }
}

fn mib(b: u64) -> String {
    format!("{:.1} MiB", b as f64 / (1 << 20) as f64)
}

/// One cell's job and its figures: (IOPS, MB/s, mean latency µs).
fn cell(
    a: &Args,
    cap: u64,
    read: u32,
    bs: u64,
    ms: u64,
    depth: u32,
) -> Result<(f64, f64, f64), String> {
    let rw = match (a.test.sequential, read) {
        (true, 100) => "read".to_string(),
        (true, 0) => "write".to_string(),
        (true, r) => format!("rw\nrwmixread={r}"),
        (false, 100) => "randread".to_string(),
        (false, 0) => "randwrite".to_string(),
        (false, r) => format!("randrw\nrwmixread={r}"),
    };
    let job = format!(
        "[pts]\nfilename={}\nioengine={}\ndirect=1\nrw={rw}\nbs={bs}\niodepth={depth}\nnumjobs=1\nsize={cap}\ntime_based=1\nruntime={ms}ms\nnorandommap=1\nrandrepeat=0\n",
        a.target.display(),
        a.ioengine
    );
    let r = inproc::run_job(&job)?;
    let d = &r.report.dirs;
    let iops = d[0].iops + d[1].iops;
    let mbps = (d[0].bw_bytes + d[1].bw_bytes) as f64 / 1e6;
    let n = (d[0].clat.n + d[1].clat.n) as f64;
    let lat = if n > 0.0 {
        (d[0].clat.mean_ns * d[0].clat.n as f64 + d[1].clat.mean_ns * d[1].clat.n as f64)
            / n
            / 1000.0
    } else {
        f64::NAN
    };
    Ok((iops, mbps, lat))
}

fn step(label: &str, job: &str, quiet: bool) -> Result<f64, String> {
    let t = Instant::now();
    inproc::run_text(job, &["--output-format=json"]).map_err(|e| format!("{label}: {e}"))?;
    if !quiet {
        eprintln!(
            "flexio pts: {label} done ({:.1} s)",
            t.elapsed().as_secs_f64()
        );
    }
    Ok(t.elapsed().as_secs_f64())
}

pub fn run(args: &[String]) -> i32 {
    let a = match super::args::args_of::<Args, _>(args, 2, super::args::as_is) {
        Ok(a) => a,
        Err(code) => return code,
    };
    let (cap, lbs) = match target_of(&a.target) {
        Ok(v) => v,
        Err(e) => {
            eprintln!("flexio pts: {e}");
            return 1;
        }
    };
    let t = &a.test;
    let mixes = a.mixes.clone().unwrap_or_else(|| t.mixes.clone());
    let sizes: Vec<u64> = a.bs.clone().unwrap_or_else(|| t.sizes.clone());
    if let Some(b) = sizes.iter().find(|b| **b % lbs as u64 != 0) {
        eprintln!(
            "flexio pts: block size {b} is not a multiple of {}'s logical block size {lbs}",
            a.target.display()
        );
        return 2;
    }
    let small = cap < 4 << 30;
    let round_ms = a.round_ms.unwrap_or(if small { 5_000 } else { 60_000 });
    let depth = if a.ioengine == "psync" || a.ioengine == "sync" {
        1
    } else {
        a.iodepth.unwrap_or(t.iodepth)
    };
    let cells = mixes.len() * sizes.len();
    // What differs from the PTS, said in the output.
    let mut deviations = Vec::new();
    if round_ms != 60_000 {
        deviations.push(format!(
            "each cell runs {} s, not 60 s{}",
            round_ms as f64 / 1000.0,
            if small && a.round_ms.is_none() {
                format!(" (scaled down: the target is {} < 4 GiB)", mib(cap))
            } else {
                String::new()
            }
        ));
    }
    if a.max_rounds != pts::MAX_ROUNDS {
        deviations.push(format!("at most {} rounds, not 25", a.max_rounds));
    }
    if a.passes != 2 {
        deviations.push(format!(
            "preconditioning writes {} x the capacity, not 2 x",
            a.passes
        ));
    }
    if sizes != t.sizes {
        deviations.push(format!(
            "block sizes {} only",
            sizes
                .iter()
                .map(|b| pts::bs_name(*b))
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    if mixes != t.mixes {
        deviations.push(format!(
            "mixes {} only",
            mixes
                .iter()
                .map(|m| pts::mix_name(*m))
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    let track_cell = (
        mixes.iter().position(|m| *m == t.track.0),
        sizes.iter().position(|b| *b == t.track.1),
    );
    let (Some(tm), Some(tb)) = track_cell else {
        eprintln!(
            "flexio pts: the matrix must hold the tracking cell ({} {})",
            pts::mix_name(t.track.0),
            pts::bs_name(t.track.1)
        );
        return 2;
    };
    let tracking = format!(
        "{} {} {}",
        pts::bs_name(t.track.1),
        pts::mix_name(t.track.0),
        t.metric_name()
    );
    let write_total = a.passes as u64 * cap;
    eprintln!(
        "flexio pts: the {} test erases {} ({}): purge, then {} x {} of preconditioning writes ({}), then up to {} rounds of {} cells x {} s of I/O ({} s at the most)",
        t.name,
        a.target.display(),
        mib(cap),
        a.passes,
        mib(cap),
        mib(write_total),
        a.max_rounds,
        cells,
        round_ms as f64 / 1000.0,
        a.max_rounds as u64 * cells as u64 * round_ms / 1000
    );
    if !a.erase {
        eprintln!(
            "flexio pts: not started: add --i-understand-this-erases to overwrite every byte of {}",
            a.target.display()
        );
        return 2;
    }
    let quiet = a.output.json();
    // Purge: a trim of the whole target (BLKDISCARD on a block device); where it is
    // refused, a full overwrite.
    let purge = format!(
        "[purge]\nfilename={}\nioengine=psync\nrw=trim\nbs={}\nsize={cap}\n",
        a.target.display(),
        (64u64 << 20).min(cap) / lbs as u64 * lbs as u64
    );
    let purge_how = match step("purge (BLKDISCARD)", &purge, quiet) {
        Ok(_) => "BLKDISCARD of the whole device",
        Err(e) => {
            if !quiet {
                eprintln!("flexio pts: discard refused ({e}); purging by a full overwrite");
            }
            let over = format!(
                "[purge]\nfilename={}\nioengine=psync\nrw=write\nbs=1m\nsize={cap}\nzero_buffers=1\n",
                a.target.display()
            );
            if let Err(e) = step("purge (overwrite)", &over, quiet) {
                eprintln!("flexio pts: {e}");
                return 1;
            }
            "a full overwrite (discard refused)"
        }
    };
    let pre = format!(
        "[precondition]\nfilename={}\nioengine={}\ndirect=1\nrw=write\nbs=128k\niodepth={depth}\nsize={cap}\nloops={}\n",
        a.target.display(),
        a.ioengine,
        a.passes
    );
    if let Err(e) = step("preconditioning", &pre, quiet) {
        eprintln!("flexio pts: {e}");
        return 1;
    }
    // Rounds.
    let mut rounds: Vec<Value> = Vec::new();
    let mut track: Vec<f64> = Vec::new();
    let mut values: Vec<Vec<Vec<f64>>> = Vec::new(); // [round][mix][bs]
    let mut window = None;
    let pick = |v: (f64, f64, f64)| match t.metric {
        "iops" => v.0,
        "mbps" => v.1,
        _ => v.2,
    };
    for r in 1..=a.max_rounds {
        let mut grid = vec![vec![f64::NAN; sizes.len()]; mixes.len()];
        let mut cells_json = Vec::new();
        for (mi, m) in mixes.iter().enumerate() {
            for (bi, b) in sizes.iter().enumerate() {
                if inproc::interrupted() {
                    eprintln!("flexio pts: interrupted in round {r}");
                    return 128;
                }
                match cell(&a, cap, *m, *b, round_ms, depth) {
                    Ok(v) => {
                        grid[mi][bi] = pick(v);
                        cells_json.push(json!({
                            "mix": pts::mix_name(*m), "bs": b,
                            "iops": v.0, "mbps": v.1, "mean_lat_us": v.2,
                        }));
                    }
                    Err(e) => {
                        eprintln!(
                            "flexio pts: round {r}, {} {}: {e}",
                            pts::mix_name(*m),
                            pts::bs_name(*b)
                        );
                        return 1;
                    }
                }
            }
        }
        let tv = grid[tm][tb];
        track.push(tv);
        values.push(grid);
        let w = pts::judge(&track);
        if !quiet {
            let mut line = format!("flexio pts: round {r}: {tracking} {}", pts::fmt_value(tv));
            if let Some(w) = &w {
                let _ = write!(
                    line,
                    " (rounds {}-{}: range {:.1}%, slope {:.1}%)",
                    w.first, w.last, w.range_pct, w.slope_pct
                );
            }
            eprintln!("{line}");
        }
        rounds.push(json!({"round": r, "tracking": tv, "cells": cells_json}));
        if let Some(w) = w.filter(|w| w.steady) {
            window = Some(w);
            break;
        }
    }
    let last = pts::judge(&track);
    let (steady, w) = match (&window, &last) {
        (Some(w), _) => (true, Some(w.clone())),
        (None, Some(w)) => (false, Some(w.clone())),
        _ => (false, None),
    };
    let verdict = match &w {
        Some(w) if steady => format!(
            "steady state in rounds {}-{} by the PTS rule: {tracking} average {}, range {:.1}% (<= 20%), slope excursion {:.1}% (<= 10%)",
            w.first, w.last, pts::fmt_value(w.average), w.range_pct, w.slope_pct
        ),
        Some(w) => format!(
            "no steady state in {} rounds: the last window (rounds {}-{}) has range {:.1}% (limit 20%), slope excursion {:.1}% (limit 10%); its averages are shown",
            track.len(), w.first, w.last, w.range_pct, w.slope_pct
        ),
        None => format!("no steady state: {} rounds, fewer than the 5 a window needs; the last round is shown", track.len()),
    };
    // The table: the window's averages (or the last round's).
    let (from, to) = w
        .as_ref()
        .map(|w| (w.first - 1, w.last))
        .unwrap_or((values.len().saturating_sub(1), values.len()));
    let avg = |mi: usize, bi: usize| {
        let v: Vec<f64> = values[from..to].iter().map(|g| g[mi][bi]).collect();
        v.iter().sum::<f64>() / v.len().max(1) as f64
    };
    let rows: Vec<Value> = sizes
        .iter()
        .enumerate()
        .map(|(bi, b)| {
            json!({"bs": pts::bs_name(*b), "values": (0..mixes.len()).map(|mi| avg(mi, bi)).collect::<Vec<_>>()})
        })
        .collect();
    let doc = json!({
        "flexio pts": env!("CARGO_PKG_VERSION"),
        "test": t.name,
        "target": a.target.display().to_string(),
        "capacity": cap,
        "logical_block_size": lbs,
        "settings": {
            "round_time_s": round_ms as f64 / 1000.0, "max_rounds": a.max_rounds,
            "passes": a.passes, "iodepth": depth, "ioengine": a.ioengine,
            "sequential": t.sequential,
        },
        "purge": purge_how,
        "deviations": deviations,
        "tracking": tracking,
        "metric": t.metric,
        "metric_name": t.metric_name(),
        "rounds": rounds,
        "steady_state": {
            "reached": steady,
            "first_round": w.as_ref().map(|w| w.first),
            "last_round": w.as_ref().map(|w| w.last),
            "average": w.as_ref().map(|w| w.average),
            "range_pct": w.as_ref().map(|w| w.range_pct),
            "slope_excursion_pct": w.as_ref().map(|w| w.slope_pct),
        },
        "verdict": verdict,
        "table": {
            "mixes": mixes.iter().map(|m| pts::mix_name(*m)).collect::<Vec<_>>(),
            "rows": rows,
        },
    });
    let text = serde_json::to_string_pretty(&doc).unwrap_or_default() + "\n";
    if let Some(p) = &a.json {
        if let Err(e) = flexio_run::notes::write_atomic(p, text.as_bytes()) {
            eprintln!("flexio pts: {}: {e}", p.display());
            return 1;
        }
    }
    if a.output.json() {
        super::out::stdout(&text);
    } else {
        let mut o = String::new();
        let _ = writeln!(
            o,
            "PTS {} test: {} ({}, logical block {lbs} B); purge: {purge_how}",
            t.name,
            a.target.display(),
            mib(cap)
        );
        for d in &deviations {
            let _ = writeln!(o, "  not as the PTS: {d}");
        }
        let _ = writeln!(o, "  {verdict}");
        let _ = writeln!(
            o,
            "{} ({}; rows: block size, columns: read/write mix)",
            t.metric_name(),
            if w.is_some() {
                "average of the measurement window"
            } else {
                "last round"
            }
        );
        let _ = write!(o, "{:>10}", "bs");
        for m in &mixes {
            let _ = write!(o, " {:>10}", pts::mix_name(*m));
        }
        o.push('\n');
        for (bi, b) in sizes.iter().enumerate() {
            let _ = write!(o, "{:>10}", pts::bs_name(*b));
            for mi in 0..mixes.len() {
                let _ = write!(o, " {:>10}", pts::fmt_value(avg(mi, bi)));
            }
            o.push('\n');
        }
        super::out::stdout(&o);
    }
    if steady {
        0
    } else {
        1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_args(v: &[&str]) -> Result<Args, String> {
        let v: Vec<String> = v.iter().map(|x| x.to_string()).collect();
        super::super::args::try_parse(&v, super::super::args::as_is).map_err(|e| e.to_string())
    }

    #[test]
    fn arguments() {
        let a = parse_args(&[
            "/dev/x",
            "--test=latency",
            "--round-time",
            "2s",
            "--bs",
            "4k,8k",
        ])
        .unwrap();
        assert_eq!(a.test.name, "latency");
        assert_eq!(a.round_ms, Some(2000));
        assert_eq!(a.bs, Some(vec![4096, 8192]));
        assert!(!a.erase);
        assert_eq!(
            (a.max_rounds, a.passes, a.ioengine.as_str()),
            (25, 2, "libaio")
        );
        assert_eq!(parse_args(&["/x"]).unwrap().test.name, "iops");
        assert!(parse_args(&["--test=fast", "/dev/x"])
            .unwrap_err()
            .contains("'fast' is not iops, throughput or latency"));
        assert!(parse_args(&[]).unwrap_err().contains("<TARGET>"));
        assert!(parse_args(&["/x", "/y"])
            .unwrap_err()
            .contains("unexpected argument '/y'"));
        assert!(parse_args(&["/x", "--round-time=10ms"])
            .unwrap_err()
            .contains("shorter than 1s"));
        assert!(parse_args(&["/x", "--bs=1000"])
            .unwrap_err()
            .contains("1000 is not a multiple of 512"));
        assert!(parse_args(&["/x", "--mixes=101"])
            .unwrap_err()
            .contains("read percentage"));
        assert!(parse_args(&["/x", "--passes=0"])
            .unwrap_err()
            .contains("positive"));
    }
}
