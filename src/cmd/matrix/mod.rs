//! `flexio matrix`: iozone's automatic mode as one command. For every file size (64 KiB
//! doubling up to a limit) and record size (4 KiB doubling up to 16 MiB, at most the file
//! size) it runs write, rewrite, read, reread, random read and write, backward read, record
//! rewrite, stride read, fwrite, frewrite, fread and freread on one scratch file, and prints
//! one table per operation in KiB/s (rows: file size KiB, columns: record size KiB) and a
//! JSON document that `flexio report` draws as heat maps. docs/studies/matrix.md.

pub mod ops;
mod tables;

use super::args::{positive, size, Output, Scratch};
use ops::{Cell, Op, Settings};
use std::path::PathBuf;

/// iozone's automatic mode: file size x record size over the operations
///
/// iozone's automatic mode (-a): file size x record size over write, rewrite, read, reread,
/// randread, randwrite, bkwdread, recrewrite, strideread, fwrite, frewrite, fread, freread,
/// each cell a fio job run by flexio's engine (the f* tests through a user-space buffered
/// stream). One table per operation in KiB/s; page-cache hits show as the fast tiers:
/// nothing is dropped from the cache unless --cold.
#[derive(clap::Parser, Debug, Clone)]
#[command(
    name = "matrix",
    after_help = "Exit status: 0 done, 1 a cell failed, 2 bad arguments, 128 interrupted."
)]
pub struct Args {
    #[command(flatten)]
    pub scratch: Scratch,
    /// The scratch file (from --dir or --file)
    #[arg(skip)]
    pub file: PathBuf,
    /// Smallest file size
    #[arg(long = "min-file", value_name = "SIZE", default_value = "64k", value_parser = size, allow_hyphen_values = true)]
    pub min_file: u64,
    /// Largest file size, the size limit
    #[arg(long = "max-file", value_name = "SIZE", default_value = "512m", value_parser = size, allow_hyphen_values = true)]
    pub max_file: u64,
    /// Smallest record size
    #[arg(long = "min-record", value_name = "SIZE", default_value = "4k", value_parser = size, allow_hyphen_values = true)]
    pub min_record: u64,
    /// Largest record size
    #[arg(long = "max-record", value_name = "SIZE", default_value = "16m", value_parser = size, allow_hyphen_values = true)]
    pub max_record: u64,
    /// Also records below 64 KiB for files above 32 MiB (iozone -z; iozone's -a leaves them
    /// out)
    #[arg(long = "all-records")]
    pub all_records: bool,
    /// Operations by name or iozone test number, e.g. write,read or 0,1,2 [default: all;
    /// write runs first in every cell anyway, the others need the file]
    #[arg(long = "tests", value_name = "LIST", value_parser = parse_tests)]
    tests: Option<::std::vec::Vec<Op>>,
    /// The operations (from --tests)
    #[arg(skip)]
    pub ops: Vec<Op>,
    /// O_DIRECT for the fio jobs (not the stdio tests)
    #[arg(long)]
    pub direct: bool,
    /// Include an fsync of the file in the writers' time (iozone -e)
    #[arg(long)]
    pub fsync: bool,
    /// Drop the file's cached pages before each reading test
    #[arg(long)]
    pub cold: bool,
    /// Stride read: N records between reads (iozone -j)
    #[arg(long, value_name = "N", default_value_t = 17, value_parser = positive::<u64>)]
    pub stride: u64,
    /// Engine of the fio jobs
    #[arg(long, value_name = "NAME", default_value = "psync")]
    pub ioengine: String,
    /// Run the whole matrix N times: each cell shows the median of its runs, with its
    /// spread; cells whose runs disagree (~) and cells far from their neighbours (!) are
    /// flagged
    #[arg(long, value_name = "N", default_value_t = 1,
          value_parser = clap::value_parser!(u32).range(1..=100))]
    pub repeat: u32,
    /// Write the results as JSON (atomically) for flexio report
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Write the HTML page (heat maps and lines per operation)
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
    #[command(flatten)]
    pub output: Output,
}

fn parse_tests(list: &str) -> Result<Vec<Op>, String> {
    let mut ops = Vec::new();
    for t in list.split(',').map(str::trim).filter(|t| !t.is_empty()) {
        if let Ok(n) = t.parse::<u32>() {
            let set = Op::iozone_test(n)
                .ok_or_else(|| format!("iozone test {n} is not one flexio runs (0-7)"))?;
            ops.extend_from_slice(set);
        } else {
            let op = Op::from_name(t).ok_or_else(|| {
                let names: Vec<&str> = Op::ALL.iter().map(|o| o.name()).collect();
                format!("unknown operation '{t}' (one of {})", names.join(", "))
            })?;
            ops.push(op);
        }
    }
    if ops.is_empty() {
        return Err("no operation given".into());
    }
    Ok(Op::ALL.into_iter().filter(|o| ops.contains(o)).collect())
}

