//! Size suffixes and their base: what `value.rs` and `expr.rs` (fio's arithmetic) share.

/// How size suffixes are interpreted (`kb_base`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KbBase {
    /// `kb_base=1024` (default): `k` = 1024, but the three-letter `kib` = 1000.
    K1024,
    /// `kb_base=1000`: `k` = 1000, `kib` = 1024.
    K1000,
}

impl KbBase {
    pub fn value(self) -> u64 {
        match self {
            KbBase::K1024 => 1024,
            KbBase::K1000 => 1000,
        }
    }
}

fn pow(base: u64, exp: u32) -> u64 {
    base.pow(exp)
}

/// Multiplier for a size suffix (case-insensitive), fio 3.33's `__get_mult_bytes`.
///
/// The three-letter IEC forms are deliberately inverted, as in fio: with the default
/// `kb_base=1024`, `kib` means 1000 and `k`/`kb`/`ki` mean 1024.
pub(crate) fn size_mult(suffix: &str, kb: KbBase) -> Option<u64> {
    let s = suffix.to_ascii_lowercase();
    if s.is_empty() || s == "b" {
        return Some(1);
    }
    let letters = ["k", "m", "g", "t", "p", "e"];
    for (i, l) in letters.iter().enumerate() {
        let e = (i + 1) as u32;
        let (base, inverted) = match kb {
            KbBase::K1024 => (1024, 1000),
            KbBase::K1000 => (1000, 1024),
        };
        if s == *l || s == format!("{l}b") || s == format!("{l}i") {
            return Some(pow(base, e));
        }
        if s == format!("{l}ib") {
            return Some(pow(inverted, e));
        }
    }
    None
}
