//! CPU lists (`cpus_allowed=0,5,8-15`), masks (`cpumask=0xf`), NUMA node lists and memory
//! policies (`numa_cpu_nodes`, `numa_mem_policy`) and two-value read,write integer options
//! (`cmdprio_percentage=10,50`).

/// Largest CPU number accepted (the kernel's default CPU_SETSIZE is 1024).
pub const MAX_CPU: usize = 1023;

pub fn parse_cpu_list(s: &str) -> Result<Vec<usize>, String> {
    let mut out = Vec::new();
    for part in s.split(',') {
        let part = part.trim();
        if part.is_empty() {
            continue;
        }
        let (lo, hi) = match part.split_once('-') {
            Some((a, b)) => (a, b),
            None => (part, part),
        };
        let lo: usize = lo
            .parse()
            .map_err(|_| format!("'{part}' is not a CPU number or range"))?;
        let hi: usize = hi
            .parse()
            .map_err(|_| format!("'{part}' is not a CPU number or range"))?;
        if lo > hi || hi > MAX_CPU {
            return Err(format!("'{part}' is not a valid CPU range"));
        }
        for c in lo..=hi {
            if !out.contains(&c) {
                out.push(c);
            }
        }
    }
    if out.is_empty() {
        return Err("empty CPU list".into());
    }
    out.sort_unstable();
    Ok(out)
}

pub fn parse_cpu_mask(s: &str) -> Result<Vec<usize>, String> {
    let v = crate::value::parse_size(s, crate::value::KbBase::K1024)?;
    let out: Vec<usize> = (0..64).filter(|b| v & (1u64 << b) != 0).collect();
    if out.is_empty() {
        return Err(format!("cpumask '{s}' selects no CPU"));
    }
    Ok(out)
}

/// NUMA nodes named by an option: every node, or a list (checked against the machine's
/// nodes when the job is planned).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Nodes {
    All,
    List(Vec<usize>),
}

/// `all`, or a list of node numbers and ranges (`0,2-3`).
pub fn parse_nodes(s: &str) -> Result<Nodes, String> {
    if s.trim() == "all" {
        return Ok(Nodes::All);
    }
    parse_cpu_list(s)
        .map(Nodes::List)
        .map_err(|_| format!("'{s}' is not a NUMA node list (numbers, ranges A-B, or all)"))
}

/// `numa_mem_policy` modes (the kernel's MPOL_* values in [`MemPolicy::mpol`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MemMode {
    Default,
    Prefer,
    Bind,
    Interleave,
    Local,
}

/// `numa_mem_policy=mode[:nodes]`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MemPolicy {
    pub mode: MemMode,
    /// prefer: one node; bind: a list; interleave: a list or none (every node).
    pub nodes: Option<Nodes>,
}

impl MemPolicy {
    /// The kernel's mode number (MPOL_DEFAULT 0, PREFERRED 1, BIND 2, INTERLEAVE 3, LOCAL 4).
    pub fn mpol(&self) -> i32 {
        match self.mode {
            MemMode::Default => 0,
            MemMode::Prefer => 1,
            MemMode::Bind => 2,
            MemMode::Interleave => 3,
            MemMode::Local => 4,
        }
    }
}

/// fio's rules and messages: the five mode names; `prefer` takes exactly one node, `bind`
/// needs a list, `interleave` may have one, `default` and `local` take none (fio names
/// 'local' for both).
pub fn parse_mem_policy(s: &str) -> Result<MemPolicy, String> {
    let (name, list) = match s.split_once(':') {
        Some((n, l)) => (n, Some(l)),
        None => (s, None),
    };
    let mode = match name {
        "default" => MemMode::Default,
        "prefer" => MemMode::Prefer,
        "bind" => MemMode::Bind,
        "interleave" => MemMode::Interleave,
        "local" => MemMode::Local,
        _ => {
            return Err("memory policy should be: default, prefer, bind, interleave, local".into())
        }
    };
    let list = list.filter(|l| !l.is_empty());
    let nodes = match (mode, list) {
        (MemMode::Default | MemMode::Local, Some(_)) => {
            return Err("NO nodelist for 'local'".into())
        }
        (MemMode::Default | MemMode::Local, None) => None,
        (MemMode::Prefer, None) => return Err("one node is needed for 'prefer'".into()),
        (MemMode::Prefer, Some(l)) => {
            if l.contains(',') || l.contains('-') {
                return Err("one node only for 'prefer'".into());
            }
            let n: usize = l
                .trim()
                .parse()
                .map_err(|_| format!("'{l}' is not a NUMA node number"))?;
            Some(Nodes::List(vec![n]))
        }
        (MemMode::Bind, None) => return Err("a nodelist is needed for 'bind'".into()),
        (MemMode::Bind | MemMode::Interleave, Some(l)) => Some(parse_nodes(l)?),
        (MemMode::Interleave, None) => None,
    };
    Ok(MemPolicy { mode, nodes })
}

/// `a` or `a,b`: read and write values (one value sets both), each in [min, max].
pub fn rw_ints(s: &str, cur: [u32; 2], min: u32, max: u32) -> Result<[u32; 2], String> {
    let parts: Vec<&str> = s.split(',').collect();
    if parts.len() > 2 {
        return Err(format!("'{s}': at most two values (read,write)"));
    }
    let mut out = cur;
    let mut last = None;
    for (i, p) in parts.iter().enumerate() {
        if p.is_empty() {
            continue;
        }
        let v: u32 = p
            .parse()
            .map_err(|_| format!("'{p}' is not a whole number"))?;
        if v < min || v > max {
            return Err(format!("value {v} is out of range [{min}, {max}]"));
        }
        out[i] = v;
        last = Some(v);
    }
    if parts.len() == 1 {
        if let Some(v) = last {
            out[1] = v;
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numa_values_follow_fios_rules() {
        assert_eq!(parse_nodes("all"), Ok(Nodes::All));
        assert_eq!(parse_nodes("0,2-3"), Ok(Nodes::List(vec![0, 2, 3])));
        assert!(parse_nodes("x").is_err());
        let p = parse_mem_policy("bind:0-1").unwrap();
        assert_eq!((p.mpol(), p.nodes), (2, Some(Nodes::List(vec![0, 1]))));
        assert_eq!(parse_mem_policy("interleave").unwrap().nodes, None);
        assert_eq!(parse_mem_policy("local").unwrap().mpol(), 4);
        for (bad, msg) in [
            ("bogus", "memory policy should be"),
            ("prefer", "one node is needed for 'prefer'"),
            ("prefer:0,1", "one node only for 'prefer'"),
            ("bind", "a nodelist is needed for 'bind'"),
            ("default:0", "NO nodelist for 'local'"),
            ("local:0", "NO nodelist for 'local'"),
        ] {
            let e = parse_mem_policy(bad).unwrap_err();
            assert!(e.contains(msg), "{bad}: {e}");
        }
    }

    #[test]
    fn lists_and_masks() {
        assert_eq!(parse_cpu_list("0,5,8-10").unwrap(), vec![0, 5, 8, 9, 10]);
        assert!(parse_cpu_list("3-1").is_err());
        assert!(parse_cpu_list("x").is_err());
        assert_eq!(parse_cpu_mask("0x5").unwrap(), vec![0, 2]);
        assert!(parse_cpu_mask("0").is_err());
        assert_eq!(rw_ints("10,50", [0, 0], 0, 100).unwrap(), [10, 50]);
        assert_eq!(rw_ints("30", [0, 0], 0, 100).unwrap(), [30, 30]);
        assert!(rw_ints("101", [0, 0], 0, 100).is_err());
    }
}
