//! `mpirun -np N [--hostfile H] flexio --mpi JOB` (or `srun`): the job on every rank, one
//! merged result printed by rank 0 (cargo feature `mpi`).
//!
//! * Files: a job that names its file (`filename=`) shares it, each rank on its own segment
//!   of it (rank r at `offset + r * size`, as IOR's segmented shared file; rank 0 lays the
//!   whole file out first); otherwise every rank gets its own files (`<name>.rank<r>`).
//! * A barrier before each reporting group (stonewall segment) keeps the ranks in step.
//! * Results: each rank encodes its run as a fio server would send it (JOB_OPT, TS, GS, DU,
//!   STOP frames) and sends the bytes to rank 0, which presents them as the client does
//!   ([`super::present`]): "All clients" merged losslessly, per-rank runtimes and straggle.
//! * Clock offsets: rank 0 measures each rank's wall clock with a ping-pong.
//!
//! MPI is called from the main thread only (MPI_THREAD_FUNNELED); the run itself goes on
//! in a thread whose barrier requests the main thread carries out.

use super::client::{HostResult, Shared};
use crate::app::{self, RunEvents};
use crate::plan::ThreadPlan;
use crate::progress::Progress;
use crate::signals::Signals;
use flexio_job::{Cli, Format};
use flexio_remote::convert::wire_run_of;
use flexio_remote::msg::{Stop, Text, LOG_INFO};
use flexio_remote::{Decoder, Message, Sender};
use mpi::collective::SystemOperation;
use mpi::traits::*;
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::mpsc;
use std::sync::{Arc, Mutex};

fn wall_ns() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as i64)
        .unwrap_or(0)
}

/// The run's hooks: rank 0 prints the preamble; each segment start asks the main thread
/// for a barrier and waits for it.
struct Events {
    rank: i32,
    ask: Mutex<mpsc::Sender<()>>,
    done: Mutex<mpsc::Receiver<()>>,
}

impl RunEvents for Events {
    fn text(&self, s: &str) {
        if self.rank == 0 {
            print!("{s}");
        }
    }
    fn running(&self, _: &[ThreadPlan], _: &Arc<Vec<Progress>>) {}
    fn segment_starts(&self, _segment: usize) {
        if let (Ok(a), Ok(d)) = (self.ask.lock(), self.done.lock()) {
            if a.send(()).is_ok() {
                let _ = d.recv();
            }
        }
    }
}

fn per_rank(p: &std::path::Path, rank: i32) -> PathBuf {
    let mut s = p.as_os_str().to_owned();
    s.push(format!(".rank{rank}"));
    PathBuf::from(s)
}

