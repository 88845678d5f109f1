//! `buffer_pattern` and `verify_pattern` values, parsed as fio 3.33 parses them (the
//! newest fio's grammar is the same; only its size limit is larger):
//!
//! * `0x..` / `0X..`: hex bytes in the order written (an odd digit count gets a leading
//!   zero nibble: `0xabc` = 0a bc);
//! * a decimal number (optional sign, leading blanks skipped, base 10 even with leading
//!   zeros; it ends where a `0x` starts, so `-120xdeadface` is -12 then 0xdeadface): an
//!   `int`, stored little endian in as few bytes as hold it as an unsigned 32-bit value
//!   (`12` = 0c, `256` = 00 01, `-1` = ff ff ff ff);
//! * `"..."`: the bytes between the quotes (no escapes);
//! * `'name'`: the contents of file `name` (cut to the size limit);
//! * `%o` (`verify_pattern` only): 8 bytes holding the block's offset.
//!
//! Parts are concatenated without separators: `"abcd"-120xdeadface`, `0xff%o"ab"-12`.
//! Anything else (trailing blanks, a lone `%`, unterminated strings) is an error.

/// Largest pattern fio 3.33 accepts (`MAX_PATTERN_SIZE`): longer patterns are an error,
/// longer pattern files are cut.
pub const MAX_PATTERN: usize = 512;
/// The newest fio's limit (128 MiB).
pub const MAX_PATTERN_LATEST: usize = 128 << 20;

/// A parsed pattern: bytes, and where `%o` slots (8 bytes each) start.
fn parse_parts(s: &str, max: usize, fmt: bool) -> Result<(Vec<u8>, Vec<usize>), String> {
    let mut out: Vec<u8> = Vec::new();
    let mut slots = Vec::new();
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'"' => {
                let end = b[i + 1..]
                    .iter()
                    .position(|&c| c == b'"')
                    .ok_or_else(|| format!("'{s}': unterminated string in pattern"))?;
                out.extend_from_slice(&b[i + 1..i + 1 + end]);
                i += end + 2;
            }
            b'\'' => {
                let end = b[i + 1..]
                    .iter()
                    .position(|&c| c == b'\'')
                    .ok_or_else(|| format!("'{s}': unterminated file name in pattern"))?;
                let name = &s[i + 1..i + 1 + end];
                let data = std::fs::read(name)
                    .map_err(|e| format!("'{s}': cannot read pattern file '{name}': {e}"))?;
                if data.is_empty() {
                    return Err(format!("'{s}': pattern file '{name}' is empty"));
                }
                let room = max.saturating_sub(out.len());
                out.extend_from_slice(&data[..data.len().min(room)]);
                i += end + 2;
            }
            b'%' if fmt && b.get(i + 1) == Some(&b'o') => {
                slots.push(out.len());
                out.extend_from_slice(&[0; 8]);
                i += 2;
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
                let padded = if hex.len() % 2 == 1 {
                    format!("0{hex}")
                } else {
                    hex.to_string()
                };
                for k in (0..padded.len()).step_by(2) {
                    out.push(u8::from_str_radix(&padded[k..k + 2], 16).map_err(|e| e.to_string())?);
                }
                i = j;
            }
            _ => {
                // A decimal number, ending before the next `0x` (fio's rule).
                let rest = &s[i..];
                let lim = rest
                    .as_bytes()
                    .windows(2)
                    .position(|w| w[0] == b'0' && (w[1] == b'x' || w[1] == b'X'))
                    .unwrap_or(rest.len());
                let (n, used) = decimal(&rest[..lim]).ok_or_else(|| {
                    format!(
                        "'{s}': not a pattern at '{rest}' (hex 0x.., a decimal number, \"string\", 'file'{})",
                        if fmt { " or %o" } else { "" }
                    )
                })?;
                let v = n as u32;
                let k = (4 - v.leading_zeros() as usize / 8).max(1);
                out.extend_from_slice(&v.to_le_bytes()[..k]);
                i += used;
            }
        }
        if out.len() > max {
            return Err(format!("'{s}': pattern longer than {max} bytes"));
        }
    }
    if out.is_empty() {
        return Err("empty pattern".into());
    }
    Ok((out, slots))
}

