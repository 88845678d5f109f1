//! fio's verify types: their codes (the `verify_type` header field), names and the size
//! of the checksum field that follows the header.

/// The verify type, with fio's numbering (the value stored in the header).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Kind {
    /// `meta`: header only.
    Meta,
    Md5,
    Crc64,
    Crc32,
    /// `crc32c` and `crc32c-intel` (fio 3.33 writes type 5 for both).
    Crc32c,
    Crc16,
    Crc7,
    Sha256,
    Sha512,
    Sha3_224,
    Sha3_256,
    Sha3_384,
    Sha3_512,
    Xxhash,
    Sha1,
    /// Header followed by `verify_pattern` (`pattern_hdr`; fio 3.33 picks it when
    /// `verify_pattern` is set without `verify=`).
    PatternHdr,
    /// `pattern`: the block holds only `verify_pattern`, no header.
    Pattern,
    /// `null`: nothing is written or checked.
    Null,
}

/// Every kind, in code order.
pub const ALL: [Kind; 18] = [
    Kind::Meta,
    Kind::Md5,
    Kind::Crc64,
    Kind::Crc32,
    Kind::Crc32c,
    Kind::Crc16,
    Kind::Crc7,
    Kind::Sha256,
    Kind::Sha512,
    Kind::Sha3_224,
    Kind::Sha3_256,
    Kind::Sha3_384,
    Kind::Sha3_512,
    Kind::Xxhash,
    Kind::Sha1,
    Kind::PatternHdr,
    Kind::Pattern,
    Kind::Null,
];

/// The kinds that carry a checksum of the data.
pub const CHECKSUMS: [Kind; 14] = [
    Kind::Md5,
    Kind::Crc64,
    Kind::Crc32,
    Kind::Crc32c,
    Kind::Crc16,
    Kind::Crc7,
    Kind::Sha256,
    Kind::Sha512,
    Kind::Sha3_224,
    Kind::Sha3_256,
    Kind::Sha3_384,
    Kind::Sha3_512,
    Kind::Xxhash,
    Kind::Sha1,
];

impl Kind {
    /// fio's `verify_type` code.
    pub fn code(self) -> u16 {
        match self {
            Kind::Meta => 1,
            Kind::Md5 => 2,
            Kind::Crc64 => 3,
            Kind::Crc32 => 4,
            Kind::Crc32c => 5,
            Kind::Crc16 => 7,
            Kind::Crc7 => 8,
            Kind::Sha256 => 9,
            Kind::Sha512 => 10,
            Kind::Sha3_224 => 11,
            Kind::Sha3_256 => 12,
            Kind::Sha3_384 => 13,
            Kind::Sha3_512 => 14,
            Kind::Xxhash => 15,
            Kind::Sha1 => 16,
            Kind::PatternHdr => 17,
            Kind::Pattern => 18,
            Kind::Null => 19,
        }
    }

    /// The kind of a header's `verify_type` (6, fio's `crc32c-intel` code, reads as crc32c).
    pub fn from_code(code: u16) -> Option<Kind> {
        if code == 6 {
            return Some(Kind::Crc32c);
        }
        ALL.iter().copied().find(|k| k.code() == code)
    }

    /// The `verify=` value (`crc32c-intel` is accepted as crc32c).
    pub fn from_name(name: &str) -> Option<Kind> {
        match name {
            "crc32c-intel" => Some(Kind::Crc32c),
            _ => ALL.iter().copied().find(|k| k.name() == name),
        }
    }

    /// The name fio prints (`%.8s` of it) and accepts in `verify=`.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Meta => "meta",
            Kind::Md5 => "md5",
            Kind::Crc64 => "crc64",
            Kind::Crc32 => "crc32",
            Kind::Crc32c => "crc32c",
            Kind::Crc16 => "crc16",
            Kind::Crc7 => "crc7",
            Kind::Sha256 => "sha256",
            Kind::Sha512 => "sha512",
            Kind::Sha3_224 => "sha3-224",
            Kind::Sha3_256 => "sha3-256",
            Kind::Sha3_384 => "sha3-384",
            Kind::Sha3_512 => "sha3-512",
            Kind::Xxhash => "xxhash",
            Kind::Sha1 => "sha1",
            Kind::PatternHdr => "pattern_hdr",
            Kind::Pattern => "pattern",
            Kind::Null => "null",
        }
    }

    /// Size of the checksum field after the header (fio's `vhdr_*` structs).
    pub fn csum_len(self) -> usize {
        match self {
            Kind::Md5 => 16,
            Kind::Crc64 => 8,
            Kind::Crc32 | Kind::Crc32c | Kind::Xxhash => 4,
            Kind::Crc16 => 2,
            Kind::Crc7 => 1,
            Kind::Sha1 => 20,
            Kind::Sha256 => 64,
            Kind::Sha512 => 128,
            Kind::Sha3_224 => 28,
            Kind::Sha3_256 => 32,
            Kind::Sha3_384 => 48,
            Kind::Sha3_512 => 64,
            Kind::Meta | Kind::PatternHdr | Kind::Pattern | Kind::Null => 0,
        }
    }

    /// Whether blocks of this kind carry a header.
    pub fn has_header(self) -> bool {
        !matches!(self, Kind::Pattern | Kind::Null)
    }

    /// Whether the data is covered by a checksum.
    pub fn has_checksum(self) -> bool {
        self.csum_len() > 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_names_and_sizes_are_fios() {
        // fio's enum order (verify.h), crc32c-intel being 6.
        let codes: Vec<u16> = ALL.iter().map(|k| k.code()).collect();
        assert_eq!(
            codes,
            vec![1, 2, 3, 4, 5, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19]
        );
        for k in ALL {
            assert_eq!(Kind::from_code(k.code()), Some(k));
            assert_eq!(Kind::from_name(k.name()), Some(k));
        }
        assert_eq!(Kind::from_code(6), Some(Kind::Crc32c));
        assert_eq!(Kind::from_name("crc32c-intel"), Some(Kind::Crc32c));
        assert_eq!(Kind::from_code(0), None);
        assert_eq!(Kind::from_code(20), None);
        assert_eq!(Kind::Sha3_224.csum_len(), 28);
        assert_eq!(Kind::Crc7.csum_len(), 1);
        assert!(!Kind::Pattern.has_header() && Kind::PatternHdr.has_header());
        assert_eq!(CHECKSUMS.iter().filter(|k| k.has_checksum()).count(), 14);
    }
}
