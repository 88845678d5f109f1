//! The store's behaviour, on SQLite files and, where `FLEXIO_TEST_POSTGRES` names a server
//! (`.ci/run` starts Debian's PostgreSQL and sets it), on PostgreSQL: the same checks on
//! both.

use super::*;

/// A small flexio-like result with one job and one direction, with json+ bins.
pub(crate) fn result(job: &str, iops: f64, p99: u64, kernel: &str) -> String {
    serde_json::json!({
        "fio version": "fio-3.33",
        "time": "Sat Nov 28 01:00:00 2026",
        "global options": {},
        "jobs": [{
            "jobname": job, "groupid": 0, "error": 0, "job options": {"rw": "read"},
            "read": {
                "io_bytes": 4096 * 100, "bw_bytes": (iops * 4096.0) as u64, "iops": iops,
                "runtime": 1000, "total_ios": 100,
                "clat_ns": {"min": 100, "max": p99 * 2, "mean": 500.0, "stddev": 10.0, "N": 100,
                    "percentile": {"50.000000": 400, "99.000000": p99, "99.900000": p99 * 2},
                    "bins": {"400": 90, "1000": 10}},
                "lat_ns": {"min": 100, "max": p99 * 2, "mean": 600.0, "stddev": 10.0, "N": 0},
                "slat_ns": {"min": 0, "max": 0, "mean": 0.0, "stddev": 0.0, "N": 0}
            },
            "write": {"io_bytes": 0, "bw_bytes": 0, "iops": 0.0, "runtime": 0, "total_ios": 0,
                "clat_ns": {"N": 0}, "lat_ns": {"N": 0}, "slat_ns": {"N": 0}},
            "job_runtime": 1000, "usr_cpu": 1.0, "sys_cpu": 1.0
        }],
        "flexio": {"version": "flexio-0.1.0", "provenance": {"host": {"hostname": "h1", "kernel": kernel}}}
    })
    .to_string()
}

fn run(source: &str, text: String) -> NewRun {
    NewRun {
        source: source.into(),
        result: text,
    }
}

/// The stores to test: a new SQLite file, and PostgreSQL where a server was given (a fresh
/// schema per test so tests do not see each other's runs).
fn stores(name: &str) -> Vec<(Store, String, Option<tempfile::TempDir>)> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("sub").join("results.db");
    let spec = path.display().to_string();
    let mut out = vec![(Store::open(Some(&spec)).unwrap(), spec, Some(dir))];
    match std::env::var("FLEXIO_TEST_POSTGRES") {
        Ok(url) if !url.is_empty() => {
            let schema = format!("t_{name}_{}", std::process::id());
            let mut c = postgres::Client::connect(&url, postgres::NoTls).unwrap();
            c.batch_execute(&format!(
                "DROP SCHEMA IF EXISTS {schema} CASCADE; CREATE SCHEMA {schema}"
            ))
            .unwrap();
            let sep = if url.contains('?') { '&' } else { '?' };
            let u = format!("{url}{sep}options=-csearch_path%3D{schema}");
            out.push((Store::open(Some(&u)).unwrap(), u, None));
        }
        _ => {
            if std::env::var("FLEXIO_REQUIRE_POSTGRES").as_deref() == Ok("1") {
                panic!("FLEXIO_REQUIRE_POSTGRES=1 but FLEXIO_TEST_POSTGRES names no server");
            }
            eprintln!("skipped on PostgreSQL: FLEXIO_TEST_POSTGRES is not set");
        }
    }
    out
}

#[test]
fn saves_lists_and_reads_back_on_every_backend() {
    for (mut s, _, _keep) in stores("save") {
        assert_eq!(
            s.schema_version().unwrap(),
            schema::VERSION,
            "{}",
            s.location()
        );
        let ids = s
            .save(
                "run",
                Some("base"),
                &[run("a.fio", result("j", 1000.0, 900, "6.1.0"))],
            )
            .unwrap();
        assert_eq!(ids.len(), 1);
        let ids2 = s
            .save(
                "check",
                Some("base"),
                &[
                    run("a.fio", result("j", 1100.0, 800, "6.6.0")),
                    run("a.fio", result("j", 1200.0, 700, "6.6.0")),
                ],
            )
            .unwrap();
        assert_eq!(ids2.len(), 2);
        s.save(
            "import",
            None,
            &[run("x.json", result("k", 5.0, 1, "6.6.0"))],
        )
        .unwrap();
        let all = s.list(&Filter::default()).unwrap();
        assert_eq!(all.len(), 4, "{}", s.location());
        assert_eq!(all[0].kernel.as_deref(), Some("6.1.0"));
        assert_eq!(all[0].host.as_deref(), Some("h1"));
        assert_eq!(all[0].producer, "flexio-0.1.0");
        assert_eq!(all[1].batch, all[2].batch);
        assert_ne!(all[0].batch, all[1].batch);
        let base = s
            .list(&Filter {
                label: Some("base".into()),
                ..Default::default()
            })
            .unwrap();
        assert_eq!(base.len(), 3);
        let k = s
            .list(&Filter {
                job: Some("k".into()),
                ..Default::default()
            })
            .unwrap();
        assert_eq!(k.len(), 1);
        assert_eq!(k[0].label, None);
        // The newest batch of a label is the check's two runs.
        let latest = s.latest_batch("base").unwrap();
        assert_eq!(latest.len(), 2);
        assert!(latest[0].result.contains("1100"));
        let iops = s
            .metric(
                &Filter {
                    label: Some("base".into()),
                    ..Default::default()
                },
                "IOPS",
            )
            .unwrap();
        let v: Vec<f64> = iops.iter().map(|m| m.value).collect();
        assert_eq!(v, vec![1000.0, 1100.0, 1200.0]);
        let p99 = s.metric(&Filter::default(), "p99").unwrap();
        assert_eq!(p99[0].value, 900.0);
        assert_eq!(p99[0].ddir, "read");
        let h = s.histograms(ids[0]).unwrap();
        assert_eq!(h.len(), 1);
        assert_eq!(h[0].3, "[[400,90],[1000,10]]");
        let got = s.get(ids[0]).unwrap();
        assert_eq!(got.info.source, "a.fio");
        let e = s.get(9_999_999).unwrap_err();
        assert_eq!(e.kind, ErrorKind::NotFound);
        let e = s.latest_batch("nope").unwrap_err();
        assert_eq!(e.kind, ErrorKind::NotFound);
        // Not a result: refused before anything is written.
        let e = s
            .save("import", None, &[run("bad.json", "{\"x\": 1}".into())])
            .unwrap_err();
        assert!(e.message.contains("bad.json"), "{e}");
        assert_eq!(s.list(&Filter::default()).unwrap().len(), 4);
    }
}

