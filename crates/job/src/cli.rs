//! Command line: `flexio [options] [job options] [jobfile...]` with fio's
//! `getopt_long_only` conventions: `-opt=val`, `--opt=val`, `--opt val`, unique prefixes,
//! `--name=` starting a job, options before the first `--name` being global.

use crate::compat::Compat;
use crate::error::{suggest, JobError, Origin};
use crate::jobfile::{RawOpt, RawSection};
use crate::table::{self, Catalog};

/// An output format (`--output-format`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Normal,
    Terse,
    Json,
    JsonPlus,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Eta {
    Auto,
    Always,
    Never,
}

/// Program switches (not job options).
#[derive(Clone, Debug)]
pub struct Switches {
    pub output: Option<String>,
    pub formats: Vec<Format>,
    pub parse_only: bool,
    pub showcmd: bool,
    pub sections: Vec<String>,
    pub version: bool,
    pub help: bool,
    pub eta: Eta,
    pub eta_newline_ms: Option<u64>,
    pub eta_interval_ms: u64,
    pub status_interval_ms: Option<u64>,
    pub terse_version: u32,
    pub readonly: bool,
    pub max_jobs: Option<u32>,
    pub warnings_fatal: bool,
    /// `--cmdhelp[=opt]`: `Some(None)` lists all options.
    pub cmdhelp: Option<Option<String>>,
    /// `--enghelp[=engine[,opt]]`.
    pub enghelp: Option<Option<String>>,
    /// `--merge-blktrace-only`: merge the jobs' blktraces, run nothing.
    pub merge_blktrace_only: bool,
    /// `--inflate-log=FILE`: print a compressed log as text and exit.
    pub inflate_log: Option<String>,
    /// `--compat=3.33|latest`; unset: `FLEXIO_COMPAT`, then the newest fio (see [`Compat`]).
    pub compat: Option<Compat>,
    /// `--debug`, `--idle-prof`, `--trigger*`, `--crctest`, ... (see [`crate::cli_extra`]).
    pub extra: crate::cli_extra::Extra,
    /// `--report FILE`: write the HTML report of this run there at its end (flexio's own).
    pub report: Option<String>,
    /// `--save[=LABEL]`: store the result in the results store (`Some(None)`: no label).
    pub save: Option<Option<String>>,
    /// `--store=PATH|postgres://...`: the results store (default: the XDG data folder's).
    pub store: Option<String>,
    /// Live metrics (flexio's own): `--metrics-listen=[ADDR:]PORT` serves OpenMetrics on
    /// `/metrics`, `--interval-stream=FILE|-` writes JSON Lines intervals, `--interval=T`
    /// is their period (ms), `--live` draws the full-screen view.
    pub live: Live,
    /// Client/server mode (`--server`, `--daemonize`, `--client`, `--remote-config`).
    pub remote: Remote,
}

/// The live-metrics switches.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Live {
    pub metrics_listen: Option<String>,
    pub interval_stream: Option<String>,
    /// `--interval` in ms (`None`: one second).
    pub interval_ms: Option<u64>,
    pub view: bool,
}

impl Live {
    /// Whether any live output was asked for.
    pub fn any(&self) -> bool {
        self.metrics_listen.is_some() || self.interval_stream.is_some() || self.view
    }
}

/// Client/server switches.
#[derive(Clone, Debug, Default)]
pub struct Remote {
    /// `--server[=ADDR]`: `Some(None)` is the default address.
    pub server: Option<Option<String>>,
    /// `--daemonize=PIDFILE` (only with `--server`).
    pub daemonize: Option<String>,
    /// `--client=` entries in order (a file of hosts expands to one entry per host).
    pub clients: Vec<Client>,
    /// `--mpi`: run the job on every MPI rank (under mpirun/srun), one merged result.
    pub mpi: bool,
    /// `--mpi-stonewall` (implies `--mpi`): the first rank to finish a reporting group
    /// stops that group on every rank.
    pub mpi_stonewall: bool,
    /// Who may connect and what their jobs may do (docs/multi-host.md, "Security").
    pub security: Security,
}

