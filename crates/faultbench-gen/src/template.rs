//! Templates of family files: `{name}` is replaced by a parameter's value, `{name|q}` by the
//! value quoted for a POSIX shell, `{{` and `}}` by literal braces.
//!
//! Parameters come from lab files, which are untrusted, so every value is checked when it is
//! bound ([`safe_value`]): a value that could change the meaning of a shell command (quotes,
//! `$`, `;`, backticks, spaces, newlines…) never reaches a template unquoted. Values built by
//! the generator itself from quoted parts (a `vtysh` command that re-applies a configuration)
//! are marked as commands and inserted as they are.

use faultbench_core::text::for_shell;
use std::collections::BTreeMap;

/// The parameters of one candidate: name → value.
pub type Params = BTreeMap<String, String>;

/// Whether `v` is safe to paste into a shell command unquoted: addresses, prefixes, names,
/// numbers (`[A-Za-z0-9_.:/-]`, not starting with `-`).
pub fn safe_value(v: &str) -> bool {
    !v.is_empty()
        && v.len() <= 128
        && !v.starts_with('-')
        && v.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | ':' | '/' | '-'))
}

/// `s` quoted for a POSIX shell: the workspace's one quoting rule,
/// [`faultbench_core::text::for_shell`].
#[deprecated(note = "use `faultbench_core::text::for_shell`; this alias goes in the next release")]
pub fn shell_quote(s: &str) -> String {
    for_shell(s)
}

/// A template problem: the name it refers to, or the syntax.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TemplateError {
    /// `{name}` with no such parameter.
    #[error("unknown parameter `{0}`")]
    Unknown(String),
    /// An unclosed `{` or a stray `}`.
    #[error("unbalanced brace at byte {0} (write `{{{{` or `}}}}` for a literal brace)")]
    Brace(usize),
    /// An unknown `|filter`.
    #[error("unknown filter `|{0}` (only `|q` exists: shell quoting)")]
    Filter(String),
}

/// The parameter names a template refers to.
pub fn names(template: &str) -> Result<Vec<String>, TemplateError> {
    let mut out = Vec::new();
    walk(template, &mut |name, _| {
        out.push(name.to_string());
        Ok(String::new())
    })?;
    Ok(out)
}

/// Fills `template` from `params`.
pub fn render(template: &str, params: &Params) -> Result<String, TemplateError> {
    walk(template, &mut |name, quote| {
        let v = params
            .get(name)
            .ok_or_else(|| TemplateError::Unknown(name.to_string()))?;
        Ok(if quote { for_shell(v) } else { v.clone() })
    })
}

fn walk(
    template: &str,
    f: &mut dyn FnMut(&str, bool) -> Result<String, TemplateError>,
) -> Result<String, TemplateError> {
    let mut out = String::new();
    let b = template.as_bytes();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'{' if b.get(i + 1) == Some(&b'{') => {
                out.push('{');
                i += 2;
            }
            b'}' if b.get(i + 1) == Some(&b'}') => {
                out.push('}');
                i += 2;
            }
            b'{' => {
                let end = template[i..].find('}').ok_or(TemplateError::Brace(i))? + i;
                let inner = &template[i + 1..end];
                let (name, filter) = inner.split_once('|').unwrap_or((inner, ""));
                let quote = match filter {
                    "" => false,
                    "q" => true,
                    other => return Err(TemplateError::Filter(other.to_string())),
                };
                if name.is_empty() || name.contains('{') {
                    return Err(TemplateError::Brace(i));
                }
                out.push_str(&f(name.trim(), quote)?);
                i = end + 1;
            }
            b'}' => return Err(TemplateError::Brace(i)),
            _ => {
                let next = template[i..]
                    .find(['{', '}'])
                    .map_or(template.len(), |k| k + i);
                out.push_str(&template[i..next]);
                i = next;
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fills_quotes_and_escapes() {
        let mut p = Params::new();
        p.insert("dev".into(), "eth0".into());
        p.insert("evil".into(), "x'; rm -rf / #".into());
        assert_eq!(
            render("ip link set {dev} down", &p).unwrap(),
            "ip link set eth0 down"
        );
        assert_eq!(
            render("echo {evil|q}", &p).unwrap(),
            "echo 'x'\\''; rm -rf / #'"
        );
        assert_eq!(render("nft '{{ }}' {dev}", &p).unwrap(), "nft '{ }' eth0");
        assert_eq!(
            render("{nope}", &p),
            Err(TemplateError::Unknown("nope".into()))
        );
        assert!(matches!(render("{dev", &p), Err(TemplateError::Brace(0))));
        assert!(matches!(
            render("{dev|x}", &p),
            Err(TemplateError::Filter(_))
        ));
        assert_eq!(names("{a} {b|q} {{c}}").unwrap(), vec!["a", "b"]);
    }

    #[test]
    fn hostile_values_are_not_safe_and_quote_to_one_word() {
        // A leading `-` is not safe as a plain parameter, but quoting cannot stop a command
        // from reading it as an option (the shell removes the quotes): `-rf` stays `-rf`.
        assert!(!safe_value("-rf"));
        assert_eq!(for_shell("-rf"), "-rf");
        for v in [
            "a b", "$(id)", "`id`", "a;b", "a\nb", "", "x'y", "a|b", "a&b", "*",
        ] {
            assert!(!safe_value(v), "{v:?}");
            let q = for_shell(v);
            assert!(q.starts_with('\'') && q.ends_with('\''), "{q}");
            // Inside the quotes, every quote is the `'\''` sequence.
            let inner = &q[1..q.len() - 1];
            assert_eq!(inner.replace("'\\''", "").matches('\'').count(), 0, "{q}");
        }
        for v in ["eth0", "10.0.0.1/24", "router_1", "65001", "a-b.c:d"] {
            assert!(safe_value(v));
            assert_eq!(for_shell(v), v);
        }
    }
}
