//! `flexio completions SHELL` and `flexio man`: shell completion scripts (clap_complete) and
//! man pages (clap_mangen) from one clap command tree: flexio's program switches and job
//! options (from the switch and option tables; the fio-compatible command line itself is
//! parsed by `flexio_job::cli`, not by clap) and every subcommand's clap arguments.

use super::args::args_of;
use clap::{Arg, ArgAction, Command, ValueHint};
use flexio_job::cli_extra::Arg as Takes;
use flexio_job::table::Kind;
use std::collections::HashSet;
use std::io::Write as _;
use std::path::PathBuf;

/// The shell completion script for flexio and its subcommands
///
/// Prints the completion script for SHELL on stdout: flexio's switches and job options
/// (with their values where they are a fixed set), the subcommands and their options.
/// Install it, e.g. `flexio completions bash > ~/.local/share/bash-completion/completions/flexio`,
/// `flexio completions zsh > ~/.zfunc/_flexio` (with ~/.zfunc in $fpath) or
/// `flexio completions fish > ~/.config/fish/completions/flexio.fish`.
#[derive(clap::Parser, Debug)]
#[command(
    name = "completions",
    after_help = "Exit status: 0 done, 2 bad arguments."
)]
pub struct Completions {
    /// The shell
    #[arg(value_name = "SHELL", value_parser = ["bash", "zsh", "fish"])]
    shell: String,
}

/// flexio's man pages as roff
///
/// Prints flexio's man page (flexio.1), or with SUBCOMMAND that subcommand's page
/// (flexio-SUBCOMMAND.1), on stdout: `flexio man | man -l -`. With --out-dir DIR it writes
/// every page into DIR instead, e.g. `flexio man --out-dir /usr/local/share/man/man1`.
#[derive(clap::Parser, Debug)]
#[command(
    name = "man",
    after_help = "Exit status: 0 done, 2 bad arguments or a page not written."
)]
pub struct Man {
    /// The subcommand whose page to print [default: flexio's own]
    #[arg(value_name = "SUBCOMMAND", value_parser = sub_name)]
    page: Option<String>,
    /// Write every page (flexio.1 and flexio-SUBCOMMAND.1) into DIR
    #[arg(long = "out-dir", value_name = "DIR", conflicts_with = "page",
          value_hint = ValueHint::DirPath)]
    out_dir: Option<PathBuf>,
}

fn sub_name(v: &str) -> Result<String, String> {
    match super::SUBCOMMANDS.iter().find(|s| s.name == v) {
        Some(s) => Ok(s.name.to_string()),
        None => Err(format!(
            "'{v}' is not a flexio subcommand (one of {})",
            super::SUBCOMMANDS
                .iter()
                .map(|s| s.name)
                .collect::<Vec<_>>()
                .join(", ")
        )),
    }
}

/// flexio's command for the completions and man pages: its program switches, its job
/// options when `job_options` (hundreds of them: the completions want them, the man page
/// points to `--cmdhelp` instead), the job files, and the subcommands.
pub fn flexio_command(job_options: bool) -> Command {
    let mut c = Command::new("flexio")
        .about("A flexible I/O tester: runs fio job files, prints fio-compatible output")
        .long_about(
            "A flexible I/O tester: runs fio job files and fio's command-line jobs and prints \
             fio-compatible output (normal, terse, json, json+), or runs one of its own \
             subcommands. Job options are written --option=value (see flexio --cmdhelp for \
             every option, flexio --enghelp for the engines); --name=x starts a job; options \
             before the first --name are global. A bare `flexio` runs its built-in default \
             benchmark in the current directory.",
        )
        .override_usage(
            "flexio [SWITCHES] [--JOB-OPTION=VALUE]... [JOB.fio]...\n       flexio SUBCOMMAND [ARGS]",
        )
        .version(flexio_run::VERSION.trim_start_matches("flexio-"))
        .disable_help_flag(true)
        .disable_version_flag(true)
        .disable_help_subcommand(true)
        .after_help("Each subcommand has its own page: flexio-SUBCOMMAND(1), `flexio SUBCOMMAND --help`.")
        .arg(
            Arg::new("job files")
                .value_name("JOB.fio")
                .help("Job files (fio's format); - reads one from standard input")
                .num_args(0..)
                .value_hint(ValueHint::FilePath),
        );
    let mut seen = HashSet::new();
    let switches = flexio_job::cli::SWITCHES
        .iter()
        .chain(flexio_job::cli_extra::SWITCHES);
    for &(name, takes, help) in switches {
        if !seen.insert(name) {
            continue;
        }
        let a = Arg::new(name)
            .long(name)
            .help(help)
            .help_heading("Switches");
        c = c.arg(match takes {
            Takes::None => a.action(ArgAction::SetTrue),
            Takes::Required => a.value_name("x").num_args(1),
            Takes::Optional => a.value_name("x").num_args(0..=1).require_equals(true),
        });
    }
    if job_options {
        for o in flexio_engine::CATALOG.rows() {
            if !seen.insert(o.name) {
                continue;
            }
            let mut a = Arg::new(o.name)
                .long(o.name)
                .help(o.help)
                .help_heading("Job options")
                .value_name("VALUE");
            for al in o.aliases.iter().filter(|al| seen.insert(al)) {
                a = a.alias(*al);
            }
            a = match &o.kind {
                Kind::Flag => a.num_args(0..=1).require_equals(true),
                Kind::Bool => a.value_parser(["0", "1"]),
                Kind::Choice(list) => {
                    let mut names: Vec<&str> = list.iter().map(|(n, _)| *n).collect();
                    names.dedup();
                    a.value_parser(clap::builder::PossibleValuesParser::new(names))
                }
                _ => a,
            };
            c = c.arg(a);
        }
    }
    c.subcommands(super::SUBCOMMANDS.iter().map(|s| (s.command)()))
}

