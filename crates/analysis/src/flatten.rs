//! A JSON document as dotted keys and values (`host.kernel`, `targets[0].device.model`), for
//! tables and for showing what differs between two results' provenance.

use serde_json::Value;

/// Append every leaf of `v` under `prefix` to `out`, in document order.
pub fn flatten(v: &Value, prefix: &str, out: &mut Vec<(String, String)>) {
    let key = |k: &str| {
        if prefix.is_empty() {
            k.to_string()
        } else {
            format!("{prefix}.{k}")
        }
    };
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                flatten(x, &key(k), out);
            }
        }
        Value::Array(a) => {
            for (i, x) in a.iter().enumerate() {
                flatten(x, &format!("{prefix}[{i}]"), out);
            }
        }
        Value::String(s) => out.push((prefix.to_string(), s.clone())),
        Value::Null => out.push((prefix.to_string(), "null".into())),
        other => out.push((prefix.to_string(), other.to_string())),
    }
}

/// The keys whose values differ between `a` and `b` (present on one side only included):
/// (key, value in a, value in b), in a's order then b's.
pub fn differences(a: &Value, b: &Value) -> Vec<(String, Option<String>, Option<String>)> {
    let (mut fa, mut fb) = (Vec::new(), Vec::new());
    flatten(a, "", &mut fa);
    flatten(b, "", &mut fb);
    let mut out = Vec::new();
    for (k, va) in &fa {
        let vb = fb.iter().find(|(x, _)| x == k).map(|(_, v)| v.clone());
        if vb.as_ref() != Some(va) {
            out.push((k.clone(), Some(va.clone()), vb));
        }
    }
    for (k, vb) in &fb {
        if !fa.iter().any(|(x, _)| x == k) {
            out.push((k.clone(), None, Some(vb.clone())));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn leaves_and_differences() {
        let a = serde_json::json!({"host": {"kernel": "6.1", "cpus": 2}, "t": [{"ra": 128}]});
        let b = serde_json::json!({"host": {"kernel": "6.6", "cpus": 2}, "t": [{"ra": 4096}], "x": true});
        let mut f = Vec::new();
        flatten(&a, "", &mut f);
        assert_eq!(
            f,
            vec![
                ("host.kernel".to_string(), "6.1".to_string()),
                ("host.cpus".into(), "2".into()),
                ("t[0].ra".into(), "128".into())
            ]
        );
        let d = differences(&a, &b);
        assert_eq!(
            d,
            vec![
                (
                    "host.kernel".to_string(),
                    Some("6.1".to_string()),
                    Some("6.6".to_string())
                ),
                ("t[0].ra".into(), Some("128".into()), Some("4096".into())),
                ("x".into(), None, Some("true".into())),
            ]
        );
    }
}
