//! HTML building blocks. Every piece of run data is untrusted text (tickets, tool outputs and
//! diagnoses come from agents, scenario authors and networks): it is escaped here, once, on its
//! way into a page; data for the index's script goes in as JSON inside a
//! `<script type="application/json">` block with `<`, `>`, `&` and the two JavaScript line
//! separators escaped, so nothing in it can close the block. Pages carry a strict
//! Content-Security-Policy: no script runs except the index's own, identified by its hash.

use base64::Engine;
use serde_json::Value;
use sha2::{Digest, Sha256};

/// Escapes text for element content and quoted attribute values (the one escaper of report
/// and viewer pages).
pub use faultbench_core::text::for_html as esc;

/// JSON that is safe inside `<script type="application/json">…</script>`.
pub fn json_for_script(v: &Value) -> String {
    let s = serde_json::to_string(v).unwrap_or_else(|_| "null".into());
    let mut out = String::with_capacity(s.len() + 64);
    for c in s.chars() {
        match c {
            '<' => out.push_str("\\u003c"),
            '>' => out.push_str("\\u003e"),
            '&' => out.push_str("\\u0026"),
            '\u{2028}' => out.push_str("\\u2028"),
            '\u{2029}' => out.push_str("\\u2029"),
            c => out.push(c),
        }
    }
    out
}

/// The CSP source expression of an inline block: `'sha256-<base64>'`.
pub fn csp_hash(content: &str) -> String {
    let digest = Sha256::digest(content.as_bytes());
    format!(
        "'sha256-{}'",
        base64::engine::general_purpose::STANDARD.encode(digest)
    )
}

/// The page stylesheet (shared by every page).
pub const STYLE: &str = include_str!("assets/style.css");

/// The Content-Security-Policy of a page that may run `script` (allowed by its hash) and no
/// other script: nothing is loaded from anywhere, only the shared stylesheet applies.
pub fn content_security_policy(script: Option<&str>) -> String {
    let script_src = match script {
        Some(js) => csp_hash(js),
        None => "'none'".to_string(),
    };
    format!(
        "default-src 'none'; script-src {script_src}; style-src {}; img-src data:; base-uri 'none'; form-action 'none'",
        csp_hash(STYLE)
    )
}

/// The policy of the site as a whole, for a server to send as a header: the index's, the only
/// page with a script. A browser enforces both the header and a page's own `<meta>` policy, so
/// every other page stays at `script-src 'none'`.
pub fn site_policy() -> String {
    content_security_policy(Some(crate::index_page::SCRIPT))
}

/// A complete page: `title`, body HTML, and optionally the one inline script it may run.
pub fn page(title: &str, root: &str, body: &str, script: Option<&str>) -> String {
    let csp = content_security_policy(script);
    let mut out = format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<meta http-equiv=\"Content-Security-Policy\" content=\"{}\">\n<meta name=\"referrer\" content=\"no-referrer\">\n<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>{}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n<nav><a href=\"{root}index.html\">runs</a> · <a href=\"{root}scenarios.html\">scenarios</a></nav>\n",
        esc(&csp),
        esc(title)
    );
    out.push_str(body);
    if let Some(js) = script {
        out.push_str("<script>");
        out.push_str(js);
        out.push_str("</script>\n");
    }
    out.push_str("</body></html>\n");
    out
}

/// Cuts text to `max` characters; says how much was left out.
pub fn capped(s: &str, max: usize) -> (String, Option<usize>) {
    match s.char_indices().nth(max) {
        Some((byte, _)) => {
            let rest = s[byte..].chars().count();
            (s[..byte].to_string(), Some(rest))
        }
        None => (s.to_string(), None),
    }
}

/// A `<pre>` block of capped, escaped text.
pub fn pre(s: &str, max: usize, class: &str) -> String {
    let (text, cut) = capped(s, max);
    let mut out = format!("<pre class=\"{class}\">{}</pre>", esc(&text));
    if let Some(n) = cut {
        out.push_str(&format!(
            "<p class=\"cut\">… {n} more characters not shown (see the run's result.json)</p>"
        ));
    }
    out
}

/// Characters of a string shown before cutting, in generic JSON views.
const JSON_TEXT_CAP: usize = 4000;
/// Items of an array shown, in generic JSON views.
const JSON_ITEMS_CAP: usize = 200;
/// Nesting shown as structure; deeper values are shown as compact JSON.
const JSON_DEPTH_CAP: usize = 6;

/// Any JSON value as HTML: objects as key/value tables, arrays of objects as tables, text
/// escaped and capped. Used for fields whose shape this viewer does not know (the agent's
/// changes, a repair verification, the run identity, future phases).
pub fn json_value(v: &Value) -> String {
    json_at(v, 0)
}

