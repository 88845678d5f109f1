//! The crate boundaries ARCHITECTURE.md promises: no import circle among the binary's files
//! (`src/`) or the job language's (`crates/job`), and the run engine (`crates/run`) never
//! reaches into the binary. A file's imports are the modules its `crate::` and `super::`
//! paths name (grouped `use crate::{a, b}` too).

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Module path (`remote::client`) → source text, for every `.rs` file under `root`.
fn modules(root: &Path) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "rs") {
                let rel = p.strip_prefix(root).unwrap().with_extension("");
                let mut parts: Vec<String> = rel
                    .components()
                    .map(|c| c.as_os_str().to_string_lossy().into_owned())
                    .collect();
                if parts.last().is_some_and(|l| l == "mod") {
                    parts.pop();
                }
                if parts == ["lib"] || parts == ["main"] {
                    parts.clear();
                }
                out.insert(parts.join("::"), std::fs::read_to_string(&p).unwrap());
            }
        }
    }
    out
}

/// The paths after each `prefix` (`crate::a::b`, and each member of `crate::{a, b::c}`).
fn paths_after(text: &str, prefix: &str) -> Vec<String> {
    let mut out = Vec::new();
    let code: String = text
        .lines()
        .map(|l| l.split("//").next().unwrap_or(""))
        .collect::<Vec<_>>()
        .join("\n");
    let ident = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == ':';
    for (i, _) in code.match_indices(prefix) {
        if code[..i].ends_with(|c: char| c.is_ascii_alphanumeric() || c == '_' || c == '$') {
            continue;
        }
        let rest = &code[i + prefix.len()..];
        if let Some(group) = rest.strip_prefix('{') {
            let end = group.find('}').unwrap_or(group.len());
            out.extend(group[..end].split(',').map(|s| s.trim().to_string()));
        } else {
            out.push(rest.chars().take_while(|c| ident(*c)).collect());
        }
    }
    out.retain(|p| p.starts_with(|c: char| c.is_ascii_lowercase()));
    out
}

/// The import graph among the modules under `root`.
fn graph(root: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let mods = modules(root);
    let resolve = |parts: Vec<&str>, from: &str| -> Option<String> {
        (1..=parts.len())
            .rev()
            .map(|i| parts[..i].join("::"))
            .find(|c| mods.contains_key(c) && c != from)
    };
    let mut g = BTreeMap::new();
    for (m, text) in &mods {
        let mut to = BTreeSet::new();
        for p in paths_after(text, "crate::") {
            to.extend(resolve(p.split("::").collect(), m));
        }
        let parent: Vec<&str> = m.split("::").filter(|s| !s.is_empty()).collect();
        let parent = &parent[..parent.len().saturating_sub(1)];
        for p in paths_after(text, "super::") {
            let mut parts = parent.to_vec();
            parts.extend(p.split("::"));
            to.extend(resolve(parts, m));
        }
        g.insert(m.clone(), to);
    }
    g
}

/// The import circles (strongly connected components of more than one module).
fn circles(g: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    // Kosaraju: finish order on the graph, then components on the reversed graph.
    fn visit<'a>(
        v: &'a str,
        g: &'a BTreeMap<String, BTreeSet<String>>,
        seen: &mut BTreeSet<&'a str>,
        order: &mut Vec<&'a str>,
    ) {
        if !seen.insert(v) {
            return;
        }
        for w in &g[v] {
            visit(w, g, seen, order);
        }
        order.push(v);
    }
    let mut seen = BTreeSet::new();
    let mut order = Vec::new();
    for v in g.keys() {
        visit(v, g, &mut seen, &mut order);
    }
    let mut rev: BTreeMap<String, BTreeSet<String>> =
        g.keys().map(|k| (k.clone(), BTreeSet::new())).collect();
    for (v, ws) in g {
        for w in ws {
            rev.get_mut(w).unwrap().insert(v.clone());
        }
    }
    let mut done = BTreeSet::new();
    let mut out = Vec::new();
    for v in order.into_iter().rev() {
        let mut comp = Vec::new();
        visit(v, &rev, &mut done, &mut comp);
        if comp.len() > 1 {
            comp.sort();
            out.push(comp.into_iter().map(String::from).collect());
        }
    }
    out
}

fn root(rel: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(rel)
}

#[test]
fn the_binary_has_no_import_circle() {
    let c = circles(&graph(&root("src")));
    assert!(c.is_empty(), "import circles in src/: {c:?}");
}

#[test]
fn the_job_language_has_no_import_circle() {
    let c = circles(&graph(&root("crates/job/src")));
    assert!(c.is_empty(), "import circles in crates/job: {c:?}");
}

#[test]
fn the_circle_finder_finds_a_circle() {
    let mut g = BTreeMap::new();
    for (a, b) in [("a", "b"), ("b", "c"), ("c", "a"), ("d", "a")] {
        g.entry(a.to_string())
            .or_insert_with(BTreeSet::new)
            .insert(b.to_string());
        g.entry(b.to_string()).or_insert_with(BTreeSet::new);
    }
    assert_eq!(circles(&g), [["a", "b", "c"]]);
    assert_eq!(
        paths_after("use crate::{x::Y, z};\nlet q = crate::w::f();", "crate::"),
        ["x::Y", "z", "w::f"]
    );
}

#[test]
fn the_run_engine_does_not_depend_on_the_binary() {
    let manifest = std::fs::read_to_string(root("crates/run/Cargo.toml")).unwrap();
    let deps = manifest
        .split("[dependencies]")
        .nth(1)
        .and_then(|s| s.split("\n[").next())
        .unwrap_or("");
    assert!(
        !deps.lines().any(|l| l.trim_start().starts_with("flexio ")
            || l.trim_start().starts_with("flexio.")
            || l.trim_start().starts_with("flexio=")),
        "crates/run depends on the flexio binary crate"
    );
}

/// Cargo.toml sets `autotests = false`: a file under tests/ runs only as a module of
/// tests/suite.rs or as a `[[test]]` target of its own. One in neither would never run.
#[test]
fn every_test_file_runs() {
    let manifest = std::fs::read_to_string(root("Cargo.toml")).unwrap();
    let targets: BTreeSet<String> = manifest
        .split("[[test]]")
        .skip(1)
        .filter_map(|t| {
            let path = t.lines().find(|l| l.trim_start().starts_with("path"))?;
            Some(path.split('"').nth(1)?.to_string())
        })
        .collect();
    let suite = std::fs::read_to_string(root("tests/suite.rs")).unwrap();
    let modules: BTreeSet<String> = suite
        .lines()
        .filter_map(|l| l.strip_prefix("mod ")?.strip_suffix(';'))
        .map(|m| format!("tests/{m}.rs"))
        .collect();
    assert!(targets.contains("tests/suite.rs"), "{targets:?}");
    let mut files = BTreeSet::new();
    for e in std::fs::read_dir(root("tests")).unwrap() {
        let name = e.unwrap().file_name().to_string_lossy().into_owned();
        if name.ends_with(".rs") && name != "suite.rs" {
            files.insert(format!("tests/{name}"));
        }
    }
    for f in &files {
        let (t, m) = (targets.contains(f), modules.contains(f));
        assert!(
            t || m,
            "{f} is neither a module of tests/suite.rs nor a [[test]] target"
        );
        assert!(
            !(t && m),
            "{f} is both a module of tests/suite.rs and a [[test]] target"
        );
    }
    for t in &targets {
        assert!(root(t).is_file(), "[[test]] path {t} does not exist");
    }
}
