//! flexio's command line and job files, black box.

mod common;
use common::*;
use std::path::Path;

fn tmp() -> tempfile::TempDir {
    tempfile::tempdir().unwrap()
}

fn write(dir: &Path, name: &str, text: &str) -> String {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p.display().to_string()
}

#[test]
fn job_file_error_names_file_line_text_and_suggestion() {
    let d = tmp();
    let jf = write(
        d.path(),
        "bad.fio",
        "[global]\nsize=1M\n\n[job]\nioengin=psync\n",
    );
    let r = flexio(&[&jf], d.path());
    assert_eq!(r.code, 1);
    assert!(
        r.stderr.contains(
            "bad.fio:5: 'ioengin=psync': unknown option 'ioengin'; did you mean 'ioengine'?"
        ),
        "{}",
        r.stderr
    );
    assert!(!r.stderr.contains("panicked"));
}

/// Every bad line of the section that fails is reported, each with its file:line, as fio
/// reports every bad option of the job it drops; the load stops there (a later bad section
/// is not reached, as in fio).
#[test]
fn every_error_of_the_failing_section_is_reported() {
    let d = tmp();
    let f = write(
        d.path(),
        "many.fio",
        "[global]\nioengine=null\nsize=1m\n\n[a]\nrw=read\nbogus=1\nfoo=2\niodepth=abc\n\n[b]\nrw=wirte\n",
    );
    let r = flexio(&["--parse-only", &f], d.path());
    assert_eq!(r.code, 1);
    let err = r.stderr.replace(&format!("{}/", d.path().display()), "");
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(
        lines,
        [
            "flexio: many.fio:7: 'bogus=1': unknown option 'bogus'; did you mean 'bs'?",
            "flexio: many.fio:8: 'foo=2': unknown option 'foo'; did you mean 'fdp'?",
            "flexio: many.fio:9: 'iodepth=abc': bad value for 'iodepth': 'abc' is not a number",
        ],
        "{}",
        r.stderr
    );
    // A run stops the same way, before anything is done.
    let r = flexio(&[&f], d.path());
    assert_eq!(r.code, 1);
    assert_eq!(r.stderr.lines().count(), 3, "{}", r.stderr);
}

#[test]
fn bad_values_list_what_is_valid() {
    let d = tmp();
    let r = flexio(&["--name=x", "--rw=RandRead", "--size=1M"], d.path());
    assert_eq!(r.code, 1);
    assert!(
        r.stderr
            .contains("command line argument 2: '--rw=RandRead'"),
        "{}",
        r.stderr
    );
    assert!(
        r.stderr.contains("valid values: read, write"),
        "{}",
        r.stderr
    );
    let r = flexio(&["--name=x", "--size=1.5M"], d.path());
    assert_eq!(r.code, 1);
    assert!(r.stderr.contains("fractional sizes"), "{}", r.stderr);
    // fio reads runtime=1.7 as 1 s; flexio names the cut instead of "unknown suffix '.7'".
    let r = flexio(&["--name=x", "--runtime=1.7"], d.path());
    assert_eq!(r.code, 1);
    assert!(
        r.stderr.contains("fractional times are not allowed")
            && r.stderr.contains("integer part, 1)"),
        "{}",
        r.stderr
    );
    let r = flexio(&["--name=x", "--direct=yes"], d.path());
    assert!(r.stderr.contains("not a boolean"), "{}", r.stderr);
}

#[test]
fn unknown_argv_option_gets_a_suggestion() {
    let r = flexio(&["--name=x", "--runtm=3"], tmp().path());
    assert_eq!(r.code, 1);
    assert!(
        r.stderr
            .contains("unrecognized option '--runtm'; did you mean 'runtime'?"),
        "{}",
        r.stderr
    );
}