/// The server's confinement and the authentication of both ends.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Security {
    /// `--server-root=DIR` (server): remote jobs touch files under DIR only (default: the
    /// server's working directory).
    pub server_root: Option<String>,
    /// `--allow-exec` (server): remote jobs may run programs.
    pub allow_exec: bool,
    /// `--allow-net` (server): remote jobs may use the network engines (connect to or
    /// listen on other hosts' ports from the server).
    pub allow_net: bool,
    /// `--allow-device=PATH` (server, repeatable): block devices remote jobs may use.
    pub allow_devices: Vec<String>,
    /// `--allow-fio-clients` (server): plain fio-protocol clients from other hosts are
    /// accepted, unauthenticated.
    pub allow_fio_clients: bool,
    /// `--auth-token-file=FILE` (both ends): the pre-shared token.
    pub token_file: Option<String>,
    /// `--tls-cert=FILE`, `--tls-key=FILE`, `--tls-ca=FILE` (both ends): TLS with
    /// certificates on both sides, each checked against the CA.
    pub tls_cert: Option<String>,
    pub tls_key: Option<String>,
    pub tls_ca: Option<String>,
}

impl Security {
    /// The server-only switches given, by name.
    pub fn server_only(&self) -> Vec<&'static str> {
        let mut v = Vec::new();
        if self.server_root.is_some() {
            v.push("--server-root");
        }
        if self.allow_exec {
            v.push("--allow-exec");
        }
        if self.allow_net {
            v.push("--allow-net");
        }
        if !self.allow_devices.is_empty() {
            v.push("--allow-device");
        }
        if self.allow_fio_clients {
            v.push("--allow-fio-clients");
        }
        v
    }

    /// Whether any of the authentication switches was given.
    pub fn authenticates(&self) -> bool {
        self.token_file.is_some()
            || self.tls_cert.is_some()
            || self.tls_key.is_some()
            || self.tls_ca.is_some()
    }
}

/// One server to drive, with the job files bound to it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Client {
    /// Address string as given (`host`, `host,port`, `ip6:..`, `sock:/path`).
    pub addr: String,
    /// Job files named after this `--client` (sent to this server only).
    pub job_files: Vec<String>,
    /// `--remote-config` files: opened by the server on its own file system.
    pub remote_configs: Vec<String>,
    /// From a file of hosts: no job files bind to it.
    pub from_list: bool,
}

impl Default for Switches {
    fn default() -> Self {
        Switches {
            output: None,
            formats: vec![Format::Normal],
            parse_only: false,
            showcmd: false,
            sections: Vec::new(),
            version: false,
            help: false,
            eta: Eta::Auto,
            eta_newline_ms: None,
            eta_interval_ms: 1000,
            status_interval_ms: None,
            terse_version: 3,
            readonly: false,
            max_jobs: None,
            warnings_fatal: false,
            cmdhelp: None,
            enghelp: None,
            merge_blktrace_only: false,
            inflate_log: None,
            compat: None,
            extra: Default::default(),
            report: None,
            save: None,
            store: None,
            live: Live::default(),
            remote: Remote::default(),
        }
    }
}

/// The parsed command line.
#[derive(Clone, Debug, Default)]
pub struct Cli {
    pub switches: Switches,
    /// The global part (options before the first `--name`) and one section per `--name`.
    pub sections: Vec<RawSection>,
    /// Job files in the order given, with their argv index.
    pub job_files: Vec<(usize, String)>,
}

pub use crate::cli_extra::Arg;

