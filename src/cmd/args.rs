//! The subcommands' command lines through clap: each subcommand declares its arguments as a
//! `#[derive(clap::Parser)]` struct, and [`args_of`] parses them with the same prologue for
//! all (`-h`/`--help` on stdout with status 0; a bad argument on stderr with clap's message,
//! did-you-mean and usage line, and the subcommand's status for bad arguments). The value
//! parsers and argument groups the subcommands share are here too.

use clap::error::ErrorKind;
use clap::{ArgMatches, CommandFactory, FromArgMatches};
use flexio_job::value::{parse_size, KbBase};
use std::path::PathBuf;

/// `C`'s command as a user types it: `flexio NAME`.
pub fn command<C: CommandFactory>() -> clap::Command {
    let c = C::command();
    let bin = format!("flexio {}", c.get_name());
    c.bin_name(bin)
}

/// Parse `args` (the words after the subcommand's name) as `C`, then `check` it (the checks
/// across arguments; it also sees the matches, for the order of arguments) into what the
/// subcommand runs with. Errors come as clap's, with the usage line.
pub fn try_parse<C: CommandFactory + FromArgMatches, A>(
    args: &[String],
    check: impl FnOnce(C, &ArgMatches) -> Result<A, String>,
) -> Result<A, clap::Error> {
    let mut cmd = command::<C>();
    let bin = cmd.get_bin_name().unwrap_or("flexio").to_string();
    let m = cmd.try_get_matches_from_mut(std::iter::once(bin).chain(args.iter().cloned()))?;
    let c = C::from_arg_matches(&m).map_err(|e| e.format(&mut cmd))?;
    check(c, &m).map_err(|e| cmd.error(ErrorKind::ValueValidation, e))
}

/// [`try_parse`] for a subcommand's entry point: help goes to stdout (`Err(0)`), an error
/// to stderr (`Err(bad)`: the subcommand's exit status for bad arguments).
pub fn args_of<C: CommandFactory + FromArgMatches, A>(
    args: &[String],
    bad: i32,
    check: impl FnOnce(C, &ArgMatches) -> Result<A, String>,
) -> Result<A, i32> {
    report_error(try_parse(args, check), bad)
}

/// A parse's help on stdout (`Err(0)`) or its error on stderr (`Err(bad)`).
pub fn report_error<A>(r: Result<A, clap::Error>, bad: i32) -> Result<A, i32> {
    r.map_err(|e| {
        let text = e.to_string();
        if e.use_stderr() {
            eprint!("{text}");
            bad
        } else {
            super::out::stdout(&text);
            0
        }
    })
}

/// The check of a subcommand whose arguments need none beyond their values.
pub fn as_is<C>(c: C, _: &ArgMatches) -> Result<C, String> {
    Ok(c)
}

/// `--save[=LABEL]` and `--store`, as the subcommands that store their results take them.
#[derive(clap::Args, Debug, Clone, Default, PartialEq)]
pub struct Save {
    /// Store the results in the results store, as one batch (flexio history, diff, rerun)
    #[arg(long, value_name = "LABEL", require_equals = true)]
    save: Option<Option<String>>,
    /// The results store: a SQLite file or postgres://... (default
    /// $XDG_DATA_HOME/flexio/results.db); needs --save
    #[arg(long, value_name = "PATH|URL")]
    pub store: Option<String>,
}

impl Save {
    /// `Some(None)`: `--save` without a label (an empty label is none).
    pub fn label(&self) -> Option<Option<String>> {
        self.save
            .as_ref()
            .map(|l| l.clone().filter(|l| !l.is_empty()))
    }

    /// `--store` means nothing without `--save`: refused rather than ignored.
    pub fn check(&self) -> Result<(), String> {
        super::store_needs_save(&self.store, &self.label())
    }
}

/// `--dir` or `--file`: where a study's scratch file goes (writemodes, matrix).
#[derive(clap::Args, Debug, Clone, Default, PartialEq)]
pub struct Scratch {
    /// Where the scratch file goes [default: the current directory]
    #[arg(long, value_name = "DIR", value_hint = clap::ValueHint::DirPath)]
    dir: Option<PathBuf>,
    /// The scratch file itself (removed at the end)
    #[arg(long, value_name = "PATH", value_hint = clap::ValueHint::FilePath)]
    file: Option<PathBuf>,
}

impl Scratch {
    /// The scratch file for study `name` (its folder must exist).
    pub fn path(&self, name: &str) -> Result<PathBuf, String> {
        flexio_run::inproc::scratch_file(self.dir.clone(), self.file.clone(), name)
    }
}

/// `--resume` goes on from what an interrupted `what` (study, sweep) kept with `--keep DIR`.
pub fn resume_needs_keep(resume: bool, keep: &Option<PathBuf>, what: &str) -> Result<(), String> {
    if resume && keep.is_none() {
        return Err(format!(
            "--resume needs --keep DIR: the folder the interrupted {what} kept its runs in"
        ));
    }
    Ok(())
}

/// `--output-format`, as the studies take it.
#[derive(clap::Args, Debug, Clone, Default, PartialEq)]
pub struct Output {
    /// The tables (normal) or the JSON on stdout
    #[arg(
        long = "output-format",
        value_name = "FORMAT",
        value_enum,
        default_value_t
    )]
    pub format: Format,
}