#[test]
fn unimplemented_options_and_engines_are_rejected_not_ignored() {
    let d = tmp();
    // Any of fio's options flexio does not implement (the list shrinks as they come).
    if let Some(n) = flexio_job::table::UNSUPPORTED.first() {
        let r = flexio(&["--name=x", "--size=1M", &format!("--{n}=0")], d.path());
        assert_eq!(r.code, 1);
        assert!(r.stderr.contains("not supported by flexio"), "{}", r.stderr);
        let jf = write(d.path(), "j.fio", &format!("[x]\nsize=1M\n{n}=1\n"));
        let r = flexio(&[&jf], d.path());
        assert_eq!(r.code, 1);
        assert!(
            r.stderr.contains(&format!(
                "j.fio:3: '{n}=1': option '{n}' is a fio option that is not supported by flexio"
            )),
            "{}",
            r.stderr
        );
    }
    let r = flexio(&["--name=x", "--size=1M", "--ioengine=rdma"], d.path());
    assert_eq!(r.code, 1);
    assert!(
        r.stderr
            .contains("ioengine 'rdma' is not supported by flexio"),
        "{}",
        r.stderr
    );
    let r = flexio(&["--name=x", "--size=1M", "--ioengine=psycn"], d.path());
    assert!(r.stderr.contains("did you mean 'psync'?"), "{}", r.stderr);
    // zonemode=zbd is implemented: without a zone size a regular file is refused with
    // fio's message (tests/zones.rs has the rest).
    let r = flexio(&["--name=x", "--size=1M", "--zonemode=zbd"], d.path());
    assert_eq!(r.code, 1);
    assert!(
        r.stderr.contains("Specifying the zone size is mandatory"),
        "{}",
        r.stderr
    );
}

#[test]
fn engine_private_option_with_the_wrong_engine() {
    let r = flexio(&["--name=x", "--size=1M", "--hipri"], tmp().path());
    assert_eq!(r.code, 1);
    assert!(
        r.stderr
            .contains("option 'hipri' belongs to ioengine pvsync2"),
        "{}",
        r.stderr
    );
}

#[test]
fn version_help_cmdhelp_enghelp() {
    let d = tmp();
    let r = flexio(&["--version"], d.path());
    assert_eq!(r.code, 0);
    assert!(r.stdout.starts_with("flexio-"), "{}", r.stdout);
    let r = flexio(&["--cmdhelp=bs"], d.path());
    assert!(
        r.stdout
            .contains("                  bs: Block size unit\n               alias: blocksize\n"),
        "{}",
        r.stdout
    );
    let r = flexio(&["--cmdhelp"], d.path());
    assert!(r.stdout.lines().count() > 80, "{}", r.stdout);
    let r = flexio(&["--enghelp"], d.path());
    for e in ["psync", "pvsync2", "mmap", "filecreate", "falloc"] {
        assert!(r.stdout.contains(&format!("\t{e}\n")), "{}", r.stdout);
    }
    let r = flexio(&["--enghelp=pvsync2"], d.path());
    assert!(r.stdout.contains("hipri"), "{}", r.stdout);
    let r = flexio(&["--help"], d.path());
    assert!(r.stdout.contains("--output-format"), "{}", r.stdout);
}

#[test]
fn showcmd_and_parse_only() {
    let d = tmp();
    let jf = write(
        d.path(),
        "j.fio",
        "[global]\nioengine=null\nsize=1m\n[a]\nrw=randread\ntime_based\n[b]\nbs=8k\n",
    );
    let r = flexio(&["--showcmd", &jf], d.path());
    assert_eq!(r.code, 0);
    assert_eq!(
        r.stdout,
        "flexio --ioengine=null --size=1m --name=a --rw=randread --time_based --name=b --bs=8k \n"
    );
    let r = flexio(&["--parse-only", &jf], d.path());
    assert_eq!(r.code, 0);
    assert_eq!(r.stdout, "");
}

