//! Arithmetic in option values, as fio documents it: a value that starts with `(` is an
//! expression of `+ - * / % ^` (power, right-associative), unary minus and parentheses
//! over numbers (decimal, fractional, `0x` hex), each number with an optional suffix: a
//! size suffix (`k`, `kb`, `kib`, ... with `kb_base`'s meaning) for sizes and integers, a
//! time suffix (`us`, `ms`, `s`, `m` minutes, `h`, `d`) for times, whose bare numbers are
//! microseconds inside an expression. A suffix after a closing parenthesis scales the
//! parenthesised value. The result is truncated towards zero.

use crate::units::KbBase;

/// What the numbers of an expression measure.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unit {
    /// Bytes (and plain integers): size suffixes.
    Size(KbBase),
    /// Microseconds: time suffixes.
    Time,
}

/// Evaluate `s` (starting with `(`) to a number of `unit`s.
pub fn eval(s: &str, unit: Unit) -> Result<f64, String> {
    let mut p = Parser {
        s: s.as_bytes(),
        i: 0,
        unit,
    };
    let v = p.sum()?;
    p.blank();
    if p.i != p.s.len() {
        return Err(format!(
            "'{s}': unexpected '{}' in the expression",
            &s[p.i..]
        ));
    }
    if !v.is_finite() {
        return Err(format!("'{s}': the expression has no finite value"));
    }
    Ok(v)
}

struct Parser<'a> {
    s: &'a [u8],
    i: usize,
    unit: Unit,
}

impl Parser<'_> {
    fn blank(&mut self) {
        while self.s.get(self.i).is_some_and(|c| c.is_ascii_whitespace()) {
            self.i += 1;
        }
    }

    fn peek(&mut self) -> Option<u8> {
        self.blank();
        self.s.get(self.i).copied()
    }

    fn sum(&mut self) -> Result<f64, String> {
        let mut v = self.product()?;
        while let Some(op @ (b'+' | b'-')) = self.peek() {
            self.i += 1;
            let r = self.product()?;
            v = if op == b'+' { v + r } else { v - r };
        }
        Ok(v)
    }

    fn product(&mut self) -> Result<f64, String> {
        let mut v = self.power()?;
        while let Some(op @ (b'*' | b'/' | b'%')) = self.peek() {
            self.i += 1;
            let r = self.power()?;
            v = match op {
                b'*' => v * r,
                _ if r == 0.0 => return Err("division by zero in the expression".into()),
                b'/' => v / r,
                _ => v % r,
            };
        }
        Ok(v)
    }

    fn power(&mut self) -> Result<f64, String> {
        let base = self.unary()?;
        if self.peek() == Some(b'^') {
            self.i += 1;
            let e = self.power()?;
            return Ok(base.powf(e));
        }
        Ok(base)
    }

    fn unary(&mut self) -> Result<f64, String> {
        match self.peek() {
            Some(b'-') => {
                self.i += 1;
                Ok(-self.unary()?)
            }
            Some(b'+') => {
                self.i += 1;
                self.unary()
            }
            Some(b'(') => {
                self.i += 1;
                let v = self.sum()?;
                if self.peek() != Some(b')') {
                    return Err("missing ')' in the expression".into());
                }
                self.i += 1;
                Ok(v * self.suffix()?)
            }
            Some(_) => self.number(),
            None => Err("the expression ends too early".into()),
        }
    }

    fn number(&mut self) -> Result<f64, String> {
        let rest = &self.s[self.i..];
        let v = if rest.len() > 2 && rest[0] == b'0' && (rest[1] | 0x20) == b'x' {
            let n = rest[2..]
                .iter()
                .take_while(|c| c.is_ascii_hexdigit())
                .count();
            let t = std::str::from_utf8(&rest[2..2 + n]).unwrap_or("");
            let v = u64::from_str_radix(t, 16).map_err(|_| format!("bad hex number '0x{t}'"))?;
            self.i += 2 + n;
            v as f64
        } else {
            let n = rest
                .iter()
                .take_while(|c| c.is_ascii_digit() || **c == b'.')
                .count();
            let t = std::str::from_utf8(&rest[..n]).unwrap_or("");
            let v: f64 = t.parse().map_err(|_| {
                format!(
                    "'{}' is not a number",
                    String::from_utf8_lossy(&rest[..rest.len().min(16)])
                )
            })?;
            self.i += n;
            v
        };
        Ok(v * self.suffix()?)
    }

    /// The multiplier of the letters right after a number or `)` (1 without any).
    fn suffix(&mut self) -> Result<f64, String> {
        let n = self.s[self.i..]
            .iter()
            .take_while(|c| c.is_ascii_alphabetic())
            .count();
        if n == 0 {
            return Ok(1.0);
        }
        let t = std::str::from_utf8(&self.s[self.i..self.i + n])
            .unwrap_or("")
            .to_ascii_lowercase();
        self.i += n;
        let m = match self.unit {
            Unit::Size(kb) => crate::units::size_mult(&t, kb).map(|m| m as f64),
            Unit::Time => match t.as_str() {
                "us" | "usec" => Some(1.0),
                "ms" | "msec" => Some(1e3),
                "s" | "sec" => Some(1e6),
                "m" | "min" => Some(60e6),
                "h" => Some(3600e6),
                "d" => Some(86400e6),
                _ => None,
            },
        };
        m.ok_or_else(|| format!("unknown suffix '{t}' in the expression"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SIZE: Unit = Unit::Size(KbBase::K1024);

    #[test]
    fn sizes() {
        assert_eq!(eval("(1+1)*1M", SIZE), Ok(2097152.0));
        assert_eq!(eval("(2*3)M", SIZE), Ok(6291456.0));
        assert_eq!(eval("(4k*2)", SIZE), Ok(8192.0));
        assert_eq!(eval("(1.5*1k)", SIZE), Ok(1536.0));
        assert_eq!(eval("(2^10)", SIZE), Ok(1024.0));
        assert_eq!(eval("(2^3^2)", SIZE), Ok(512.0));
        assert_eq!(eval("(10 % 4 + 0x10)", SIZE), Ok(18.0));
        assert_eq!(eval("(-(2-5))", SIZE), Ok(3.0));
        assert_eq!(eval("(1kib)", SIZE), Ok(1000.0));
        assert!(eval("(1/0)", SIZE).is_err());
        assert!(eval("(1+)", SIZE).is_err());
        assert!(eval("(1+2", SIZE).is_err());
        assert!(eval("(1q)", SIZE).is_err());
        assert!(eval("(1)x", SIZE).is_err());
    }

    #[test]
    fn times_are_microseconds() {
        assert_eq!(eval("(10)", Unit::Time), Ok(10.0));
        assert_eq!(eval("(2*5s)", Unit::Time), Ok(10e6));
        assert_eq!(eval("(1m+30s)", Unit::Time), Ok(90e6));
        assert_eq!(eval("(1ms/2)", Unit::Time), Ok(500.0));
    }
}
