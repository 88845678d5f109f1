//! The directory-operation engines (fio 3.37's dircreate, dirstat, dirdelete): one measured
//! mkdir / stat / rmdir per directory, counted like the file-operation engines.

mod common;
use common::*;

fn json_ok(args: &[&str], dir: &std::path::Path) -> serde_json::Value {
    let r = flexio(args, dir);
    assert_eq!(r.code, 0, "{args:?}\n{}", r.stderr);
    json_of(&r.stdout)
}

#[test]
fn create_stat_delete_a_tree_of_directories() {
    let d = tempfile::tempdir().unwrap();
    let dir = format!("--directory={}", d.path().display());
    let job = |engine: &str| {
        vec![
            "--name=dirs".to_string(),
            format!("--ioengine={engine}"),
            dir.clone(),
            "--nrfiles=50".to_string(),
            "--output-format=json".to_string(),
        ]
    };
    let run = |engine: &str| {
        let a = job(engine);
        json_ok(&a.iter().map(String::as_str).collect::<Vec<_>>(), d.path())
    };
    let count = || {
        std::fs::read_dir(d.path())
            .unwrap()
            .filter(|e| e.as_ref().unwrap().path().is_dir())
            .count()
    };
    let j = run("dircreate");
    assert_eq!(count(), 50);
    let r = &j["jobs"][0]["read"];
    assert_eq!(r["clat_ns"]["N"], 50, "one measured mkdir per directory");
    assert_eq!(r["io_bytes"], 50 * 4096, "each counts as one block");
    // A second dircreate finds them there: EEXIST, the job fails.
    let a = job("dircreate");
    let again = flexio(&a.iter().map(String::as_str).collect::<Vec<_>>(), d.path());
    assert_eq!(again.code, 1, "{}", again.stderr);
    assert!(again.stderr.contains("File exists"), "{}", again.stderr);
    for stat in ["stat", "lstat", "statx"] {
        let mut a = job("dirstat");
        a.push(format!("--stat_type={stat}"));
        let j = json_ok(&a.iter().map(String::as_str).collect::<Vec<_>>(), d.path());
        assert_eq!(j["jobs"][0]["read"]["clat_ns"]["N"], 50, "{stat}");
    }
    // --readonly allows stat, refuses what changes names.
    let mut a = job("dirdelete");
    a.push("--readonly".into());
    let r = flexio(&a.iter().map(String::as_str).collect::<Vec<_>>(), d.path());
    assert_eq!(r.code, 1);
    assert!(r.stderr.contains("--readonly"), "{}", r.stderr);
    let j = run("dirdelete");
    assert_eq!(j["jobs"][0]["read"]["clat_ns"]["N"], 50);
    assert_eq!(count(), 0, "every directory removed");
    // dirstat creates what is missing before it measures (as fio's engine setup does), and
    // unlink=1 removes the directories at the end.
    let mut a = job("dirstat");
    a.push("--unlink=1".into());
    let j = json_ok(&a.iter().map(String::as_str).collect::<Vec<_>>(), d.path());
    assert_eq!(j["jobs"][0]["read"]["clat_ns"]["N"], 50);
    assert_eq!(count(), 0);
}

#[test]
fn dir_engines_are_listed_and_take_stat_type() {
    let d = tempfile::tempdir().unwrap();
    let r = flexio(&["--enghelp"], d.path());
    for e in ["dircreate", "dirstat", "dirdelete"] {
        assert!(r.stdout.contains(&format!("\t{e}\n")), "{}", r.stdout);
    }
    let r = flexio(&["--enghelp=dirstat"], d.path());
    assert!(r.stdout.contains("stat_type"), "{}", r.stdout);
    let r = flexio(
        &["--name=x", "--ioengine=dircreate", "--stat_type=lstat"],
        d.path(),
    );
    assert_eq!(r.code, 1);
    assert!(r.stderr.contains("belongs to ioengine"), "{}", r.stderr);
}
