//! Which fio flexio reproduces where fio 3.33 and the newest fio differ (random seeding,
//! verify header and state formats, output details; `fio-3.42-delta.md` lists them).
//!
//! The newest fio's behaviour is the default. `--compat=3.33` on the command line, or
//! `FLEXIO_COMPAT=3.33` in the environment, restores fio 3.33's; the command line wins.
//! Code that differs by version asks the resolved value ([`crate::JobSet::compat`], carried
//! into each thread's plan) and nothing else.

use std::fmt;

/// The environment variable read when `--compat` is not given.
pub const ENV: &str = "FLEXIO_COMPAT";

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Compat {
    /// fio 3.33 (the installed oracle's behaviour).
    Fio333,
    /// The newest fio flexio follows (3.42 and the changes after it that the delta lists).
    #[default]
    Latest,
}

impl Compat {
    /// Parse a `--compat` / `FLEXIO_COMPAT` value.
    pub fn parse(s: &str) -> Result<Compat, String> {
        match s.trim().to_ascii_lowercase().as_str() {
            "3.33" | "fio-3.33" | "333" => Ok(Compat::Fio333),
            "latest" | "newest" | "3.42" | "fio-3.42" => Ok(Compat::Latest),
            other => Err(format!(
                "unknown compatibility level '{other}' (known: 3.33, latest)"
            )),
        }
    }

    /// The value as `--compat` spells it.
    pub fn name(self) -> &'static str {
        match self {
            Compat::Fio333 => "3.33",
            Compat::Latest => "latest",
        }
    }

    /// True when fio 3.33's behaviour is asked for.
    pub fn is_fio333(self) -> bool {
        self == Compat::Fio333
    }
}

impl fmt::Display for Compat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spellings() {
        assert_eq!(Compat::parse("3.33"), Ok(Compat::Fio333));
        assert_eq!(Compat::parse(" FIO-3.33 "), Ok(Compat::Fio333));
        assert_eq!(Compat::parse("latest"), Ok(Compat::Latest));
        assert_eq!(Compat::parse("3.42"), Ok(Compat::Latest));
        assert!(Compat::parse("3.34")
            .unwrap_err()
            .contains("known: 3.33, latest"));
        assert_eq!(Compat::default(), Compat::Latest);
        assert_eq!(Compat::parse(Compat::Fio333.name()), Ok(Compat::Fio333));
    }
}