fn json_at(v: &Value, depth: usize) -> String {
    match v {
        Value::Null => "<span class=\"muted\">–</span>".into(),
        Value::Bool(b) => format!("<code>{b}</code>"),
        Value::Number(n) => format!("<code>{n}</code>"),
        Value::String(s) if s.contains('\n') || s.chars().count() > 160 => {
            pre(s, JSON_TEXT_CAP, "text")
        }
        Value::String(s) => esc(s),
        _ if depth >= JSON_DEPTH_CAP => pre(&v.to_string(), JSON_TEXT_CAP, "json"),
        Value::Array(a) if a.is_empty() => "<span class=\"muted\">(empty)</span>".into(),
        Value::Array(a) => {
            let objects = a.iter().all(Value::is_object);
            let mut keys: Vec<&String> = Vec::new();
            if objects {
                for o in a.iter().take(JSON_ITEMS_CAP).filter_map(Value::as_object) {
                    for k in o.keys() {
                        if !keys.contains(&k) {
                            keys.push(k);
                        }
                    }
                }
            }
            let mut out = String::new();
            if objects && keys.len() <= 12 {
                out.push_str("<table class=\"json\"><tr>");
                for k in &keys {
                    out.push_str(&format!("<th>{}</th>", esc(k)));
                }
                out.push_str("</tr>");
                for o in a.iter().take(JSON_ITEMS_CAP).filter_map(Value::as_object) {
                    out.push_str("<tr>");
                    for k in &keys {
                        let cell = o.get(k.as_str()).map(|x| json_at(x, depth + 1));
                        out.push_str(&format!("<td>{}</td>", cell.unwrap_or_default()));
                    }
                    out.push_str("</tr>");
                }
                out.push_str("</table>");
            } else {
                out.push_str("<ol class=\"json\">");
                for x in a.iter().take(JSON_ITEMS_CAP) {
                    out.push_str(&format!("<li>{}</li>", json_at(x, depth + 1)));
                }
                out.push_str("</ol>");
            }
            if a.len() > JSON_ITEMS_CAP {
                out.push_str(&format!(
                    "<p class=\"cut\">… {} more items not shown</p>",
                    a.len() - JSON_ITEMS_CAP
                ));
            }
            out
        }
        Value::Object(o) if o.is_empty() => "<span class=\"muted\">(empty)</span>".into(),
        Value::Object(o) => {
            let mut out = String::from("<table class=\"kv\">");
            for (k, x) in o.iter().take(JSON_ITEMS_CAP) {
                out.push_str(&format!(
                    "<tr><th>{}</th><td>{}</td></tr>",
                    esc(k),
                    json_at(x, depth + 1)
                ));
            }
            out.push_str("</table>");
            if o.len() > JSON_ITEMS_CAP {
                out.push_str(&format!(
                    "<p class=\"cut\">… {} more fields not shown</p>",
                    o.len() - JSON_ITEMS_CAP
                ));
            }
            out
        }
    }
}

/// A number with a fixed number of decimals, or `–`.
pub fn num(x: Option<f64>, digits: usize) -> String {
    x.filter(|v| v.is_finite())
        .map(|v| format!("{v:.digits$}"))
        .unwrap_or_else(|| "–".into())
}

/// Milliseconds as seconds (`1.23 s`).
pub fn secs_ms(ms: Option<f64>) -> String {
    match ms {
        Some(v) if v.is_finite() => format!("{:.2} s", v / 1000.0),
        _ => "–".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn escapes_markup_and_script_closers() {
        assert_eq!(
            esc("<script>alert('x')</script>&\""),
            "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;&amp;&quot;"
        );
        let j = json_for_script(&json!({"t": "</script><script>x()</script>\u{2028}&"}));
        assert!(!j.contains('<') && !j.contains('>') && !j.contains('&'));
        assert!(j.contains("\\u2028"));
        let back: Value = serde_json::from_str(&j).unwrap();
        assert_eq!(back["t"], "</script><script>x()</script>\u{2028}&");
    }

    #[test]
    fn generic_json_is_escaped_capped_and_bounded() {
        let mut deep = json!("<b>bottom</b>");
        for _ in 0..50 {
            deep = json!({ "k": deep });
        }
        let h = json_value(&json!({
            "<img src=x onerror=alert(1)>": "x".repeat(10_000),
            "list": (0..500).map(|i| json!({"i": i})).collect::<Vec<_>>(),
            "deep": deep,
        }));
        assert!(!h.contains("<img"));
        assert!(!h.contains("<b>"));
        assert!(h.contains("300 more items not shown"));
        assert!(h.contains("6000 more characters not shown"));
    }

    #[test]
    fn the_site_policy_is_the_one_the_index_carries() {
        let index = crate::index_page::page(&[], "");
        let meta = format!(
            "<meta http-equiv=\"Content-Security-Policy\" content=\"{}\">",
            esc(&site_policy())
        );
        assert!(index.contains(&meta), "{index}");
        assert!(site_policy().contains(&csp_hash(crate::index_page::SCRIPT)));
    }

    #[test]
    fn csp_hash_is_base64_sha256() {
        // Known value: SHA-256 of the empty string.
        assert_eq!(
            csp_hash(""),
            "'sha256-47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU='"
        );
    }
}