/// strtol(base 10) on `t` for an `int`: (value, bytes consumed); None without digits or
/// out of the `int` range.
fn decimal(t: &str) -> Option<(i64, usize)> {
    let b = t.as_bytes();
    let mut i = 0;
    while i < b.len() && (b[i] == b' ' || (b'\t'..=b'\r').contains(&b[i])) {
        i += 1;
    }
    let neg = match b.get(i) {
        Some(b'-') => {
            i += 1;
            true
        }
        Some(b'+') => {
            i += 1;
            false
        }
        _ => false,
    };
    let d0 = i;
    let mut v: i64 = 0;
    while i < b.len() && b[i].is_ascii_digit() {
        v = v.saturating_mul(10).saturating_add((b[i] - b'0') as i64);
        i += 1;
    }
    if i == d0 {
        return None;
    }
    let v = if neg { -v } else { v };
    (i32::MIN as i64..=i32::MAX as i64)
        .contains(&v)
        .then_some((v, i))
}

/// A `verify_pattern`: bytes, and where `%o` puts the block offset (8 bytes, native
/// endian).
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct VerifyPattern {
    pub bytes: Vec<u8>,
    pub offset_at: Vec<usize>,
}

/// The largest pattern of the fio `compat` reproduces.
pub fn max_pattern(compat: crate::Compat) -> usize {
    if compat.is_fio333() {
        MAX_PATTERN
    } else {
        MAX_PATTERN_LATEST
    }
}

/// A `buffer_pattern` (fio 3.33's size limit).
pub fn parse_pattern(s: &str) -> Result<Vec<u8>, String> {
    parse_pattern_max(s, MAX_PATTERN)
}

/// A `buffer_pattern` of at most `max` bytes.
pub fn parse_pattern_max(s: &str, max: usize) -> Result<Vec<u8>, String> {
    parse_parts(s, max, false).map(|(b, _)| b)
}

/// A `verify_pattern`: the `buffer_pattern` forms plus `%o`, which stands for the 8-byte
/// offset of the block being written (fio 3.33's size limit).
pub fn parse_verify_pattern(s: &str) -> Result<VerifyPattern, String> {
    parse_verify_pattern_max(s, MAX_PATTERN)
}

/// A `verify_pattern` of at most `max` bytes ([`MAX_PATTERN_LATEST`] for the newest fio).
pub fn parse_verify_pattern_max(s: &str, max: usize) -> Result<VerifyPattern, String> {
    let (bytes, offset_at) = parse_parts(s, max, true)?;
    Ok(VerifyPattern { bytes, offset_at })
}

