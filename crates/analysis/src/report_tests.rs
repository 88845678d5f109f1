use super::*;
use std::io::Write;

const RESULT: &str = r#"{
  "fio version" : "fio-3.33",
  "time" : "Sun Nov 22 04:38:30 2026",
  "jobs" : [
    {
      "jobname" : "rt", "groupid" : 0, "error" : 0,
      "job options" : { "rw" : "randread", "write_lat_log" : "rt", "write_bw_log" : "rt" },
      "read" : { "io_bytes" : 4096000, "bw_bytes" : 4096000, "iops" : 1000.0, "runtime" : 1000,
        "total_ios" : 500,
        "clat_ns" : { "min" : 1000, "max" : 9000, "mean" : 2000.0, "stddev" : 500.0, "N" : 500,
          "percentile" : { "50.000000" : 1900, "99.900000" : 8960 },
          "bins" : { "1000" : 100, "1900" : 300, "4000" : 99, "8960" : 1 } },
        "lat_ns" : { "min" : 1100, "max" : 9100, "mean" : 2100.0, "stddev" : 500.0, "N" : 500 } },
      "usr_cpu" : 1.5, "sys_cpu" : 2.5, "ctx" : 7
    }
  ],
  "disk_util" : [ { "name" : "vda", "util" : 12.5 } ]
}
"#;

fn write(dir: &std::path::Path, name: &str, text: &str) {
    std::fs::File::create(dir.join(name))
        .unwrap()
        .write_all(text.as_bytes())
        .unwrap();
}

#[test]
fn report_with_logs_has_every_chart_and_the_table() {
    let d = tempfile::tempdir().unwrap();
    write(d.path(), "r.json", RESULT);
    let mut lat = String::new();
    let mut bw = String::new();
    for i in 0..500u64 {
        lat.push_str(&format!(
            "{}, {}, 0, 4096, 0\n",
            i * 2,
            1000 + (i * 37) % 5000
        ));
        if i % 50 == 0 {
            bw.push_str(&format!("{}, {}, 0, 0, 0\n", i * 2, 4000 + i));
        }
    }
    write(d.path(), "rt_clat.1.log", &lat);
    write(d.path(), "rt_lat.1.log", &lat);
    write(d.path(), "rt_bw.1.log", &bw);
    let run = crate::input::read_with_logs(&d.path().join("r.json")).unwrap();
    assert!(run.warnings.is_empty(), "{:?}", run.warnings);
    let mut second = run.clone();
    second.label = "second".into();
    let html = render(&[run, second], None, &ReportOptions::default());
    assert!(html.starts_with("<!DOCTYPE html>"));
    assert_eq!(html.matches("<svg").count(), 7, "every chart drawn");
    assert!(!html.contains("class=\"nodata\""));
    for t in [
        "Bandwidth over time",
        "IOPS over time",
        "Latency over time",
        "Latency histogram",
        "Latency percentiles",
        "Sorted response times",
        "CCDF",
        "RMS",
        "vda",
        "randread",
        "lat (log)",
    ] {
        assert!(html.contains(t), "{t} missing");
    }
    // Two results: two colours, toggles for both.
    assert!(html.contains(".hide1 .s1{display:none}"));
    assert!(html.contains("class=\"s1\""));
    // p99.9 from 500 samples is flagged.
    assert!(html.contains("class=\"few\""));
    // No network references.
    assert!(
        !html.contains("http://")
            || html.matches("http://").count()
                == html.matches("xmlns=\"http://www.w3.org/2000/svg\"").count()
    );
    assert!(!html.contains("https://"));
}

#[test]
fn report_without_logs_says_what_is_missing() {
    let run = crate::input::parse(RESULT, std::path::Path::new("r.json")).unwrap();
    let html = render(&[run], None, &ReportOptions::default());
    assert_eq!(
        html.matches("<svg").count(),
        4,
        "distribution charts from json+ bins"
    );
    assert!(html.contains("no log files beside the result"));
    let mut bare = crate::input::parse(RESULT, std::path::Path::new("r.json")).unwrap();
    bare.jobs[0].dirs[0].clat.bins.clear();
    let html = render(&[bare], None, &ReportOptions::default());
    // The percentile curve still has the reported percentiles; the others say why not.
    assert_eq!(html.matches("<svg").count(), 1);
    assert_eq!(html.matches("class=\"nodata\"").count(), 3);
}

#[test]
fn steady_state_departures_are_marked() {
    let with = RESULT.replace(
        r#""usr_cpu" : 1.5,"#,
        r#""flexio" : { "steadystate" : { "metric" : "iops", "interval_s" : 1.0, "offset_s" : 0.0,
           "attained_sample" : 3, "level" : 1000.0, "departure" : "flag", "band_pct" : 20.0,
           "departure_window_samples" : 3,
           "departures" : [ { "sample" : 6, "at_s" : 6.0, "from" : 1000.0, "to" : 100.0 } ],
           "series" : [ 990, 1010, 1000, 1005, 995, 1000, 180, 100, 101, 99 ] } },
      "usr_cpu" : 1.5,"#,
    );
    let run = crate::input::parse(&with, std::path::Path::new("r.json")).unwrap();
    let w = run.jobs[0]
        .steady
        .as_ref()
        .expect("flexio.steadystate read");
    assert_eq!(w.series.len(), 10);
    assert_eq!(w.departures, vec![(6.0, 1000.0, 100.0)]);
    let html = render(&[run], None, &ReportOptions::default());
    assert!(html.contains("Steady state: IOPS per sample"), "{html}");
    assert!(html.contains(">departure -90%</text>"), "{html}");
    assert!(html.contains(">steady</text>"));
    // Without the additions: no such chart.
    let plain = crate::input::parse(RESULT, std::path::Path::new("r.json")).unwrap();
    let html = render(&[plain], None, &ReportOptions::default());
    assert!(!html.contains("Steady state:"));
}
