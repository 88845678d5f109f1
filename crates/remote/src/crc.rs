//! The checksums of the protocol: CRC-16/ARC on every frame (header and payload) and
//! CRC-32C on verify-state files (VTRIGGER / SENDFILE).

const fn crc16_table() -> [u16; 256] {
    let mut t = [0u16; 256];
    let mut i = 0;
    while i < 256 {
        let mut c = i as u16;
        let mut k = 0;
        while k < 8 {
            c = if c & 1 != 0 {
                (c >> 1) ^ 0xA001
            } else {
                c >> 1
            };
            k += 1;
        }
        t[i] = c;
        i += 1;
    }
    t
}

static CRC16: [u16; 256] = crc16_table();

/// CRC-16/ARC: polynomial 0x8005 reflected (0xA001), initial value 0, no final XOR.
pub fn crc16(data: &[u8]) -> u16 {
    data.iter().fold(0u16, |crc, &b| {
        (crc >> 8) ^ CRC16[((crc ^ b as u16) & 0xff) as usize]
    })
}

const fn crc32c_table() -> [u32; 256] {
    let mut t = [0u32; 256];
    let mut i = 0;
    while i < 256 {
        let mut c = i as u32;
        let mut k = 0;
        while k < 8 {
            c = if c & 1 != 0 {
                (c >> 1) ^ 0x82F6_3B78
            } else {
                c >> 1
            };
            k += 1;
        }
        t[i] = c;
        i += 1;
    }
    t
}

static CRC32C: [u32; 256] = crc32c_table();

/// CRC-32C (Castagnoli) as fio computes it, the checksum of its verify-state files: the
/// register starts at all ones and is not inverted at the end (the standard CRC-32C is
/// this value inverted).
pub fn crc32c(data: &[u8]) -> u32 {
    data.iter().fold(!0u32, |crc, &b| {
        (crc >> 8) ^ CRC32C[((crc ^ b as u32) & 0xff) as usize]
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crc16_test_vectors() {
        assert_eq!(crc16(b"123456789"), 0xBB3D);
        assert_eq!(crc16(b""), 0);
        assert_eq!(crc16(&[0u8; 37]), 0);
        assert_eq!(crc16(b"a"), 0xE8C1);
    }

    #[test]
    fn crc32c_test_vector() {
        // The standard check value 0xE3069283, not inverted at the end.
        assert_eq!(crc32c(b"123456789"), !0xE306_9283);
        assert_eq!(crc32c(b""), !0);
    }
}
