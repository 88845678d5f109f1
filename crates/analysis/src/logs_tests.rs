use super::*;
use crate::model::JobResult;
use std::io::Write;

#[test]
fn names() {
    assert_eq!(
        parse_name("j1_clat_hist.3.log"),
        Some(("j1".into(), LogKind::ClatHist, Some(3)))
    );
    assert_eq!(
        parse_name("a_b_clat.1.log"),
        Some(("a_b".into(), LogKind::Clat, Some(1)))
    );
    assert_eq!(
        parse_name("x_lat.log"),
        Some(("x".into(), LogKind::Lat, None))
    );
    assert_eq!(
        parse_name("agg-read_bw.log"),
        Some(("agg-read".into(), LogKind::Bw, None))
    );
    assert_eq!(parse_name("x_slat.2.log.fz"), None);
    assert_eq!(parse_name("res.json"), None);
    assert_eq!(parse_name("_lat.log"), None);
}

#[test]
fn numbers() {
    assert_eq!(num(b" 123"), Some(123));
    assert_eq!(num(b" 0x2001"), Some(0x2001));
    assert_eq!(num(b"12.75"), Some(12));
    assert_eq!(num(b" x"), None);
    assert_eq!(num(b""), None);
    assert_eq!(num(b"99999999999999999999999"), None);
}

#[test]
fn series_widen_and_keep_totals() {
    let mut s = TimeSeries::default();
    for t in 0..100_000u64 {
        s.add(t, t % 10, 4096);
    }
    assert!(s.buckets.len() <= MAX_BUCKETS);
    assert!(s.width_ms >= 64);
    let n: u64 = s.buckets.iter().map(|b| b.count).sum();
    assert_eq!(n, 100_000);
    assert_eq!(s.buckets.iter().map(|b| b.max).max(), Some(9));
    let mut o = TimeSeries::default();
    o.add(5, 100, 0);
    o.merge(&s);
    assert_eq!(o.width_ms, s.width_ms);
    assert_eq!(o.buckets[0].max, 100);
    assert_eq!(o.buckets.iter().map(|b| b.count).sum::<u64>(), 100_001);
}

fn write(dir: &Path, name: &str, text: &str) {
    let mut f = std::fs::File::create(dir.join(name)).unwrap();
    f.write_all(text.as_bytes()).unwrap();
}

#[test]
fn sample_and_hist_logs_are_read_exactly() {
    let d = tempfile::tempdir().unwrap();
    // Latencies 1000..=1999 ns, reads and a few writes, one broken line, no final newline.
    let mut text = String::new();
    for i in 0..1000u64 {
        text.push_str(&format!("{}, {}, 0, 4096, 0\n", i / 10, 1000 + i));
    }
    text.push_str("7, 5000, 1, 4096, 8192, 0x0000\nbroken line\n9, 6000, 1, 4096, 0, 0");
    write(d.path(), "j_lat.1.log", &text);
    let logs = read_logs(&[(d.path().join("j_lat.1.log"), LogKind::Lat)]);
    assert_eq!(logs.lines, 1003);
    assert_eq!(logs.bad_lines, 1);
    let r = logs.get(LogKind::Lat, Ddir::Read).unwrap();
    let s = r.stat.to_stat();
    assert_eq!((s.samples, s.min, s.max), (1000, 1000, 1999));
    assert!((s.mean - 1499.5).abs() < 1e-9);
    assert!(r.per_io);
    let hist_total: u64 = r.hist.as_ref().unwrap().iter().sum();
    assert_eq!(hist_total, 1000);
    let w = logs.get(LogKind::Lat, Ddir::Write).unwrap();
    assert_eq!(w.stat.samples, 2);
    assert_eq!(w.stat.sum, 11000);

    // A histogram log at coarseness 1 (928 bins): 10 I/Os in fio bucket pair 64 (values
    // 128..131) in the first interval, 30 in pair 200 in the second.
    let mut l1 = vec!["0"; 928];
    l1[64] = "10";
    let mut l2 = vec!["0"; 928];
    l2[200] = "30";
    let hist_text = format!(
        "100, 0, 4096, {}\n200, 0, 4096, {}\n",
        l1.join(", "),
        l2.join(", ")
    );
    write(d.path(), "j_clat_hist.1.log", &hist_text);
    let logs = read_logs(&[(d.path().join("j_clat_hist.1.log"), LogKind::ClatHist)]);
    let h = logs.hist(Ddir::Read).unwrap();
    assert_eq!(h.intervals, 2);
    assert_eq!(h.counts.iter().sum::<u64>(), 40);
    assert_eq!(h.counts[129], 10);
    assert_eq!(h.counts[401], 30);
    let p: Vec<u64> = h
        .p99
        .points()
        .filter(|(_, b)| b.count > 0)
        .map(|(_, b)| b.max)
        .collect();
    assert_eq!(p, vec![idx_to_val(129), idx_to_val(401)]);
}

