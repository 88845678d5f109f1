//! `flexio matrix`: iozone's automatic mode as one command. For every file size (64 KiB
//! doubling up to a limit) and record size (4 KiB doubling up to 16 MiB, at most the file
//! size) it runs write, rewrite, read, reread, random read and write, backward read, record
//! rewrite, stride read, fwrite, frewrite, fread and freread on one scratch file, and prints
//! one table per operation in KiB/s (rows: file size KiB, columns: record size KiB) and a
//! JSON document that `flexio report` draws as heat maps. docs/studies/matrix.md.

pub mod ops;
mod tables;

use super::report::take_value;
use flexio_job::value::{parse_size, KbBase};
use ops::{Cell, Op, Settings};
use std::path::PathBuf;

const USAGE: &str = "usage: flexio matrix [options]

iozone's automatic mode (-a): file size x record size over write, rewrite, read,
reread, randread, randwrite, bkwdread, recrewrite, strideread, fwrite, frewrite,
fread, freread, each cell a fio job run by flexio's engine (the f* tests through a
user-space buffered stream). One table per operation in KiB/s; page-cache hits show
as the fast tiers: nothing is dropped from the cache unless --cold.

  --dir DIR              where the scratch file goes (default: the current directory)
  --file PATH            the scratch file itself (removed at the end)
  --min-file SIZE        smallest file size (default 64k)
  --max-file SIZE        largest file size, the size limit (default 512m)
  --min-record SIZE      smallest record size (default 4k)
  --max-record SIZE      largest record size (default 16m)
  --all-records          also records below 64 KiB for files above 32 MiB (iozone -z;
                         iozone's -a leaves them out)
  --tests LIST           operations by name or iozone test number, e.g. write,read or
                         0,1,2 (default: all; write runs first in every cell anyway,
                         the others need the file)
  --direct               O_DIRECT for the fio jobs (not the stdio tests)
  --fsync                include an fsync of the file in the writers' time (iozone -e)
  --cold                 drop the file's cached pages before each reading test
  --stride N             stride read: N records between reads (default 17, iozone -j)
  --ioengine NAME        engine of the fio jobs (default psync)
  --repeat N             run the whole matrix N times (default 1): each cell shows the
                         median of its runs, with its spread; cells whose runs disagree
                         (~) and cells far from their neighbours (!) are flagged
  --json FILE            write the results as JSON (atomically) for flexio report
  --html FILE            write the HTML page (heat maps and lines per operation)
  --output-format=normal|json   tables (default) or the JSON on stdout

Exit status: 0 done, 1 a cell failed, 2 bad arguments, 128 interrupted.
";

/// Parsed `flexio matrix` arguments.
#[derive(Debug, Clone)]
pub struct Args {
    pub file: PathBuf,
    pub min_file: u64,
    pub max_file: u64,
    pub min_record: u64,
    pub max_record: u64,
    pub all_records: bool,
    pub ops: Vec<Op>,
    pub direct: bool,
    pub fsync: bool,
    pub cold: bool,
    pub stride: u64,
    pub ioengine: String,
    /// Rounds of the whole matrix (`--repeat`).
    pub repeat: u32,
    pub json: Option<PathBuf>,
    pub html: Option<PathBuf>,
    pub json_stdout: bool,
}

fn size(v: Result<String, String>, what: &str) -> Result<u64, String> {
    let v = v?;
    let n = parse_size(v.trim(), KbBase::K1024).map_err(|e| format!("{what}: {e}"))?;
    if n == 0 {
        return Err(format!("{what}: must be more than 0"));
    }
    Ok(n)
}

fn parse_tests(list: &str) -> Result<Vec<Op>, String> {
    let mut ops = Vec::new();
    for t in list.split(',').map(str::trim).filter(|t| !t.is_empty()) {
        if let Ok(n) = t.parse::<u32>() {
            let set = Op::iozone_test(n)
                .ok_or_else(|| format!("--tests: iozone test {n} is not one flexio runs (0-7)"))?;
            ops.extend_from_slice(set);
        } else {
            let op = Op::from_name(t).ok_or_else(|| {
                let names: Vec<&str> = Op::ALL.iter().map(|o| o.name()).collect();
                format!(
                    "--tests: unknown operation '{t}' (one of {})",
                    names.join(", ")
                )
            })?;
            ops.push(op);
        }
    }
    if ops.is_empty() {
        return Err("--tests: no operation given".into());
    }
    Ok(Op::ALL.into_iter().filter(|o| ops.contains(o)).collect())
}

pub fn parse_args(args: &[String]) -> Result<Args, String> {
    let mut a = Args {
        file: PathBuf::new(),
        min_file: 64 << 10,
        max_file: 512 << 20,
        min_record: 4 << 10,
        max_record: 16 << 20,
        all_records: false,
        ops: Op::ALL.to_vec(),
        direct: false,
        fsync: false,
        cold: false,
        stride: 17,
        ioengine: "psync".into(),
        repeat: 1,
        json: None,
        html: None,
        json_stdout: false,
    };
    let mut dir: Option<PathBuf> = None;
    let mut file: Option<PathBuf> = None;
    let mut i = 0;
    while i < args.len() {
        let arg = args[i].as_str();
        if let Some(v) = take_value(args, &mut i, &["--dir"]) {
            dir = Some(PathBuf::from(v?));
        } else if let Some(v) = take_value(args, &mut i, &["--file"]) {
            file = Some(PathBuf::from(v?));
        } else if let Some(v) = take_value(args, &mut i, &["--min-file"]) {
            a.min_file = size(v, "--min-file")?;
        } else if let Some(v) = take_value(args, &mut i, &["--max-file"]) {
            a.max_file = size(v, "--max-file")?;
        } else if let Some(v) = take_value(args, &mut i, &["--min-record"]) {
            a.min_record = size(v, "--min-record")?;
        } else if let Some(v) = take_value(args, &mut i, &["--max-record"]) {
            a.max_record = size(v, "--max-record")?;
        } else if let Some(v) = take_value(args, &mut i, &["--tests"]) {
            a.ops = parse_tests(&v?)?;
        } else if let Some(v) = take_value(args, &mut i, &["--stride"]) {
            let v = v?;
            a.stride =
                v.trim().parse().ok().filter(|n| *n > 0).ok_or_else(|| {
                    format!("--stride: '{v}' is not a positive number of records")
                })?;
        } else if let Some(v) = take_value(args, &mut i, &["--ioengine"]) {
            a.ioengine = v?;
        } else if let Some(v) = take_value(args, &mut i, &["--repeat"]) {
            a.repeat = super::repeat_count(&v?, "rounds")?;
        } else if let Some(v) = take_value(args, &mut i, &["--json"]) {
            a.json = Some(PathBuf::from(v?));
        } else if let Some(v) = take_value(args, &mut i, &["--html"]) {
            a.html = Some(PathBuf::from(v?));
        } else if let Some(v) = take_value(args, &mut i, &["--output-format"]) {
            a.json_stdout = match v?.as_str() {
                "json" => true,
                "normal" => false,
                o => return Err(format!("--output-format: '{o}' is not normal or json")),
            };
        } else if arg == "--all-records" {
            a.all_records = true;
        } else if arg == "--direct" {
            a.direct = true;
        } else if arg == "--fsync" {
            a.fsync = true;
        } else if arg == "--cold" {
            a.cold = true;
        } else {
            return Err(format!("unknown argument '{arg}'"));
        }
        i += 1;
    }
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
    a.file = flexio_run::inproc::scratch_file(dir, file, "matrix")?;
    Ok(a)
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
    if args.iter().any(|a| a == "-h" || a == "--help") {
        cmd_out!("{USAGE}");
        return 0;
    }
    let a = match parse_args(args) {
        Ok(a) => a,
        Err(e) => {
            eprintln!("flexio matrix: {e}\n{USAGE}");
            return 2;
        }
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
    if a.json_stdout {
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
            (vec!["--frobnicate"], "unknown argument"),
            (vec!["--min-record=1m", "--max-file=64k"], "no cell"),
            (vec!["--output-format=xml"], "not normal or json"),
            (vec!["--json"], "needs a value"),
            (vec!["--repeat=0"], "1 to 100 rounds"),
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