/// errno names `ignore_error` accepts: the newest fio's 133 (Linux's errors 1 to 133 and
/// the aliases EWOULDBLOCK and EDEADLOCK, fio 3.42); fio 3.33 knows the first 34 (EPERM to
/// ERANGE, [`ERRNO_NAMES_333`]).
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
    ("ELOOP", 40),
    ("ENOMSG", 42),
    ("EIDRM", 43),
    ("ECHRNG", 44),
    ("EL2NSYNC", 45),
    ("EL3HLT", 46),
    ("EL3RST", 47),
    ("ELNRNG", 48),
    ("EUNATCH", 49),
    ("ENOCSI", 50),
    ("EL2HLT", 51),
    ("EBADE", 52),
    ("EBADR", 53),
    ("EXFULL", 54),
    ("ENOANO", 55),
    ("EBADRQC", 56),
    ("EBADSLT", 57),
    ("EBFONT", 59),
    ("ENOSTR", 60),
    ("ENODATA", 61),
    ("ETIME", 62),
    ("ENOSR", 63),
    ("ENONET", 64),
    ("ENOPKG", 65),
    ("EREMOTE", 66),
    ("ENOLINK", 67),
    ("EADV", 68),
    ("ESRMNT", 69),
    ("ECOMM", 70),
    ("EPROTO", 71),
    ("EMULTIHOP", 72),
    ("EDOTDOT", 73),
    ("EBADMSG", 74),
    ("EOVERFLOW", 75),
    ("ENOTUNIQ", 76),
    ("EBADFD", 77),
    ("EREMCHG", 78),
    ("ELIBACC", 79),
    ("ELIBBAD", 80),
    ("ELIBSCN", 81),
    ("ELIBMAX", 82),
    ("ELIBEXEC", 83),
    ("EILSEQ", 84),
    ("ERESTART", 85),
    ("ESTRPIPE", 86),
    ("EUSERS", 87),
    ("ENOTSOCK", 88),
    ("EDESTADDRREQ", 89),
    ("EMSGSIZE", 90),
    ("EPROTOTYPE", 91),
    ("ENOPROTOOPT", 92),
    ("EPROTONOSUPPORT", 93),
    ("ESOCKTNOSUPPORT", 94),
    ("EOPNOTSUPP", 95),
    ("EPFNOSUPPORT", 96),
    ("EAFNOSUPPORT", 97),
    ("EADDRINUSE", 98),
    ("EADDRNOTAVAIL", 99),
    ("ENETDOWN", 100),
    ("ENETUNREACH", 101),
    ("ENETRESET", 102),
    ("ECONNABORTED", 103),
    ("ECONNRESET", 104),
    ("ENOBUFS", 105),
    ("EISCONN", 106),
    ("ENOTCONN", 107),
    ("ESHUTDOWN", 108),
    ("ETOOMANYREFS", 109),
    ("ETIMEDOUT", 110),
    ("ECONNREFUSED", 111),
    ("EHOSTDOWN", 112),
    ("EHOSTUNREACH", 113),
    ("EALREADY", 114),
    ("EINPROGRESS", 115),
    ("ESTALE", 116),
    ("EUCLEAN", 117),
    ("ENOTNAM", 118),
    ("ENAVAIL", 119),
    ("EISNAM", 120),
    ("EREMOTEIO", 121),
    ("EDQUOT", 122),
    ("ENOMEDIUM", 123),
    ("EMEDIUMTYPE", 124),
    ("ECANCELED", 125),
    ("ENOKEY", 126),
    ("EKEYEXPIRED", 127),
    ("EKEYREVOKED", 128),
    ("EKEYREJECTED", 129),
    ("EOWNERDEAD", 130),
    ("ENOTRECOVERABLE", 131),
    ("ERFKILL", 132),
    ("EHWPOISON", 133),
    ("EWOULDBLOCK", 11),
    ("EDEADLOCK", 35),
];

/// How many of [`ERRNO_NAMES`] fio 3.33 knows (EPERM to ERANGE).
pub const ERRNO_NAMES_333: usize = 34;

/// `ignore_error=READ_LIST,WRITE_LIST,VERIFY_LIST`: each list `:`-separated errno names or
/// numbers; an empty or missing list keeps the default (EIO, EILSEQ). As fio: a name is an
/// entry starting with `E` (exactly as written); anything else is a number, read as C's
/// `atoi` does (leading digits; fio 3.38 and later also `0x` hex), and must not be 0;
/// empty entries are skipped.
pub fn parse_ignore_error(s: &str, compat: crate::Compat) -> Result<[Option<Vec<i32>>; 3], String> {
    let mut out = [None, None, None];
    let lists: Vec<&str> = s.split(',').collect();
    if lists.len() > 3 {
        return Err(format!("'{s}': at most three lists (read,write,verify)"));
    }
    let names = if compat.is_fio333() {
        &ERRNO_NAMES[..ERRNO_NAMES_333]
    } else {
        ERRNO_NAMES
    };
    for (i, l) in lists.iter().enumerate() {
        if l.is_empty() {
            continue;
        }
        let mut v = Vec::new();
        for e in l.split(':').filter(|e| !e.is_empty()) {
            let unknown = || format!("Unknown error {e}, please use number value");
            let n = if e.starts_with('E') {
                names
                    .iter()
                    .find(|(name, _)| *name == e)
                    .map(|(_, n)| *n)
                    .ok_or_else(unknown)?
            } else {
                let hex = e
                    .strip_prefix("0x")
                    .or_else(|| e.strip_prefix("0X"))
                    .filter(|_| !compat.is_fio333());
                let n = match hex {
                    Some(h) => i64::from_str_radix(h, 16)
                        .ok()
                        .and_then(|n| i32::try_from(n).ok()),
                    None => Some(atoi(e)),
                };
                n.filter(|n| *n != 0).ok_or_else(unknown)?
            };
            v.push(n);
        }
        out[i] = Some(v);
    }
    Ok(out)
}