#[test]
fn substitution_and_includes() {
    let d = tmp();
    write(d.path(), "inc.fio", "bs=${FLEXIO_TEST_BS}\n");
    let jf = write(
        d.path(),
        "j.fio",
        "[a]\nioengine=null\ninclude inc.fio\nsize=$pagesize\nnumjobs=$ncpus/$ncpus\n",
    );
    let r = run_in_env(
        &flexio_bin(),
        &["--showcmd", &jf],
        d.path(),
        &[("FLEXIO_TEST_BS", "8k")],
    );
    let s = r.stdout;
    let page = rustix_page_size();
    assert_eq!(
        s,
        format!("flexio --name=a --ioengine=null --bs=8k --size={page} --numjobs=1 \n")
    );
}

fn rustix_page_size() -> u64 {
    // The page size as the kernel reports it through getconf.
    let out = std::process::Command::new("getconf")
        .arg("PAGESIZE")
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout).trim().parse().unwrap()
}

#[test]
fn json_on_stdout_is_pure_json_notes_go_to_stderr() {
    let d = tmp();
    let r = flexio(
        &[
            "--name=x",
            "--filename=f",
            "--size=1M",
            "--iodepth=4",
            "--output-format=json",
        ],
        d.path(),
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let v: serde_json::Value =
        serde_json::from_str(&r.stdout).expect("stdout is one JSON document");
    assert_eq!(v["jobs"][0]["jobname"], "x");
    assert!(
        r.stderr.contains("queue depth will be capped at 1"),
        "{}",
        r.stderr
    );
    assert!(!r.stdout.contains("Laying out"));
}

#[test]
fn normal_output_keeps_notes_on_stdout_like_fio() {
    let d = tmp();
    let r = flexio(
        &["--name=x", "--filename=f", "--size=1M", "--iodepth=4"],
        d.path(),
    );
    assert!(
        r.stdout
            .contains("note: both iodepth >= 1 and synchronous I/O engine are selected"),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout.contains("x: Laying out IO file (1 file / 1MiB)"),
        "{}",
        r.stdout
    );
}

#[test]
fn output_file_is_written_atomically() {
    let d = tmp();
    let r = flexio(
        &[
            "--name=x",
            "--ioengine=null",
            "--size=1M",
            "--output-format=json",
            "--output=res.json",
        ],
        d.path(),
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.stdout, "");
    let text = std::fs::read_to_string(d.path().join("res.json")).unwrap();
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["jobs"][0]["read"]["io_bytes"], 1048576);
    // Nothing but the result is left in the directory (no temporary files).
    let names: Vec<String> = std::fs::read_dir(d.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, vec!["res.json".to_string()]);
}

/// With `--output=F`, fio (its jobs as threads, as flexio's always are) writes its notes
/// into F, and its errors to stderr and into F, in the order they happen; flexio does the
/// same. Checked against `fio --thread` where fio is installed.
#[test]
fn output_file_gets_the_notes_and_errors_as_fio_s_does() {
    let norm = regex::Regex::new(r"pid=\d+|file:[^,]+|offset=\d+").unwrap();
    let lines = |t: &str| -> Vec<String> {
        t.lines()
            .filter(|l| l.starts_with("note:") || l.starts_with("fio:"))
            .map(|l| norm.replace_all(l, "_").into_owned())
            .collect()
    };
    let args = [
        "--name=j",
        "--filename=/dev/full",
        "--rw=randwrite",
        "--size=64k",
        "--iodepth=4",
        "--bs=8k",
        "--blockalign=4k",
        "--output=o.txt",
    ];
    let mut seen = Vec::new();
    let fio = fio_bin();
    for bin in fio.iter().chain([&flexio_bin()]) {
        let d = tmp();
        let mut a = args.to_vec();
        if Some(bin) == fio.as_ref() {
            a.insert(0, "--thread");
        }
        let r = run_in_env(bin, &a, d.path(), ORACLE_COMPAT);
        assert_eq!(r.code, 1, "{}{}", r.stdout, r.stderr);
        assert_eq!(r.stdout, "");
        let file = std::fs::read_to_string(d.path().join("o.txt")).unwrap();
        seen.push((lines(&file), lines(&r.stderr)));
    }
    let (file, stderr) = seen.last().unwrap();
    assert_eq!(
        file,
        &[
            "fio: Any use of blockalign= turns off randommap",
            "note: both iodepth >= 1 and synchronous I/O engine are selected, queue depth will be capped at 1",
            "fio: io_u error on file /dev/full: No space left on device: write _, buflen=8192",
            "fio: _, err=28/_, func=io_u error, error=No space left on device",
        ]
    );
    assert_eq!(
        stderr,
        &[
            "fio: Any use of blockalign= turns off randommap",
            "fio: io_u error on file /dev/full: No space left on device: write _, buflen=8192",
        ]
    );
    if seen.len() == 2 {
        assert_eq!(seen[1], seen[0], "flexio, then fio --thread");
    }
}

