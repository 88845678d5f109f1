//! Trace capture and replay (fio's iolog and blktrace options).

use super::*;

fn skip_mask(s: &str) -> Result<u8, String> {
    let mut m = 0u8;
    for p in s.split(',') {
        m |= match p {
            "read" => 1,
            "write" => 2,
            "trim" => 4,
            "sync" => 8,
            _ => {
                return Err(format!(
                    "Unknown skip type: {p} (valid: read, write, trim, sync)"
                ))
            }
        };
    }
    Ok(m)
}

fn float_list(v: Option<&str>) -> Result<Vec<f64>, String> {
    let (list, _) = parse_float_list(req(v)?, 20)?;
    Ok(list)
}

/// Trace capture and replay.
#[rustfmt::skip]
pub(super) static ROWS: &[OptDef] = &[
    row!("write_iolog", [], Kind::Str, "", "Store IO pattern to file",
         |o, v| { o.iolog.write = Some(req(v)?.to_string()); Ok(()) }),
    row!("read_iolog", [], Kind::Str, "", "Playback IO pattern from file",
         |o, v| { o.iolog.read = Some(req(v)?.to_string()); Ok(()) }),
    row!("read_iolog_chunked", [], Kind::Bool, "0", "Parse IO pattern in chunks",
         |o, v| { o.iolog.chunked = parse_bool(req(v)?)?; Ok(()) }),
    row!("replay_no_stall", [], Kind::Bool, "0", "Playback IO pattern file as fast as possible without stalls",
         |o, v| { o.iolog.no_stall = parse_bool(req(v)?)?; Ok(()) }),
    row!("replay_redirect", [], Kind::Str, "", "Replay all I/O onto this device, regardless of trace device",
         |o, v| { o.iolog.redirect = Some(req(v)?.to_string()); Ok(()) }),
    // fio's help texts of replay_scale and replay_align are swapped; --cmdhelp shows them as fio does.
    row!("replay_scale", [], Kind::Int { min: 0, max: i64::MAX }, "1", "Align offsets to this blocksize",
         |o, v| { o.iolog.scale = int_in(v, o.kb_base, 0, i64::MAX)? as u64; Ok(()) }),
    row!("replay_align", [], Kind::Int { min: 0, max: i64::MAX }, "", "Scale offset down by this factor",
         |o, v| { o.iolog.align = int_in(v, o.kb_base, 0, i64::MAX)? as u64; Ok(()) }),
    row!("replay_time_scale", [], Kind::Int { min: 1, max: i64::MAX }, "100", "Scale time for replay events",
         |o, v| { o.iolog.time_scale = int_in(v, o.kb_base, 1, i64::MAX)? as u64; Ok(()) }),
    row!("replay_skip", [], Kind::Str, "", "Skip certain IO types (read,write,trim,flush)",
         |o, v| { o.iolog.skip = skip_mask(req(v)?)?; Ok(()) }),
    row!("merge_blktrace_file", [], Kind::Str, "", "Merged blktrace output filename",
         |o, v| { o.iolog.merge_file = Some(req(v)?.to_string()); Ok(()) }),
    row!("merge_blktrace_scalars", [], Kind::FloatList, "", "Percentage to scale each trace",
         |o, v| { o.iolog.merge_scalars = float_list(v)?; Ok(()) }),
    row!("merge_blktrace_iters", [], Kind::FloatList, "", "Number of iterations to run per trace",
         |o, v| { o.iolog.merge_iters = float_list(v)?; Ok(()) }),
];

#[cfg(test)]
mod tests {
    use super::skip_mask;

    #[test]
    fn skip_types() {
        assert_eq!(skip_mask("read,trim").unwrap(), 5);
        assert_eq!(skip_mask("sync").unwrap(), 8);
        assert!(skip_mask("flush").is_err());
    }
}
