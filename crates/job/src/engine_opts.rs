//! Engine-private options: each engine declares its options in its own file with
//! [`engine_options!`](crate::engine_options), which generates the typed option struct,
//! its defaults and the option rows in one place. When a job sets such an option, the
//! row's setter parses the value (errors carry the job file's line, as for every option)
//! and keeps the typed value in [`JobOptions::engine`](crate::JobOptions); the engine
//! builds its option struct from those values when it is constructed.

pub use crate::engine_values::EngineValues;

/// Declare an engine's private options: the struct, its defaults, `from_values` and the
/// option rows, one entry per option:
///
/// ```ignore
/// flexio_job::engine_options! {
///     /// io_uring's options.
///     pub struct UringOpts; rows OPTIONS;
///     /// Register the I/O buffers.
///     fixedbufs: bool = false,
///         "fixedbufs", Kind::Flag, "0", "Pre map IO buffers", parse::flag;
/// }
/// ```
///
/// fio's aliases follow the name: `"protocol" | "proto", Kind::Choice(...), ...`. An option
/// fio added to the engine after 3.33 ends with the release: `parse::flag, since "3.38";`
/// (under `--compat=3.33` the engine then does not have it, as in fio 3.33). Values fio
/// added to an older option follow as `newer [("vsock", "3.37")]` (bad values under
/// `--compat=3.33`).
///
/// The parser is any `fn(Option<&str>, KbBase) -> Result<T, String>` (a path or a closure).
#[macro_export]
macro_rules! engine_options {
    (
        $(#[$smeta:meta])*
        $vis:vis struct $S:ident; rows $ROWS:ident;
        $(
            $(#[doc = $doc:literal])*
            $field:ident : $ty:ty = $default:expr,
                $name:literal $(| $alias:literal)*, $kind:expr, $shown:literal, $help:literal,
                $parse:expr $(, since $since:literal)? $(, newer [$(($nv:literal, $nrel:literal)),*])?;
        )*
    ) => {
        $(#[$smeta])*
        #[derive(Clone, Debug, PartialEq)]
        $vis struct $S {
            $( $(#[doc = $doc])* pub $field: $ty, )*
        }

        impl Default for $S {
            fn default() -> Self {
                $S { $( $field: $default, )* }
            }
        }

        impl $S {
            /// The options as the job set them (defaults for the others).
            pub fn from_values(v: &$crate::engine_opts::EngineValues) -> Self {
                #[allow(unused_mut)]
                let mut s = Self::default();
                $(
                    if let Some(x) = v.get::<$ty>($name) {
                        s.$field = x.clone();
                    }
                )*
                s
            }
        }

        /// This engine's option rows.
        $vis static $ROWS: &[$crate::table::OptDef] = &[
            $(
                $crate::table::OptDef {
                    name: $name,
                    aliases: &[$($alias),*],
                    kind: $kind,
                    help: $help,
                    default: $shown,
                    prio: 0,
                    since: $crate::engine_options!(@since $($since)?),
                    set: |o, v| {
                        $($(
                            if o.compat.is_fio333() && v.map(|v| v.split(':').next() == Some($nv)) == Some(true) {
                                return Err(format!(
                                    "'{}' is not a valid value in fio 3.33 (fio {} added it)", $nv, $nrel
                                ));
                            }
                        )*)?
                        let x: Result<$ty, String> = ($parse)(v, o.kb_base);
                        o.engine.set($name, x?);
                        Ok(())
                    },
                },
            )*
        ];
    };
    (@since) => { None };
    (@since $v:literal) => { Some($v) };
}

/// Value parsers for engine option rows.
pub mod parse {
    use crate::value::KbBase;

    /// A bare key or 0/1.
    pub fn flag(v: Option<&str>, _: KbBase) -> Result<bool, String> {
        crate::table::flag(v)
    }

    /// 0 or 1 (a value is required).
    pub fn boolean(v: Option<&str>, _: KbBase) -> Result<bool, String> {
        crate::value::parse_bool(crate::table::req(v)?)
    }

    /// An integer with size suffixes, within `[min, max]`.
    pub fn int(v: Option<&str>, kb: KbBase, min: i64, max: i64) -> Result<i64, String> {
        crate::table::int_in(v, kb, min, max)
    }

    /// A time, microseconds (seconds when `secs`) without a unit.
    pub fn time_us(v: Option<&str>, secs: bool) -> Result<u64, String> {
        crate::value::parse_time_us(crate::table::req(v)?, secs)
    }

    /// A free string.
    pub fn string(v: Option<&str>, _: KbBase) -> Result<String, String> {
        Ok(crate::table::req(v)?.to_string())
    }

    /// One of a fixed set of names.
    pub fn choice<T: Copy>(v: Option<&str>, table: &[(&str, T)]) -> Result<T, String> {
        crate::table::choice(v, table)
    }

    /// Up to two integers (read,write) within `[min, max]`, over the defaults `cur`.
    pub fn rw_ints(v: Option<&str>, cur: [u32; 2], min: u32, max: u32) -> Result<[u32; 2], String> {
        crate::cpus::rw_ints(crate::table::req(v)?, cur, min, max)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::table::Kind;

    crate::engine_options! {
        /// Test engine options.
        pub struct TestOpts; rows ROWS;
        /// A flag.
        fast: bool = false, "fast", Kind::Flag, "0", "Go fast", parse::flag;
        /// A bounded integer (with an alias).
        level: u32 = 3, "level" | "lvl", Kind::Int { min: 0, max: 7 }, "3", "Level",
            |v, kb| parse::int(v, kb, 0, 7).map(|n| n as u32);
    }

    #[test]
    fn rows_parse_into_typed_values() {
        let mut o = crate::JobOptions::default();
        assert_eq!(TestOpts::from_values(&o.engine), TestOpts::default());
        (ROWS[0].set)(&mut o, None).unwrap();
        (ROWS[1].set)(&mut o, Some("5")).unwrap();
        assert!((ROWS[1].set)(&mut o, Some("9")).is_err());
        let t = TestOpts::from_values(&o.engine);
        assert!(t.fast);
        assert_eq!(t.level, 5);
        (ROWS[1].set)(&mut o, Some("2")).unwrap();
        assert_eq!(TestOpts::from_values(&o.engine).level, 2);
        assert_eq!(o.engine.names().collect::<Vec<_>>(), ["fast", "level"]);
        assert_eq!(ROWS[1].aliases, ["lvl"]);
        assert!(ROWS[0].aliases.is_empty());
    }
}