/// `flexio matrix`'s arguments (the scratch file's folder must exist).
pub fn parse_args(args: &[String]) -> Result<Args, clap::Error> {
    super::args::try_parse(args, |mut a: Args, _| {
        a.ops = a.tests.take().unwrap_or_else(|| Op::ALL.to_vec());
        if a.min_file > a.max_file {
            return Err(format!(
                "--min-file ({}) is larger than --max-file ({})",
                a.min_file, a.max_file
            ));
        }
        if a.min_record > a.max_record {
            return Err(format!(
                "--min-record ({}) is larger than --max-record ({})",
                a.min_record, a.max_record
            ));
        }
        if a.min_record > a.max_file {
            return Err(format!(
                "--min-record ({}) is larger than --max-file ({}): no cell",
                a.min_record, a.max_file
            ));
        }
        if a.direct && a.min_record % 512 != 0 {
            return Err("--direct needs records that are multiples of 512 bytes".into());
        }
        a.file = a.scratch.path("matrix")?;
        Ok(a)
    })
}

/// Doubling from `lo` up to `hi`.
fn doubling(lo: u64, hi: u64) -> Vec<u64> {
    let mut v = Vec::new();
    let mut x = lo;
    while x <= hi {
        v.push(x);
        match x.checked_mul(2) {
            Some(n) => x = n,
            None => break,
        }
    }
    v
}

/// The (file size, record size) cells in iozone's order: file sizes outer, records inner.
pub fn cells(a: &Args) -> Vec<(u64, u64)> {
    let mut v = Vec::new();
    for f in doubling(a.min_file, a.max_file) {
        for r in doubling(a.min_record, a.max_record) {
            if r > f {
                break;
            }
            if !a.all_records && f > 32 << 20 && r < 64 << 10 {
                continue;
            }
            v.push((f, r));
        }
    }
    v
}

/// The sweep: `--repeat` rounds of every cell and every selected operation (write first in
/// each cell, measured or not, because the others need the file; a round runs the whole
/// matrix, so drift over time spreads over every cell). Stops at the first failure or an
/// interrupt.
pub fn sweep(a: &Args, mut each: impl FnMut(&Cell)) -> (Vec<Cell>, Result<(), String>) {
    let s = Settings {
        file: a.file.clone(),
        ioengine: a.ioengine.clone(),
        direct: a.direct,
        fsync: a.fsync,
        cold: a.cold,
        stride: a.stride,
    };
    let mut out = Vec::new();
    let mut result = Ok(());
    'cells: for (round, (f, r)) in
        (0..a.repeat).flat_map(|k| cells(a).into_iter().map(move |c| (k, c)))
    {
        for op in Op::ALL {
            let wanted = a.ops.contains(&op);
            if !wanted && op != Op::Write {
                continue;
            }
            match s.run(op, f, r) {
                Ok(mut c) => {
                    c.round = round + 1;
                    if wanted {
                        each(&c);
                        out.push(c);
                    }
                }
                Err(e) => {
                    result = Err(format!(
                        "{} of a {} KiB file in {} KiB records: {e}",
                        op.name(),
                        f >> 10,
                        r >> 10
                    ));
                    break 'cells;
                }
            }
            if flexio_run::inproc::interrupted() {
                result = Err("interrupted".into());
                break 'cells;
            }
        }
        if let Err(e) = s.cleanup() {
            result = Err(e);
            break;
        }
    }
    if let Err(e) = s.cleanup() {
        result = result.and(Err(e));
    }
    (out, result)
}

