//! write_iolog of random jobs whose files start over, line for line against fio 3.33
//! (times aside): the sequential I/Os of a `:N` run (or of percentage_random) go back to
//! the file's start with the random map, as fio's fio_file_reset puts them, and a
//! time_based job's sequential position wraps at the region's end.

use crate::common;
use common::*;

/// A non-uniform file service starts a file over when its random map is full: every
/// direction's sequential position goes back to the file's start with it, so the next
/// sequential I/O of a `:N` run is at the start (fio writes at 0 where the position had
/// gone on from before).
#[test]
fn a_full_map_under_a_non_uniform_service_starts_the_sequential_positions_over() {
    let Some(fio) = fio_bin() else { return };
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let cases: &[&[&str]] = &[&[
        "--filename=f:g:h",
        "--rw=randrw:3",
        "--bsrange=4k-16k",
        "--size=1m",
        "--io_size=1500k",
        "--file_service_type=zipf:1.1",
        "--rwmixread=70",
        "--loops=3",
    ]];
    for c in cases {
        let mut args: Vec<String> = ["--name=w", "--write_iolog=w.log", "--output-format=terse"]
            .iter()
            .map(|a| a.to_string())
            .collect();
        args.extend(c.iter().map(|a| a.to_string()));
        let (f, x) = both_on_files(&fio, MIXED_FILES, &args, |d| iolog_lines(&d.join("w.log")));
        assert_same_iologs(&format!("{c:?}"), &f, &x);
    }
}

/// time_based: a sequential I/O of a random job at the region's end goes back to its
/// start (fio's get_next_seq_offset), before the map is found full. The runs last as long
/// as the runtime lets them, so the logs are compared over the first lines both have.
#[test]
fn time_based_sequential_parts_of_random_jobs_wrap_as_in_fio() {
    let Some(fio) = fio_bin() else { return };
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let cases: &[&[&str]] = &[
        &["--rw=randread:3"],
        &["--rw=randrw:4", "--bsrange=4k-16k"],
        &["--rw=randread", "--percentage_random=50"],
    ];
    for c in cases {
        let mut args: Vec<String> = [
            "--name=w",
            "--filename=h",
            "--size=256k",
            "--time_based=1",
            "--runtime=1",
            "--write_iolog=w.log",
            "--output-format=terse",
        ]
        .iter()
        .map(|a| a.to_string())
        .collect();
        args.extend(c.iter().map(|a| a.to_string()));
        let (mut f, mut x) =
            both_on_files(&fio, MIXED_FILES, &args, |d| iolog_lines(&d.join("w.log")));
        // 256 KiB is 64 blocks of 4 KiB: the first thousand I/Os go round it many times.
        assert!(
            f.len() > 1000 && x.len() > 1000,
            "{c:?}: {} and {} lines",
            f.len(),
            x.len()
        );
        // The last line of each may be the close at the runtime's end.
        let n = f.len().min(x.len()) - 1;
        f.truncate(n);
        x.truncate(n);
        assert_same_iologs(&format!("{c:?}"), &f, &x);
    }
}
