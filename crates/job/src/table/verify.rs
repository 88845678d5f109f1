//! Data verification and error handling.

use super::*;

/// Values of this category's options that fio added after 3.33 (see [`super::NEWER_VALUES`]).
pub(super) static NEWER_VALUES: &[(&str, &str, &str)] = &[("verify", "pattern_hdr", "3.40")];

/// Data verification and error handling.
#[rustfmt::skip]
pub(super) static ROWS: &[OptDef] = &[
    row!(
        "verify",
        [],
        Kind::Choice(&[
            ("0", "Don't do IO verification"),
            ("md5", "Use md5 checksums for verification"),
            ("crc64", "Use crc64 checksums for verification"),
            ("crc32", "Use crc32 checksums for verification"),
            ("crc32c-intel", "Use crc32c checksums for verification (hw assisted, if available)"),
            ("crc32c", "Use crc32c checksums for verification (hw assisted, if available)"),
            ("crc16", "Use crc16 checksums for verification"),
            ("crc7", "Use crc7 checksums for verification"),
            ("sha1", "Use sha1 checksums for verification"),
            ("sha256", "Use sha256 checksums for verification"),
            ("sha512", "Use sha512 checksums for verification"),
            ("sha3-224", "Use sha3-224 checksums for verification"),
            ("sha3-256", "Use sha3-256 checksums for verification"),
            ("sha3-384", "Use sha3-384 checksums for verification"),
            ("sha3-512", "Use sha3-512 checksums for verification"),
            ("xxhash", "Use xxhash checksums for verification"),
            ("meta", "Use io information"),
            ("pattern", "Verify strict pattern"),
            ("pattern_hdr", "Verify pattern with header (fio 3.40+)"),
            ("null", "Pretend to verify")
        ]),
        "0",
        "Verify data written",
        |o, v| {
            use crate::options::verify_code::*;
            o.verify = choice(
                v,
                &[
                    ("0", NONE),
                    ("md5", MD5),
                    ("crc64", CRC64),
                    ("crc32", CRC32),
                    ("crc32c-intel", CRC32C),
                    ("crc32c", CRC32C),
                    ("crc16", CRC16),
                    ("crc7", CRC7),
                    ("sha1", SHA1),
                    ("sha256", SHA256),
                    ("sha512", SHA512),
                    ("sha3-224", SHA3_224),
                    ("sha3-256", SHA3_256),
                    ("sha3-384", SHA3_384),
                    ("sha3-512", SHA3_512),
                    ("xxhash", XXHASH),
                    ("meta", META),
                    ("pattern", PATTERN),
                    ("pattern_hdr", PATTERN_HDR),
                    ("null", NULL),
                ],
            )?;
            Ok(())
        }
    ),
    bool_row!(
        "do_verify",
        [],
        do_verify,
        "1",
        "Run verification stage after write"
    ),
    flag_row!(
        "verify_only",
        [],
        verify_only,
        "Verifies previously written data is still valid"
    ),
    row!(
        "verify_interval",
        [],
        Kind::Int { min: 2 * 40, max: u32::MAX as i64 },
        "",
        "Store verify buffer header every N bytes",
        |o, v| {
            o.verify_interval = int_in(v, o.kb_base, 80, u32::MAX as i64)? as u64;
            Ok(())
        }
    ),
    row!(
        "verify_offset",
        [],
        Kind::Int { min: 40, max: u32::MAX as i64 },
        "",
        "Offset verify header location by N bytes",
        |o, v| {
            o.verify_offset = int_in(v, o.kb_base, 40, u32::MAX as i64)? as u64;
            Ok(())
        }
    ),
    row!(
        "verify_pattern",
        [],
        Kind::Str,
        "",
        "Fill pattern for IO buffers",
        |o, v| {
            o.verify_pattern = Some(crate::pattern::parse_verify_pattern_max(req(v)?, crate::pattern::max_pattern(o.compat))?);
            // fio: a pattern without a verify type means header + pattern (type 17,
            // the newest fio's `pattern_hdr`).
            if o.verify == crate::options::verify_code::NONE {
                o.verify = crate::options::verify_code::PATTERN_HDR;
            }
            Ok(())
        }
    ),
    row!(
        "verify_pattern_interval",
        [],
        Kind::Int { min: 0, max: u32::MAX as i64 },
        "0",
        "Restart the verify pattern (and its %o offset) every N bytes",
        |o, v| {
            o.verify_pattern_interval = int_in(v, o.kb_base, 0, u32::MAX as i64)? as u64;
            Ok(())
        }
    ).since("3.40"),
    row!(
        "verify_header_seed",
        [],
        Kind::Bool,
        "1",
        "Check the header's data seed against the seed of the write",
        |o, v| {
            o.verify_header_seed = Some(crate::value::parse_bool(req(v)?)?);
            Ok(())
        }
    ).since("3.40"),
    row!(
        "verify_write_sequence",
        [],
        Kind::Bool,
        "1",
        "Check the header's write sequence number against the last write",
        |o, v| {
            o.verify_write_sequence = Some(crate::value::parse_bool(req(v)?)?);
            Ok(())
        }
    ).since("3.38"),
    row!(
        "verify_async",
        [],
        Kind::Int { min: 0, max: 1024 },
        "0",
        "Number of async verifier threads to use",
        |o, v| {
            o.verify_async = int_in(v, o.kb_base, 0, 1024)? as u32;
            Ok(())
        }
    ),
    row!(
        "verify_async_cpus",
        [],
        Kind::Str,
        "",
        "Set CPUs allowed for async verify threads",
        |o, v| {
            o.verify_async_cpus = Some(crate::cpus::parse_cpu_list(req(v)?)?);
            Ok(())
        }
    ),
    bool_row!(
        "experimental_verify",
        [],
        experimental_verify,
        "0",
        "Enable experimental verification"
    ),
    bool_row!(
        "verify_fatal",
        [],
        verify_fatal,
        "0",
        "Exit on a single verify failure, don't continue"
    ),
    bool_row!(
        "verify_dump",
        [],
        verify_dump,
        "0",
        "Dump contents of good and bad blocks on failure"
    ),
    count_row!(
        "verify_backlog",
        [],
        verify_backlog,
        "",
        "Verify after this number of blocks are written"
    ),
    count_row!(
        "verify_backlog_batch",
        [],
        verify_backlog_batch,
        "",
        "Verify this number of IO blocks"
    ),
    row!(
        "trim_percentage",
        [],
        Kind::Int { min: 0, max: 100 },
        "0",
        "Number of verify blocks to trim (i.e., discard)",
        |o, v| {
            o.trim_percentage = int_in(v, o.kb_base, 0, 100)? as u32;
            Ok(())
        }
    ),
    bool_row!(
        "trim_verify_zero",
        [],
        trim_verify_zero,
        "1",
        "Verify that trimmed (i.e., discarded) blocks are returned as zeroes"
    ),
    row!(
        "trim_mode",
        [],
        Kind::Choice(&[
            ("discard", "BLKDISCARD, as fio (a regular file answers ENOTTY)"),
            ("punch", "fallocate(PUNCH_HOLE|KEEP_SIZE): files get holes, devices zeroes"),
        ]),
        "discard",
        "flexio: how trims are done (punch makes trims and trim verification work on regular files)",
        |o, v| {
            o.trim_punch = choice(v, &[("discard", false), ("punch", true)])?;
            Ok(())
        }
    ),
    count_row!(
        "trim_backlog",
        [],
        trim_backlog,
        "",
        "Trim after this number of blocks are written"
    ),
    count_row!(
        "trim_backlog_batch",
        [],
        trim_backlog_batch,
        "",
        "Trim this number of IO blocks"
    ),
    bool_row!(
        "verify_state_save",
        [],
        verify_state_save,
        "1",
        "Save verify state on termination"
    ),
    bool_row!(
        "verify_state_load",
        [],
        verify_state_load,
        "0",
        "Load verify state on termination"
    ),
    row!(
        "continue_on_error",
        [],
        Kind::Choice(&[
            ("none", "Exit when an error is encountered"),
            ("read", "Continue on read errors only"),
            ("write", "Continue on write errors only"),
            ("io", "Continue on any IO errors"),
            ("verify", "Continue on verify errors only"),
            ("all", "Continue on all io and verify errors"),
            ("0", "Alias for 'none'"),
            ("1", "Alias for 'all'")
        ]),
        "none",
        "Continue on non-fatal errors during IO",
        |o, v| {
            use crate::options::err_class::*;
            o.continue_on_error = choice(
                v,
                &[
                    ("none", 0),
                    ("0", 0),
                    ("read", READ),
                    ("write", WRITE),
                    ("io", IO),
                    ("verify", VERIFY),
                    ("all", ALL),
                    ("1", ALL),
                ],
            )?;
            Ok(())
        }
    ),
    row!(
        "ignore_error",
        [],
        Kind::Str,
        "",
        "Set a specific list of errors to ignore (READ,WRITE,VERIFY lists of names or numbers)",
        |o, v| {
            o.ignore_error = crate::pattern::parse_ignore_error(req(v)?, o.compat)?;
            Ok(())
        }
    ),
    bool_row!(
        "error_dump",
        [],
        error_dump,
        "0",
        "Dump info on each error"
    ),
];
