//! Byte-level layout: fio's own numbers (from its JSON+ output) rendered by flexio's
//! formatters must give fio's normal, JSON and terse text exactly. This pins the formatters
//! (number formatting, unit switching, widths, line breaking, key order, float printing) to
//! fio 3.33 (`Layout::Fio333`, what `--compat=3.33` prints) without depending on measured
//! values. The same numbers in the newest fio's layout (flexio's default) must give fio
//! 3.33's text changed exactly as the 3.42 delta (§5.1, §5.2) says, and nothing else.

use crate::common;
use common::*;
use flexio_stats::report::*;
use serde_json::Value;

fn u(v: &Value) -> u64 {
    v.as_u64()
        .unwrap_or_else(|| panic!("not an unsigned integer: {v}"))
}
fn f(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

fn lat(v: &Value) -> LatSummary {
    let pct = v.get("percentile").map(|p| {
        p.as_object()
            .unwrap()
            .iter()
            .map(|(k, x)| (k.parse::<f64>().unwrap(), u(x)))
            .collect::<Vec<_>>()
    });
    let bins = v.get("bins").map(|b| {
        b.as_object()
            .unwrap()
            .iter()
            .map(|(k, x)| (k.parse::<u64>().unwrap(), u(x)))
            .collect::<Vec<_>>()
    });
    LatSummary {
        min_ns: u(&v["min"]),
        max_ns: u(&v["max"]),
        mean_ns: f(&v["mean"]),
        stddev_ns: f(&v["stddev"]),
        n: u(&v["N"]),
        percentiles: pct,
        bins,
        extra: None,
    }
}

fn samples(v: &Value, pre: &str, dev: &str) -> SampleSummary {
    SampleSummary {
        min: u(&v[format!("{pre}_min")]),
        max: u(&v[format!("{pre}_max")]),
        mean: f(&v[format!("{pre}_mean")]),
        stddev: f(&v[format!("{pre}_{dev}")]),
        samples: u(&v[format!("{pre}_samples")]),
    }
}

fn dir(v: &Value, agg: u64) -> DirReport {
    let runtime = u(&v["runtime"]);
    let total = u(&v["total_ios"]);
    let bw_samples = samples(v, "bw", "dev");
    let terse = if bw_samples.samples > 0 && agg / 1024 > 0 {
        (bw_samples.mean * 100.0 / (agg / 1024) as f64).min(100.0)
    } else if bw_samples.samples > 0 {
        100.0
    } else {
        0.0
    };
    DirReport {
        io_bytes: u(&v["io_bytes"]),
        runtime_ms: runtime,
        bw_bytes: u(&v["bw_bytes"]),
        iops: f(&v["iops"]),
        iops_int: (1000 * total).checked_div(runtime).unwrap_or(0),
        total_ios: total,
        short_ios: u(&v["short_ios"]),
        drop_ios: u(&v["drop_ios"]),
        slat: lat(&v["slat_ns"]),
        clat: lat(&v["clat_ns"]),
        lat: lat(&v["lat_ns"]),
        bw_agg_pct: f(&v["bw_agg"]),
        bw_agg_pct_terse: terse,
        bw_samples,
        iops_samples: samples(v, "iops", "stddev"),
        sched: None,
        prios: v
            .get("prios")
            .map(|a| {
                let list: Vec<LatSummary> = a
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|p| lat(p.get("clat_ns").or(p.get("lat_ns")).unwrap()))
                    .collect();
                let total: u64 = list.iter().map(|l| l.n).sum();
                a.as_array()
                    .unwrap()
                    .iter()
                    .zip(list)
                    .map(|(p, l)| PrioReport {
                        class: u(&p["prioclass"]) as u16,
                        level: u(&p["prio"]) as u16,
                        hint: 0,
                        pct_of_ios: l.n as f64 * 100.0 / total as f64,
                        lat: l,
                    })
                    .collect()
            })
            .unwrap_or_default(),
    }
}

fn arr<const N: usize>(v: &Value) -> [f64; N] {
    let o = v.as_object().unwrap();
    let mut out = [0.0; N];
    for (i, x) in o.values().enumerate() {
        out[i] = f(x);
    }
    out
}

