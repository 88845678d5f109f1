//! CPU lists (`cpus_allowed=0,5,8-15`), masks (`cpumask=0xf`) and two-value read,write
//! integer options (`cmdprio_percentage=10,50`).

/// Largest CPU number accepted (the kernel's default CPU_SETSIZE is 1024).
pub const MAX_CPU: usize = 1023;

pub fn parse_cpu_list(s: &str) -> Result<Vec<usize>, String> {
    let mut out = Vec::new();
    for part in s.split(',') {
        let part = part.trim();
        if part.is_empty() {
            continue;
        }
        let (lo, hi) = match part.split_once('-') {
            Some((a, b)) => (a, b),
            None => (part, part),
        };
        let lo: usize = lo
            .parse()
            .map_err(|_| format!("'{part}' is not a CPU number or range"))?;
        let hi: usize = hi
            .parse()
            .map_err(|_| format!("'{part}' is not a CPU number or range"))?;
        if lo > hi || hi > MAX_CPU {
            return Err(format!("'{part}' is not a valid CPU range"));
        }
        for c in lo..=hi {
            if !out.contains(&c) {
                out.push(c);
            }
        }
    }
    if out.is_empty() {
        return Err("empty CPU list".into());
    }
    out.sort_unstable();
    Ok(out)
}

pub fn parse_cpu_mask(s: &str) -> Result<Vec<usize>, String> {
    let v = crate::value::parse_size(s, crate::value::KbBase::K1024)?;
    let out: Vec<usize> = (0..64).filter(|b| v & (1u64 << b) != 0).collect();
    if out.is_empty() {
        return Err(format!("cpumask '{s}' selects no CPU"));
    }
    Ok(out)
}

/// `a` or `a,b`: read and write values (one value sets both), each in [min, max].
pub fn rw_ints(s: &str, cur: [u32; 2], min: u32, max: u32) -> Result<[u32; 2], String> {
    let parts: Vec<&str> = s.split(',').collect();
    if parts.len() > 2 {
        return Err(format!("'{s}': at most two values (read,write)"));
    }
    let mut out = cur;
    let mut last = None;
    for (i, p) in parts.iter().enumerate() {
        if p.is_empty() {
            continue;
        }
        let v: u32 = p
            .parse()
            .map_err(|_| format!("'{p}' is not a whole number"))?;
        if v < min || v > max {
            return Err(format!("value {v} is out of range [{min}, {max}]"));
        }
        out[i] = v;
        last = Some(v);
    }
    if parts.len() == 1 {
        if let Some(v) = last {
            out[1] = v;
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_and_masks() {
        assert_eq!(parse_cpu_list("0,5,8-10").unwrap(), vec![0, 5, 8, 9, 10]);
        assert!(parse_cpu_list("3-1").is_err());
        assert!(parse_cpu_list("x").is_err());
        assert_eq!(parse_cpu_mask("0x5").unwrap(), vec![0, 2]);
        assert!(parse_cpu_mask("0").is_err());
        assert_eq!(rw_ints("10,50", [0, 0], 0, 100).unwrap(), [10, 50]);
        assert_eq!(rw_ints("30", [0, 0], 0, 100).unwrap(), [30, 30]);
        assert!(rw_ints("101", [0, 0], 0, 100).is_err());
    }
}
