//! Job-file reader: fio's ini dialect (`init.c: __parse_jobs_ini`), stage one of the
//! configuration (raw text with its origin).

use crate::error::{JobError, Origin};
use std::path::{Path, PathBuf};

/// One option line, as written.
#[derive(Clone, Debug)]
pub struct RawOpt {
    pub origin: Origin,
    pub key: String,
    /// `None` for a bare key (`time_based`).
    pub value: Option<String>,
    /// Whether `${VAR}`/keyword substitution applies (job files yes, argv no).
    pub substitute: bool,
    /// The text as written (the stripped job-file line, or the argv word).
    pub raw: String,
}

impl RawOpt {
    pub fn text(&self) -> String {
        self.raw.clone()
    }
}

/// A `[section]` (or the command line's global part / `--name` job).
#[derive(Clone, Debug)]
pub struct RawSection {
    pub name: String,
    pub origin: Origin,
    pub global: bool,
    pub opts: Vec<RawOpt>,
}

/// Reads a file's bytes; injected so tests and fuzzing need no file system.
pub type Reader<'a> = &'a dyn Fn(&Path) -> std::io::Result<Vec<u8>>;

/// Most nested includes accepted.
pub const MAX_INCLUDE_DEPTH: usize = 16;
/// Longest line accepted (fio's OPT_LEN_MAX).
pub const MAX_LINE: usize = 8192;

/// Strip a line as fio does: cut at the first `;`, then at the first `#`, then trim.
fn strip_line(l: &str) -> &str {
    let l = match l.find(';') {
        Some(i) => &l[..i],
        None => l,
    };
    let l = match l.find('#') {
        Some(i) => &l[..i],
        None => l,
    };
    l.trim_matches(|c: char| c.is_whitespace() || c.is_control())
}

/// Split `key=value` at the first `=`; the key's trailing blanks are dropped. Leading blanks
/// of the value are dropped too (fio keeps them and then misreads the value; a warning
/// records the difference).
pub fn split_kv(line: &str) -> (String, Option<String>, bool) {
    match line.split_once('=') {
        Some((k, v)) => {
            let trimmed = v.trim_start();
            (
                k.trim_end().to_string(),
                Some(trimmed.to_string()),
                trimmed.len() != v.len(),
            )
        }
        None => (line.to_string(), None, false),
    }
}

/// Parse a job file into sections. `warnings` collects non-fatal notes.
pub fn parse_job_file(
    path: &Path,
    display: &str,
    read: Reader,
    warnings: &mut Vec<String>,
) -> Result<Vec<RawSection>, JobError> {
    let bytes = read(path).map_err(|e| {
        JobError::new(
            Origin::Builtin,
            None,
            format!("unable to open '{display}' job file: {e}"),
        )
    })?;
    let mut sections: Vec<RawSection> = Vec::new();
    let mut stack = vec![path.to_path_buf()];
    parse_lines(
        &bytes,
        display,
        path,
        read,
        &mut sections,
        true,
        &mut stack,
        warnings,
    )?;
    Ok(sections)
}

#[allow(clippy::too_many_arguments)]
fn parse_lines(
    bytes: &[u8],
    display: &str,
    path: &Path,
    read: Reader,
    sections: &mut Vec<RawSection>,
    allow_sections: bool,
    stack: &mut Vec<PathBuf>,
    warnings: &mut Vec<String>,
) -> Result<(), JobError> {
    if bytes.contains(&0) {
        return Err(JobError::new(
            Origin::File {
                path: display.to_string(),
                line: 1 + bytes
                    .iter()
                    .take_while(|b| **b != 0)
                    .filter(|b| **b == b'\n')
                    .count(),
            },
            None,
            "job file contains a NUL byte: this is not a text job file",
        ));
    }
    let text = String::from_utf8_lossy(bytes);
    for (i, raw) in text.lines().enumerate() {
        let origin = Origin::File {
            path: display.to_string(),
            line: i + 1,
        };
        if raw.len() > MAX_LINE {
            return Err(JobError::new(
                origin,
                None,
                format!("line longer than {MAX_LINE} characters"),
            ));
        }
        let line = strip_line(raw);
        if line.is_empty() {
            continue;
        }
        if let Some(rest) = line.strip_prefix('[') {
            if !allow_sections {
                return Err(JobError::new(
                    origin,
                    Some(line),
                    "no new sections in included files",
                ));
            }
            let name = rest.strip_suffix(']').ok_or_else(|| {
                JobError::new(
                    origin.clone(),
                    Some(line),
                    "section header is missing its closing ']'",
                )
            })?;
            if name.is_empty() {
                return Err(JobError::new(origin, Some(line), "empty section name"));
            }
            if name.len() > 255 {
                return Err(JobError::new(
                    origin,
                    Some(line),
                    "section name longer than 255 characters",
                ));
            }
            sections.push(RawSection {
                name: name.to_string(),
                global: name.starts_with("global"),
                origin,
                opts: Vec::new(),
            });
            continue;
        }
        if let Some(rest) = line.strip_prefix("include") {
            if rest.starts_with([' ', '\t']) || rest.is_empty() {
                let name = rest.trim();
                if name.is_empty() {
                    return Err(JobError::new(
                        origin,
                        Some(line),
                        "include needs a file name",
                    ));
                }
                if sections.is_empty() {
                    return Err(JobError::new(
                        origin,
                        Some(line),
                        "include outside of [] job section",
                    ));
                }
                include(name, &origin, line, path, read, sections, stack, warnings)?;
                continue;
            }
        }
        let Some(section) = sections.last_mut() else {
            return Err(JobError::new(
                origin,
                Some(line),
                "option outside of [] job section",
            ));
        };
        let (key, value, had_blank) = split_kv(line);
        if key.is_empty() {
            return Err(JobError::new(
                origin,
                Some(line),
                "option line without a name",
            ));
        }
        if had_blank {
            warnings.push(format!(
                "{origin}: '{line}': blanks after '=' are ignored by flexio (fio 3.33 keeps them and misreads the value)"
            ));
        }
        section.opts.push(RawOpt {
            origin,
            key,
            value,
            substitute: true,
            raw: line.to_string(),
        });
    }
    Ok(())
}

