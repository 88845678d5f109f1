//! NUMA placement (`numa_cpu_nodes`, `numa_mem_policy`) resolved against the machine's nodes
//! (`/sys/devices/system/node`): the CPUs of the named nodes, and the memory policy's mode and
//! node numbers. A node the machine does not have is a planning error, as fio's parser
//! (through libnuma) refuses it; `prefer` alone is checked only by the kernel when the job
//! starts, as in fio.

use flexio_job::cpus::{MemPolicy, Nodes};
use std::path::Path;

const NODES: &str = "/sys/devices/system/node";

/// The nodes that exist here (node0 only where the kernel has no NUMA sysfs).
fn online(root: &Path) -> Vec<usize> {
    std::fs::read_to_string(root.join("online"))
        .ok()
        .and_then(|s| flexio_job::cpus::parse_cpu_list(s.trim()).ok())
        .unwrap_or_else(|| vec![0])
}

fn expand(nodes: &Nodes, have: &[usize], opt: &str, text: &str) -> Result<Vec<usize>, String> {
    match nodes {
        Nodes::All => Ok(have.to_vec()),
        Nodes::List(v) => match v.iter().find(|n| !have.contains(n)) {
            Some(n) => Err(format!(
                "{opt}={text}: node {n} is out of range (this machine has node{} {})",
                if have.len() == 1 { "" } else { "s" },
                have.iter()
                    .map(|n| n.to_string())
                    .collect::<Vec<_>>()
                    .join(",")
            )),
            None => Ok(v.clone()),
        },
    }
}

/// The CPUs of `nodes` (sorted, each once).
pub fn cpus_of(nodes: &Nodes, text: &str) -> Result<Vec<usize>, String> {
    cpus_in(Path::new(NODES), nodes, text)
}

fn cpus_in(root: &Path, nodes: &Nodes, text: &str) -> Result<Vec<usize>, String> {
    let have = online(root);
    let mut cpus = Vec::new();
    for n in expand(nodes, &have, "numa_cpu_nodes", text)? {
        let list = std::fs::read_to_string(root.join(format!("node{n}/cpulist")));
        match list.map(|l| flexio_job::cpus::parse_cpu_list(l.trim())) {
            Ok(Ok(c)) => cpus.extend(c),
            // A node without CPUs (memory only) adds none; no sysfs at all: every CPU.
            Ok(Err(_)) => {}
            Err(_) if n == 0 => {
                let all = std::thread::available_parallelism().map_or(1, |n| n.get());
                cpus.extend(0..all);
            }
            Err(e) => return Err(format!("numa_cpu_nodes={text}: node {n}: {e}")),
        }
    }
    cpus.sort_unstable();
    cpus.dedup();
    if cpus.is_empty() {
        return Err(format!("numa_cpu_nodes={text}: the nodes have no CPUs"));
    }
    Ok(cpus)
}

/// The policy's kernel mode and node numbers (interleave without a list: every node).
pub fn policy(p: &MemPolicy, text: &str) -> Result<(i32, Vec<usize>), String> {
    policy_in(Path::new(NODES), p, text)
}

fn policy_in(root: &Path, p: &MemPolicy, text: &str) -> Result<(i32, Vec<usize>), String> {
    use flexio_job::cpus::MemMode;
    let have = online(root);
    let nodes = match (&p.nodes, p.mode) {
        // fio hands prefer's node to the kernel unchecked.
        (Some(Nodes::List(v)), MemMode::Prefer) => v.clone(),
        (Some(n), _) => expand(n, &have, "numa_mem_policy", text)?,
        (None, MemMode::Interleave) => have,
        (None, _) => Vec::new(),
    };
    Ok((p.mpol(), nodes))
}

#[cfg(test)]
mod tests {
    use super::*;
    use flexio_job::cpus::{parse_mem_policy, parse_nodes};

    fn fake(nodes: &[(usize, &str)]) -> tempfile::TempDir {
        let d = tempfile::tempdir().unwrap();
        let ids: Vec<String> = nodes.iter().map(|(n, _)| n.to_string()).collect();
        std::fs::write(d.path().join("online"), ids.join(",") + "\n").unwrap();
        for (n, cpus) in nodes {
            std::fs::create_dir(d.path().join(format!("node{n}"))).unwrap();
            std::fs::write(
                d.path().join(format!("node{n}/cpulist")),
                format!("{cpus}\n"),
            )
            .unwrap();
        }
        d
    }

    #[test]
    fn nodes_become_their_cpus_and_unknown_nodes_are_named() {
        let d = fake(&[(0, "0-3"), (1, "4-7"), (2, "")]);
        let r = |s: &str| cpus_in(d.path(), &parse_nodes(s).unwrap(), s);
        assert_eq!(r("1"), Ok(vec![4, 5, 6, 7]));
        assert_eq!(r("all"), Ok((0..8).collect()));
        assert!(r("2").unwrap_err().contains("no CPUs"));
        let e = r("0,5").unwrap_err();
        assert!(
            e.contains("node 5 is out of range") && e.contains("0,1,2"),
            "{e}"
        );
        let p = |s: &str| policy_in(d.path(), &parse_mem_policy(s).unwrap(), s);
        assert_eq!(p("bind:0-1"), Ok((2, vec![0, 1])));
        assert_eq!(p("interleave"), Ok((3, vec![0, 1, 2])));
        assert_eq!(p("prefer:9"), Ok((1, vec![9])));
        assert_eq!(p("local"), Ok((4, vec![])));
        assert!(p("bind:3").unwrap_err().contains("node 3 is out of range"));
    }
}
