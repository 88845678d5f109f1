//! flexio's run engine from a program: a job in, its plan inspected, a run observed, typed
//! results out. `cargo run --release --example embed [DIR]` runs a short random-read job
//! on a scratch file in DIR (default: the current directory) and prints what came back.

use flexio_run::plan::ThreadPlan;
use flexio_run::progress::Progress;
use flexio_run::report::RunReport;
use flexio_run::{Observer, Quiet};
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};

/// Counts the preamble's pieces and keeps the live progress of the run's threads.
#[derive(Default)]
struct Watch {
    texts: Mutex<Vec<String>>,
    progress: Mutex<Option<Arc<Vec<Progress>>>>,
}

impl Observer for Watch {
    fn text(&self, s: &str) {
        self.texts.lock().unwrap().push(s.to_string());
    }
    fn running(&self, _plans: &[ThreadPlan], progress: &Arc<Vec<Progress>>) {
        *self.progress.lock().unwrap() = Some(progress.clone());
    }
}

fn main() {
    let dir = std::env::args().nth(1).unwrap_or_else(|| ".".into());
    std::process::exit(demo(&dir));
}

/// The whole example in `dir`; the exit status of the first run.
fn demo(dir: &str) -> i32 {
    let file = format!("{dir}/flexio-embed.scratch");
    let job = format!(
        "[global]\nfilename={file}\nsize=16m\nunlink=1\n\n\
         [randread]\nrw=randread\nbs=4k\nruntime=1\ntime_based=1\n"
    );
    // 1. A job in, the resolved plan out.
    let prepared = match flexio_run::prepare_job_text(&job, &[]) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("embed: {e}");
            return 1;
        }
    };
    for t in prepared.plans() {
        println!(
            "planned: {} on {} ({} file(s), engine {})",
            t.name,
            t.files[0].path.display(),
            t.files.len(),
            t.engine.name
        );
    }
    // 2. The run, observed.
    let watch = Watch::default();
    let outcome = prepared.run(&watch);
    let ios: u64 = watch
        .progress
        .lock()
        .unwrap()
        .as_ref()
        .map(|p| p.iter().map(|p| p.ios[0].load(Ordering::Relaxed)).sum())
        .unwrap_or(0);
    println!(
        "observed: {} preamble piece(s), {ios} reads counted live",
        watch.texts.lock().unwrap().len()
    );
    // 3. Typed results: the model every output format renders.
    let Some(report) = outcome.report else {
        eprintln!("embed: the job did not run (exit status {})", outcome.code);
        return 1;
    };
    print_summary(&report);
    // A second run that wants no events at all.
    let again = flexio_run::prepare_job_text(&job, &["--compat=3.33"]).expect("the same job");
    let code = again.run(&Quiet).code;
    println!("second run (fio 3.33 layout): exit status {code}");
    outcome.code
}

fn print_summary(r: &RunReport) {
    for j in &r.jobs {
        let rd = &j.dirs[0];
        println!(
            "result: {}: {:.0} IOPS, {} B/s, clat mean {:.0} ns, p99 {} ns",
            j.name,
            rd.iops,
            rd.bw_bytes,
            rd.clat.mean_ns,
            rd.clat
                .percentiles
                .iter()
                .flatten()
                .find(|(p, _)| (*p - 99.0).abs() < 1e-9)
                .map(|(_, v)| *v)
                .unwrap_or(0)
        );
    }
}

/// `cargo test` runs the example (Cargo.toml: `test = true`), in a temporary directory.
#[cfg(test)]
mod tests {
    #[test]
    fn the_example_runs_and_cleans_up() {
        let d = tempfile::tempdir().unwrap();
        assert_eq!(super::demo(&d.path().display().to_string()), 0);
        assert_eq!(std::fs::read_dir(d.path()).unwrap().count(), 0);
    }
}
