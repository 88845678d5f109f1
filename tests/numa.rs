//! numa_cpu_nodes / numa_mem_policy: the job thread's CPUs and memory policy, seen by a
//! program the exec engine starts from it (a child inherits both), the same as under fio
//! 3.33; values fio refuses are refused with fio's words.

use crate::common;
use common::*;
use std::path::Path;

/// The first numa_maps policy and the allowed CPUs of a process the job starts.
fn observed(bin: &Path, dir: &Path, opts: &str) -> (i32, String, String) {
    let show = dir.join("show.sh");
    std::fs::write(
        &show,
        "#!/bin/sh\ngrep Cpus_allowed_list /proc/self/status\nhead -1 /proc/self/numa_maps | cut -d' ' -f2\n",
    )
    .unwrap();
    std::fs::set_permissions(&show, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let job = dir.join("n.fio");
    std::fs::write(
        &job,
        format!(
            "[n]\nioengine=exec\nprogram={}\nstd_redirect=0\nruntime=1\n{opts}\n",
            show.display()
        ),
    )
    .unwrap();
    let r = run_bounded(bin, &[job.to_str().unwrap()], dir, &[], 60);
    let seen: Vec<&str> = r
        .stdout
        .lines()
        .filter(|l| {
            l.starts_with("Cpus_allowed_list")
                || ["default", "interleave", "bind", "prefer", "local"]
                    .iter()
                    .any(|p| l.starts_with(p))
        })
        .collect();
    (r.code, seen.join(" | "), r.stderr)
}

fn online_nodes() -> String {
    std::fs::read_to_string("/sys/devices/system/node/online")
        .unwrap_or_else(|_| "0".into())
        .trim()
        .to_string()
}

#[test]
fn policies_and_cpus_as_fios() {
    if !Path::new("/sys/devices/system/node/node0").exists() {
        eprintln!("SKIP: this kernel has no NUMA nodes in sysfs");
        return;
    }
    let fio = fio_bin();
    let d = tempfile::tempdir().unwrap();
    for opts in [
        "numa_cpu_nodes=0",
        "numa_cpu_nodes=all",
        "numa_mem_policy=interleave:0",
        "numa_mem_policy=interleave",
        "numa_mem_policy=bind:0",
        "numa_mem_policy=bind:all",
        "numa_mem_policy=prefer:0",
        "numa_mem_policy=local",
        "numa_mem_policy=default",
        "numa_cpu_nodes=0\nnuma_mem_policy=bind:0",
    ] {
        let (code, seen, err) = observed(&flexio_bin(), d.path(), opts);
        assert_eq!(code, 0, "{opts}: {err}");
        assert!(seen.contains("Cpus_allowed_list"), "{opts}: {seen}");
        let want = match opts {
            o if o.contains("interleave") => "interleave:",
            o if o.contains("bind") => "bind:",
            o if o.contains("prefer") => "prefer:",
            o if o.contains("local") => "local",
            _ => "default",
        };
        assert!(seen.contains(want), "{opts}: {seen}");
        if let Some(f) = &fio {
            let (fcode, fseen, ferr) = observed(f, d.path(), opts);
            assert_eq!((code, &seen), (fcode, &fseen), "{opts}: fio says {ferr}");
        }
    }
}

#[test]
fn values_fio_refuses_are_refused_with_its_words() {
    let fio = fio_bin();
    let d = tempfile::tempdir().unwrap();
    // Beyond the machine's nodes: refused before anything runs (fio: by libnuma's parser).
    let beyond = format!(
        "{}",
        online_nodes()
            .rsplit(['-', ','])
            .next()
            .unwrap()
            .parse::<usize>()
            .unwrap()
            + 1
    );
    let cases: Vec<(String, Option<&str>)> = vec![
        (
            "numa_mem_policy=bogus".into(),
            Some("memory policy should be: default, prefer, bind, interleave, local"),
        ),
        (
            "numa_mem_policy=prefer".into(),
            Some("one node is needed for 'prefer'"),
        ),
        (
            "numa_mem_policy=prefer:0,1".into(),
            Some("one node only for 'prefer'"),
        ),
        (
            "numa_mem_policy=bind".into(),
            Some("a nodelist is needed for 'bind'"),
        ),
        (
            "numa_mem_policy=default:0".into(),
            Some("NO nodelist for 'local'"),
        ),
        (
            "numa_mem_policy=local:0".into(),
            Some("NO nodelist for 'local'"),
        ),
        (format!("numa_mem_policy=bind:{beyond}"), None),
        (format!("numa_cpu_nodes={beyond}"), None),
        ("numa_cpu_nodes=x".into(), None),
    ];
    for (opt, words) in &cases {
        let arg = format!("--{opt}");
        let args = ["--name=n", "--ioengine=null", "--size=1m", arg.as_str()];
        let r = run_in(&flexio_bin(), &args, d.path());
        assert_ne!(r.code, 0, "{opt}: flexio ran it");
        assert!(
            r.stdout.is_empty() || !r.stdout.contains("IOPS="),
            "{opt}: ran"
        );
        if let Some(w) = words {
            assert!(r.stderr.contains(w), "{opt}: {}", r.stderr);
        }
        if let Some(f) = &fio {
            let rf = run_in(f, &args, d.path());
            assert!(!rf.stdout.contains("IOPS="), "{opt}: fio ran it");
            if let Some(w) = words {
                assert!(
                    rf.stderr.contains(w) || rf.stdout.contains(w),
                    "{opt}: fio says {}",
                    rf.stderr
                );
            }
        }
    }
    // prefer with a node the kernel refuses: fio warns and runs the job; so does flexio.
    let arg = format!("--numa_mem_policy=prefer:{beyond}");
    let args = ["--name=n", "--ioengine=null", "--size=1m", arg.as_str()];
    let r = run_in(&flexio_bin(), &args, d.path());
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stderr.contains("set_mempolicy: Invalid argument"),
        "{}",
        r.stderr
    );
    if let Some(f) = &fio {
        let rf = run_in(f, &args, d.path());
        assert_eq!(rf.code, 0);
        assert!(
            rf.stderr.contains("set_mempolicy: Invalid argument")
                || rf.stdout.contains("set_mempolicy")
        );
    }
}