/// C's `atoi`: optional blanks and sign, then the leading digits (0 when there are none).
fn atoi(s: &str) -> i32 {
    let t = s.trim_start();
    let (neg, digits) = match t.as_bytes().first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, t),
    };
    let mut n: i64 = 0;
    for c in digits.bytes().take_while(u8::is_ascii_digit) {
        n = (n * 10 + (c - b'0') as i64).min(i32::MAX as i64 + 1);
    }
    let n = if neg { -n } else { n };
    n.clamp(i32::MIN as i64, i32::MAX as i64) as i32
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
        use crate::Compat::{Fio333, Latest};
        let e = parse_ignore_error("EAGAIN,ENOSPC:122", Latest).unwrap();
        assert_eq!(e[0], Some(vec![11]));
        assert_eq!(e[1], Some(vec![28, 122]));
        assert_eq!(e[2], None);
        assert!(parse_ignore_error("EBOGUS", Latest).is_err());
        assert!(parse_ignore_error("1,2,3,4", Latest).is_err());
        // fio 3.42: 133 names (Linux's 1..133 and two aliases), hex numbers.
        assert_eq!(ERRNO_NAMES.len(), 133);
        let e = parse_ignore_error("EDQUOT:EWOULDBLOCK:0x1c,EHWPOISON", Latest).unwrap();
        assert_eq!(e[0], Some(vec![122, 11, 28]));
        assert_eq!(e[1], Some(vec![133]));
        // fio 3.33: EPERM..ERANGE, atoi numbers (no hex: 0x1c reads as 0).
        assert_eq!(ERRNO_NAMES[ERRNO_NAMES_333 - 1], ("ERANGE", 34));
        assert_eq!(
            parse_ignore_error("EDQUOT", Fio333).unwrap_err(),
            "Unknown error EDQUOT, please use number value"
        );
        assert!(parse_ignore_error("0x1c", Fio333).is_err());
        assert_eq!(
            parse_ignore_error("ERANGE:12abc:EIO::5000", Fio333).unwrap()[0],
            Some(vec![34, 12, 5, 5000])
        );
        for bad in ["0", "enospc", " EIO", "x"] {
            assert!(parse_ignore_error(bad, Latest).is_err(), "{bad}");
        }
        assert_eq!(parse_ignore_error("-1", Latest).unwrap()[0], Some(vec![-1]));
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
        assert!(parse_pattern("0x").is_err());
    }

    #[test]
    fn decimals_and_mixed_forms_as_fio_333_writes_them() {
        // Each expectation is what fio 3.33 wrote for `verify=pattern verify_pattern=X`.
        let ok = |s: &str| parse_pattern(s).unwrap();
        assert_eq!(ok("12"), vec![0x0c]);
        assert_eq!(ok("120"), vec![0x78]);
        assert_eq!(ok("0"), vec![0]);
        assert_eq!(ok("255"), vec![0xff]);
        assert_eq!(ok("256"), vec![0, 1]);
        assert_eq!(ok("65536"), vec![0, 0, 1]);
        assert_eq!(ok("2147483647"), vec![0xff, 0xff, 0xff, 0x7f]);
        assert_eq!(ok("-1"), vec![0xff; 4]);
        assert_eq!(ok("-12"), vec![0xf4, 0xff, 0xff, 0xff]);
        assert_eq!(ok("-256"), vec![0, 0xff, 0xff, 0xff]);
        assert_eq!(ok("-2147483648"), vec![0, 0, 0, 0x80]);
        assert_eq!(ok("007"), vec![7]);
        assert_eq!(ok("+5"), vec![5]);
        assert_eq!(ok("1200x5"), vec![0x78, 5]);
        assert_eq!(ok("10x5"), vec![1, 5]);
        assert_eq!(ok("00x5"), vec![0, 5]);
        assert_eq!(ok("120Xab"), vec![0x0c, 0xab]);
        assert_eq!(ok("1 2"), vec![1, 2]);
        assert_eq!(ok(" 12"), vec![0x0c]);
        assert_eq!(ok("0xab 12"), vec![0xab, 0x0c]);
        assert_eq!(ok("1-2"), vec![1, 0xfe, 0xff, 0xff, 0xff]);
        assert_eq!(ok("\"ab\"-1"), vec![b'a', b'b', 0xff, 0xff, 0xff, 0xff]);
        assert_eq!(ok("\"a\\nb\""), b"a\\nb".to_vec());
        assert_eq!(
            ok("\"abcd\"-120xdeadface"),
            vec![b'a', b'b', b'c', b'd', 0xf4, 0xff, 0xff, 0xff, 0xde, 0xad, 0xfa, 0xce]
        );
        // fio 3.33 rejects these.
        for bad in [
            "2147483648",
            "4294967295",
            "-2147483649",
            "12ab0x5",
            "0x1g",
            "0xab ",
            "12 ",
            " 0xab",
            "-0x5",
            "- 5",
            "1e3",
            "1,2",
            "%",
            "%x",
            "\"a\\\"b\"",
            "\"ab\" ",
            "",
            "'nonexistent-file'",
        ] {
            assert!(parse_pattern(bad).is_err(), "{bad:?} accepted");
        }
        assert!(parse_pattern("%o").is_err(), "%o only in verify_pattern");
        let p = parse_verify_pattern("0x12%o\"ab\"").unwrap();
        assert_eq!(p.bytes, vec![0x12, 0, 0, 0, 0, 0, 0, 0, 0, b'a', b'b']);
        assert_eq!(p.offset_at, vec![1]);
        let p = parse_verify_pattern("%o%o").unwrap();
        assert_eq!((p.bytes.len(), p.offset_at.clone()), (16, vec![0, 8]));
        assert_eq!(
            parse_verify_pattern("\"%o\"").unwrap().bytes,
            b"%o".to_vec()
        );
    }

    #[test]
    fn sizes_and_files() {
        let long = format!("\"{}\"", "A".repeat(512));
        assert_eq!(parse_pattern(&long).unwrap().len(), 512);
        let longer = format!("\"{}\"", "A".repeat(513));
        assert!(
            parse_pattern(&longer).is_err(),
            "fio 3.33 rejects 513 bytes"
        );
        assert_eq!(
            parse_pattern_max(&longer, MAX_PATTERN_LATEST)
                .unwrap()
                .len(),
            513
        );
        let d = std::env::temp_dir().join(format!("flexio-pattern-{}", std::process::id()));
        std::fs::write(&d, (0..600u32).map(|i| i as u8).collect::<Vec<_>>()).unwrap();
        let name = d.to_string_lossy().into_owned();
        // Pattern files are cut to the limit (fio 3.33: 512 bytes), and concatenate.
        assert_eq!(parse_pattern(&format!("'{name}'")).unwrap().len(), 512);
        let p = parse_pattern_max(&format!("1'{name}'"), MAX_PATTERN_LATEST).unwrap();
        assert_eq!((p.len(), p[0], p[1], p[600]), (601, 1, 0, 0x57));
        let _ = std::fs::remove_file(&d);
    }
}