#[test]
fn attach_by_prefix_and_thread() {
    let d = tempfile::tempdir().unwrap();
    write(d.path(), "a_clat.1.log", "0, 100, 0, 4096, 0\n");
    write(
        d.path(),
        "a_clat.2.log",
        "0, 200, 0, 4096, 0\n0, 300, 0, 4096, 0\n",
    );
    write(d.path(), "p_bw.3.log", "0, 5000, 1, 0, 0\n");
    write(d.path(), "other_iops.1.log", "0, 1, 0, 4096, 0\n");
    write(d.path(), "empty_lat.1.log", "");
    // A compressed log (log_store_compressed): found and kept apart, not read as text.
    write(d.path(), "p_iops.3.log.fz", "x\u{9c}not text");
    let job = |name: &str, opts: &[(&str, &str)]| JobResult {
        name: name.into(),
        options: opts
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
        ..Default::default()
    };
    let mut run = RunResult {
        path: d.path().join("r.json"),
        jobs: vec![
            job("a", &[]),
            job("a", &[]),
            job("b", &[("write_bw_log", "p"), ("write_iops_log", "p")]),
        ],
        ..Default::default()
    };
    attach(&mut run);
    let n = |j: usize| {
        run.jobs[j]
            .logs
            .get(LogKind::Clat, Ddir::Read)
            .map(|s| s.stat.samples)
    };
    assert_eq!(n(0), Some(1));
    assert_eq!(n(1), Some(2));
    let bw = run.jobs[2].logs.get(LogKind::Bw, Ddir::Write).unwrap();
    assert!(!bw.per_io);
    assert_eq!(bw.stat.max, 5000);
    assert_eq!(
        run.jobs[2].logs.compressed,
        [(d.path().join("p_iops.3.log.fz"), LogKind::Iops)]
    );
    assert_eq!(run.jobs[2].logs.bad_lines, 0);
    // other_iops.1.log belongs to no job here (another run's log): left alone.
    assert!(run.warnings.is_empty(), "{:?}", run.warnings);
    assert!(run
        .jobs
        .iter()
        .all(|j| j.logs.get(LogKind::Iops, Ddir::Read).is_none()));
}

#[test]
fn histogram_bins_stand_for_fio_s_bucket_values() {
    use flexio_stats::hist::idx_to_val;
    // Coarseness 0: fio's 1856 buckets, each its own value.
    let fine = hist_bin_ns(1856).unwrap();
    assert_eq!(fine.len(), 1856);
    assert!((0..1856).all(|i| fine[i] == idx_to_val(i)));
    // Coarseness 2: bins of four buckets, each valued at its third bucket (as the reader
    // files them); flexio's own 3776-bucket layout, one bucket each.
    let coarse = hist_bin_ns(1856 >> 2).unwrap();
    assert_eq!(coarse[100], idx_to_val(402));
    assert_eq!(hist_bin_ns(3776).unwrap()[3000], idx_to_val(3000));
    assert!(coarse.windows(2).all(|w| w[0] < w[1]));
    // No histogram log has 1000 bins.
    assert_eq!(hist_bin_ns(1000), None);
}