#[allow(clippy::too_many_arguments)]
fn include(
    name: &str,
    origin: &Origin,
    line: &str,
    including: &Path,
    read: Reader,
    sections: &mut Vec<RawSection>,
    stack: &mut Vec<PathBuf>,
    warnings: &mut Vec<String>,
) -> Result<(), JobError> {
    if stack.len() > MAX_INCLUDE_DEPTH {
        return Err(JobError::new(
            origin.clone(),
            Some(line),
            format!("includes nested deeper than {MAX_INCLUDE_DEPTH}"),
        ));
    }
    let direct = PathBuf::from(name);
    let candidates = [
        direct.clone(),
        including.parent().map(|p| p.join(name)).unwrap_or(direct),
    ];
    let mut last_err = None;
    for cand in candidates {
        let canon = std::fs::canonicalize(&cand).unwrap_or_else(|_| cand.clone());
        if stack
            .iter()
            .any(|p| std::fs::canonicalize(p).unwrap_or_else(|_| p.clone()) == canon)
        {
            return Err(JobError::new(
                origin.clone(),
                Some(line),
                format!("recursive include of '{name}'"),
            ));
        }
        match read(&cand) {
            Ok(bytes) => {
                stack.push(cand.clone());
                let disp = cand.display().to_string();
                let r = parse_lines(&bytes, &disp, &cand, read, sections, false, stack, warnings);
                stack.pop();
                return r;
            }
            Err(e) => last_err = Some(e),
        }
    }
    Err(JobError::new(
        origin.clone(),
        Some(line),
        format!(
            "cannot read included file '{name}': {}",
            last_err.map(|e| e.to_string()).unwrap_or_default()
        ),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn parse(files: &[(&str, &str)]) -> Result<Vec<RawSection>, JobError> {
        let map: HashMap<PathBuf, Vec<u8>> = files
            .iter()
            .map(|(p, c)| (PathBuf::from(p), c.as_bytes().to_vec()))
            .collect();
        let read = move |p: &Path| {
            map.get(p)
                .cloned()
                .ok_or_else(|| std::io::Error::new(std::io::ErrorKind::NotFound, "no such file"))
        };
        let mut w = Vec::new();
        parse_job_file(Path::new(files[0].0), files[0].0, &read, &mut w)
    }

    #[test]
    fn sections_comments_and_bare_keys() {
        let s = parse(&[(
            "j.fio",
            "; comment\n[global]\nbs=4k ; trailing\n# x\n[job one]\ntime_based\nsize=1M#c\n",
        )])
        .unwrap();
        assert_eq!(s.len(), 2);
        assert!(s[0].global);
        assert_eq!(s[0].opts[0].value.as_deref(), Some("4k"));
        assert_eq!(s[1].name, "job one");
        assert_eq!(s[1].opts[0].key, "time_based");
        assert!(s[1].opts[0].value.is_none());
        assert_eq!(s[1].opts[1].value.as_deref(), Some("1M"));
        assert_eq!(
            s[1].opts[1].origin,
            Origin::File {
                path: "j.fio".into(),
                line: 7
            }
        );
    }

    #[test]
    fn option_outside_section_is_an_error_with_location() {
        let e = parse(&[("j.fio", "\nbs=4k\n")]).unwrap_err();
        assert_eq!(
            e.origin,
            Origin::File {
                path: "j.fio".into(),
                line: 2
            }
        );
    }

    #[test]
    fn includes_append_to_current_section() {
        let s = parse(&[
            ("/d/j.fio", "[a]\ninclude inc.fio\nbs=8k\n"),
            ("/d/inc.fio", "size=1M\n"),
        ])
        .unwrap();
        assert_eq!(s[0].opts.len(), 2);
        assert_eq!(s[0].opts[0].key, "size");
    }

    #[test]
    fn recursive_include_is_rejected() {
        let e = parse(&[("/d/j.fio", "[a]\ninclude /d/j.fio\n")]).unwrap_err();
        assert!(e.msg.contains("recursive"), "{e}");
        let e = parse(&[
            ("/d/j.fio", "[a]\ninclude /d/i.fio\n"),
            ("/d/i.fio", "[b]\n"),
        ])
        .unwrap_err();
        assert!(e.msg.contains("no new sections"), "{e}");
    }

    #[test]
    fn garbage_is_rejected() {
        assert!(parse(&[("j.fio", "[a\n")]).is_err());
        assert!(parse(&[("j.fio", "[a]\n\0\0")]).is_err());
        assert!(parse(&[("j.fio", "[]\n")]).is_err());
    }
}
