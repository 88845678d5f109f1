//! fio's human-readable number formatting (`lib/num2str.c` behaviour): shorten a number to
//! at most `maxlen` digits by dividing by 1000 (SI) or 1024 (IEC), keeping decimals where
//! room is left.

/// Unit suffix of a formatted number.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unit {
    None,
    PerSec,
    Byte,
    Bit,
    BytePerSec,
    BitPerSec,
}

impl Unit {
    fn suffix(self) -> &'static str {
        match self {
            Unit::None => "",
            Unit::PerSec => "/s",
            Unit::Byte => "B",
            Unit::Bit => "bit",
            Unit::BytePerSec => "B/s",
            Unit::BitPerSec => "bit/s",
        }
    }
}

const SI: [&str; 7] = ["", "k", "M", "G", "T", "P", "E"];
const IEC: [&str; 7] = ["", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"];

fn digits(n: u64) -> usize {
    let mut d = 1;
    let mut v = n;
    while v >= 10 {
        v /= 10;
        d += 1;
    }
    d
}

/// Format `num` (in units of `base`: 1 = plain, 1024 = already KiB, ...) with at most
/// `maxlen` significant digits; `pow2` selects IEC prefixes and 1024 steps.
pub fn num2str(num: u64, maxlen: usize, base: u64, pow2: bool, unit: Unit) -> String {
    let prefixes = if pow2 { &IEC } else { &SI };
    let thousand: u64 = if pow2 { 1024 } else { 1000 };
    let mut post = 0usize;
    let mut b = base;
    while b > 1 {
        b /= thousand;
        post += 1;
    }
    let mut num = match unit {
        Unit::Bit | Unit::BitPerSec => num.saturating_mul(8),
        _ => num,
    };
    let mut modulo: Option<u64> = None;
    let mut carry = false;
    while post < prefixes.len() {
        if digits(num) <= maxlen {
            break;
        }
        let m = num % thousand;
        modulo = Some(m);
        num /= thousand;
        carry = m >= thousand / 2;
        post += 1;
    }
    let post = post.min(prefixes.len() - 1);
    let Some(m) = modulo else {
        return format!("{num}{}{}", prefixes[post], unit.suffix());
    };
    let len = digits(num);
    if maxlen as isize - len as isize <= 1 {
        if carry {
            num += 1;
        }
        return format!("{num}{}{}", prefixes[post], unit.suffix());
    }
    let decimals = maxlen - len - 1;
    let frac = format!("{:.*}", decimals, m as f64 / thousand as f64);
    if frac.starts_with('1') {
        num += 1;
    }
    format!("{num}.{}{}{}", &frac[2..], prefixes[post], unit.suffix())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fio_examples() {
        assert_eq!(num2str(4096, 4, 1, true, Unit::Byte), "4096B");
        assert_eq!(num2str(65536, 4, 1, true, Unit::Byte), "64.0KiB");
        assert_eq!(num2str(8388608, 4, 1, true, Unit::Byte), "8192KiB");
        assert_eq!(num2str(16777216, 4, 1, true, Unit::Byte), "16.0MiB");
        assert_eq!(num2str(141_234, 4, 1, false, Unit::None), "141k");
        assert_eq!(num2str(26_123, 4, 1, false, Unit::None), "26.1k");
        assert_eq!(num2str(1999, 4, 1, false, Unit::None), "1999");
        assert_eq!(num2str(13_484_321, 6, 1, false, Unit::None), "13484k");
        assert_eq!(num2str(5_154_123, 6, 1, false, Unit::None), "5154.1k");
    }

    #[test]
    fn captured_fio_lines() {
        // "read: IOPS=26.1k, BW=102MiB/s (107MB/s)(204MiB/2001msec)" from a captured run.
        let bw = 107_016_489u64; // bytes/s in that range
        assert_eq!(num2str(bw, 4, 1, true, Unit::BytePerSec), "102MiB/s");
        assert_eq!(num2str(bw, 4, 1, false, Unit::BytePerSec), "107MB/s");
        assert_eq!(num2str(67108864, 4, 1, true, Unit::Byte), "64.0MiB");
        assert_eq!(num2str(67108864, 4, 1, false, Unit::Byte), "67.1MB");
        assert_eq!(num2str(8192 * 1024, 4, 1, false, Unit::Byte), "8389kB");
        assert_eq!(num2str(0, 4, 1, true, Unit::Byte), "0B");
        assert_eq!(num2str(u64::MAX, 4, 1, true, Unit::Byte), "16.0EiB");
    }

    #[test]
    fn rounding_up_into_the_next_integer() {
        // 1023.9 KiB with 4 digits: 1048474 / 1024 = 1023 rem 922 -> carry.
        assert_eq!(num2str(1_048_474, 4, 1, true, Unit::Byte), "1024KiB");
        // 99960 -> 99 rem 960; one decimal left: "%.1f" of 0.96 is "1.0", so the integer
        // part is bumped (fio prints one digit more than asked in this corner).
        assert_eq!(num2str(99_960, 4, 1, false, Unit::None), "100.0k");
        assert_eq!(num2str(99_949, 4, 1, false, Unit::None), "99.9k");
    }
}
