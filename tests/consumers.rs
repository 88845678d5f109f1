//! fio's own helper scripts read flexio's output.

mod common;
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
