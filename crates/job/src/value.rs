//! Value parsers for fio's option types (fio 3.33 `parse.c` semantics).
//!
//! Every parser is strict: where fio silently reads a prefix of a malformed value
//! (`size=1.5M` is 1 byte, `size=1G2` is 1 GiB, `size=-4k` is 4 KiB in fio 3.33), flexio
//! reports the value as invalid instead of running a workload nobody asked for.

use crate::units::size_mult;
pub use crate::units::KbBase;

/// A size that may be given as a percentage (`size=50%`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum SizeVal {
    Bytes(u64),
    /// Percentage of the file or device size, 0 < p <= 100.
    Percent(f64),
}

impl SizeVal {
    /// Resolve against a full size (percentages round down).
    pub fn resolve(self, full: u64) -> u64 {
        match self {
            SizeVal::Bytes(b) => b,
            SizeVal::Percent(p) => ((full as f64) * p / 100.0) as u64,
        }
    }
}

/// Split a number from its suffix. Accepts decimal or `0x` hex digits.
fn split_number(s: &str) -> Result<(u64, &str), String> {
    let (digits, rest, radix) =
        if let Some(h) = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
            let end = h.find(|c: char| !c.is_ascii_hexdigit()).unwrap_or(h.len());
            (&h[..end], &h[end..], 16)
        } else {
            let end = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
            (&s[..end], &s[end..], 10)
        };
    if digits.is_empty() {
        return Err(format!("'{s}' is not a number"));
    }
    let n = u64::from_str_radix(digits, radix).map_err(|_| format!("'{s}' is too large"))?;
    Ok((n, rest))
}

/// Parse a size with an optional suffix: `4096`, `4k`, `1M`, `2g`, `0x1000`, `4kib`.
pub fn parse_size(s: &str, kb: KbBase) -> Result<u64, String> {
    if s.is_empty() {
        return Err("empty value".into());
    }
    if s.starts_with('-') {
        return Err(format!("'{s}': negative sizes are not allowed"));
    }
    if s.starts_with('(') {
        // fio's arithmetic (fio 3.33 as packaged by Debian is built without it).
        let v = crate::expr::eval(s, crate::expr::Unit::Size(kb))?;
        if v < 0.0 {
            return Err(format!("'{s}': negative sizes are not allowed"));
        }
        if v >= u64::MAX as f64 {
            return Err(format!("'{s}' is too large"));
        }
        return Ok(v as u64);
    }
    let (n, rest) = split_number(s)?;
    if rest.starts_with('.') {
        return Err(format!("'{s}': fractional sizes are not allowed (fio would silently read only the integer part)"));
    }
    // fio reads the suffix up to a separator (`:`, `-`, `,`, `/`) and ignores what
    // follows: `4k/25` is 4k (fio's own bsrange tests write `512/25:1k:...`).
    let rest = rest.split(['/', ':', ',', '-']).next().unwrap_or("");
    let m = size_mult(rest, kb).ok_or_else(|| format!("'{s}': unknown size suffix '{rest}'"))?;
    n.checked_mul(m)
        .ok_or_else(|| format!("'{s}' is too large"))
}

/// Parse a size that may also be a percentage (`50%`, `12.5%`).
pub fn parse_size_pct(s: &str, kb: KbBase) -> Result<SizeVal, String> {
    if let Some(p) = s.strip_suffix('%') {
        let v: f64 = p
            .parse()
            .map_err(|_| format!("'{s}' is not a valid percentage"))?;
        if !(v > 0.0 && v <= 100.0) {
            return Err(format!("'{s}': percentage must be in (0, 100]"));
        }
        return Ok(SizeVal::Percent(v));
    }
    parse_size(s, kb).map(SizeVal::Bytes)
}

/// [`parse_size_pct`] for offsets, where fio also takes `0%` (the start).
pub fn parse_offset_pct(s: &str, kb: KbBase) -> Result<SizeVal, String> {
    match s.strip_suffix('%').map(|p| p.trim().parse::<f64>()) {
        Some(Ok(0.0)) => Ok(SizeVal::Percent(0.0)),
        _ => parse_size_pct(s, kb),
    }
}