/// Rebuild flexio's report model from fio's JSON+ (plus the pids, which only the normal
/// output shows).
fn steadystate(v: &Value) -> flexio_stats::steady::SteadyState {
    let ss = v["ss"].as_str().unwrap();
    let (metric, limit) = ss.split_once(':').unwrap();
    let crit = flexio_stats::steady::Criterion {
        iops: metric.starts_with("iops"),
        lat: metric.starts_with("lat"),
        slope: metric.ends_with("_slope"),
        limit: limit.trim_end_matches('%').parse().unwrap(),
        pct: limit.ends_with('%'),
    };
    let ints = |a: &Value| a.as_array().unwrap().iter().map(u).collect::<Vec<u64>>();
    flexio_stats::steady::SteadyState::from_parts(
        crit,
        u(&v["duration"]),
        u(&v["attained"]) == 1,
        v["criterion"]
            .as_str()
            .unwrap()
            .trim_end_matches('%')
            .parse()
            .unwrap(),
        f(&v["slope"]),
        f(&v["max_deviation"]),
        ints(&v["data"]["iops"]),
        ints(&v["data"]["bw"]),
    )
}

fn report_from_fio(j: &Value, pids: &[(i32, u32)]) -> RunReport {
    let jobs_v = j["jobs"].as_array().unwrap();
    // Groups from the jobs.
    let mut groups: Vec<GroupReport> = Vec::new();
    for jv in jobs_v {
        let gid = u(&jv["groupid"]) as u32;
        if groups.iter().any(|g| g.id == gid) {
            continue;
        }
        let members: Vec<&Value> = jobs_v
            .iter()
            .filter(|x| u(&x["groupid"]) as u32 == gid)
            .collect();
        let dirs = ["read", "write", "trim"].map(|d| {
            let mut g = GroupDir {
                min_bw: u64::MAX,
                ..Default::default()
            };
            for m in &members {
                let run = u(&m[d]["runtime"]);
                if run == 0 {
                    continue;
                }
                let bytes = u(&m[d]["io_bytes"]);
                g.min_run_ms = if g.min_run_ms == 0 {
                    run
                } else {
                    g.min_run_ms.min(run)
                };
                g.max_run_ms = g.max_run_ms.max(run);
                let bw = bytes * 1000 / run;
                g.min_bw = g.min_bw.min(bw);
                g.max_bw = g.max_bw.max(bw);
                g.io_bytes += bytes;
            }
            if g.min_bw == u64::MAX {
                g.min_bw = 0;
            }
            g.agg_bw = (g.io_bytes * 1000).checked_div(g.max_run_ms).unwrap_or(0);
            g
        });
        groups.push(GroupReport {
            id: gid,
            kb_base: 1024,
            unit_base: 0,
            sig_figs: 4,
            unified: Unified::None,
            dirs,
            mixed: None,
        });
    }
    let mut jobs = Vec::new();
    for (k, jv) in jobs_v.iter().enumerate() {
        let gid = u(&jv["groupid"]) as u32;
        let g = groups.iter().find(|g| g.id == gid).unwrap();
        let dirs =
            [("read", 0), ("write", 1), ("trim", 2)].map(|(d, i)| dir(&jv[d], g.dirs[i].agg_bw));
        let has_pct = |key: &str| {
            ["read", "write", "trim"]
                .iter()
                .any(|d| jv[d][key].get("percentile").is_some())
        };
        let list: Vec<f64> = ["read", "write", "trim"]
            .iter()
            .find_map(|d| {
                ["clat_ns", "lat_ns", "slat_ns"]
                    .iter()
                    .find_map(|k| jv[d][k].get("percentile"))
            })
            .map(|p| {
                p.as_object()
                    .unwrap()
                    .keys()
                    .map(|k| k.parse().unwrap())
                    .collect()
            })
            .unwrap_or_default();
        // Printing precision: the most decimals any percentile needs (fio keeps it from the
        // option text; the JSON keys carry the values).
        let precision = list
            .iter()
            .map(|p| {
                let s = format!("{p}");
                s.find('.').map(|i| s.len() - i - 1).unwrap_or(0)
            })
            .max()
            .unwrap_or(2)
            .max(2);
        let echo: Vec<(String, String)> = jv
            .get("job options")
            .map(|o| {
                o.as_object()
                    .unwrap()
                    .iter()
                    .map(|(k, v)| (k.clone(), v.as_str().unwrap().to_string()))
                    .collect()
            })
            .unwrap_or_default();
        let nostats = dirs.iter().any(|d| d.clat.n > 0 && d.lat.n == 0);
        let issued_sync = u(&jv["sync"]["total_ios"]);
        jobs.push(JobReport {
            name: jv["jobname"].as_str().unwrap().to_string(),
            groupid: gid,
            members: pids.get(k).map(|p| p.1).unwrap_or(1),
            pid: pids.get(k).map(|p| p.0).unwrap_or(0),
            description: jv.get("desc").map(|d| d.as_str().unwrap().to_string()),
            error: u(&jv["error"]) as i32,
            verror: String::new(),
            echo,
            params: ReportParams {
                kb_base: 1024,
                unit_base: 0,
                sig_figs: 4,
                percentile_list: list,
                percentile_precision: precision,
                clat_percentiles: has_pct("clat_ns"),
                lat_percentiles: has_pct("lat_ns"),
                slat_percentiles: has_pct("slat_ns"),
                latency_depth: u(&jv["latency_depth"]) as u32,
                continue_on_error: jv.get("total_err").is_some(),
                unified: Unified::None,
                nostats_engine: nostats,
                latency_target_ns: u(&jv["latency_target"]),
                latency_window_us: u(&jv["latency_window"]),
                latency_percentile: f(&jv["latency_percentile"]),
            },
            steadystate: jv.get("steadystate").map(steadystate),
            tool: None,
            ops: Vec::new(),
            issued: [
                dirs[0].total_ios,
                dirs[1].total_ios,
                dirs[2].total_ios,
                issued_sync,
            ],
            short: [dirs[0].short_ios, dirs[1].short_ios, dirs[2].short_ios],
            dropped: [dirs[0].drop_ios, dirs[1].drop_ios, dirs[2].drop_ios],
            dirs,
            mixed: None,
            sync: SyncReport {
                total_ios: issued_sync,
                lat: lat(&jv["sync"]["lat_ns"]),
                json_percentiles: jv["sync"]["lat_ns"].get("percentile").is_some(),
            },
            job_runtime_ms: u(&jv["job_runtime"]),
            usr_cpu: f(&jv["usr_cpu"]),
            sys_cpu: f(&jv["sys_cpu"]),
            ctx: u(&jv["ctx"]),
            majf: u(&jv["majf"]),
            minf: u(&jv["minf"]),
            iodepth_level: arr(&jv["iodepth_level"]),
            iodepth_submit: arr(&jv["iodepth_submit"]),
            iodepth_complete: arr(&jv["iodepth_complete"]),
            latency_ns: arr(&jv["latency_ns"]),
            latency_us: arr(&jv["latency_us"]),
            latency_ms: arr(&jv["latency_ms"]),
            // Only approximately recoverable from JSON percentages (see the terse check).
            latency_us_terse0: arr::<10>(&jv["latency_us"])[0]
                + arr::<10>(&jv["latency_ns"]).iter().sum::<f64>(),
            total_err: jv.get("total_err").map(u).unwrap_or(0),
            first_error: jv.get("first_error").map(|v| u(v) as i32).unwrap_or(0),
            // fio 3.33 prints no block object for the captured jobs.
            block: None,
            // fio 3.33's JSON has none of these (its syncs are all counted as fsyncs).
            job_start_ms: 0,
            sync_kinds: [issued_sync, 0, 0],
            zone_resets: None,
        });
    }
    let disks = j
        .get("disk_util")
        .map(|d| {
            d.as_array()
                .unwrap()
                .iter()
                .map(|x| DiskReport {
                    name: x["name"].as_str().unwrap().to_string(),
                    read_ios: u(&x["read_ios"]),
                    write_ios: u(&x["write_ios"]),
                    read_sectors: 0,
                    write_sectors: 0,
                    read_merges: u(&x["read_merges"]),
                    write_merges: u(&x["write_merges"]),
                    read_ticks: u(&x["read_ticks"]),
                    write_ticks: u(&x["write_ticks"]),
                    in_queue: u(&x["in_queue"]),
                    util: f(&x["util"]),
                    // fio prints averages: one slave summing to them prints the same.
                    aggr: x.get("aggr_read_ios").map(|_| DiskAggr {
                        slaves: 1,
                        ios: [u(&x["aggr_read_ios"]), u(&x["aggr_write_ios"])],
                        sectors: [0, 0],
                        merges: [u(&x["aggr_read_merges"]), u(&x["aggr_write_merge"])],
                        ticks: [u(&x["aggr_read_ticks"]), u(&x["aggr_write_ticks"])],
                        in_queue: u(&x["aggr_in_queue"]),
                        max_util: f(&x["aggr_util"]),
                    }),
                })
                .collect()
        })
        .unwrap_or_default();
    let global_options: Vec<(String, String)> = j
        .get("global options")
        .map(|o| {
            o.as_object()
                .unwrap()
                .iter()
                .map(|(k, v)| (k.clone(), v.as_str().unwrap().to_string()))
                .collect()
        })
        .unwrap_or_default();
    RunReport {
        version: j["fio version"].as_str().unwrap().to_string(),
        timestamp: j["timestamp"].as_i64().unwrap(),
        timestamp_ms: j["timestamp_ms"].as_i64().unwrap(),
        time: j["time"].as_str().unwrap().to_string(),
        global_options,
        jobs,
        groups,
        disks,
        elapsed_s: u(&jobs_v[0]["elapsed"]),
        eta_s: jobs_v[0]["eta"].as_i64().unwrap(),
        clock: Default::default(),
        provenance: Vec::new(),
        layout: Layout::Fio333,
        notes: Vec::new(),
    }
}