/// Entry point of `--mpi`; returns this rank's exit status.
pub fn main(cli: Cli, sigs: &(Arc<AtomicBool>, Signals)) -> i32 {
    let Some((universe, _)) = mpi::initialize_with_threading(mpi::Threading::Funneled) else {
        eprintln!("flexio: --mpi: MPI could not be initialised (run flexio under mpirun or srun)");
        return 1;
    };
    let world = universe.world();
    let rank = world.rank();
    let size = world.size();
    let host = rustix::system::uname()
        .nodename()
        .to_string_lossy()
        .into_owned();
    let mut prep = app::prepare_cli(cli.clone(), &|p| std::fs::read(p));
    // Every rank must agree to run, or none does.
    let ok = i32::from(prep.is_ok());
    let mut all_ok = 0i32;
    world.all_reduce_into(&ok, &mut all_ok, SystemOperation::min());
    if all_ok == 0 {
        if let Err(e) = &prep {
            eprintln!("flexio: rank {rank} ({host}): {e}");
        } else if rank == 0 {
            eprintln!("flexio: --mpi: another rank could not prepare the job; nothing ran");
        }
        return 1;
    }
    let Ok(p) = prep.as_mut() else { return 1 };
    let shared_global = p.set.global_echo.iter().any(|(k, _)| k == "filename");
    let mut full: Vec<(usize, u64)> = Vec::new();
    for (i, t) in p.plans.iter_mut().enumerate() {
        let shared = shared_global || t.echo.iter().any(|(k, _)| k == "filename");
        for f in t.files.iter_mut().filter(|f| f.block.is_none()) {
            if shared {
                let seg = f.region.len;
                f.region.start += rank as u64 * seg;
                f.need = f.need.max(f.region.start + seg);
                full.push((i, f.region.start + (size - rank) as u64 * seg));
            } else {
                f.path = per_rank(&f.path, rank);
            }
        }
    }
    // A shared file is laid out once, whole, by rank 0, before anyone uses it.
    if rank == 0 && !full.is_empty() {
        for t in p.plans.iter() {
            if t.io.layout_in_thread {
                continue;
            }
            let mut whole = t.clone();
            for f in whole.files.iter_mut() {
                if let Some((_, n)) = full.iter().find(|(i, _)| p.plans[*i].name == t.name) {
                    f.need = f.need.max(*n);
                }
            }
            let which = crate::files::files_to_lay_out(&whole);
            if let Err(e) = crate::files::lay_out(&whole, &which, cli.switches.readonly) {
                eprintln!("flexio: rank 0: laying out the shared file failed: {e}");
            }
        }
    }
    if rank == 0 && cli.switches.formats.contains(&Format::Normal) && cli.switches.output.is_none()
    {
        println!("{}{}", app::job_headers(&p.plans), app::VERSION);
    }
    world.barrier();
    // Clock offsets: rank 0 pings each rank, which answers with its wall clock.
    let mut offsets: Vec<Option<(i128, i128)>> = vec![None; size as usize];
    for r in 1..size {
        if rank == 0 {
            let t0 = wall_ns();
            world.process_at_rank(r).send(&t0);
            let (tr, _) = world.process_at_rank(r).receive::<i64>();
            let t1 = wall_ns();
            let mid = (t0 as i128 + t1 as i128) / 2;
            offsets[r as usize] = Some((tr as i128 - mid, (t1 as i128 - t0 as i128) / 2 + 1));
        } else if rank == r {
            let _ = world.process_at_rank(0).receive::<i64>();
            world.process_at_rank(0).send(&wall_ns());
        }
    }
    offsets[0] = Some((0, 0));
    // The run, in a thread; this thread carries out its barriers.
    let (ask_tx, ask_rx) = mpsc::channel::<()>();
    let (done_tx, done_rx) = mpsc::channel::<()>();
    let ev = Arc::new(Events {
        rank,
        ask: Mutex::new(ask_tx),
        done: Mutex::new(done_rx),
    });
    let Ok(prepared) = prep else { return 1 };
    let ev2 = ev.clone();
    let term = sigs.0.clone();
    let signals = sigs.1.clone();
    let h = std::thread::spawn(move || app::run_prepared(prepared, &*ev2, term, signals));
    drop(ev);
    let nseg_barriers = ask_rx.iter();
    for () in nseg_barriers {
        world.barrier();
        let _ = done_tx.send(());
    }
    let out = match h.join() {
        Ok(o) => o,
        Err(_) => {
            eprintln!("flexio: rank {rank}: the run failed (internal error)");
            world.abort(1);
        }
    };
    let end = wall_ns();
    // This rank's results, as a server sends them.
    let mut bytes = Vec::new();
    let mut push = |m: Message| bytes.extend(m.to_frames(0));
    push(Message::Text(Text {
        level: LOG_INFO,
        log_sec: (end / 1_000_000_000) as u64,
        log_usec: ((end % 1_000_000_000) / 1000) as u64,
        text: host.clone(),
    }));
    if let Some(rep) = &out.report {
        let wr = wire_run_of(&out.results, rep, out.disk_msec);
        for o in wr.global_opts {
            push(Message::JobOpt(o));
        }
        for (opts, ts) in wr.reports {
            for o in opts {
                push(Message::JobOpt(o));
            }
            push(Message::Ts(Box::new(ts)));
        }
        for g in wr.groups {
            push(Message::Gs(g));
        }
        for d in wr.disks {
            push(Message::Du(d));
        }
    }
    push(Message::Stop(Stop {
        error: out.code.max(0) as u32,
        signal: 0,
    }));
    if rank != 0 {
        world.process_at_rank(0).send(&bytes[..]);
        return out.code;
    }
    let mut hosts = vec![host_of(&bytes, 0, offsets[0])];
    for r in 1..size {
        let (b, _) = world.process_at_rank(r).receive_vec::<u8>();
        hosts.push(host_of(&b, r, offsets[r as usize]));
    }
    let sw = &cli.switches;
    let sh = Shared {
        stop: AtomicBool::new(false),
        out: super::present::Out::new(sw.output.is_some()),
        normal: sw.formats.contains(&Format::Normal),
        terse: sw.formats.contains(&Format::Terse),
    };
    if sh.normal {
        for h in hosts.iter().filter(|h| !h.ts.is_empty()) {
            let rep = super::present::host_report(h).0;
            sh.out.text(&format!("<{}> \n", h.name));
            sh.out.text(&flexio_output::clients::host_block(&rep));
        }
    }
    super::present::finish(&cli, &sh, &mut hosts, sigs.1.any())
}

/// One rank's results from the bytes it sent.
fn host_of(b: &[u8], rank: i32, offset: Option<(i128, i128)>) -> HostResult {
    let mut h = HostResult {
        addr: format!("rank {rank}"),
        name: format!("rank{rank}"),
        offset,
        ..Default::default()
    };
    let mut dec = Decoder::default();
    dec.push(b);
    let mut opts = Vec::new();
    let mut end: i128 = 0;
    loop {
        let raw = match dec.next_message() {
            Ok(Some(r)) => r,
            Ok(None) => break,
            Err(e) => {
                h.error = Some(format!("its results could not be decoded: {e}"));
                break;
            }
        };
        match Message::decode(&raw, Sender::Server) {
            Ok(Message::Text(t)) => {
                h.name = format!("rank{rank}@{}", t.text);
                end = t.log_sec as i128 * 1_000_000_000 + t.log_usec as i128 * 1000;
                // On rank 0's clock.
                end -= offset.map(|o| o.0).unwrap_or(0);
            }
            Ok(Message::JobOpt(o)) if o.global => h.global_opts.push(o),
            Ok(Message::JobOpt(o)) => opts.push(o),
            Ok(Message::Ts(ts)) => h.ts.push((std::mem::take(&mut opts), *ts, end)),
            Ok(Message::Gs(g)) => h.gs.push(g),
            Ok(Message::Du(d)) => h.du.push(d),
            Ok(Message::Stop(s)) => h.stop = Some((s.error, s.signal)),
            Ok(_) => {}
            Err(e) => h.error = Some(format!("its results could not be decoded: {e}")),
        }
    }
    if h.stop.is_none() && h.error.is_none() {
        h.error = Some("its results are incomplete".into());
    }
    h
}
