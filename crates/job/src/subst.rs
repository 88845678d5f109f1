//! Job-file value substitution: `${VAR}` from the environment, the keywords `$pagesize`,
//! `$mb_memory` and `$ncpus`, and (as fio does through `bc`) integer arithmetic on lines
//! where a keyword was replaced and `+ - * /` appear.

/// Facts about the host the keywords expand to, plus environment lookup. Passed in so the
/// parser stays pure (and fuzzable).
pub struct Host<'a> {
    pub ncpus: u64,
    pub mb_memory: u64,
    pub pagesize: u64,
    pub env: &'a dyn Fn(&str) -> Option<String>,
}

/// Expand `${NAME}` (unset → empty, as fio).
pub fn expand_env(s: &str, host: &Host) -> Result<String, String> {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(i) = rest.find("${") {
        out.push_str(&rest[..i]);
        let after = &rest[i + 2..];
        let end = after
            .find('}')
            .ok_or_else(|| format!("unterminated '${{' in '{s}'"))?;
        let name = &after[..end];
        if let Some(v) = (host.env)(name) {
            out.push_str(&v);
        }
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

/// Replace keywords; returns the new text and whether anything was replaced.
pub fn replace_keywords(s: &str, host: &Host) -> (String, bool) {
    let mut out = s.to_string();
    let mut any = false;
    for (kw, v) in [
        ("$pagesize", host.pagesize),
        ("$mb_memory", host.mb_memory),
        ("$ncpus", host.ncpus),
    ] {
        if out.contains(kw) {
            out = out.replace(kw, &v.to_string());
            any = true;
        }
    }
    (out, any)
}

/// Evaluate an integer expression with `+ - * / %`, parentheses and unary minus (bc with
/// scale=0: division truncates). Size suffixes are not allowed inside.
pub fn eval_int(s: &str) -> Result<i64, String> {
    let toks: Vec<char> = s.chars().filter(|c| !c.is_whitespace()).collect();
    let mut p = Parser {
        t: &toks,
        i: 0,
        depth: 0,
    };
    let v = p.expr()?;
    if p.i != toks.len() {
        return Err(format!("unexpected '{}' in expression '{s}'", toks[p.i]));
    }
    Ok(v)
}

struct Parser<'a> {
    t: &'a [char],
    i: usize,
    depth: usize,
}

impl Parser<'_> {
    fn peek(&self) -> Option<char> {
        self.t.get(self.i).copied()
    }
    fn expr(&mut self) -> Result<i64, String> {
        let mut v = self.term()?;
        while let Some(c) = self.peek() {
            if c != '+' && c != '-' {
                break;
            }
            self.i += 1;
            let r = self.term()?;
            v = if c == '+' {
                v.checked_add(r)
            } else {
                v.checked_sub(r)
            }
            .ok_or("arithmetic overflow")?;
        }
        Ok(v)
    }
    fn term(&mut self) -> Result<i64, String> {
        let mut v = self.unary()?;
        while let Some(c) = self.peek() {
            if c != '*' && c != '/' && c != '%' {
                break;
            }
            self.i += 1;
            let r = self.unary()?;
            v = match c {
                '*' => v.checked_mul(r).ok_or("arithmetic overflow")?,
                _ if r == 0 => return Err("division by zero".into()),
                '/' => v / r,
                _ => v % r,
            };
        }
        Ok(v)
    }
    fn unary(&mut self) -> Result<i64, String> {
        if self.peek() == Some('-') {
            self.i += 1;
            return self
                .unary()?
                .checked_neg()
                .ok_or_else(|| "arithmetic overflow".into());
        }
        self.atom()
    }
    fn atom(&mut self) -> Result<i64, String> {
        match self.peek() {
            Some('(') => {
                self.depth += 1;
                if self.depth > 64 {
                    return Err("expression nested too deeply".into());
                }
                self.i += 1;
                let v = self.expr()?;
                if self.peek() != Some(')') {
                    return Err("missing ')'".into());
                }
                self.i += 1;
                self.depth -= 1;
                Ok(v)
            }
            Some(c) if c.is_ascii_digit() => {
                let start = self.i;
                while self.peek().is_some_and(|c| c.is_ascii_digit()) {
                    self.i += 1;
                }
                let s: String = self.t[start..self.i].iter().collect();
                s.parse().map_err(|_| format!("number '{s}' is too large"))
            }
            Some(c) => Err(format!("unexpected '{c}' in expression")),
            None => Err("expression ends too early".into()),
        }
    }
}

/// Full substitution of one job-file value.
pub fn substitute(value: &str, host: &Host) -> Result<String, String> {
    let v = expand_env(value, host)?;
    let (v, replaced) = replace_keywords(&v, host);
    if replaced && v.contains(['+', '-', '*', '/']) && !v.contains('\'') {
        return eval_int(&v).map(|n| n.to_string());
    }
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn host() -> Host<'static> {
        Host {
            ncpus: 2,
            mb_memory: 24105,
            pagesize: 4096,
            env: &|n| (n == "DIR").then(|| "/tmp".to_string()),
        }
    }

    #[test]
    fn env_and_keywords() {
        let h = host();
        assert_eq!(substitute("${DIR}/x", &h).unwrap(), "/tmp/x");
        assert_eq!(substitute("${UNSET}x", &h).unwrap(), "x");
        assert_eq!(substitute("$ncpus", &h).unwrap(), "2");
        assert_eq!(substitute("$mb_memory/1024", &h).unwrap(), "23");
        assert_eq!(substitute("($ncpus*2+1)%4", &h).unwrap(), "1");
        assert!(substitute("${DIR", &h).is_err());
        assert!(substitute("$ncpus/0", &h).is_err());
        // Without a keyword no arithmetic happens (fio passes it through).
        assert_eq!(substitute("4k-8k", &h).unwrap(), "4k-8k");
    }
}
