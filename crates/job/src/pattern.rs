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

#[cfg(test)]
mod tests {
    use super::*;

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