/// (name, argument, help) of every program switch, for parsing, prefixes and `--help`.
pub const SWITCHES: &[(&str, Arg, &str)] = &[
    ("output", Arg::Required, "Write output to file"),
    (
        "output-format",
        Arg::Required,
        "Output format (terse,json,json+,normal), several comma-separated",
    ),
    ("minimal", Arg::None, "Minimal (terse) output"),
    (
        "append-terse",
        Arg::None,
        "Add terse output to the formats selected so far",
    ),
    (
        "terse-version",
        Arg::Required,
        "Set terse version output format (default 3, or 2 or 4 or 5)",
    ),
    (
        "parse-only",
        Arg::None,
        "Parse options only, don't start any IO",
    ),
    (
        "showcmd",
        Arg::None,
        "Turn a job file into command line options",
    ),
    (
        "section",
        Arg::Required,
        "Only run specified section in job file, multiple sections can be specified",
    ),
    ("version", Arg::None, "Print version info and exit"),
    ("help", Arg::None, "Print this page"),
    (
        "cmdhelp",
        Arg::Optional,
        "Print command help, \"all\" for all of them",
    ),
    (
        "enghelp",
        Arg::Optional,
        "Print ioengine help, or list available ioengines",
    ),
    (
        "eta",
        Arg::Required,
        "When ETA estimate should be printed (always, never or auto)",
    ),
    (
        "eta-newline",
        Arg::Required,
        "Force a new line for every 't' period passed",
    ),
    (
        "eta-interval",
        Arg::Required,
        "Force ETA output every 't' period passed (at least 250ms)",
    ),
    (
        "status-interval",
        Arg::Required,
        "Force full status dump every 't' period passed",
    ),
    (
        "readonly",
        Arg::None,
        "Turn on safety read-only checks, preventing writes",
    ),
    (
        "max-jobs",
        Arg::Required,
        "Maximum number of threads/processes to support",
    ),
    ("warnings-fatal", Arg::None, "Parser warnings are fatal"),
    (
        "merge-blktrace-only",
        Arg::None,
        "Merge blktraces only, don't start any IO",
    ),
    (
        "inflate-log",
        Arg::Required,
        "Inflate and output compressed log",
    ),
    (
        "compat",
        Arg::Required,
        "Reproduce fio 3.33 where it differs from the newest fio (3.33 or latest; env FLEXIO_COMPAT)",
    ),
    (
        "report",
        Arg::Required,
        "Write an HTML report of the run (charts, statistics) to file at its end",
    ),
    (
        "save",
        Arg::Optional,
        "Store the result (with LABEL) in the results store (flexio history, check, diff, rerun)",
    ),
    (
        "store",
        Arg::Required,
        "The results store: a SQLite file or postgres://... (default $XDG_DATA_HOME/flexio/results.db)",
    ),
    (
        "metrics-listen",
        Arg::Required,
        "Serve live OpenMetrics/Prometheus metrics on http://[ADDR:]PORT/metrics while the run lasts (loopback unless ADDR is given)",
    ),
    (
        "interval-stream",
        Arg::Required,
        "Write one JSON line per job, direction and --interval to FILE (- for stdout): I/Os, bandwidth, the interval's latency histogram",
    ),
    (
        "interval",
        Arg::Required,
        "Period of --interval-stream, --metrics-listen and --live samples (default 1s)",
    ),
    ("live", Arg::None, "Full-screen live view of the run in a terminal"),
    (
        "server",
        Arg::Optional,
        "Start a backend server (ADDR: [ip:|ip6:|sock:]host[,port])",
    ),
    (
        "daemonize",
        Arg::Required,
        "Background the server, writing its pid to the given file",
    ),
    (
        "client",
        Arg::Required,
        "Talk to a remote backend server (an address, or a file listing them)",
    ),
    (
        "remote-config",
        Arg::Required,
        "A job file the server opens on its own file system",
    ),
    (
        "server-root",
        Arg::Required,
        "Server: remote jobs may only use files under DIR (default: the working directory)",
    ),
    (
        "allow-exec",
        Arg::None,
        "Server: let remote jobs run programs (exec/cmdtime engines, exec_prerun/postrun, triggers)",
    ),
    (
        "allow-net",
        Arg::None,
        "Server: let remote jobs use the network engines (net, netsplice, http, nbd)",
    ),
    (
        "allow-device",
        Arg::Required,
        "Server: a block device remote jobs may use (repeatable)",
    ),
    (
        "allow-fio-clients",
        Arg::None,
        "Server: accept plain fio-protocol clients from other hosts (unauthenticated)",
    ),
    (
        "auth-token-file",
        Arg::Required,
        "Client and server: authenticate with the pre-shared token in FILE (mode 0600)",
    ),
    (
        "tls-cert",
        Arg::Required,
        "Client and server: TLS, this end's certificate chain (PEM)",
    ),
    (
        "tls-key",
        Arg::Required,
        "Client and server: TLS, this end's private key (PEM, mode 0600)",
    ),
    (
        "tls-ca",
        Arg::Required,
        "Client and server: TLS, the CA certificate the other end's certificate must chain to (PEM)",
    ),
    (
        "mpi",
        Arg::None,
        "Run the job on every MPI rank (mpirun/srun) and merge the ranks' results",
    ),
    (
        "mpi-stonewall",
        Arg::None,
        "As --mpi; the first rank to finish a reporting group stops it on every rank",
    ),
];