/// Parse an integer option value (fio's `FIO_OPT_INT`, which also takes size suffixes).
/// A leading `-` is accepted for signed options.
pub fn parse_int(s: &str, kb: KbBase) -> Result<i64, String> {
    if s.starts_with('(') {
        let v = crate::expr::eval(s, crate::expr::Unit::Size(kb))?;
        if v.abs() >= i64::MAX as f64 {
            return Err(format!("'{s}' is too large"));
        }
        return Ok(v as i64);
    }
    let (neg, body) = match s.strip_prefix('-') {
        Some(b) => (true, b),
        None => (false, s),
    };
    let v = parse_size(body, kb)?;
    let v = i64::try_from(v).map_err(|_| format!("'{s}' is too large"))?;
    Ok(if neg { -v } else { v })
}

/// Parse a time value into microseconds. `seconds` selects the default unit when no suffix
/// is given (seconds for runtime/ramp_time/startdelay, microseconds otherwise).
pub fn parse_time_us(s: &str, seconds: bool) -> Result<u64, String> {
    if s.is_empty() {
        return Err("empty value".into());
    }
    if s.starts_with('-') {
        return Err(format!("'{s}': negative times are not allowed"));
    }
    if s.starts_with('(') {
        // Inside an expression a bare number is microseconds, whatever the option's unit.
        let v = crate::expr::eval(s, crate::expr::Unit::Time)?;
        if v < 0.0 {
            return Err(format!("'{s}': negative times are not allowed"));
        }
        if v >= u64::MAX as f64 {
            return Err(format!("'{s}' is too large"));
        }
        return Ok(v as u64);
    }
    let (n, rest) = split_number(s)?;
    if rest.starts_with('.') {
        return Err(format!(
            "'{s}': fractional times are not allowed (fio would silently read only the integer part, {n}); use a smaller unit (ms, us)"
        ));
    }
    let mult: u64 = match rest.to_ascii_lowercase().as_str() {
        "" => {
            if seconds {
                1_000_000
            } else {
                1
            }
        }
        "us" | "usec" => 1,
        "ms" | "msec" => 1_000,
        "s" | "sec" => 1_000_000,
        "m" | "min" => 60_000_000,
        "h" => 3_600_000_000,
        "d" => 86_400_000_000,
        _ => {
            return Err(format!(
                "'{s}': unknown time suffix '{rest}' (use us, ms, s, m, h or d)"
            ))
        }
    };
    n.checked_mul(mult)
        .ok_or_else(|| format!("'{s}' is too large"))
}

/// fio booleans: `0` or `1` (also in hex); no `yes`/`true`.
pub fn parse_bool(s: &str) -> Result<bool, String> {
    let (n, rest) = split_number(s).map_err(|_| format!("'{s}' is not a boolean (use 0 or 1)"))?;
    if !rest.is_empty() {
        return Err(format!("'{s}' is not a boolean (use 0 or 1)"));
    }
    match n {
        0 => Ok(false),
        1 => Ok(true),
        _ => Err(format!("'{s}' is out of range for a boolean (use 0 or 1)")),
    }
}