#[test]
fn concurrent_writers_lose_nothing() {
    for (s, loc, keep) in stores("conc") {
        drop(s);
        let threads: Vec<_> = (0..4)
            .map(|t| {
                let loc = loc.clone();
                std::thread::spawn(move || {
                    let mut s = Store::open(Some(&loc)).unwrap();
                    for i in 0..10 {
                        s.save(
                            "run",
                            Some(&format!("t{t}")),
                            &[run("c.fio", result("j", (t * 100 + i) as f64, 10, "6"))],
                        )
                        .unwrap();
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        let mut s = Store::open(Some(&loc)).unwrap();
        let all = s.list(&Filter::default()).unwrap();
        assert_eq!(all.len(), 40, "{loc}");
        let m = s.metric(&Filter::default(), "IOPS").unwrap();
        assert_eq!(m.len(), 40);
        drop(keep);
    }
}

#[test]
fn migrates_an_older_schema_and_refuses_a_newer_one() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("r.db");
    let loc = p.display().to_string();
    {
        let (mut c, loc) = Conn::open(Some(&loc)).unwrap();
        schema::migrate_to(&mut c, &loc, 1).unwrap();
        assert_eq!(schema::version(&mut c, &loc).unwrap(), 1);
    }
    let mut s = Store::open(Some(&loc)).unwrap();
    assert_eq!(s.schema_version().unwrap(), schema::VERSION);
    s.save("run", None, &[run("a", result("j", 1.0, 1, "6"))])
        .unwrap();
    drop(s);
    {
        let c = rusqlite::Connection::open(&p).unwrap();
        c.execute("INSERT INTO flexio_schema (version) VALUES (99)", [])
            .unwrap();
    }
    let e = Store::open(Some(&loc)).err().unwrap();
    assert_eq!(e.kind, ErrorKind::Newer);
    assert!(e.message.contains("version 99"), "{e}");
}

#[test]
fn a_file_that_is_not_a_database_is_named_corrupt() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("r.db");
    std::fs::write(&p, vec![b'x'; 8192]).unwrap();
    let e = Store::open(Some(p.to_str().unwrap())).err().unwrap();
    assert_eq!(e.kind, ErrorKind::Corrupt, "{e}");
    assert!(e.message.contains("not a flexio results database"), "{e}");
}

#[test]
fn a_locked_database_is_named_locked() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("r.db");
    let loc = p.display().to_string();
    drop(Store::open(Some(&loc)).unwrap());
    let holder = rusqlite::Connection::open(&p).unwrap();
    holder.execute_batch("BEGIN EXCLUSIVE").unwrap();
    let mut s = Store::open(Some(&loc)).unwrap();
    s.set_busy_timeout(std::time::Duration::from_millis(100))
        .unwrap();
    let e = s
        .save("run", None, &[run("a", result("j", 1.0, 1, "6"))])
        .unwrap_err();
    assert_eq!(e.kind, ErrorKind::Locked, "{e}");
    holder.execute_batch("COMMIT").unwrap();
    s.save("run", None, &[run("a", result("j", 1.0, 1, "6"))])
        .unwrap();
}

#[test]
fn an_unreachable_server_is_a_clear_error() {
    let e = Store::open(Some("postgres://flexio:secret@127.0.0.1:1/none"))
        .err()
        .unwrap();
    assert_eq!(e.kind, ErrorKind::Open, "{e}");
    assert!(
        e.message.contains("postgres://flexio@127.0.0.1:1/none"),
        "{e}"
    );
    assert!(!e.message.contains("secret"), "{e}");
}
