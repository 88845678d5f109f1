//! `buffer_pattern` values: hex literals (`0xdeadface`) and quoted strings (`"abc"`, `'abc'`),
//! which may be concatenated (`0xab"cd"`).

/// Largest pattern accepted (fio's `MAX_PATTERN_SIZE`).
pub const MAX_PATTERN: usize = 512;

pub fn parse_pattern(s: &str) -> Result<Vec<u8>, String> {
    let mut out = Vec::new();
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'"' | b'\'' => {
                let q = b[i];
                let end = b[i + 1..]
                    .iter()
                    .position(|&c| c == q)
                    .ok_or_else(|| format!("'{s}': unterminated string in pattern"))?;
                out.extend_from_slice(&b[i + 1..i + 1 + end]);
                i += end + 2;
            }
            b'0' if b.get(i + 1).is_some_and(|c| *c == b'x' || *c == b'X') => {
                let start = i + 2;
                let mut j = start;
                while j < b.len() && b[j].is_ascii_hexdigit() {
                    j += 1;
                }
                let hex = &s[start..j];
                if hex.is_empty() {
                    return Err(format!("'{s}': empty hex literal in pattern"));
                }
                // An odd number of digits gets a leading zero: 0xabc = 0x0a 0xbc.
                let padded = if hex.len() % 2 == 1 { format!("0{hex}") } else { hex.to_string() };
                for k in (0..padded.len()).step_by(2) {
                    out.push(u8::from_str_radix(&padded[k..k + 2], 16).map_err(|e| e.to_string())?);
                }
                i = j;
            }
            b' ' | b'|' => i += 1,
            _ => {
                return Err(format!(
                    "'{s}': flexio supports hex (0x..) and quoted-string buffer patterns; this form is not supported by flexio"
                ))
            }
        }
        if out.len() > MAX_PATTERN {
            return Err(format!("'{s}': pattern longer than {MAX_PATTERN} bytes"));
        }
    }
    if out.is_empty() {
        return Err("empty pattern".into());
    }
    Ok(out)
}

/// A `verify_pattern`: the `buffer_pattern` forms plus `%o`, which stands for the 8-byte
/// offset of the block being written.
pub fn parse_verify_pattern(s: &str) -> Result<crate::options::VerifyPattern, String> {
    let mut p = crate::options::VerifyPattern::default();
    for (i, part) in s.split("%o").enumerate() {
        if i > 0 {
            p.offset_at.push(p.bytes.len());
            p.bytes.extend_from_slice(&[0; 8]);
        }
        if !part.trim().is_empty() {
            p.bytes.extend(parse_pattern(part)?);
        }
    }
    if p.bytes.is_empty() {
        return Err("empty pattern".into());
    }
    if p.bytes.len() > MAX_PATTERN {
        return Err(format!("'{s}': pattern longer than {MAX_PATTERN} bytes"));
    }
    Ok(p)
}

/// errno names accepted by `ignore_error` (Linux numbers).
pub const ERRNO_NAMES: &[(&str, i32)] = &[
    ("EPERM", 1),
    ("ENOENT", 2),
    ("ESRCH", 3),
    ("EINTR", 4),
    ("EIO", 5),
    ("ENXIO", 6),
    ("E2BIG", 7),
    ("ENOEXEC", 8),
    ("EBADF", 9),
    ("ECHILD", 10),
    ("EAGAIN", 11),
    ("ENOMEM", 12),
    ("EACCES", 13),
    ("EFAULT", 14),
    ("ENOTBLK", 15),
    ("EBUSY", 16),
    ("EEXIST", 17),
    ("EXDEV", 18),
    ("ENODEV", 19),
    ("ENOTDIR", 20),
    ("EISDIR", 21),
    ("EINVAL", 22),
    ("ENFILE", 23),
    ("EMFILE", 24),
    ("ENOTTY", 25),
    ("ETXTBSY", 26),
    ("EFBIG", 27),
    ("ENOSPC", 28),
    ("ESPIPE", 29),
    ("EROFS", 30),
    ("EMLINK", 31),
    ("EPIPE", 32),
    ("EDOM", 33),
    ("ERANGE", 34),
    ("EDEADLK", 35),
    ("ENAMETOOLONG", 36),
    ("ENOLCK", 37),
    ("ENOSYS", 38),
    ("ENOTEMPTY", 39),
    ("ENODATA", 61),
    ("ETIME", 62),
    ("ENOLINK", 67),
    ("EPROTO", 71),
    ("EBADMSG", 74),
    ("EOVERFLOW", 75),
    ("EILSEQ", 84),
    ("EOPNOTSUPP", 95),
    ("ENOTSUP", 95),
    ("ECONNRESET", 104),
    ("ENOBUFS", 105),
    ("ETIMEDOUT", 110),
    ("ESTALE", 116),
    ("EREMOTEIO", 121),
    ("EDQUOT", 122),
    ("ENOMEDIUM", 123),
    ("EMEDIUMTYPE", 124),
    ("ECANCELED", 125),
];

/// `ignore_error=READ_LIST,WRITE_LIST,VERIFY_LIST`: each list `:`-separated errno names or
/// numbers; an empty or missing list keeps the default (EIO, EILSEQ).
pub fn parse_ignore_error(s: &str) -> Result<[Option<Vec<i32>>; 3], String> {
    let mut out = [None, None, None];
    let lists: Vec<&str> = s.split(',').collect();
    if lists.len() > 3 {
        return Err(format!("'{s}': at most three lists (read,write,verify)"));
    }
    for (i, l) in lists.iter().enumerate() {
        if l.trim().is_empty() {
            continue;
        }
        let mut v = Vec::new();
        for e in l.split(':') {
            let e = e.trim();
            let n = if let Ok(n) = e.parse::<i32>() {
                if !(1..=4095).contains(&n) {
                    return Err(format!("'{e}': not an errno number"));
                }
                n
            } else {
                let up = e.to_ascii_uppercase();
                ERRNO_NAMES
                    .iter()
                    .find(|(name, _)| *name == up)
                    .map(|(_, n)| *n)
                    .ok_or_else(|| format!("'{e}': unknown error name (use a name like EIO or ENOSPC, or a number)"))?
            };
            v.push(n);
        }
        out[i] = Some(v);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verify_patterns_and_error_lists() {
        let p = parse_verify_pattern("0xaa%o\"x\"").unwrap();
        assert_eq!(p.bytes.len(), 10);
        assert_eq!(p.offset_at, vec![1]);
        assert_eq!(p.bytes[9], b'x');
        assert!(parse_verify_pattern("").is_err());
        let e = parse_ignore_error("EAGAIN,ENOSPC:122").unwrap();
        assert_eq!(e[0], Some(vec![11]));
        assert_eq!(e[1], Some(vec![28, 122]));
        assert_eq!(e[2], None);
        assert!(parse_ignore_error("EBOGUS").is_err());
        assert!(parse_ignore_error("1,2,3,4").is_err());
    }

    #[test]
    fn hex_and_strings() {
        assert_eq!(
            parse_pattern("0xdeadface").unwrap(),
            vec![0xde, 0xad, 0xfa, 0xce]
        );
        assert_eq!(parse_pattern("0xabc").unwrap(), vec![0x0a, 0xbc]);
        assert_eq!(parse_pattern("\"ab\"0x01").unwrap(), vec![b'a', b'b', 1]);
        assert!(parse_pattern("\"ab").is_err());
        assert!(parse_pattern("12").is_err());
        assert!(parse_pattern("0x").is_err());
    }
}
