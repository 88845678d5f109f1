//! A mutation fuzzer for flexio's job parser and command line, on stable Rust.
//!
//! Targets (both in-process, through the pure `flexio-job` crate):
//! * job files: the input is the content of `fuzz.fio`; `include` of `fuzz.fio` itself,
//!   of a few fixed helper files, or of anything else (not found) is served by the reader;
//! * command lines: the input, split at NUL bytes and newlines, is argv.
//!
//! Inputs come from a seed corpus (`--corpus DIR`, default `tests/corpus`), mutated with byte
//! flips, insertions, deletions, duplications, splices and tokens from a dictionary built
//! from the option table (every option name, and values that stress parsers). It is not
//! coverage guided; inputs whose outcome (error text up to the first digit, or the shape
//! of the parsed job set) has not been seen before join the working corpus, which steers it
//! towards new parser paths. A panic is a finding: the input is written to
//! `fuzz/crashes/` and the run fails.
//!
//! Two more targets speak the client/server wire protocol (`--target packets|server`,
//! bodies in `flexio::remote::fuzzing`, shared with the libFuzzer targets of
//! `fuzz/libfuzzer/`): the packet decoder for every message kind, and the server's
//! connection state machine fed one client's bytes. Their seeds are well-formed messages of
//! every kind. An input that runs longer than 10 s is a hang: saved, and the run fails.
//!
//! Usage: flexio-fuzz [--target jobs|packets|server] [--seconds N] [--seed S] [--corpus DIR]
//!                    [--crashes DIR]
//!        flexio-fuzz [--target T] --replay FILE...     (run given inputs once, e.g. a crash)
//!        flexio-fuzz --target T --write-seeds DIR      (the seeds, for cargo fuzz)

use flexio_job::{load, parse_args, Host, LoadEnv};
use std::collections::HashSet;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        // xorshift64*
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545F4914F6CDD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next() % n as u64) as usize
        }
    }
}

fn env_lookup(name: &str) -> Option<String> {
    match name {
        "HOME" => Some("/home/fuzz".into()),
        "EMPTY" => Some(String::new()),
        "BIG" => Some("9".repeat(64)),
        _ => None,
    }
}

fn host() -> Host<'static> {
    Host {
        ncpus: 2,
        mb_memory: 24 * 1024,
        pagesize: 4096,
        env: &env_lookup,
    }
}

/// Run one input through both targets; the outcome's "shape" for novelty tracking.
fn exec(input: &[u8]) -> String {
    let data = input.to_vec();
    let reader = move |p: &Path| -> std::io::Result<Vec<u8>> {
        match p.to_str().unwrap_or("") {
            "fuzz.fio" | "./fuzz.fio" => Ok(data.clone()),
            "inc.fio" => Ok(b"[global]\nbs=4k\n".to_vec()),
            "loop.fio" => Ok(b"include loop.fio\n".to_vec()),
            _ => Err(std::io::Error::from(std::io::ErrorKind::NotFound)),
        }
    };
    let env = LoadEnv {
        host: host(),
        read: &reader,
        catalog: &flexio_engine::CATALOG,
    };
    let mut shape = String::new();
    // As a job file.
    let args = ["flexio".to_string(), "fuzz.fio".to_string()];
    if let Ok(cli) = parse_args(&args[1..], &flexio_engine::CATALOG) {
        shape.push_str(&outcome(load(&cli, &env)));
    }
    // As a command line.
    let text = String::from_utf8_lossy(input);
    let argv: Vec<String> = text
        .split(['\0', '\n'])
        .filter(|s| !s.is_empty())
        .take(256)
        .map(str::to_string)
        .collect();
    match parse_args(&argv, &flexio_engine::CATALOG) {
        Ok(cli) => {
            shape.push('|');
            shape.push_str(&outcome(load(&cli, &env)));
        }
        Err(e) => {
            shape.push_str("|cli:");
            shape.push_str(&error_shape(&e.to_string()));
        }
    }
    shape
}

fn outcome(r: Result<flexio_job::JobSet, flexio_job::JobError>) -> String {
    match r {
        Ok(set) => {
            // Exercise the consumers of a parsed set too: --showcmd and the planner (which
            // only reads: file sizes, block devices; engines are not probed).
            let _ = flexio_job::showcmd::showcmd(&set);
            let planned = if set.jobs.iter().map(|j| j.opts.numjobs as u64).sum::<u64>() <= 64 {
                match flexio_run::plan::plan_with(&set, true, false) {
                    Ok(p) => format!("plan:{}", p.len().min(8)),
                    Err(e) => format!("plan-err:{}", error_shape(&e.to_string())),
                }
            } else {
                String::new()
            };
            format!(
                "ok:{}:{}:{planned}",
                set.jobs.len().min(8),
                set.warnings.len().min(4)
            )
        }
        Err(e) => format!("err:{}", error_shape(&e.to_string())),
    }
}

