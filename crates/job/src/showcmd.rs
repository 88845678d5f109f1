//! `--showcmd`: the job set as an equivalent command line.

use crate::load::JobSet;

fn opt(name: &str, value: &str) -> String {
    if value.is_empty() {
        format!("--{name} ")
    } else {
        format!("--{name}={value} ")
    }
}

pub fn showcmd(set: &JobSet) -> String {
    let mut s = String::from("flexio ");
    for (k, v) in &set.global_echo {
        s.push_str(&opt(k, v));
    }
    for j in &set.jobs {
        s.push_str(&opt("name", &j.opts.name));
        for (k, v) in j.echo.iter().filter(|(k, _)| k != "name") {
            s.push_str(&opt(k, v));
        }
    }
    s.push('\n');
    s
}
