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
    ).since("3.36"),
    row!(
        "uid",
        [],
        Kind::Int {
            min: 0,
            max: u32::MAX as i64 - 1
        },
        "",
        "Run job with this user ID",
        |o, v| {
            o.uid = Some(int_in(v, o.kb_base, 0, u32::MAX as i64 - 1)? as u32);
            Ok(())
        }
    ),
    row!(
        "gid",
        [],
        Kind::Int {
            min: 0,
            max: u32::MAX as i64 - 1
        },
        "",
        "Run job with this group ID",
        |o, v| {
            o.gid = Some(int_in(v, o.kb_base, 0, u32::MAX as i64 - 1)? as u32);
            Ok(())
        }
    ),
    row!(
        "cgroup",
        [],
        Kind::Str,
        "",
        "Add job to cgroup of this name",
        |o, v| {
            o.cgroup = Some(req(v)?.to_string());
            Ok(())
        }
    ),
    row!(
        "cgroup_weight",
        [],
        Kind::Int {
            min: 100,
            max: 1000
        },
        "",
        "Use given weight for cgroup",
        |o, v| {
            o.cgroup_weight = Some(int_in(v, o.kb_base, 100, 1000)? as u32);
            Ok(())
        }
    ),
    bool_row!(
        "cgroup_nodelete",
        [],
        cgroup_nodelete,
        "0",
        "Do not delete cgroups after job completion"
    ),
    row!(
        "numa_cpu_nodes",
        [],
        Kind::Str,
        "",
        "NUMA CPU nodes bind",
        |o, v| {
            o.numa_cpu_nodes = Some(crate::cpus::parse_nodes(req(v)?)?);
            Ok(())
        }
    ),
    row!(
        "numa_mem_policy",
        [],
        Kind::Str,
        "",
        "NUMA memory policy setup",
        |o, v| {
            o.numa_mem_policy = Some(crate::cpus::parse_mem_policy(req(v)?)?);
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
    prio_row!(
        1,
        "cpus_allowed_policy",
        [],
        Kind::Choice(&[
            ("shared", "Default. Threads will share CPUs in the set"),
            ("split", "Each thread will get a unique CPU from the set"),
        ]),
        "shared",
        "Distribution policy for cpus_allowed",
        |o, v| {
            o.cpus_split = choice(v, &[("shared", false), ("split", true)])?;
            Ok(())
        }
    ),
];
