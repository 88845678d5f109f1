//! CPU placement and priorities.

use super::*;

/// CPU placement and priorities.
#[rustfmt::skip]
pub(super) static ROWS: &[OptDef] = &[
    row!(
        "prio",
        [],
        Kind::Int { min: 0, max: 7 },
        "",
        "Set job IO priority value",
        |o, v| {
            o.prio = Some(int_in(v, o.kb_base, 0, 7)? as u32);
            Ok(())
        }
    ),
    row!(
        "prioclass",
        [],
        Kind::Int { min: 0, max: 3 },
        "",
        "Set job IO priority class",
        |o, v| {
            o.prioclass = Some(int_in(v, o.kb_base, 0, 3)? as u32);
            Ok(())
        }
    ),
    row!(
        "priohint",
        [],
        Kind::Int { min: 0, max: 1023 },
        "",
        "Set job IO priority hint (fio 3.36+)",
        |o, v| {
            o.newest.priohint = Some(int_in(v, o.kb_base, 0, 1023)? as u32);
            Ok(())
        }
    ),
    row!(
        "nice",
        [],
        Kind::Int { min: -20, max: 19 },
        "0",
        "Set job CPU nice value",
        |o, v| {
            o.nice = int_in(v, o.kb_base, -20, 19)? as i32;
            Ok(())
        }
    ),
    row!(
        "cpus_allowed",
        [],
        Kind::Str,
        "",
        "Set CPUs allowed",
        |o, v| {
            o.cpus_allowed = Some(crate::cpus::parse_cpu_list(req(v)?)?);
            Ok(())
        }
    ),
    row!("cpumask", [], Kind::Str, "", "CPU affinity mask", |o, v| {
        o.cpus_allowed = Some(crate::cpus::parse_cpu_mask(req(v)?)?);
        Ok(())
    }),
    OptDef {
        name: "cpus_allowed_policy",
        aliases: &[],
        kind: Kind::Choice(&[
            ("shared", "Default. Threads will share CPUs in the set"),
            ("split", "Each thread will get a unique CPU from the set"),
        ]),
        default: "shared",
        help: "Distribution policy for cpus_allowed",
        prio: 1,
        set: |o, v| {
            o.cpus_split = choice(v, &[("shared", false), ("split", true)])?;
            Ok(())
        },
    },
];