/// A latency-target time in the newest fio's units (delta §5.1): the value in ns, scaled
/// to s from 2e9, ms from 2e6, us from 2000, two decimals.
fn newest_time(ns: f64) -> String {
    let (v, u) = if ns >= 2e9 {
        (ns / 1e9, "s")
    } else if ns >= 2e6 {
        (ns / 1e6, "ms")
    } else if ns >= 2000.0 {
        (ns / 1e3, "us")
    } else {
        (ns, "ns")
    };
    format!("{v:.2}{u}")
}

/// fio 3.33's normal report as the newest fio lays out the same numbers (delta §5.1):
/// no zone-reset suffix outside zonemode=zbd, latency targets with units, `/syncfs` in the
/// sync block, prio class/level/hint, `sectors=` in the disk lines and `aggsectors=` after
/// a slave aggregate's `aggrios=` (0: fio 3.33's JSON carries none).
fn newest_normal_from_fio333(text: &str) -> String {
    let lat =
        regex::Regex::new(r"^(     latency   : target=)(\d+)(, window=)(\d+)(, .*)$").unwrap();
    let prio = regex::Regex::new(r"(c?lat prio \d+/\d+)([: ])").unwrap();
    let disk = regex::Regex::new(r"^( +\S+: ios=\d+/\d+, )(merge=)").unwrap();
    let aggr = regex::Regex::new(r"(, aggrios=\d+/\d+)(, aggrmerge=)").unwrap();
    let mut out = String::new();
    for l in text.lines() {
        let l = l.strip_suffix("; 0 zone resets").unwrap_or(l);
        let l = if let Some(c) = lat.captures(l) {
            let t: f64 = c[2].parse().unwrap();
            let w: f64 = c[4].parse().unwrap();
            format!(
                "{}{}{}{}{}",
                &c[1],
                newest_time(t),
                &c[3],
                newest_time(w * 1000.0),
                &c[5]
            )
        } else if l == "  fsync/fdatasync/sync_file_range:" {
            "  fsync/fdatasync/sync_file_range/syncfs:".to_string()
        } else {
            let l = prio.replace_all(l, "${1}/0${2}").into_owned();
            let l = disk.replace(&l, "${1}sectors=0/0, ${2}").into_owned();
            aggr.replace(&l, "${1}, aggsectors=0/0${2}").into_owned()
        };
        out.push_str(&l);
        out.push('\n');
    }
    out
}