#[test]
fn exit_status_counts_failed_jobs() {
    let d = tmp();
    // Two jobs fail (O_DIRECT with a 1000-byte block), one succeeds.
    let r = flexio(
        &[
            "--size=1M",
            "--direct=1",
            "--rw=write",
            "--name=bad1",
            "--filename=b1",
            "--bs=1000",
            "--name=good",
            "--filename=g",
            "--name=bad2",
            "--filename=b2",
            "--bs=1000",
        ],
        d.path(),
    );
    if r.stdout.contains("err= 0") && !r.stdout.contains("err=22") {
        eprintln!("SKIP: this file system accepts unaligned O_DIRECT");
        return;
    }
    assert_eq!(r.code, 2, "{}\n{}", r.stdout, r.stderr);
}

#[test]
fn missing_size_is_a_clear_error() {
    let r = flexio(&["--name=x", "--filename=nothere"], tmp().path());
    assert_eq!(r.code, 1);
    assert!(
        r.stderr.contains("you need to specify size="),
        "{}",
        r.stderr
    );
}

#[test]
fn readonly_refuses_writing_jobs() {
    let d = tmp();
    let r = flexio(
        &[
            "--readonly",
            "--name=x",
            "--filename=f",
            "--size=1M",
            "--rw=write",
        ],
        d.path(),
    );
    assert_eq!(r.code, 1);
    assert!(r.stderr.contains("--readonly"), "{}", r.stderr);
    assert!(!d.path().join("f").exists());
}