pub fn run(args: &[String]) -> i32 {
    let a = match super::args::report_error(parse_args(args), 2) {
        Ok(a) => a,
        Err(code) => return code,
    };
    let n = cells(&a).len();
    eprintln!(
        "flexio matrix: {n} cells x {} operations on {}",
        a.ops.len(),
        a.file.display()
    );
    let mut last = (0, 0);
    let (cells, res) = sweep(&a, |c| {
        if (c.round, c.file_size) != last {
            last = (c.round, c.file_size);
            if a.repeat > 1 {
                eprintln!(
                    "flexio matrix: round {}/{}: file size {} KiB",
                    c.round,
                    a.repeat,
                    c.file_size >> 10
                );
            } else {
                eprintln!("flexio matrix: file size {} KiB", c.file_size >> 10);
            }
        }
    });
    let doc = tables::json(&a, &cells, res.as_ref().err().map(String::as_str));
    if let Some(p) = &a.json {
        if let Err(e) = flexio_run::notes::write_atomic(p, doc.as_bytes()) {
            eprintln!("flexio matrix: cannot write {}: {e}", p.display());
            return 1;
        }
    }
    if let Some(p) = &a.html {
        let page = serde_json::from_str(&doc)
            .map_err(|e| e.to_string())
            .and_then(|v| flexio_analysis::matrix::from_value(&v, &a.file).map_err(|e| e.0))
            .map(|m| {
                flexio_analysis::report::render_with(
                    &[],
                    &[m],
                    &[],
                    None,
                    &flexio_analysis::report::ReportOptions {
                        title: "flexio matrix".into(),
                        ..Default::default()
                    },
                )
            });
        if let Err(e) = page.and_then(|page| super::report::write_page(p, &page)) {
            eprintln!("flexio matrix: cannot write {}: {e}", p.display());
            return 1;
        }
    }
    if a.output.json() {
        cmd_out!("{doc}");
    } else {
        cmd_out!("{}", tables::text(&a, &cells));
    }
    match res {
        Ok(()) => 0,
        Err(e) if e == "interrupted" => {
            eprintln!("flexio matrix: interrupted; the cells measured so far are shown");
            128
        }
        Err(e) => {
            eprintln!("flexio matrix: {e}");
            1
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(|x| x.to_string()).collect()
    }

    fn parse_args(v: &[String]) -> Result<Args, String> {
        super::parse_args(v).map_err(|e| e.to_string())
    }

    #[test]
    fn automatic_mode_cells() {
        let d = tempfile::tempdir().unwrap();
        let dir = d.path().display().to_string();
        let a = parse_args(&s(&["--dir", &dir])).unwrap();
        let c = cells(&a);
        // 64 KiB .. 512 MiB: 14 file sizes; records 4 KiB .. min(file, 16 MiB), without
        // records below 64 KiB above 32 MiB.
        assert_eq!(c.first(), Some(&(64 << 10, 4 << 10)));
        assert_eq!(c.last(), Some(&(512 << 20, 16 << 20)));
        assert!(!c.contains(&(64 << 20, 32 << 10)));
        assert!(c.contains(&(32 << 20, 4 << 10)));
        let expect: usize = (16..=29)
            .map(|f: u32| {
                let lo = if f > 25 { 16 } else { 12 };
                (lo..=f.min(24)).count()
            })
            .sum();
        assert_eq!(c.len(), expect);
        let a = parse_args(&s(&["--dir", &dir, "--all-records", "--max-file=1m"])).unwrap();
        assert_eq!(cells(&a).len(), 5 + 6 + 7 + 8 + 9);
    }

    #[test]
    fn bad_arguments() {
        let d = tempfile::tempdir().unwrap();
        let dir = d.path().display().to_string();
        for (args, msg) in [
            (vec!["--max-file=1.5m"], "fractional"),
            (vec!["--min-file=2m", "--max-file=1m"], "larger than"),
            (vec!["--min-record=0"], "more than 0"),
            (vec!["--tests=write,bogus"], "unknown operation 'bogus'"),
            (vec!["--tests=9"], "iozone test 9"),
            (vec!["--stride=0"], "positive"),
            (vec!["--frobnicate"], "unexpected argument '--frobnicate'"),
            (vec!["--tset=write"], "similar argument exists: '--tests'"),
            (vec!["--min-record=1m", "--max-file=64k"], "no cell"),
            (
                vec!["--output-format=xml"],
                "invalid value 'xml' for '--output-format <FORMAT>'",
            ),
            (vec!["--json"], "a value is required for '--json <FILE>'"),
            (vec!["--repeat=0"], "0 is not in 1..=100"),
        ] {
            let mut v = s(&["--dir", &dir]);
            v.extend(s(&args));
            let e = parse_args(&v).unwrap_err();
            assert!(e.contains(msg), "{args:?}: {e}");
        }
        assert!(parse_args(&s(&["--dir", "/nonexistent/x"]))
            .unwrap_err()
            .contains("no such directory"));
        assert!(parse_args(&s(&["--file", "/tmp/a:b"]))
            .unwrap_err()
            .contains("':'"));
        let a = parse_args(&s(&["--dir", &dir, "--tests", "1,randwrite,0"])).unwrap();
        assert_eq!(
            a.ops,
            vec![Op::Write, Op::Rewrite, Op::Read, Op::Reread, Op::RandWrite]
        );
    }
}