/// fio switches flexio does not implement.
const UNSUPPORTED_SWITCHES: &[&str] = &[];

/// The switch table with the extra switches ([`crate::cli_extra::SWITCHES`]).
fn all_switches() -> impl Iterator<Item = &'static (&'static str, Arg, &'static str)> {
    SWITCHES.iter().chain(crate::cli_extra::SWITCHES.iter())
}

enum Target {
    Switch(&'static str, Arg),
    Opt(&'static table::OptDef, &'static str),
    Unsupported(&'static str),
    /// A private option of an engine flexio does not run (its value is kept as given).
    Foreign(&'static str),
}

fn resolve(cat: &Catalog, name: &str, idx: usize, word: &str) -> Result<Target, JobError> {
    let origin = Origin::Argv { index: idx };
    // Exact matches first.
    if let Some((n, a, _)) = all_switches().find(|(n, _, _)| *n == name) {
        return Ok(Target::Switch(n, *a));
    }
    if let Some(d) = cat.lookup(name) {
        let canon = if d.name == name {
            d.name
        } else {
            d.aliases
                .iter()
                .find(|a| **a == name)
                .copied()
                .unwrap_or(d.name)
        };
        return Ok(Target::Opt(d, canon));
    }
    if let Some(u) = UNSUPPORTED_SWITCHES
        .iter()
        .chain(table::UNSUPPORTED.iter())
        .find(|u| **u == name)
    {
        return Ok(Target::Unsupported(u));
    }
    if let Some(n) = cat.fio_only_option(name) {
        return Ok(Target::Foreign(n));
    }
    // Unique prefixes (getopt_long semantics).
    let mut hits: Vec<Target> = Vec::new();
    let mut hit_names: Vec<&str> = Vec::new();
    if !name.is_empty() {
        for (n, a, _) in all_switches() {
            if n.starts_with(name) {
                hits.push(Target::Switch(n, *a));
                hit_names.push(n);
            }
        }
        for d in cat.rows() {
            let mut names = std::iter::once(d.name).chain(d.aliases.iter().copied());
            if let Some(n) = names.find(|n| n.starts_with(name)) {
                hits.push(Target::Opt(d, n));
                hit_names.push(n);
            }
        }
    }
    match hits.len() {
        1 => Ok(hits.pop().unwrap()),
        0 => {
            let cands = all_switches()
                .map(|s| s.0)
                .chain(cat.all_names())
                .chain(UNSUPPORTED_SWITCHES.iter().copied());
            Err(JobError::new(
                origin,
                Some(word),
                format!("unrecognized option '--{name}'"),
            )
            .with_suggestion(suggest(name, cands)))
        }
        _ => Err(JobError::new(
            origin,
            Some(word),
            format!(
                "option '--{name}' is ambiguous; possibilities: {}",
                hit_names
                    .iter()
                    .map(|n| format!("'--{n}'"))
                    .collect::<Vec<_>>()
                    .join(" ")
            ),
        )),
    }
}

fn parse_formats(v: &str, idx: usize, word: &str) -> Result<Vec<Format>, JobError> {
    let mut out = Vec::new();
    for f in v.split(',') {
        let fmt = match f {
            "normal" => Format::Normal,
            "terse" | "minimal" | "csv" => Format::Terse,
            "json" => Format::Json,
            "json+" => Format::JsonPlus,
            _ => {
                return Err(JobError::new(
                    Origin::Argv { index: idx },
                    Some(word),
                    format!("unknown output format '{f}' (use normal, terse, json or json+)"),
                )
                .with_suggestion(suggest(f, ["normal", "terse", "json", "json+"].into_iter())))
            }
        };
        if !out.contains(&fmt) {
            out.push(fmt);
        }
    }
    // json+ includes json.
    if out.contains(&Format::JsonPlus) {
        out.retain(|f| *f != Format::Json);
    }
    Ok(out)
}

fn time_ms(v: &str, idx: usize, word: &str) -> Result<u64, JobError> {
    // fio's --eta-newline/--status-interval default unit is milliseconds... for a bare
    // number it uses seconds; accept suffixes.
    crate::value::parse_time_us(v, true)
        .map(|us| us / 1000)
        .map_err(|e| JobError::new(Origin::Argv { index: idx }, Some(word), e))
}

/// `--client=X`: X names a readable file of whitespace-separated addresses (one server
/// each), else X is one address.
fn client_entries(v: &str) -> Vec<Client> {
    let path = std::path::Path::new(v);
    if path.is_file() {
        if let Ok(text) = std::fs::read_to_string(path) {
            return text
                .split_whitespace()
                .map(|a| Client {
                    addr: a.to_string(),
                    from_list: true,
                    ..Client::default()
                })
                .collect();
        }
    }
    vec![Client {
        addr: v.to_string(),
        ..Client::default()
    }]
}

/// Parse argv (without the program name).
pub fn parse_args(args: &[String], cat: &Catalog) -> Result<Cli, JobError> {
    let mut cli = Cli::default();
    cli.sections.push(RawSection {
        name: "global".into(),
        origin: Origin::Argv { index: 0 },
        global: true,
        opts: Vec::new(),
    });
    let mut i = 0;
    let mut only_files = false;
    while i < args.len() {
        let word = &args[i];
        let idx = i + 1;
        i += 1;
        if only_files || !word.starts_with('-') || word == "-" {
            // After a `--client=ADDR`, a job file is that server's own (fio's binding).
            match cli.switches.remote.clients.last_mut() {
                Some(c) if !c.from_list => c.job_files.push(word.clone()),
                _ => cli.job_files.push((idx, word.clone())),
            }
            continue;
        }
        if word == "--" {
            only_files = true;
            continue;
        }
        let body = word.strip_prefix("--").unwrap_or(&word[1..]);
        let (name, attached) = match body.split_once('=') {
            Some((n, v)) => (n, Some(v.to_string())),
            None => (body, None),
        };
        let origin = Origin::Argv { index: idx };
        match resolve(cat, name, idx, word)? {
            Target::Unsupported(n) => {
                return Err(JobError::new(
                    origin,
                    Some(word),
                    format!("'--{n}' is a fio option that is not supported by flexio"),
                ));
            }
            Target::Switch(sw, arg) => {
                let value = match (arg, attached) {
                    (Arg::None, Some(_)) => {
                        return Err(JobError::new(
                            origin,
                            Some(word),
                            format!("option '--{sw}' doesn't allow an argument"),
                        ))
                    }
                    (Arg::None, None) => None,
                    (Arg::Optional, v) => v,
                    (Arg::Required, Some(v)) => Some(v),
                    (Arg::Required, None) => {
                        if i < args.len() {
                            i += 1;
                            Some(args[i - 1].clone())
                        } else {
                            return Err(JobError::new(
                                origin,
                                Some(word),
                                format!("option '--{sw}' requires an argument"),
                            ));
                        }
                    }
                };
                let v = value.clone().unwrap_or_default();
                let s = &mut cli.switches;
                match sw {
                    "output" => s.output = Some(v),
                    "output-format" => {
                        s.formats = parse_formats(&v, idx, word)?;
                    }
                    "minimal" => {
                        s.formats = vec![Format::Terse];
                    }
                    // fio: the terse format joins the formats chosen so far (a later
                    // --output-format replaces them all).
                    "append-terse" => {
                        if !s.formats.contains(&Format::Terse) {
                            s.formats.push(Format::Terse);
                        }
                    }
                    "terse-version" => {
                        s.terse_version = match v.as_str() {
                            "2" => 2,
                            "3" => 3,
                            "4" => 4,
                            "5" => 5,
                            _ => {
                                return Err(JobError::new(
                                    origin,
                                    Some(word),
                                    "terse version must be 2, 3, 4 or 5",
                                ))
                            }
                        }
                    }
                    "parse-only" => s.parse_only = true,
                    "showcmd" => s.showcmd = true,
                    "section" => s.sections.push(v),
                    "version" => s.version = true,
                    "help" => s.help = true,
                    "cmdhelp" => s.cmdhelp = Some(value),
                    "enghelp" => s.enghelp = Some(value),
                    "eta" => {
                        s.eta = match v.as_str() {
                            "auto" => Eta::Auto,
                            "always" => Eta::Always,
                            "never" => Eta::Never,
                            _ => {
                                return Err(JobError::new(
                                    origin,
                                    Some(word),
                                    "--eta takes always, never or auto",
                                ))
                            }
                        }
                    }
                    "eta-newline" => s.eta_newline_ms = Some(time_ms(&v, idx, word)?.max(1)),
                    "eta-interval" => s.eta_interval_ms = time_ms(&v, idx, word)?.max(250),
                    "status-interval" => {
                        let t = time_ms(&v, idx, word)?;
                        if t == 0 {
                            return Err(JobError::new(
                                origin,
                                Some(word),
                                "status interval must be positive",
                            ));
                        }
                        s.status_interval_ms = Some(t)
                    }
                    "readonly" => s.readonly = true,
                    "merge-blktrace-only" => s.merge_blktrace_only = true,
                    "inflate-log" => s.inflate_log = Some(v),
                    "max-jobs" => {
                        let n: u32 = v.parse().map_err(|_| {
                            JobError::new(origin.clone(), Some(word), "max-jobs takes a number")
                        })?;
                        if n == 0 {
                            return Err(JobError::new(
                                origin,
                                Some(word),
                                "max-jobs must be at least 1",
                            ));
                        }
                        s.max_jobs = Some(n)
                    }
                    "warnings-fatal" => s.warnings_fatal = true,
                    "report" => s.report = Some(v),
                    "save" => s.save = Some(value.filter(|l| !l.is_empty())),
                    "store" => s.store = Some(v),
                    "metrics-listen" => s.live.metrics_listen = Some(v),
                    "interval-stream" => s.live.interval_stream = Some(v),
                    "interval" => {
                        let t = time_ms(&v, idx, word)?;
                        if t < 10 {
                            return Err(JobError::new(
                                origin,
                                Some(word),
                                "--interval must be at least 10ms",
                            ));
                        }
                        s.live.interval_ms = Some(t)
                    }
                    "live" => s.live.view = true,
                    "compat" => {
                        s.compat = Some(
                            Compat::parse(&v).map_err(|m| JobError::new(origin, Some(word), m))?,
                        )
                    }
                    "server" => s.remote.server = Some(value),
                    "daemonize" => s.remote.daemonize = Some(v),
                    "client" => s.remote.clients.extend(client_entries(&v)),
                    "mpi" => s.remote.mpi = true,
                    "server-root" => s.remote.security.server_root = Some(v),
                    "allow-exec" => s.remote.security.allow_exec = true,
                    "allow-net" => s.remote.security.allow_net = true,
                    "allow-device" => s.remote.security.allow_devices.push(v),
                    "allow-fio-clients" => s.remote.security.allow_fio_clients = true,
                    "auth-token-file" => s.remote.security.token_file = Some(v),
                    "tls-cert" => s.remote.security.tls_cert = Some(v),
                    "tls-key" => s.remote.security.tls_key = Some(v),
                    "tls-ca" => s.remote.security.tls_ca = Some(v),
                    "mpi-stonewall" => {
                        s.remote.mpi = true;
                        s.remote.mpi_stonewall = true;
                    }
                    "remote-config" => match s.remote.clients.last_mut() {
                        Some(c) => c.remote_configs.push(v),
                        None => {
                            return Err(JobError::new(
                                origin,
                                Some(word),
                                "--remote-config names a job file for the server named by a preceding --client=",
                            ))
                        }
                    },
                    _ => crate::cli_extra::apply(&mut s.extra, sw, value.as_deref())
                        .map_err(|m| JobError::new(origin, Some(word), m))?,
                }
            }
            Target::Foreign(n) => {
                let value = match attached {
                    Some(v) => Some(v),
                    None if i < args.len() => {
                        i += 1;
                        Some(args[i - 1].clone())
                    }
                    None => None,
                };
                let sec = cli
                    .sections
                    .last_mut()
                    .expect("global section always exists");
                sec.opts.push(RawOpt {
                    origin,
                    key: n.to_string(),
                    value,
                    substitute: false,
                    raw: word.clone(),
                });
            }
            Target::Opt(def, used_name) => {
                let value = if def.takes_optional_value() {
                    attached
                } else if let Some(v) = attached {
                    Some(v)
                } else if i < args.len() {
                    i += 1;
                    Some(args[i - 1].clone())
                } else {
                    return Err(JobError::new(
                        origin,
                        Some(word),
                        format!("option '--{used_name}' requires an argument"),
                    ));
                };
                if def.name == "name" {
                    let name = value.clone().unwrap_or_default();
                    cli.sections.push(RawSection {
                        global: name.starts_with("global"),
                        name,
                        origin: origin.clone(),
                        opts: Vec::new(),
                    });
                }
                let sec = cli
                    .sections
                    .last_mut()
                    .expect("global section always exists");
                sec.opts.push(RawOpt {
                    origin,
                    key: used_name.to_string(),
                    value,
                    substitute: false,
                    raw: word.clone(),
                });
            }
        }
    }
    Ok(cli)
}

/// Help text for `--help`.
pub fn usage() -> String {
    let mut s = String::from("flexio [options] [job options] <job file(s)>\n");
    for (n, a, h) in all_switches() {
        let left = match a {
            Arg::None => format!("--{n}"),
            Arg::Required => format!("--{n}=x"),
            Arg::Optional => format!("--{n}[=x]"),
        };
        s.push_str(&format!("  {left:<22}{h}\n"));
    }
    s.push_str("Job options are written --option=value (see --cmdhelp); --name=x starts a job.\n");
    s.push_str(
        "A bare `flexio` (no job option, no job file) runs its built-in default benchmark in the\ncurrent directory; job options without --name define no job.\n",
    );
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(s: &str) -> Vec<String> {
        s.split_whitespace().map(str::to_string).collect()
    }

    #[test]
    fn globals_before_first_name() {
        let c = parse_args(
            &args(
                "-filename=/x -rw=write --time_based --runtime=60 -bs=4k -name=file1 --iodepth=16",
            ),
            &crate::table::CORE_ONLY,
        )
        .unwrap();
        assert_eq!(c.sections.len(), 2);
        assert!(c.sections[0].global);
        assert_eq!(c.sections[0].opts.len(), 5);
        assert_eq!(c.sections[0].opts[2].value, None);
        assert_eq!(c.sections[1].name, "file1");
        assert_eq!(c.sections[1].opts[0].key, "name");
        assert_eq!(c.sections[1].opts[1].value.as_deref(), Some("16"));
    }

    #[test]
    fn space_separated_values_and_job_files() {
        let c = parse_args(
            &args("--bs 8k a.fio --output-format json,normal b.fio"),
            &crate::table::CORE_ONLY,
        )
        .unwrap();
        assert_eq!(c.sections[0].opts[0].value.as_deref(), Some("8k"));
        assert_eq!(
            c.job_files.iter().map(|j| j.1.as_str()).collect::<Vec<_>>(),
            vec!["a.fio", "b.fio"]
        );
        assert_eq!(c.switches.formats, vec![Format::Json, Format::Normal]);
    }

    #[test]
    fn prefixes_ambiguity_and_suggestions() {
        let c = parse_args(&args("--name=x --runti=3"), &crate::table::CORE_ONLY).unwrap();
        assert_eq!(c.sections[1].opts[1].key, "runtime");
        let e = parse_args(&args("--iodep=4"), &crate::table::CORE_ONLY).unwrap_err();
        assert!(e.msg.contains("ambiguous"), "{e}");
        let e = parse_args(&args("--runtm=3"), &crate::table::CORE_ONLY).unwrap_err();
        assert_eq!(e.suggestion.as_deref(), Some("runtime"));
        let e = parse_args(&args("--direct"), &crate::table::CORE_ONLY).unwrap_err();
        assert!(e.msg.contains("requires an argument"), "{e}");
        if let Some(n) = crate::table::UNSUPPORTED.first() {
            let e = parse_args(&args(&format!("--{n}=1")), &crate::table::CORE_ONLY).unwrap_err();
            assert!(e.msg.contains("not supported by flexio"), "{e}");
        }
    }

    #[test]
    fn json_plus_subsumes_json() {
        let c = parse_args(
            &args("--output-format=json,json+"),
            &crate::table::CORE_ONLY,
        )
        .unwrap();
        assert_eq!(c.switches.formats, vec![Format::JsonPlus]);
        assert!(parse_args(&args("--output-format=xml"), &crate::table::CORE_ONLY).is_err());
    }

    #[test]
    fn client_binds_following_job_files() {
        let c = parse_args(
            &args("--client=h1 a.fio --client=ip6:::1,4444 b.fio --remote-config=/r.fio"),
            &crate::table::CORE_ONLY,
        )
        .unwrap();
        let cl = &c.switches.remote.clients;
        assert_eq!(cl.len(), 2);
        assert_eq!(
            (cl[0].addr.as_str(), &cl[0].job_files[..]),
            ("h1", &["a.fio".to_string()][..])
        );
        assert_eq!(cl[1].addr, "ip6:::1,4444");
        assert_eq!(cl[1].job_files, vec!["b.fio".to_string()]);
        assert_eq!(cl[1].remote_configs, vec!["/r.fio".to_string()]);
        assert!(c.job_files.is_empty());
        let c = parse_args(&args("x.fio --server"), &crate::table::CORE_ONLY).unwrap();
        assert_eq!(c.switches.remote.server, Some(None));
        assert_eq!(c.job_files.len(), 1);
        assert!(parse_args(&args("--remote-config=a"), &crate::table::CORE_ONLY).is_err());
    }

    #[test]
    fn client_file_lists_hosts() {
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join("hosts");
        std::fs::write(&f, "h1\n sock:/x  h3,9000\n").unwrap();
        let c = parse_args(
            &[format!("--client={}", f.display()), "j.fio".into()],
            &crate::table::CORE_ONLY,
        )
        .unwrap();
        let a: Vec<&str> = c
            .switches
            .remote
            .clients
            .iter()
            .map(|c| c.addr.as_str())
            .collect();
        assert_eq!(a, ["h1", "sock:/x", "h3,9000"]);
        assert_eq!(
            c.job_files.len(),
            1,
            "job files after a host list are for every server"
        );
    }
}