#[test]
fn generated_file_names_and_unlink() {
    let d = tmp();
    let r = flexio(
        &[
            "--name=nj",
            "--size=64k",
            "--numjobs=2",
            "--nrfiles=2",
            "--rw=write",
        ],
        d.path(),
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    for n in ["nj.0.0", "nj.0.1", "nj.1.0", "nj.1.1"] {
        assert!(d.path().join(n).exists(), "{n} missing");
    }
    let d = tmp();
    let r = flexio(
        &["--name=u", "--size=64k", "--unlink=1", "--rw=write"],
        d.path(),
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(!d.path().join("u.0.0").exists());
}

#[test]
fn later_job_files_start_a_new_group_with_fresh_globals() {
    let d = tmp();
    let a = write(d.path(), "a.fio", "[a]\nioengine=null\nsize=1m\n");
    let b = write(d.path(), "b.fio", "[b]\nioengine=null\nsize=1m\n");
    let r = flexio(&["--bs=8k", "--output-format=json", &a, &b], d.path());
    assert_eq!(r.code, 0, "{}", r.stderr);
    let v = json_of(&r.stdout);
    assert_eq!(v["jobs"][0]["groupid"], 0);
    assert_eq!(v["jobs"][1]["groupid"], 1);
    assert_eq!(v["jobs"][0]["read"]["total_ios"], 128);
    assert_eq!(v["jobs"][1]["read"]["total_ios"], 256);
}

#[test]
fn random_map_covers_each_block_once() {
    let d = tmp();
    let r = flexio(
        &[
            "--name=r",
            "--ioengine=null",
            "--size=4M",
            "--rw=randread",
            "--output-format=json",
        ],
        d.path(),
    );
    let v = json_of(&r.stdout);
    assert_eq!(v["jobs"][0]["read"]["total_ios"], 1024);
    assert_eq!(v["jobs"][0]["read"]["io_bytes"], 4 << 20);
}

#[test]
fn mixed_workload_respects_rwmixread() {
    let d = tmp();
    let r = flexio(
        &[
            "--name=m",
            "--ioengine=null",
            "--size=64M",
            "--rw=randrw",
            "--rwmixread=70",
            "--norandommap",
            "--output-format=json",
        ],
        d.path(),
    );
    let v = json_of(&r.stdout);
    let rd = v["jobs"][0]["read"]["total_ios"].as_f64().unwrap();
    let wr = v["jobs"][0]["write"]["total_ios"].as_f64().unwrap();
    let share = rd / (rd + wr);
    assert!((share - 0.7).abs() < 0.02, "read share {share}");
}

#[test]
fn sigint_stops_prints_report_and_exits_128() {
    let d = tmp();
    let child = spawn_flexio(
        &[
            "--name=s",
            "--ioengine=null",
            "--size=1G",
            "--time_based",
            "--runtime=60",
            "--output-format=json",
        ],
        d.path(),
        &[],
    );
    std::thread::sleep(std::time::Duration::from_millis(1500));
    send_signal(child.id(), "INT");
    let t0 = std::time::Instant::now();
    let out = child.wait_with_output().unwrap();
    assert!(t0.elapsed().as_secs() < 10, "flexio did not stop promptly");
    assert_eq!(out.status.code(), Some(128));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let v: serde_json::Value = serde_json::from_str(&stdout).expect("valid JSON after SIGINT");
    assert!(v["jobs"][0]["read"]["total_ios"].as_u64().unwrap() > 0);
    assert!(String::from_utf8_lossy(&out.stderr).contains("terminating on signal 2"));
}

#[test]
fn no_panic_on_hostile_inputs() {
    let d = tmp();
    let cases: Vec<Vec<String>> = vec![
        vec!["--name=x".into(), "--size=99999999999999999999999".into()],
        vec!["--name=x".into(), "--bs=0".into(), "--size=1M".into()],
        vec!["--name=x".into(), "--size=1M".into(), "--numjobs=0".into()],
        vec!["--name=x".into(), "--size=1M".into(), "--bsrange=8k".into()],
        vec![
            "--name=x".into(),
            "--size=1M".into(),
            "--bssplit=4k/200".into(),
        ],
        vec![
            "--name=x".into(),
            "--size=1M".into(),
            "--percentile_list=101".into(),
        ],
        vec![
            "--name=x".into(),
            "--size=1M".into(),
            "--offset=101%".into(),
            "--ioengine=null".into(),
        ],
        vec!["--name=".into()],
        vec!["--".into(), "nonexistent.fio".into()],
        vec![
            "--name=x".into(),
            "--size=1M".into(),
            "--filename=/proc".into(),
        ],
    ];
    for c in cases {
        let args: Vec<&str> = c.iter().map(String::as_str).collect();
        let r = flexio(&args, d.path());
        assert!(!r.stderr.contains("panicked"), "{c:?}: {}", r.stderr);
        assert_ne!(r.code, 0, "{c:?} should fail: {}", r.stdout);
        assert!(r.stderr.starts_with("flexio: "), "{c:?}: {}", r.stderr);
    }
    let garbage = write(d.path(), "g.fio", "\u{1}\u{2}[[[\nbs==\n");
    let r = flexio(&[&garbage], d.path());
    assert_eq!(r.code, 1);
    assert!(!r.stderr.contains("panicked"));
}

#[test]
fn file_append_writes_after_the_end() {
    let d = tmp();
    std::fs::write(d.path().join("f"), vec![7u8; 1 << 20]).unwrap();
    let r = flexio(
        &[
            "--name=a",
            "--filename=f",
            "--rw=write",
            "--size=1M",
            "--file_append=1",
        ],
        d.path(),
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(
        std::fs::metadata(d.path().join("f")).unwrap().len(),
        2 << 20
    );
}

#[test]
fn bs_is_seq_rand_uses_write_size_for_random_io() {
    let d = tmp();
    // fio 3.33's count (the offsets depend on the seeds of the compatibility level).
    let r = common::flexio_oracle(
        &[
            "--name=b",
            "--ioengine=null",
            "--size=1M",
            "--rw=randread",
            "--bs=8k,16k",
            "--bs_is_seq_rand=1",
            "--output-format=json",
        ],
        d.path(),
    );
    let v = json_of(&r.stdout);
    // Random I/O uses the write size (16k). fio 3.33 issues 70 I/Os, not 64: its random map
    // is kept in units of the read size (8k), so 16k blocks overlap where map entries were
    // still free. flexio does the same.
    assert_eq!(v["jobs"][0]["read"]["total_ios"], 70, "{}", r.stdout);
    // Blocks are cut to the free run of the map (fio's mark_random_map): 1 MiB in all.
    assert_eq!(v["jobs"][0]["read"]["io_bytes"], 1048576, "{}", r.stdout);
}

#[test]
fn exec_prerun_and_postrun_run_around_the_io() {
    // The prerun command sees the laid-out file before any I/O and the postrun command
    // after it; their output lands in <job>.prerun.txt / <job>.postrun.txt.
    let d = tmp();
    let r = flexio(
        &[
            "--name=ra",
            "--rw=read",
            "--bs=64k",
            "--size=1m",
            "--filename=f",
            "--exec_prerun=stat -c %s f",
            "--exec_postrun=echo after",
            "--output-format=json",
        ],
        d.path(),
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let v: serde_json::Value = serde_json::from_str(&r.stdout).expect("JSON stays clean");
    assert_eq!(v["jobs"][0]["read"]["io_bytes"], 1 << 20);
    assert!(r
        .stderr
        .contains("ra : Saving output of prerun in ra.prerun.txt"));
    let pre = std::fs::read_to_string(d.path().join("ra.prerun.txt")).unwrap();
    assert_eq!(pre.trim(), "1048576");
    let post = std::fs::read_to_string(d.path().join("ra.postrun.txt")).unwrap();
    assert_eq!(post, "after\n");
    // A failing prerun (fio: the job does no I/O) is checked against fio in
    // tests/job_control.rs.
}

#[test]
fn compat_switch_and_environment() {
    let d = tempfile::tempdir().unwrap();
    let job = ["--name=a", "--ioengine=null", "--size=1m", "--parse-only"];
    let with = |extra: &[&str], env: &[(&str, &str)]| {
        let mut a: Vec<&str> = extra.to_vec();
        a.extend_from_slice(&job);
        common::run_in_env(&common::flexio_bin(), &a, d.path(), env)
    };
    assert_eq!(with(&["--compat=3.33"], &[]).code, 0);
    assert_eq!(with(&["--compat", "latest"], &[]).code, 0);
    assert_eq!(with(&[], &[("FLEXIO_COMPAT", "3.33")]).code, 0);
    let r = with(&["--compat=3.34"], &[]);
    assert_eq!(r.code, 1);
    assert!(
        r.stderr.contains("unknown compatibility level '3.34'"),
        "{}",
        r.stderr
    );
    let r = with(&[], &[("FLEXIO_COMPAT", "old")]);
    assert_eq!(r.code, 1);
    assert!(r.stderr.contains("FLEXIO_COMPAT=old"), "{}", r.stderr);
    // The switch wins over a bad environment value.
    assert_eq!(
        with(&["--compat=3.33"], &[("FLEXIO_COMPAT", "old")]).code,
        0
    );
    let r = common::flexio(&["--help"], d.path());
    assert!(r.stdout.contains("--compat"), "{}", r.stdout);
}