/// fio 3.33's JSON document as the newest fio lays out the same numbers (delta §5.2):
/// `job_start` after `groupid` (0: not in fio 3.33's JSON), `latency_target_ns` and
/// `latency_window_us` after their old keys, `priohint` after `prio`, and the disks'
/// sectors after `write_ios` (a slave aggregate's after `aggr_write_ios`).
fn newest_json_from_fio333(text: &str) -> String {
    let key = regex::Regex::new(r#"^(\s*)"([^"]+)" : (.*?)(,?)$"#).unwrap();
    let mut out: Vec<String> = Vec::new();
    for l in text.lines() {
        let Some(c) = key.captures(l) else {
            out.push(l.to_string());
            continue;
        };
        let (ind, k, v, comma) = (&c[1], &c[2], &c[3], &c[4]);
        // (Option echoes have string values: `"latency_window" : "200ms"` stays.)
        let k = if v.starts_with('"') { "" } else { k };
        let add: Vec<String> = match k {
            "groupid" => vec![format!("{ind}\"job_start\" : 0")],
            "latency_target" => vec![format!("{ind}\"latency_target_ns\" : {v}")],
            "latency_window" => vec![format!("{ind}\"latency_window_us\" : {v}")],
            "prio" => vec![format!("{ind}\"priohint\" : 0")],
            "write_ios" => vec![
                format!("{ind}\"read_sectors\" : 0"),
                format!("{ind}\"write_sectors\" : 0"),
            ],
            "aggr_write_ios" => vec![
                format!("{ind}\"aggr_read_sectors\" : 0"),
                format!("{ind}\"aggr_write_sectors\" : 0"),
            ],
            _ => {
                out.push(l.to_string());
                continue;
            }
        };
        out.push(format!("{ind}\"{k}\" : {v},"));
        let n = add.len();
        for (i, a) in add.into_iter().enumerate() {
            let last = i + 1 == n;
            out.push(if last {
                format!("{a}{comma}")
            } else {
                format!("{a},")
            });
        }
    }
    out.iter().map(|l| format!("{l}\n")).collect()
}

/// Equal, or different only where a two-decimal value is off by one in its last digit: fio
/// prints means with %.2f from full doubles, while its JSON (our input here) keeps six
/// decimals, so a value like 7677.025 can round either way.
fn same_but_json_rounding(a: &str, b: &str) -> bool {
    if a == b {
        return true;
    }
    // A job header's time is the job's end in fio and the run's in the JSON the report
    // is rebuilt from: a second apart where the run ends across a second boundary.
    let clock = regex::Regex::new(r"(pid=\d+: \w{3} \w{3} [ \d]\d )\d\d:\d\d:\d\d").unwrap();
    if clock.is_match(a) && clock.replace(a, "${1}T") == clock.replace(b, "${1}T") {
        return true;
    }
    let re = regex::Regex::new(r"\d+\.\d\d\b").unwrap();
    let (sa, sb) = (re.replace_all(a, "#"), re.replace_all(b, "#"));
    if sa != sb {
        return false;
    }
    let na: Vec<f64> = re
        .find_iter(a)
        .map(|m| m.as_str().parse().unwrap())
        .collect();
    let nb: Vec<f64> = re
        .find_iter(b)
        .map(|m| m.as_str().parse().unwrap())
        .collect();
    na.iter().zip(&nb).all(|(x, y)| (x - y).abs() < 0.0101)
}

/// Run fio once, re-render its numbers with flexio's formatters, compare every format.
fn check(what: &str, args: &[&str]) {
    let Some(fio) = fio_bin() else { return };
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let d = tempfile::tempdir().unwrap();
    let dir = d.path().display().to_string();
    let args: Vec<String> = args.iter().map(|a| a.replace("@D@", &dir)).collect();
    let run = |fmt: &str| {
        let mut a: Vec<&str> = args.iter().map(String::as_str).collect();
        a.push(fmt);
        run_in(&fio, &a, d.path()).stdout
    };
    // One run gives the JSON+ and the normal text of the same numbers.
    let both = run("--output-format=json+,normal,terse");
    let terse_text: String = both
        .lines()
        .filter(|l| l.starts_with("3;"))
        .map(|l| format!("{l}\n"))
        .collect();
    let start = both.find("{\n").unwrap();
    let end = both.find("\n}\n").unwrap() + 3;
    let json_text = &both[start..end];
    let normal_text = &both[end..];
    let j: Value = serde_json::from_str(json_text).unwrap();
    let pids: Vec<(i32, u32)> =
        regex::Regex::new(r"\(groupid=\d+, jobs=(\d+)\): err=[ \d]+(?: \([^)]*\))?: pid=(\d+):")
            .unwrap()
            .captures_iter(normal_text)
            .map(|c| (c[2].parse().unwrap(), c[1].parse().unwrap()))
            .collect();
    let rep = report_from_fio(&j, &pids);

    // JSON+: identical text apart from flexio's trailing section.
    // (flexio's section is the last member of the root object.)
    let fio_keys_only = |ours: String| match ours.find(",\n  \"flexio\" : {") {
        Some(i) => format!("{}\n}}\n", &ours[..i]),
        None => ours,
    };
    let ours = fio_keys_only(flexio_output::json::report(&rep, true, "flexio-test"));
    assert_eq!(ours, json_text, "{what}: JSON+ layout differs");
    // The newest fio's layout of the same numbers.
    let mut newest = rep.clone();
    newest.layout = Layout::Latest;
    let ours = fio_keys_only(flexio_output::json::report(&newest, true, "flexio-test"));
    assert_eq!(
        ours,
        newest_json_from_fio333(json_text),
        "{what}: newest JSON+ layout differs"
    );

    // Normal report: from the blank line before the first job block to the end.
    // After the JSON document, fio's normal report starts with its blank line.
    let fio_report = normal_text;
    let ours = flexio_output::normal::report(&rep);
    let fio_lines: Vec<&str> = fio_report.lines().collect();
    let our_lines: Vec<&str> = ours.lines().collect();
    for (i, (a, b)) in fio_lines.iter().zip(&our_lines).enumerate() {
        assert!(
            same_but_json_rounding(a, b),
            "{what}: normal line {} differs\nfio:    {a}\nflexio: {b}\nfio:\n{fio_report}\nflexio:\n{ours}",
            i + 1
        );
    }
    assert_eq!(
        our_lines.len(),
        fio_lines.len(),
        "{what}: normal line count\nfio:\n{fio_report}\nflexio:\n{ours}"
    );
    let want = newest_normal_from_fio333(fio_report);
    let ours = flexio_output::normal::report(&newest);
    let (want_lines, our_lines): (Vec<&str>, Vec<&str>) =
        (want.lines().collect(), ours.lines().collect());
    for (i, (a, b)) in want_lines.iter().zip(&our_lines).enumerate() {
        assert!(
            same_but_json_rounding(a, b),
            "{what}: newest normal line {} differs\nwant:   {a}\nflexio: {b}",
            i + 1
        );
    }
    assert_eq!(
        our_lines.len(),
        want_lines.len(),
        "{what}: newest normal line count"
    );

    // Terse v3: every field equal; values that fio derives from full-precision doubles
    // and the JSON only carries to six decimals may differ in the last printed digit.
    let ours = flexio_output::terse::report(&rep, 3);
    for (la, lb) in terse_text.lines().zip(ours.lines()) {
        let (fa, fb): (Vec<&str>, Vec<&str>) = (la.split(';').collect(), lb.split(';').collect());
        assert_eq!(fa.len(), fb.len(), "{what}: terse field count\n{la}\n{lb}");
        for (i, (a, b)) in fa.iter().zip(&fb).enumerate() {
            if a == b {
                continue;
            }
            let num = |s: &str| s.trim_end_matches('%').parse::<f64>().ok();
            match (num(a), num(b)) {
                (Some(x), Some(y))
                    if a.contains('.') && (x - y).abs() <= 1.5e-6 * x.abs().max(1.0) => {}
                // Field 100 folds the sub-µs buckets into the first µs one from counts, which
                // the JSON only carries as (floored) percentages.
                (Some(x), Some(y)) if i == 99 && (x - y).abs() <= 0.05 => {}
                _ => panic!(
                    "{what}: terse field {} differs: fio {a:?}, flexio {b:?}\n{la}\n{lb}",
                    i + 1
                ),
            }
        }
    }
    assert_eq!(
        terse_text.lines().count(),
        ours.lines().count(),
        "{what}: terse lines"
    );
}

#[test]
fn psync_read_single_job() {
    check(
        "read",
        &["--name=r", "--filename=@D@/f", "--size=32M", "--bs=64k"],
    );
}

#[test]
fn random_mix_time_based_with_samples() {
    check(
        "randrw",
        &[
            "--name=m",
            "--filename=@D@/f",
            "--size=32M",
            "--rw=randrw",
            "--rwmixread=70",
            "--time_based",
            "--runtime=2",
        ],
    );
}

#[test]
fn several_jobs_and_groups() {
    check(
        "groups",
        &[
            "--size=8M",
            "--ioengine=null",
            "--name=a",
            "--rw=randread",
            "--numjobs=2",
            "--name=b",
            "--rw=write",
            "--bs=64k",
            "--stonewall",
            "--name=c",
            "--new_group",
            "--description=third job",
        ],
    );
}

#[test]
fn group_reporting_with_slat_and_lat_percentiles() {
    check(
        "gr",
        &[
            "--ioengine=null",
            "--iodepth=8",
            "--size=64M",
            "--numjobs=3",
            "--group_reporting",
            "--lat_percentiles=1",
            "--slat_percentiles=1",
            "--name=g",
            "--time_based",
            "--runtime=1",
        ],
    );
}

#[test]
fn fsync_block_and_continue_on_error() {
    check(
        "fsync",
        &[
            "--name=s",
            "--filename=@D@/f",
            "--size=4M",
            "--rw=write",
            "--fsync=8",
            "--continue_on_error=all",
        ],
    );
}

#[test]
fn file_create_engine_has_only_clat() {
    check(
        "filecreate",
        &[
            "--name=c",
            "--ioengine=filecreate",
            "--directory=@D@",
            "--nrfiles=200",
            "--filesize=4k",
        ],
    );
}

#[test]
fn custom_percentile_list_precision() {
    check(
        "plist",
        &[
            "--name=p",
            "--ioengine=null",
            "--size=16M",
            "--percentile_list=50:99.9999:25.5",
        ],
    );
}

#[test]
fn per_priority_statistics() {
    check(
        "cmdprio",
        &[
            "--name=p",
            "--ioengine=libaio",
            "--iodepth=8",
            "--filename=@D@/f",
            "--size=16M",
            "--rw=randread",
            "--direct=1",
            "--cmdprio_percentage=30",
            "--cmdprio_class=1",
            "--cmdprio=3",
        ],
    );
}

#[test]
fn latency_target_and_rate_limit() {
    check(
        "latency target",
        &[
            "--name=l",
            "--ioengine=null",
            "--size=64M",
            "--rate_iops=5000",
            "--latency_target=50ms",
            "--latency_window=200ms",
            "--latency_percentile=99.5",
            "--runtime=3",
        ],
    );
}

#[test]
fn steady_state_block() {
    for crit in ["iops:5%", "bw_slope:2%"] {
        check(
            crit,
            &[
                "--name=s",
                "--ioengine=null",
                "--size=1g",
                "--rate_iops=10000",
                &format!("--ss={crit}"),
                "--ss_dur=2",
                "--time_based",
                "--runtime=10",
            ],
        );
    }
}
