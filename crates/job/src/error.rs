//! Parse errors: where (file:line or argv word), the offending text, what is wrong, and a
//! did-you-mean when one is close.

use std::fmt;

/// Where a piece of job text came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Origin {
    /// A job file line (1-based).
    File { path: String, line: usize },
    /// A command-line word (1-based index into argv after the program name).
    Argv { index: usize },
    /// Built in (the default benchmark) or synthesised.
    Builtin,
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Origin::File { path, line } => write!(f, "{path}:{line}"),
            Origin::Argv { index } => write!(f, "command line argument {index}"),
            Origin::Builtin => write!(f, "built-in job"),
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JobError {
    pub origin: Origin,
    /// The offending text as written (an option line, an argv word).
    pub text: Option<String>,
    pub msg: String,
    pub suggestion: Option<String>,
    /// Further errors found in the same section (fio reports every bad option of the
    /// section it drops): each is printed on a line of its own after this one.
    pub more: Box<[JobError]>,
}

impl JobError {
    pub fn new(origin: Origin, text: Option<&str>, msg: impl Into<String>) -> Self {
        JobError {
            origin,
            text: text.map(str::to_string),
            msg: msg.into(),
            suggestion: None,
            more: Box::default(),
        }
    }
    pub fn plain(msg: impl Into<String>) -> Self {
        JobError {
            origin: Origin::Builtin,
            text: None,
            msg: msg.into(),
            suggestion: None,
            more: Box::default(),
        }
    }
    pub fn with_suggestion(mut self, s: Option<String>) -> Self {
        self.suggestion = s;
        self
    }
}

impl fmt::Display for JobError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.origin {
            Origin::Builtin if self.text.is_none() => write!(f, "{}", self.msg)?,
            o => {
                write!(f, "{o}: ")?;
                if let Some(t) = &self.text {
                    write!(f, "'{}': ", clip(t))?;
                }
                write!(f, "{}", clip(&self.msg))?;
            }
        }
        if let Some(s) = &self.suggestion {
            write!(f, "; did you mean '{s}'?")?;
        }
        // The section's further errors, each a line as flexio prints the first.
        for e in &self.more {
            write!(f, "\nflexio: {e}")?;
        }
        Ok(())
    }
}

impl std::error::Error for JobError {}

/// A text quoted in a message, cut short when it is huge (a 1 MiB line is named by its
/// start and its length, not echoed).
pub fn clip(s: &str) -> std::borrow::Cow<'_, str> {
    const MAX: usize = 200;
    if s.len() <= MAX {
        return s.into();
    }
    let cut = s
        .char_indices()
        .map(|(i, _)| i)
        .take_while(|i| *i <= 120)
        .last()
        .unwrap_or(0);
    format!("{}... ({} bytes in all)", &s[..cut], s.len()).into()
}

/// Levenshtein distance (for did-you-mean).
pub fn distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    let mut cur = vec![0; b.len() + 1];
    for i in 1..=a.len() {
        cur[0] = i;
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            cur[j] = (prev[j] + 1).min(cur[j - 1] + 1).min(prev[j - 1] + cost);
        }
        std::mem::swap(&mut prev, &mut cur);
    }
    prev[b.len()]
}

/// The closest candidate within fio's threshold (distance at most half the word, rounded up).
pub fn suggest<'a>(word: &str, candidates: impl Iterator<Item = &'a str>) -> Option<String> {
    if word.is_empty() || word.len() > 256 {
        return None;
    }
    let limit = word.chars().count().div_ceil(2);
    candidates
        .map(|c| (distance(word, c), c))
        .filter(|(d, _)| *d <= limit)
        .min_by_key(|(d, c)| (*d, c.len()))
        .map(|(_, c)| c.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn huge_texts_are_clipped_at_a_character_boundary() {
        assert_eq!(clip("bs=4k"), "bs=4k");
        let long = "é".repeat(300);
        let c = clip(&long);
        assert!(c.ends_with("... (600 bytes in all)"), "{c}");
        assert!(c.len() < 200);
    }

    #[test]
    fn suggestions() {
        let names = ["ioengine", "iodepth", "runtime", "rw"];
        assert_eq!(
            suggest("ioengin", names.iter().copied()),
            Some("ioengine".into())
        );
        assert_eq!(
            suggest("runtm", names.iter().copied()),
            Some("runtime".into())
        );
        assert_eq!(suggest("zzzzzzzzzz", names.iter().copied()), None);
    }

    #[test]
    fn display_names_location_text_and_suggestion() {
        let e = JobError::new(
            Origin::File {
                path: "a.fio".into(),
                line: 3,
            },
            Some("ioengin=psync"),
            "unknown option 'ioengin'",
        )
        .with_suggestion(Some("ioengine".into()));
        assert_eq!(
            e.to_string(),
            "a.fio:3: 'ioengin=psync': unknown option 'ioengin'; did you mean 'ioengine'?"
        );
    }
}