/// An error message up to its first digit or quote: the kind of error, not its data.
fn error_shape(m: &str) -> String {
    let start = m.find("': ").map(|i| i + 3).unwrap_or(0);
    m[start..]
        .chars()
        .take_while(|c| !c.is_ascii_digit() && *c != '\'' && *c != '"')
        .take(48)
        .collect()
}

fn dictionary() -> Vec<Vec<u8>> {
    let mut d: Vec<Vec<u8>> = Vec::new();
    for o in flexio_engine::CATALOG.rows() {
        d.push(o.name.as_bytes().to_vec());
        d.push(format!("{}=", o.name).into_bytes());
        for a in o.aliases {
            d.push(a.as_bytes().to_vec());
        }
    }
    for s in flexio_job::table::UNSUPPORTED {
        d.push(format!("{s}=1").into_bytes());
    }
    for s in [
        "\n[",
        "]\n",
        "[global]\n",
        "[job]\n",
        "\ninclude ",
        "include fuzz.fio\n",
        "include loop.fio\n",
        "include inc.fio\n",
        "${HOME}",
        "${BIG}",
        "${NOPE}",
        "${",
        "$ncpus",
        "$mb_memory",
        "$pagesize",
        "((",
        "))",
        "*",
        "/",
        "-",
        "%",
        ":",
        ",",
        "=",
        ";",
        "#",
        "\\",
        "\0",
        "\r\n",
        "--name=",
        "--",
        "-",
        "--output-format=",
        "--section=",
        "--minimal",
        "--terse-version=",
        "--cmdhelp",
        "--showcmd",
        "--parse-only",
        "18446744073709551615",
        "18446744073709551616",
        "-1",
        "0",
        "1e400",
        "0x",
        "0xffffffffffffffff",
        "9999999999999999999999999",
        "4k",
        "1M",
        "1g",
        "1t",
        "1p",
        "1e",
        "4kib",
        "1.5M",
        "100%",
        "101%",
        "0%",
        "1s",
        "1ms",
        "1us",
        "1h",
        "1d",
        "-5s",
        "4k-1k",
        "1k-4k",
        "4k/50:8k/60",
        "randrw:8",
        "randread:-1",
        "zipf:0.5",
        "zipf:-1",
        "pareto:2",
        "normal:0",
        "zoned:50/50",
        "zoned_abs:10/1g:90/",
        "tausworthe64",
        "lfsr",
        "io_uring",
        "libaio",
        "null",
        "psync",
        "cpu",
        "0-1023",
        "1,2,3",
        "4096",
        "nan",
        "inf",
        "true",
        "yes",
        "on",
        "é",
        "€",
        "🙂",
        "\u{FFFD}",
        "\u{200B}",
        "filename=/dev/null",
        "directory=/proc",
        "filename=fuzz.fio",
        "offset=",
        "offset_increment=",
        "io_size=",
        "filesize=",
        "nrfiles=",
        "zonesize=",
    ] {
        d.push(s.as_bytes().to_vec());
    }
    d
}

fn mutate(rng: &mut Rng, input: &mut Vec<u8>, dict: &[Vec<u8>], pool: &[Vec<u8>]) {
    let n = 1 + rng.below(6);
    for _ in 0..n {
        let len = input.len();
        match rng.below(9) {
            0 if len > 0 => {
                let i = rng.below(len);
                input[i] ^= 1 << rng.below(8);
            }
            1 if len > 0 => {
                let i = rng.below(len);
                input[i] = rng.next() as u8;
            }
            2 | 3 => {
                let t = &dict[rng.below(dict.len())];
                let i = rng.below(len + 1);
                input.splice(i..i, t.iter().copied());
            }
            4 if len > 0 => {
                let i = rng.below(len);
                let j = (i + 1 + rng.below(32)).min(len);
                input.drain(i..j);
            }
            5 if len > 0 => {
                let i = rng.below(len);
                let j = (i + 1 + rng.below(64)).min(len);
                let chunk: Vec<u8> = input[i..j].to_vec();
                let k = rng.below(input.len() + 1);
                input.splice(k..k, chunk);
            }
            6 if !pool.is_empty() => {
                let other = &pool[rng.below(pool.len())];
                if !other.is_empty() {
                    let i = rng.below(other.len());
                    let j = (i + 1 + rng.below(128)).min(other.len());
                    let k = rng.below(input.len() + 1);
                    input.splice(k..k, other[i..j].iter().copied());
                }
            }
            7 => {
                // A fresh line: option=value from the dictionary.
                let k = &dict[rng.below(dict.len())];
                let v = &dict[rng.below(dict.len())];
                let mut line = b"\n".to_vec();
                line.extend_from_slice(k);
                line.push(b'=');
                line.extend_from_slice(v);
                line.push(b'\n');
                let i = rng.below(len + 1);
                input.splice(i..i, line);
            }
            _ => {
                let i = rng.below(len + 1);
                input.insert(i, rng.next() as u8);
            }
        }
        if input.len() > 64 * 1024 {
            input.truncate(64 * 1024);
        }
    }
}

