//! `--cmdhelp` and `--enghelp` text, generated from the option table.

use crate::table::{self, Catalog, Kind, OptDef};

fn kind_line(d: &OptDef) -> &'static str {
    match d.kind {
        Kind::Time { .. } => "string with time postfix (opt=10s)",
        k => k.describe(),
    }
}

/// Detailed help for one option, in fio's layout.
pub fn option_detail(d: &OptDef, cat: &Catalog) -> String {
    let mut s = format!("{:>20}: {}\n", d.name, d.help);
    for a in d.aliases {
        s.push_str(&format!("{:>20}: {}\n", "alias", a));
    }
    s.push_str(&format!("{:>20}: {}\n", "type", kind_line(d)));
    if !d.default.is_empty() {
        s.push_str(&format!("{:>20}: {}\n", "default", d.default));
    }
    if let Kind::Int { min, max } = d.kind {
        let max = if max == i64::MAX { -1 } else { max };
        s.push_str(&format!("{:>20}: min={min}, max={max}\n", "range"));
    }
    if let Kind::Choice(list) = d.kind {
        for (i, (n, h)) in list.iter().enumerate() {
            let label = if i == 0 { "valid values" } else { "" };
            s.push_str(&format!("{label:>20}: {n:<10} {h}\n"));
        }
    }
    let owners = cat.owners(d.name);
    if !owners.is_empty() {
        s.push_str(&format!("{:>20}: {}\n", "ioengines", owners.join(", ")));
    }
    s
}

/// `--cmdhelp` without an argument (or `all`): one line per generic option.
pub fn list_all(cat: &Catalog) -> String {
    cat.core_rows()
        .map(|d| format!("{:<24}: {}\n", d.name, d.help))
        .collect()
}

/// `--cmdhelp=name`; unknown names show the closest match, as fio does.
pub fn cmdhelp(name: &str, cat: &Catalog) -> Result<String, String> {
    if name == "all" {
        return Ok(list_all(cat));
    }
    if let Some(d) = cat.lookup(name) {
        return Ok(option_detail(d, cat) + "\n");
    }
    if table::UNSUPPORTED.contains(&name) {
        return Err(format!(
            "'{name}' is a fio option that is not supported by flexio"
        ));
    }
    match crate::error::suggest(name, cat.all_names()).and_then(|n| cat.lookup(&n)) {
        Some(d) => Ok(format!(
            "No such command: {name}\n - showing closest match\n{}\n",
            option_detail(d, cat)
        )),
        None => Err(format!("No such command: {name}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn detail_layout() {
        let c = &table::CORE_ONLY;
        let s = cmdhelp("runtime", c).unwrap();
        assert!(s.starts_with("             runtime: Stop workload"), "{s}");
        assert!(s.contains("               alias: timeout\n"));
        assert!(cmdhelp("fallocate", c)
            .unwrap()
            .contains("        valid values: none       Do not pre-allocate space\n"));
        assert!(cmdhelp("runtme", c).unwrap().contains("closest match"));
        // Any fio option flexio does not implement (the list shrinks as they come).
        if let Some(n) = crate::table::UNSUPPORTED.first() {
            assert!(cmdhelp(n, c).is_err());
        }
    }
}
