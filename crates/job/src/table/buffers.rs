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
        "buffer_pattern",
        [],
        Kind::Str,
        "",
        "Fill pattern for IO buffers",
        |o, v| {
            o.buffer_pattern = Some(crate::pattern::parse_pattern(req(v)?)?);
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
    bool_row!(
        "iomem_thp",
        [],
        iomem_thp,
        "1",
        "flexio: put I/O buffers of 1 MiB or more on transparent huge pages (0: 4 KiB pages, as fio's malloc)"
    ),
];
