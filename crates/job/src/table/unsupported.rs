//! fio options flexio knows by name but does not implement.

/// fio 3.33 options that flexio recognises but does not implement (yet). They are rejected
/// with "not supported by flexio", never silently ignored. No name here has a row in the
/// full catalog, core or engine (`flexio_engine::registry`'s tests check it).
pub static UNSUPPORTED: &[&str] = &[];
