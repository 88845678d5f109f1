//! I/O buffers: contents and memory.

use super::*;

/// I/O buffers: contents and memory.
#[rustfmt::skip]
pub(super) static ROWS: &[OptDef] = &[
    flag_row!(
        "zero_buffers",
        [],
        zero_buffers,
        "Init IO buffers to all zeroes"
    ),
    flag_row!(
        "refill_buffers",
        [],
        refill_buffers,
        "Refill IO buffers on every IO submit"
    ),
    bool_row!(
        "scramble_buffers",
        [],
        scramble_buffers,
        "1",
        "Slightly scramble buffers on every IO submit"
    ),
    row!(
        "dedupe_percentage",
        [],
        Kind::Int { min: 0, max: 100 },
        "0",
        "Percentage of buffers that are dedupable",
        |o, v| {
            o.dedupe_percentage = int_in(v, o.kb_base, 0, 100)? as u32;
            Ok(())
        }
    ),
    row!(
        "dedupe_mode",
        [],
        Kind::Str,
        "repeat",
        "Mode for the deduplication buffer generation",
        |o, v| {
            o.dedupe_working_set = match req(v)? {
                "repeat" => false,
                "working_set" => true,
                other => {
                    return Err(format!(
                        "'{other}' is not a dedupe mode (repeat or working_set)"
                    ))
                }
            };
            Ok(())
        }
    ),
    row!(
        "dedupe_working_set_percentage",
        [],
        Kind::Int { min: 0, max: 100 },
        "5",
        "Dedupe working set size in percentages from file or device size used to generate dedupe patterns from",
        |o, v| {
            o.dedupe_working_set_percentage = int_in(v, o.kb_base, 0, 100)? as u32;
            Ok(())
        }
    ),
    bool_row!(
        "dedupe_global",
        [],
        dedupe_global,
        "0",
        "Global deduplication"
    ),
    row!(
        "buffer_pattern",
        [],
        Kind::Str,
        "",
        "Fill pattern for IO buffers",
        |o, v| {
            o.buffer_pattern = Some(crate::pattern::parse_pattern_max(req(v)?, crate::pattern::max_pattern(o.compat))?);
            Ok(())
        }
    ),
    row!(
        "buffer_compress_percentage",
        [],
        Kind::Int { min: 0, max: 100 },
        "",
        "How compressible the buffer is (approximately)",
        |o, v| {
            o.buffer_compress_percentage = Some(int_in(v, o.kb_base, 0, 100)? as u32);
            Ok(())
        }
    ),
    row!(
        "buffer_compress_chunk",
        [],
        Kind::Int {
            min: 1,
            max: i64::MAX
        },
        "512",
        "Size of compressible region in buffer",
        |o, v| {
            o.buffer_compress_chunk = int_in(v, o.kb_base, 1, i64::MAX)? as u64;
            Ok(())
        }
    ),
    row!(
        "iomem_align",
        ["mem_align"],
        Kind::Int {
            min: 0,
            max: 1 << 30
        },
        "0",
        "IO memory buffer offset alignment",
        |o, v| {
            let a = int_in(v, o.kb_base, 0, 1 << 30)? as u64;
            if a != 0 && !a.is_power_of_two() {
                return Err(format!("alignment {a} is not a power of two"));
            }
            o.iomem_align = a;
            Ok(())
        }
    ),
    row!(
        "mem",
        ["iomem"],
        Kind::Choice(crate::sysio::MEM_CHOICES),
        "malloc",
        "Backing type for IO buffers",
        |o, v| {
            o.sysio.mem = crate::sysio::parse_mem(req(v)?)?;
            Ok(())
        }
    ),
    row!(
        "hugepage-size",
        [],
        Kind::Int {
            min: 0,
            max: i64::MAX
        },
        "2097152",
        "When using hugepages, specify size of each page",
        |o, v| {
            let n = int_in(v, o.kb_base, 0, i64::MAX)? as u64;
            if n != 0 && !n.is_power_of_two() {
                return Err(format!("hugepage-size {n} is not a power of two"));
            }
            o.sysio.hugepage_size = n;
            Ok(())
        }
    ),
    row!(
        "lockmem",
        [],
        Kind::Str,
        "0",
        "Lock down this amount of memory (per worker)",
        |o, v| {
            o.sysio.lockmem = parse_size(req(v)?, o.kb_base)?;
            Ok(())
        }
    ),
    bool_row!(
        "iomem_thp",
        [],
        iomem_thp,
        "1",
        "flexio: put I/O buffers of 1 MiB or more on transparent huge pages (0: 4 KiB pages, as fio's malloc)"
    ),
];