impl Output {
    /// `--output-format=json`.
    pub fn json(&self) -> bool {
        self.format == Format::Json
    }
}

/// `--output-format=normal|json`: the subcommand's text (default) or its JSON on stdout.
#[derive(clap::ValueEnum, Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Format {
    #[default]
    Normal,
    Json,
}

/// A positive whole number (`0` refused).
pub fn positive<T: std::str::FromStr + PartialOrd + Default>(v: &str) -> Result<T, String> {
    v.trim()
        .parse::<T>()
        .ok()
        .filter(|n| *n > T::default())
        .ok_or_else(|| format!("'{v}' is not a positive number"))
}

/// A number (a trailing `%` allowed).
pub fn number<T: std::str::FromStr>(v: &str) -> Result<T, String> {
    v.trim()
        .trim_end_matches('%')
        .parse()
        .map_err(|_| format!("'{v}' is not a valid number"))
}

/// A significance level: between 0 and 1.
pub fn alpha(v: &str) -> Result<f64, String> {
    number::<f64>(v)
        .ok()
        .filter(|a| *a > 0.0 && *a < 1.0)
        .ok_or_else(|| format!("'{v}' is not a significance level between 0 and 1"))
}

/// A size with fio's suffixes (`4k`, `1m`; powers of 1024), more than 0.
pub fn size(v: &str) -> Result<u64, String> {
    match parse_size(v.trim(), KbBase::K1024) {
        Ok(0) => Err("must be more than 0".into()),
        Ok(n) => Ok(n),
        Err(e) => Err(e.to_string()),
    }
}

/// A positive time in milliseconds: `100ms`, `30s`, `2m`, or bare seconds.
pub fn time_ms(v: &str) -> Result<u64, String> {
    let v = v.trim();
    let (num, mult) = if let Some(n) = v.strip_suffix("ms") {
        (n, 1)
    } else if let Some(n) = v.strip_suffix('s') {
        (n, 1000)
    } else if let Some(n) = v.strip_suffix('m') {
        (n, 60_000)
    } else {
        (v, 1000)
    };
    num.parse::<u64>()
        .ok()
        .and_then(|n| n.checked_mul(mult))
        .filter(|n| *n > 0)
        .ok_or_else(|| format!("'{v}' is not a positive time (e.g. 100ms, 30s)"))
}

/// A job-file-safe engine name (letters, digits, `_`, `-`).
pub fn engine_name(v: &str) -> Result<String, String> {
    if v.is_empty()
        || !v
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    {
        return Err(format!("'{v}' is not an engine name"));
    }
    Ok(v.to_string())
}

/// The values of a repeatable argument `id` in command-line order, each with its position.
pub fn indexed<T: Clone + Send + Sync + 'static>(m: &ArgMatches, id: &str) -> Vec<(usize, T)> {
    match (m.indices_of(id), m.get_many::<T>(id)) {
        (Some(i), Some(v)) => i.zip(v.cloned()).collect(),
        _ => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(clap::Parser, Debug)]
    #[command(name = "t")]
    struct T {
        #[command(flatten)]
        save: Save,
        job: Option<String>,
    }

    fn t(v: &[&str]) -> Result<T, clap::Error> {
        let v: Vec<String> = v.iter().map(|s| s.to_string()).collect();
        try_parse(&v, |c: T, _| c.save.check().map(|()| c))
    }

    #[test]
    fn save_and_store_arguments() {
        assert_eq!(t(&["--save"]).unwrap().save.label(), Some(None));
        assert_eq!(t(&["--save="]).unwrap().save.label(), Some(None));
        let n = t(&["--save=nightly", "j.fio"]).unwrap();
        assert_eq!(n.save.label(), Some(Some("nightly".into())));
        // `--save JOB`: the label is only ever given with `=`.
        let j = t(&["--save", "j.fio"]).unwrap();
        assert_eq!(
            (j.save.label(), j.job.as_deref()),
            (Some(None), Some("j.fio"))
        );
        assert_eq!(t(&[]).unwrap().save.label(), None);
        let e = t(&["--store=x.db"]).unwrap_err().to_string();
        assert!(e.contains("give --save too"), "{e}");
        assert!(t(&["--store=x.db", "--save"]).is_ok());
        let e = t(&["--saved"]).unwrap_err().to_string();
        assert!(e.contains("'--saved'") && e.contains("'--save'"), "{e}");
    }

    #[test]
    fn values() {
        assert_eq!(time_ms("100ms"), Ok(100));
        assert_eq!(time_ms("2m"), Ok(120_000));
        assert_eq!(time_ms("3"), Ok(3000));
        assert!(time_ms("0s").is_err() && time_ms("soon").is_err());
        assert_eq!(positive::<u32>("7"), Ok(7));
        assert!(positive::<u32>("0").unwrap_err().contains("positive"));
        assert_eq!(number::<f64>("5%"), Ok(5.0));
        assert!(alpha("1").is_err() && alpha("0.01").is_ok());
        assert_eq!(size("4k"), Ok(4096));
        assert!(size("0").unwrap_err().contains("more than 0"));
        assert!(engine_name("psync\nrw=write").is_err());
    }
}