pub fn completions(args: &[String]) -> i32 {
    let a: Completions = match args_of(args, 2, super::args::as_is) {
        Ok(a) => a,
        Err(code) => return code,
    };
    let shell = match a.shell.as_str() {
        "bash" => clap_complete::Shell::Bash,
        "zsh" => clap_complete::Shell::Zsh,
        _ => clap_complete::Shell::Fish,
    };
    let mut out = Vec::new();
    clap_complete::generate(shell, &mut flexio_command(true), "flexio", &mut out);
    super::out::stdout(&String::from_utf8_lossy(&out));
    0
}

/// flexio.1: clap_mangen's page with a short synopsis (clap_mangen's lists every switch).
fn flexio_page(w: &mut dyn std::io::Write) -> std::io::Result<()> {
    let m = clap_mangen::Man::new(flexio_command(false));
    m.render_title(w)?;
    m.render_name_section(w)?;
    w.write_all(
        b".SH SYNOPSIS\n\\fBflexio\\fR [\\fISWITCHES\\fR] [\\fB\\-\\-\\fR\\fIJOB\\-OPTION\\fR\\fB=\\fR\\fIVALUE\\fR]... [\\fIJOB.fio\\fR]...\n.br\n\\fBflexio\\fR \\fISUBCOMMAND\\fR [\\fIARGS\\fR]\n",
    )?;
    m.render_description_section(w)?;
    m.render_options_section(w)?;
    m.render_subcommands_section(w)?;
    m.render_extra_section(w)?;
    m.render_version_section(w)
}

/// A page: flexio's own (`None`) or a subcommand's.
fn page(sub: Option<&str>, w: &mut dyn std::io::Write) -> std::io::Result<()> {
    let Some(name) = sub else {
        return flexio_page(w);
    };
    // Built as part of flexio's command: the page is named flexio-NAME, its synopsis
    // `flexio NAME`.
    let mut c = flexio_command(false);
    c.build();
    match c.find_subcommand(name) {
        Some(s) => clap_mangen::Man::new(s.clone()).render(w),
        None => Err(std::io::Error::other(format!("no subcommand {name}"))),
    }
}

pub fn man(args: &[String]) -> i32 {
    let a: Man = match args_of(args, 2, super::args::as_is) {
        Ok(a) => a,
        Err(code) => return code,
    };
    let Some(dir) = a.out_dir else {
        let mut out = Vec::new();
        if let Err(e) = page(a.page.as_deref(), &mut out) {
            eprintln!("flexio man: {e}");
            return 2;
        }
        super::out::stdout(&String::from_utf8_lossy(&out));
        return 0;
    };
    let names = std::iter::once(None).chain(super::SUBCOMMANDS.iter().map(|s| Some(s.name)));
    for sub in names {
        let file = dir.join(match sub {
            None => "flexio.1".to_string(),
            Some(s) => format!("flexio-{s}.1"),
        });
        let mut text = Vec::new();
        let r = page(sub, &mut text).and_then(|()| std::fs::File::create(&file)?.write_all(&text));
        if let Err(e) = r {
            eprintln!("flexio man: cannot write {}: {e}", file.display());
            return 2;
        }
        eprintln!("flexio man: wrote {}", file.display());
    }
    0
}

#[cfg(test)]
mod tests {
    use super::*;

    /// clap's own checks of the command tree (debug builds assert on duplicate names,
    /// bad value counts, ...).
    #[test]
    fn the_command_tree_is_consistent() {
        flexio_command(true).debug_assert();
        flexio_command(false).debug_assert();
        let mut c = flexio_command(true);
        c.build();
        for s in super::super::SUBCOMMANDS {
            let sc = c.find_subcommand(s.name).expect(s.name);
            assert!(sc.get_about().is_some(), "{}", s.name);
        }
        assert!(c.get_arguments().any(|a| a.get_long() == Some("rw")));
        assert!(c
            .get_arguments()
            .any(|a| a.get_long() == Some("output-format")));
    }
}
