//! `file_service_type=zipf|pareto|normal|gauss` against fio 3.33: the same job through
//! both, with the files (and offsets) of every request compared one by one (write_iolog),
//! and fio's messages for bad parameters.

use crate::common;
use common::*;

/// The requests of a version-3 iolog: (file, action, offset).
fn ios(log: &std::path::Path) -> Vec<(String, String, u64)> {
    std::fs::read_to_string(log)
        .unwrap_or_else(|e| panic!("{}: {e}", log.display()))
        .lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            match f.as_slice() {
                [_, file, act, off, _] if ["read", "write"].contains(act) => {
                    Some((file.to_string(), act.to_string(), off.parse().ok()?))
                }
                _ => None,
            }
        })
        .collect()
}

fn same_files(nfiles: u32, rw: &str, fst: &str, extra: &[&str]) {
    let nf = format!("--nrfiles={nfiles}");
    let size = format!("--size={nfiles}M");
    let rw = format!("--rw={rw}");
    let fst = format!("--file_service_type={fst}");
    let mut args = vec![
        "--name=z",
        "--ioengine=null",
        &nf,
        "--filesize=1M",
        &size,
        &rw,
        "--bs=4k",
        &fst,
        "--write_iolog=@D@/io.log",
        "--output-format=terse",
    ];
    args.extend_from_slice(extra);
    let Some(fio) = fio_bin() else { return };
    let _guard = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let mut got = Vec::new();
    for (bin, env) in [(fio, &[][..]), (flexio_bin(), ORACLE_COMPAT)] {
        let d = tempfile::tempdir().unwrap();
        let a = subst(&args, d.path());
        let r = run_in_env(
            &bin,
            &a.iter().map(String::as_str).collect::<Vec<_>>(),
            d.path(),
            env,
        );
        assert_eq!(r.code, 0, "{}: {}", bin.display(), r.stderr);
        got.push(ios(&d.path().join("io.log")));
    }
    let what = format!("{fst} {rw} {extra:?}");
    assert!(!got[0].is_empty(), "{what}: fio did no I/O");
    if let Some(i) = got[0].iter().zip(&got[1]).position(|(a, b)| a != b) {
        panic!(
            "{what}: request #{i} differs: fio {:?}, flexio {:?}",
            got[0][i], got[1][i]
        );
    }
    assert_eq!(got[0].len(), got[1].len(), "{what}");
    // The distribution is not uniform: some file takes more than its share.
    let mut per = std::collections::HashMap::new();
    for (f, _, _) in &got[1] {
        *per.entry(f.clone()).or_insert(0u32) += 1;
    }
    let max = per.values().max().copied().unwrap_or(0);
    assert!(
        max as usize * nfiles as usize > got[1].len() * 3 / 2,
        "{what}: per-file counts {per:?}"
    );
}

#[test]
fn zipf_picks_fio_s_files() {
    same_files(4, "read", "zipf:1.2", &[]);
    same_files(4, "randread", "zipf", &[]);
    same_files(5, "write", "zipf:0.8:1.0", &[]);
}

#[test]
fn pareto_picks_fio_s_files() {
    same_files(4, "read", "pareto:0.3", &[]);
    same_files(7, "randread", "pareto:0.1:0.9", &[]);
    same_files(4, "randread", "pareto", &["--random_generator=lfsr"]);
}

#[test]
fn normal_picks_fio_s_files() {
    same_files(9, "read", "normal:5", &[]);
    same_files(3, "randread", "gauss:0:0.7", &[]);
    same_files(50, "randrw", "gauss:10:0.0", &[]);
}

#[test]
fn bad_parameters_are_refused_with_fio_s_words() {
    for (v, msg) in [
        ("zipf:1", "zipf theta must be different than 1.0"),
        ("pareto:1.5", "pareto input out of range (0 < input < 1.0)"),
        (
            "normal:100",
            "normal deviation out of range (0 <= input < 100.0)",
        ),
        (
            "zipf:abc",
            "file service type random postfix parsing failed",
        ),
        (
            "zipf:1.2:1.5",
            "distribution center out of range (0 <= center <= 1.0)",
        ),
    ] {
        let a = format!("--file_service_type={v}");
        let args = [
            "--name=z",
            "--ioengine=null",
            "--nrfiles=4",
            "--size=4M",
            &a,
            "--parse-only",
        ];
        let Some((f, x)) = both(&args) else { return };
        assert!(f.stderr.contains(msg), "fio {v}: {}", f.stderr);
        assert!(x.stderr.contains(msg), "flexio {v}: {}", x.stderr);
        assert_eq!((f.code, x.code), (1, 1), "{v}");
    }
}

