//! `flexio report RESULT... [-o report.html]`: one self-contained HTML page from flexio's or
//! fio's JSON / json+ results and the log files beside them.

use flexio_analysis::report::{self, ReportOptions};
use flexio_analysis::{input, RunResult};
use std::path::{Path, PathBuf};

/// One self-contained HTML page (no network needed) from results
///
/// Writes one self-contained HTML page (no network needed) from flexio's or fio's
/// --output-format=json or json+ results, `flexio matrix --json` matrices (heat maps),
/// `flexio sweep --json` sweeps (lines over each axis with confidence bands, a heat map for
/// two axes) and the studies' JSON (rt-study, pts, writemodes). Log files beside a result
/// (write_lat_log, write_bw_log, write_iops_log, write_hist_log) add curves over time and
/// exact statistics of every logged I/O. Several results overlay their curves.
#[derive(clap::Parser, Debug, PartialEq)]
#[command(
    name = "report",
    after_help = "Exit status: 0 done, 2 bad arguments or input."
)]
pub struct Args {
    /// Result files: flexio's or fio's JSON / json+, matrices, sweeps, studies
    #[arg(value_name = "RESULT.json", required = true, value_hint = clap::ValueHint::FilePath)]
    pub results: Vec<PathBuf>,
    /// Where to write the page (- for stdout)
    #[arg(short, long, value_name = "FILE", default_value = "report.html")]
    pub output: PathBuf,
    /// Page title
    #[arg(long, value_name = "TEXT")]
    pub title: Option<String>,
    /// Ignore log files
    #[arg(long = "no-logs", action = clap::ArgAction::SetFalse)]
    pub logs: bool,
}

/// Attach the log files beside a result to its jobs, compressed ones (`log_store_compressed`)
/// inflated as `flexio --inflate-log` would, in the layout of the fio that wrote them.
pub fn attach_logs(run: &mut RunResult) {
    let layout = flexio_run::logz::Layout::of_producer(&run.producer);
    let inflate = move |p: &Path| flexio_run::logz::inflate_file(p, layout);
    flexio_analysis::logs::attach_with(run, Some(&inflate));
}

/// Read result files (with their logs unless told not to) and give each a distinct label.
pub fn read_results(paths: &[PathBuf], logs: bool) -> Result<Vec<RunResult>, String> {
    let mut runs = Vec::new();
    for p in paths {
        let mut r = input::read(p).map_err(|e| e.to_string())?;
        if logs {
            attach_logs(&mut r);
        }
        runs.push(r);
    }
    label_distinctly(&mut runs);
    Ok(runs)
}

/// File names as labels; the paths as given where two file names are the same.
pub fn label_distinctly(runs: &mut [RunResult]) {
    let names: Vec<String> = runs.iter().map(|r| r.label.clone()).collect();
    for (i, r) in runs.iter_mut().enumerate() {
        if names.iter().filter(|n| **n == names[i]).count() > 1 {
            r.label = r.path.display().to_string();
        }
    }
}

/// Write a page to a file atomically, or to stdout for `-`.
pub fn write_page(out: &Path, page: &str) -> Result<(), String> {
    if out == Path::new("-") {
        // A reader that has gone ends the page quietly (crate::cmd::out).
        crate::cmd::out::stdout(page);
        return Ok(());
    }
    flexio_run::notes::write_atomic(out, page.as_bytes())
        .map_err(|e| format!("cannot write {}: {e}", out.display()))
}

/// The hook for `--report FILE` on a run: the run's JSON+ text (as flexio printed or wrote
/// it), the directory its log files were written to, and the page to write.
pub fn write_run_report(json_plus: &str, log_dir: &Path, out: &Path) -> Result<(), String> {
    let mut run = input::parse(json_plus, &log_dir.join("flexio-run.json"))
        .map_err(|e| format!("report: {e}"))?;
    attach_logs(&mut run);
    run.label = "this run".into();
    let page = report::render(&[run], None, &ReportOptions::default());
    write_page(out, &page)
}

pub fn run(args: &[String]) -> i32 {
    let a = match super::args::args_of::<Args, _>(args, 2, super::args::as_is) {
        Ok(a) => a,
        Err(code) => return code,
    };
    // `flexio matrix` results are drawn as heat maps, `flexio sweep` results as lines
    // over their axes; everything else is a run result.
    let mut matrices = Vec::new();
    let mut sweeps = Vec::new();
    let mut studies = Vec::new();
    let mut results = Vec::new();
    for p in &a.results {
        let found = flexio_analysis::matrix::read(p).and_then(|m| match m {
            Some(m) => {
                matrices.push(m);
                Ok(true)
            }
            None => match flexio_analysis::sweep::read(p)? {
                Some(s) => {
                    sweeps.push(s);
                    Ok(true)
                }
                None => {
                    flexio_analysis::studies::read(p).map(|s| s.map(|s| studies.push(s)).is_some())
                }
            },
        });
        match found {
            Ok(true) => {}
            Ok(false) => results.push(p.clone()),
            Err(e) => {
                eprintln!("flexio report: {e}");
                return 2;
            }
        }
    }
    let runs = match read_results(&results, a.logs) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("flexio report: {e}");
            return 2;
        }
    };
    for r in &runs {
        for w in &r.warnings {
            eprintln!("flexio report: {}: {w}", r.label);
        }
    }
    let opts = ReportOptions {
        title: a.title.unwrap_or_else(|| "flexio report".into()),
        sections: studies.iter().map(flexio_analysis::studies::html).collect(),
    };
    let page = report::render_with(&runs, &matrices, &sweeps, None, &opts);
    if let Err(e) = write_page(&a.output, &page) {
        eprintln!("flexio report: {e}");
        return 2;
    }
    if a.output != Path::new("-") {
        eprintln!(
            "flexio report: wrote {} ({} KiB, {} result(s))",
            a.output.display(),
            page.len().div_ceil(1024),
            runs.len() + matrices.len() + sweeps.len() + studies.len()
        );
    }
    0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_args(v: &[&str]) -> Result<Args, clap::Error> {
        let v: Vec<String> = v.iter().map(|x| x.to_string()).collect();
        super::super::args::try_parse(&v, super::super::args::as_is)
    }

    #[test]
    fn arguments() {
        let a = parse_args(&["a.json", "-o", "x.html", "b.json", "--title=T"]).unwrap();
        assert_eq!(
            a.results,
            vec![PathBuf::from("a.json"), PathBuf::from("b.json")]
        );
        assert_eq!(a.output, PathBuf::from("x.html"));
        assert_eq!(a.title.as_deref(), Some("T"));
        assert!(a.logs);
        assert_eq!(
            parse_args(&["a"]).unwrap().output,
            PathBuf::from("report.html")
        );
        assert!(parse_args(&["--no-logs", "a"]).map(|a| !a.logs).unwrap());
        assert_eq!(
            parse_args(&["-o", "-", "-"]).unwrap().results,
            vec![PathBuf::from("-")]
        );
        assert!(parse_args(&[])
            .unwrap_err()
            .to_string()
            .contains("<RESULT.json>"));
        assert!(parse_args(&["a", "-o"])
            .unwrap_err()
            .to_string()
            .contains("'--output <FILE>'"));
        let e = parse_args(&["a", "--bogus"]).unwrap_err().to_string();
        assert!(e.contains("unexpected argument '--bogus'"), "{e}");
        let e = parse_args(&["a", "--titel=x"]).unwrap_err().to_string();
        assert!(e.contains("similar argument exists: '--title'"), "{e}");
    }
}