/// Split a per-direction value (`bs=8k,32k`) into up to three slots (read, write, trim)
/// with fio's filling rules: a missing slot copies the last given value; an empty slot keeps
/// its default (`None`); a trailing comma ends the list. Without a `,`, a `:` (or, for
/// non-range values, a `-`) also separates values: `bs=4k:8k` is read 4k, write/trim 8k.
pub fn split_dirs(s: &str, allow_dash: bool) -> Result<[Option<&str>; 3], String> {
    let parts: Vec<&str> = if s.contains(',') {
        s.split(',').collect()
    } else if s.contains(':') {
        s.split(':').collect()
    } else if let Some(i) = allow_dash
        .then(|| {
            s.char_indices()
                .skip(1)
                .find(|(_, c)| *c == '-')
                .map(|(i, _)| i)
        })
        .flatten()
    {
        vec![&s[..i], &s[i + 1..]]
    } else {
        vec![s]
    };
    if parts.len() > 3 {
        return Err(format!(
            "'{s}': at most three values (read,write,trim) are allowed"
        ));
    }
    let mut out: [Option<&str>; 3] = [None, None, None];
    let mut last: Option<&str> = None;
    for (i, p) in parts.iter().enumerate() {
        if p.is_empty() {
            out[i] = None;
        } else {
            out[i] = Some(p);
            last = Some(p);
        }
    }
    // Fill slots after the given ones with the last given value.
    for slot in out.iter_mut().skip(parts.len()) {
        *slot = last;
    }
    if parts.iter().all(|p| p.is_empty()) {
        return Err("empty value".into());
    }
    Ok(out)
}

/// Parse a `lo-hi` (or `lo:hi`) size range; bounds are swapped if given in reverse.
pub fn parse_range(s: &str, kb: KbBase) -> Result<(u64, u64), String> {
    // The separator after the first character (a leading '-' is a sign, not a separator).
    let sep = s
        .char_indices()
        .skip(1)
        .find(|(_, c)| *c == '-' || *c == ':')
        .map(|(i, _)| i)
        .ok_or_else(|| format!("'{s}' is not a range (use lo-hi)"))?;
    let lo = parse_size(&s[..sep], kb)?;
    let hi = parse_size(&s[sep + 1..], kb)?;
    Ok(if lo > hi { (hi, lo) } else { (lo, hi) })
}

/// Parse a `:`-separated float list (percentile_list). Returns the values and the printing
/// precision (the largest number of decimals seen).
pub fn parse_float_list(s: &str, max: usize) -> Result<(Vec<f64>, usize), String> {
    let mut out = Vec::new();
    let mut prec = 0usize;
    for p in s.split(':') {
        if p.is_empty() {
            continue;
        }
        let v: f64 = p.parse().map_err(|_| format!("'{p}' is not a number"))?;
        if !v.is_finite() {
            return Err(format!("'{p}' is not a finite number"));
        }
        if let Some(dot) = p.find('.') {
            prec = prec.max(p.len() - dot - 1);
        }
        out.push(v);
    }
    if out.is_empty() {
        return Err("empty list".into());
    }
    if out.len() > max {
        return Err(format!(
            "at most {max} values are allowed, got {}",
            out.len()
        ));
    }
    Ok((out, prec))
}