/// `random_distribution=zipf|pareto|normal` against fio 3.33: the same blocks, request by
/// request. Each file draws from fio's generator seeded from its name (directory included,
/// a trailing '/' too, names longer than 12 bytes too) and the thread number; `randseed` and `randrepeat=0`
/// take the block-offset seed instead; reads and writes of a file share its generator.
#[test]
fn random_distribution_draws_fio_333s_blocks() {
    let Some(fio) = fio_bin() else { return };
    let cases: &[&[&str]] = &[
        &["--rw=randread", "--random_distribution=zipf:1.2"],
        &["--rw=randread", "--random_distribution=zipf:0.8:0.3"],
        &["--rw=randwrite", "--random_distribution=pareto:0.2"],
        &["--rw=randread", "--random_distribution=normal:5:0.25"],
        &["--rw=randrw", "--random_distribution=zipf:1.1"],
        &[
            "--rw=randread",
            "--random_distribution=pareto:0.3",
            "--randseed=1234",
        ],
        &[
            "--rw=randread",
            "--random_distribution=zipf:1.2",
            "--randseed=99",
            "--randrepeat=0",
        ],
        &[
            "--rw=randrw",
            "--random_distribution=normal:10",
            "--nrfiles=3",
            "--numjobs=2",
            "--filename_format=a-longer-name.$jobnum.$filenum",
        ],
        &[
            "--rw=randread",
            "--random_distribution=zipf:1.2",
            "--bs=8k",
            "--size=4m",
        ],
        // Writes smaller than reads: the writes draw from the generator the reads would
        // share, over the file's 4 KiB blocks (not the 8 KiB blocks of the reads).
        &[
            "--rw=randwrite",
            "--random_distribution=zipf:1.2",
            "--bs=8k,4k",
        ],
        &[
            "--rw=randwrite",
            "--random_distribution=pareto:0.3",
            "--bs=8k,4k",
        ],
        &[
            "--rw=randwrite",
            "--random_distribution=normal:20",
            "--bs=16k,4k",
        ],
        // A directory ending in '/': fio's name is directory + '/' + name (`D//j.0.0`),
        // in the log and in the seed's hash.
        &[
            "--rw=randread",
            "--random_distribution=zipf:1.2",
            "--directory=@D@/",
        ],
    ];
    for c in cases {
        let mut args = vec![
            "--name=j",
            "--ioengine=null",
            "--size=1m",
            "--bs=4k",
            "--number_ios=64",
            "--directory=@D@",
            "--write_iolog=@D@/io.log",
            "--output-format=terse",
        ];
        args.extend_from_slice(c);
        let _guard = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
        // One directory for both tools: the seeds hash the files' full names.
        let d = tempfile::tempdir().unwrap();
        let a = subst(&args, d.path());
        let a: Vec<&str> = a.iter().map(String::as_str).collect();
        let mut got = Vec::new();
        for (bin, env) in [(fio.clone(), &[][..]), (flexio_bin(), ORACLE_COMPAT)] {
            for e in std::fs::read_dir(d.path()).unwrap() {
                std::fs::remove_file(e.unwrap().path()).unwrap();
            }
            let r = run_in_env(&bin, &a, d.path(), env);
            assert_eq!(r.code, 0, "{}: {}", bin.display(), r.stderr);
            // fio's job processes interleave their entries: each file's requests are
            // compared in order.
            let mut ios = ios(&d.path().join("io.log"));
            ios.sort_by(|a, b| a.0.cmp(&b.0));
            got.push(ios);
        }
        assert!(
            got[0].len() >= 64,
            "{c:?}: fio did {} requests",
            got[0].len()
        );
        assert_eq!(got[0], got[1], "{c:?}: fio 3.33 against flexio");
    }
}

/// Several files that the job goes past (io_size beyond them, or time_based): fio works in
/// passes. A file at its end (sequential) or with its random map full is done, the pass
/// ends when all are, and the next one starts them all over (the random streams seeded
/// again), so files of different sizes do not keep pace: `f:g` of 1 MiB and 512 KiB go f,
/// g, f, g... to 512 KiB, f alone to 1 MiB, then both again from the file after the last
/// one. Random I/O of a time_based job starts each full file over on its own instead. Both
/// tools on the same files, every request compared (file, direction, offset).
#[test]
fn files_past_their_end_go_in_fio_s_passes() {
    let Some(fio) = fio_bin() else { return };
    let _guard = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    // (files, options, whether only a prefix can be compared: time_based)
    let cases: &[(&str, &[&str], bool)] = &[
        ("f:g", &["--rw=write", "--io_size=3584k"], false),
        ("f:g:h", &["--rw=read", "--io_size=4608k"], false),
        ("f:g", &["--rw=randwrite", "--io_size=5M"], false),
        ("f:f2", &["--rw=randread", "--io_size=3584k"], false),
        ("f:g", &["--rw=randrw", "--io_size=5M"], false),
        ("f:g", &["--rw=rw", "--io_size=5M"], false),
        (
            "f:g",
            &["--rw=randread", "--io_size=3584k", "--percentage_random=50"],
            false,
        ),
        (
            "f:g",
            &["--rw=randread", "--io_size=3584k", "--norandommap"],
            false,
        ),
        (
            "f:g:h",
            &[
                "--rw=randread",
                "--io_size=4M",
                "--file_service_type=random",
            ],
            false,
        ),
        (
            "f:g",
            &[
                "--rw=write",
                "--io_size=3584k",
                "--file_service_type=sequential",
            ],
            false,
        ),
        (
            "f:g",
            &["--rw=write", "--time_based", "--runtime=100ms"],
            true,
        ),
        (
            "f:g",
            &["--rw=randwrite", "--time_based", "--runtime=100ms"],
            true,
        ),
    ];
    for (files, extra, prefix) in cases {
        let what = format!("{files} {extra:?}");
        let mut args = vec![
            "--name=z".to_string(),
            format!("--filename={files}"),
            "--bs=16k".into(),
            "--write_iolog=io.log".into(),
            "--output-format=terse".into(),
        ];
        args.extend(extra.iter().map(|a| a.to_string()));
        let (f, x) = both_on_files(&fio, MIXED_FILES, &args, |d| ios(&d.join("io.log")));
        assert!(f.len() >= 224, "{what}: fio did {} I/Os", f.len());
        if let Some(k) = f.iter().zip(&x).position(|(p, q)| p != q) {
            panic!(
                "{what}: request #{k} differs: fio {:?}, flexio {:?}",
                f[k], x[k]
            );
        }
        if !prefix {
            assert_eq!(f.len(), x.len(), "{what}: number of requests");
        }
    }
}