fn load_corpus(dir: &Path) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        let mut entries: Vec<PathBuf> = rd.flatten().map(|e| e.path()).collect();
        entries.sort();
        for p in entries {
            if p.is_dir() {
                stack.push(p);
            } else if let Ok(b) = std::fs::read(&p) {
                out.push(b);
            }
        }
    }
    out
}

#[derive(Clone, Copy, PartialEq)]
enum Target {
    Jobs,
    Packets,
    Server,
}

fn scratch_root() -> &'static Path {
    static ROOT: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    ROOT.get_or_init(|| {
        let d = std::env::temp_dir().join(format!("flexio-fuzz-root-{}", std::process::id()));
        let _ = std::fs::create_dir_all(&d);
        std::fs::canonicalize(&d).unwrap_or(d)
    })
}

fn exec_target(t: Target, input: &[u8]) -> String {
    match t {
        Target::Jobs => exec(input),
        Target::Packets => flexio::remote::fuzzing::packets(input),
        Target::Server => flexio::remote::fuzzing::server(input, scratch_root()),
    }
}

fn save(input: &[u8], crashes: &Path, kind: &str) -> PathBuf {
    let _ = std::fs::create_dir_all(crashes);
    let h = input.iter().fold(0xcbf29ce484222325u64, |h, b| {
        (h ^ *b as u64).wrapping_mul(0x100000001b3)
    });
    let p = crashes.join(format!("{kind}-{h:016x}"));
    let _ = std::fs::write(&p, input);
    p
}

