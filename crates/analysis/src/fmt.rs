//! Human-readable numbers for the text and HTML outputs.

/// A latency in ns as ns/us/ms/s with three significant digits.
pub fn ns(v: f64) -> String {
    if !v.is_finite() {
        return "-".into();
    }
    let (x, unit) = if v >= 1e9 {
        (v / 1e9, "s")
    } else if v >= 1e6 {
        (v / 1e6, "ms")
    } else if v >= 1e3 {
        (v / 1e3, "us")
    } else {
        (v, "ns")
    };
    format!("{}{unit}", sig3(x))
}

/// Three significant digits, no exponent.
pub fn sig3(x: f64) -> String {
    let a = x.abs();
    if a >= 100.0 || a == 0.0 {
        format!("{x:.0}")
    } else if a >= 10.0 {
        format!("{x:.1}")
    } else {
        format!("{x:.2}")
    }
}

/// A count with k/M/G suffix (IOPS).
pub fn count(v: f64) -> String {
    if !v.is_finite() {
        return "-".into();
    }
    if v >= 1e9 {
        format!("{}G", sig3(v / 1e9))
    } else if v >= 1e6 {
        format!("{}M", sig3(v / 1e6))
    } else if v >= 1e3 {
        format!("{}k", sig3(v / 1e3))
    } else {
        sig3(v)
    }
}

/// Bytes per second in binary units.
pub fn bw(v: f64) -> String {
    if !v.is_finite() {
        return "-".into();
    }
    let units = ["B/s", "KiB/s", "MiB/s", "GiB/s", "TiB/s"];
    let mut x = v;
    let mut i = 0;
    while x >= 1024.0 && i + 1 < units.len() {
        x /= 1024.0;
        i += 1;
    }
    format!("{}{}", sig3(x), units[i])
}

/// A signed percentage with one decimal.
pub fn pct(v: f64) -> String {
    if !v.is_finite() {
        return "-".into();
    }
    format!("{v:+.1}%")
}

/// A p-value as text: `< 0.001` or three decimals.
pub fn p(v: f64) -> String {
    if v < 0.001 {
        "< 0.001".into()
    } else {
        format!("= {v:.3}")
    }
}

/// HTML escaping for text and attribute values.
pub fn esc(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&#39;"),
            c => o.push(c),
        }
    }
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats() {
        assert_eq!(ns(950.0), "950ns");
        assert_eq!(ns(12_345.0), "12.3us");
        assert_eq!(ns(1_500_000.0), "1.50ms");
        assert_eq!(ns(60e9), "60.0s");
        assert_eq!(count(123_456.0), "123k");
        assert_eq!(bw(1024.0 * 1024.0 * 40.0), "40.0MiB/s");
        assert_eq!(pct(12.345), "+12.3%");
        assert_eq!(pct(-3.0), "-3.0%");
        assert_eq!(p(0.0004), "< 0.001");
        assert_eq!(p(0.0123), "= 0.012");
        assert_eq!(esc("<a&\"'>"), "&lt;a&amp;&quot;&#39;&gt;");
    }
}
