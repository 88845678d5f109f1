//! fio's own helper scripts read flexio's output.

use crate::common;
use common::*;

fn script(name: &str) -> Option<std::path::PathBuf> {
    let p = std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|d| d.join(name))
            .find(|p| p.is_file())
    });
    if p.is_none() {
        if std::env::var("FLEXIO_REQUIRE_FIO").as_deref() == Ok("1") {
            panic!("{name} (from fio's package) is required but not installed");
        }
        eprintln!("SKIP: {name} is not installed (it comes with fio)");
    }
    p
}

#[test]
fn fio_jsonplus_clat2csv_converts_and_validates_flexio_json_plus() {
    let Some(conv) = script("fio_jsonplus_clat2csv") else {
        return;
    };
    let d = tempfile::tempdir().unwrap();
    let r = flexio(
        &[
            "--output-format=json+",
            "--output=out.json",
            "--size=4M",
            "--rw=randrw",
            "--name=a",
            "--filename=fa",
            "--name=b",
            "--ioengine=null",
            "--lat_percentiles=1",
        ],
        d.path(),
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    for extra in [None, Some("--validate")] {
        let mut cmd = std::process::Command::new("python3");
        cmd.arg(&conv)
            .arg("out.json")
            .arg("clat.csv")
            .current_dir(d.path());
        if let Some(e) = extra {
            cmd.arg(e);
        }
        let out = cmd.output().unwrap();
        assert!(
            out.status.success(),
            "fio_jsonplus_clat2csv {extra:?} failed:\n{}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        if extra.is_some() {
            let s = String::from_utf8_lossy(&out.stdout);
            assert!(
                s.contains("clat_job0.csv validated") && s.contains("clat_job1.csv validated"),
                "{s}"
            );
        }
    }
    let csv = std::fs::read_to_string(d.path().join("clat_job0.csv")).unwrap();
    assert!(csv.lines().count() > 2, "{csv}");
}

/// A 3 s job with every averaged log, on an asynchronous engine (so the slat log has data).
fn logs_dir() -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    let r = flexio(
        &[
            "--name=gp",
            "--ioengine=posixaio",
            "--iodepth=4",
            "--filename=data",
            "--size=16M",
            "--rw=randread",
            "--runtime=3",
            "--time_based",
            "--write_lat_log=gp",
            "--write_bw_log=gp",
            "--write_iops_log=gp",
            "--log_avg_msec=100",
        ],
        d.path(),
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    std::fs::remove_file(d.path().join("data")).unwrap();
    d
}

fn gnuplot_present() -> bool {
    let ok = std::process::Command::new("gnuplot")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        if std::env::var("FLEXIO_REQUIRE_FIO").as_deref() == Ok("1") {
            panic!("gnuplot is required by fio's plotting scripts but not installed");
        }
        eprintln!("SKIP: gnuplot is not installed; fio's plotting scripts cannot run");
    }
    ok
}

#[test]
fn fio_generate_plots_draws_every_flexio_log() {
    let Some(gen) = script("fio_generate_plots") else {
        return;
    };
    if !gnuplot_present() {
        return;
    }
    let d = logs_dir();
    let out = std::process::Command::new("sh")
        .arg(&gen)
        .arg("flexio")
        .current_dir(d.path())
        .output()
        .unwrap();
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{text}");
    for kind in ["lat", "iops", "slat", "clat", "bw"] {
        let svg = std::fs::read_to_string(d.path().join(format!("flexio-{kind}.svg")))
            .unwrap_or_else(|e| panic!("flexio-{kind}.svg: {e}\n{text}"));
        // A drawn series: its key entry and a path with many points.
        assert!(svg.contains("Queue depth"), "{kind}: no series\n{text}");
        let longest = svg
            .split("<path")
            .map(|p| p.split("/>").next().unwrap_or("").matches(" L").count())
            .max()
            .unwrap_or(0);
        assert!(
            longest >= 10,
            "{kind}: no data line drawn ({longest} points)"
        );
    }
}

#[test]
fn fio2gnuplot_renders_flexio_bw_and_iops_logs() {
    let Some(f2g) = script("fio2gnuplot") else {
        return;
    };
    if !gnuplot_present() {
        return;
    }
    let d = logs_dir();
    for (flag, pattern) in [("-b", "gp_bw.1"), ("-i", "gp_iops.1")] {
        let outdir = d.path().join(format!("out{flag}"));
        let out = std::process::Command::new("python3")
            .arg(&f2g)
            .args([flag, "-g", "-d"])
            .arg(&outdir)
            .current_dir(d.path())
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout).into_owned()
            + &String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{text}");
        assert!(text.contains(&format!("|-> {pattern}.log")), "{text}");
        for png in [
            format!("{pattern}-2Draw.png"),
            format!("{pattern}-2Dtrend.png"),
            "result.average.png".to_string(),
        ] {
            let m = std::fs::metadata(outdir.join(&png))
                .unwrap_or_else(|e| panic!("{png}: {e}\n{text}"));
            assert!(m.len() > 1000, "{png} is empty\n{text}");
        }
    }
}