/// Run `input`; on a panic, save it and report where.
fn run_guarded(t: Target, input: &[u8], crashes: &Path) -> Result<String, PathBuf> {
    match catch_unwind(AssertUnwindSafe(|| exec_target(t, input))) {
        Ok(s) => Ok(s),
        Err(_) => Err(save(input, crashes, "crash")),
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut seconds = 60u64;
    let mut seed = 0x5eedu64;
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut corpus_dir = root.join("tests/corpus");
    let mut crashes = root.join("fuzz/crashes");
    let mut replay: Vec<String> = Vec::new();
    let mut write_seeds: Option<PathBuf> = None;
    let mut target = Target::Jobs;
    let mut i = 0;
    while i < args.len() {
        let next = || args.get(i + 1).cloned().unwrap_or_default();
        match args[i].as_str() {
            "--seconds" => seconds = next().parse().expect("--seconds N"),
            "--seed" => seed = next().parse().expect("--seed S"),
            "--corpus" => corpus_dir = PathBuf::from(next()),
            "--crashes" => crashes = PathBuf::from(next()),
            "--write-seeds" => write_seeds = Some(PathBuf::from(next())),
            "--target" => {
                target = match next().as_str() {
                    "jobs" => Target::Jobs,
                    "packets" => Target::Packets,
                    "server" => Target::Server,
                    t => {
                        eprintln!("unknown target {t} (jobs, packets, server)");
                        std::process::exit(2);
                    }
                }
            }
            "--replay" => {
                replay = args[i + 1..].to_vec();
                break;
            }
            other => {
                eprintln!("unknown argument {other}");
                std::process::exit(2);
            }
        }
        i += 2;
    }
    // Panics are findings, reported once with the saved input.
    std::panic::set_hook(Box::new(|_| {}));
    if !replay.is_empty() {
        for f in &replay {
            let input = std::fs::read(f).expect("replay file");
            match run_guarded(target, &input, &crashes) {
                Ok(s) => println!("{f}: {s}"),
                Err(_) => {
                    let _ = std::panic::take_hook();
                    exec_target(target, &input); // panic again, with the message
                }
            }
        }
        return;
    }
    let mut dict = dictionary();
    let mut pool = match target {
        Target::Jobs => load_corpus(&corpus_dir),
        Target::Packets => flexio::remote::fuzzing::seeds(),
        // The first byte picks the kind of client (0: plain fio protocol).
        Target::Server => flexio::remote::fuzzing::seeds()
            .into_iter()
            .map(|s| [&[0u8][..], &s].concat())
            .collect(),
    };
    if target != Target::Jobs {
        for b in [0u8, 1, 2, 0x40, 0x80, 0xc0, 0xff] {
            dict.push(vec![b]);
        }
        dict.extend(pool.iter().map(|s| s[..s.len().min(16)].to_vec()));
    }
    if pool.is_empty() {
        pool.push(b"[global]\nbs=4k\n[job]\nrw=randread\nsize=1m\n".to_vec());
    }
    if let Some(dir) = write_seeds {
        // A seed corpus for the libFuzzer targets (fuzz/libfuzzer/).
        std::fs::create_dir_all(&dir).expect("seed folder");
        for (i, s) in pool.iter().enumerate() {
            std::fs::write(dir.join(format!("seed-{i:03}")), s).expect("seed file");
        }
        println!(
            "flexio-fuzz: {} seeds written to {}",
            pool.len(),
            dir.display()
        );
        return;
    }
    // Hangs: a watchdog saves the input that has run for more than 10 s and fails the run.
    // Executions stamp their start in ms since `origin` (0: none running).
    let origin = Instant::now();
    let current: std::sync::Arc<(std::sync::Mutex<Vec<u8>>, std::sync::atomic::AtomicU64)> =
        Default::default();
    {
        let current = current.clone();
        let crashes = crashes.clone();
        std::thread::spawn(move || loop {
            std::thread::sleep(Duration::from_secs(1));
            let started = current.1.load(std::sync::atomic::Ordering::Relaxed);
            let now = origin.elapsed().as_millis() as u64;
            if started != 0 && now.saturating_sub(started) > 10_000 {
                let input = current.0.lock().map(|g| g.clone()).unwrap_or_default();
                let p = save(&input, &crashes, "hang");
                eprintln!(
                    "flexio-fuzz: HANG (over 10 s); input saved to {}",
                    p.display()
                );
                std::process::exit(1);
            }
        });
    }
    eprintln!(
        "flexio-fuzz: target {}, seed {seed}, {} seed inputs, {} dictionary tokens, {seconds} s",
        match target {
            Target::Jobs => "jobs",
            Target::Packets => "packets",
            Target::Server => "server",
        },
        pool.len(),
        dict.len()
    );
    let mut rng = Rng(seed | 1);
    let mut seen: HashSet<String> = HashSet::new();
    let start = Instant::now();
    let deadline = start + Duration::from_secs(seconds);
    let mut execs = 0u64;
    let mut crashes_found = 0u32;
    let mut last_report = Instant::now();
    while Instant::now() < deadline {
        let mut input = pool[rng.below(pool.len())].clone();
        mutate(&mut rng, &mut input, &dict, &pool);
        execs += 1;
        if let Ok(mut g) = current.0.lock() {
            g.clone_from(&input);
        }
        current.1.store(
            (origin.elapsed().as_millis() as u64).max(1),
            std::sync::atomic::Ordering::Relaxed,
        );
        let outcome = run_guarded(target, &input, &crashes);
        current.1.store(0, std::sync::atomic::Ordering::Relaxed);
        match outcome {
            Ok(shape) => {
                if seen.insert(shape) && pool.len() < 20_000 {
                    pool.push(input);
                }
            }
            Err(p) => {
                crashes_found += 1;
                eprintln!(
                    "flexio-fuzz: PANIC after {execs} executions; input saved to {}",
                    p.display()
                );
                if crashes_found >= 20 {
                    break;
                }
            }
        }
        if last_report.elapsed() > Duration::from_secs(60) {
            eprintln!(
                "flexio-fuzz: {:>5} s, {execs} executions ({:.0}/s), {} inputs, {} outcomes",
                start.elapsed().as_secs(),
                execs as f64 / start.elapsed().as_secs_f64(),
                pool.len(),
                seen.len()
            );
            last_report = Instant::now();
        }
    }
    if target == Target::Server {
        let _ = std::fs::remove_dir_all(scratch_root());
    }
    if crashes_found > 0 {
        eprintln!("flexio-fuzz: {crashes_found} panicking inputs in {execs} executions");
        std::process::exit(1);
    }
    println!(
        "flexio-fuzz: no panic in {execs} executions over {:.0} s ({:.0}/s); {} inputs, {} distinct outcomes",
        start.elapsed().as_secs_f64(),
        execs as f64 / start.elapsed().as_secs_f64(),
        pool.len(),
        seen.len()
    );
}