/// Split a `:`-separated list honouring `\:` escapes (filename lists).
pub fn split_colon_escaped(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\\' && chars.peek() == Some(&':') {
            cur.push(':');
            chars.next();
        } else if c == ':' {
            out.push(std::mem::take(&mut cur));
        } else {
            cur.push(c);
        }
    }
    out.push(cur);
    out.retain(|s| !s.is_empty());
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    const K: KbBase = KbBase::K1024;

    #[test]
    fn a_suffix_ends_at_a_separator() {
        // fio 3.33 runs bsrange=512/25:1k:25:2k:25:4k/25 as 512-1k (its own t0023 job).
        assert_eq!(parse_size("512/25", KbBase::K1024), Ok(512));
        assert_eq!(parse_size("4k/25", KbBase::K1024), Ok(4096));
        assert!(parse_size("4xyz", KbBase::K1024).is_err());
        assert!(parse_size("4k/x", KbBase::K1024).is_ok());
    }

    #[test]
    fn sizes_as_fio_333_parses_them() {
        assert_eq!(parse_size("4096", K), Ok(4096));
        assert_eq!(parse_size("4k", K), Ok(4096));
        assert_eq!(parse_size("4K", K), Ok(4096));
        assert_eq!(parse_size("4kb", K), Ok(4096));
        assert_eq!(parse_size("4ki", K), Ok(4096));
        assert_eq!(parse_size("4kib", K), Ok(4000));
        assert_eq!(parse_size("1mi", K), Ok(1 << 20));
        assert_eq!(parse_size("1MiB", K), Ok(1_000_000));
        assert_eq!(parse_size("1g", K), Ok(1 << 30));
        assert_eq!(parse_size("0x1000", K), Ok(4096));
        assert_eq!(parse_size("8B", K), Ok(8));
        assert_eq!(parse_size("4k", KbBase::K1000), Ok(4000));
        assert_eq!(parse_size("4kib", KbBase::K1000), Ok(4096));
    }

    #[test]
    fn sizes_reject_what_fio_misreads() {
        for bad in [
            "1.5M",
            "1G2",
            "-4k",
            "",
            "k",
            "4q",
            " 8k",
            "99999999999999999999",
            "16384p",
        ] {
            assert!(parse_size(bad, K).is_err(), "{bad} should be rejected");
        }
    }

    #[test]
    fn percentages() {
        assert_eq!(parse_size_pct("50%", K), Ok(SizeVal::Percent(50.0)));
        assert!(parse_size_pct("0%", K).is_err());
        assert!(parse_size_pct("101%", K).is_err());
        assert_eq!(SizeVal::Percent(25.0).resolve(1000), 250);
    }

    #[test]
    fn times() {
        assert_eq!(parse_time_us("5", true), Ok(5_000_000));
        assert_eq!(parse_time_us("5", false), Ok(5));
        assert_eq!(parse_time_us("250ms", true), Ok(250_000));
        assert_eq!(parse_time_us("2m", true), Ok(120_000_000));
        assert_eq!(parse_time_us("1h", false), Ok(3_600_000_000));
        assert!(parse_time_us("5x", true).is_err());
    }

    #[test]
    fn bools_are_0_or_1_only() {
        assert_eq!(parse_bool("0"), Ok(false));
        assert_eq!(parse_bool("1"), Ok(true));
        assert_eq!(parse_bool("0x1"), Ok(true));
        assert!(parse_bool("yes").is_err());
        assert!(parse_bool("2").is_err());
    }

    #[test]
    fn per_direction_filling() {
        assert_eq!(
            split_dirs("8k,32k", true).unwrap(),
            [Some("8k"), Some("32k"), Some("32k")]
        );
        assert_eq!(
            split_dirs("8k,32k,", true).unwrap(),
            [Some("8k"), Some("32k"), None]
        );
        assert_eq!(
            split_dirs(",8k", true).unwrap(),
            [None, Some("8k"), Some("8k")]
        );
        assert_eq!(
            split_dirs("4k:8k", true).unwrap(),
            [Some("4k"), Some("8k"), Some("8k")]
        );
        assert_eq!(
            split_dirs("4k-8k", true).unwrap(),
            [Some("4k"), Some("8k"), Some("8k")]
        );
        assert_eq!(
            split_dirs("4k", true).unwrap(),
            [Some("4k"), Some("4k"), Some("4k")]
        );
        assert!(split_dirs("1,2,3,4", true).is_err());
        assert!(split_dirs(",", true).is_err());
    }

    #[test]
    fn ranges() {
        assert_eq!(parse_range("1k-4k", K), Ok((1024, 4096)));
        assert_eq!(parse_range("4k:1k", K), Ok((1024, 4096)));
        assert!(parse_range("4k", K).is_err());
    }

    #[test]
    fn float_lists() {
        let (v, p) = parse_float_list("1:50:99.995", 20).unwrap();
        assert_eq!(v, vec![1.0, 50.0, 99.995]);
        assert_eq!(p, 3);
        assert!(parse_float_list("a:b", 20).is_err());
    }

    #[test]
    fn colon_lists_with_escapes() {
        assert_eq!(
            split_colon_escaped("a:b\\:c"),
            vec!["a".to_string(), "b:c".to_string()]
        );
    }
}
