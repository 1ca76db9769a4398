//! Reading tool outputs. Every reader is forgiving: an output it does not understand yields
//! "unknown", never a finding.

use serde_json::Value;

/// One probed pair of `get_reachability`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PairResult {
    /// Source host.
    pub src: String,
    /// Destination host.
    pub dst: String,
    /// `ok`, `unstable`, `down`, `timeout` or `unknown`.
    pub status: String,
}

impl PairResult {
    /// The pair answered without loss.
    pub fn ok(&self) -> bool {
        self.status == "ok"
    }
}

/// A `get_reachability` answer.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ReachLine {
    /// The listed pairs (a long report may list only the failing ones).
    pub pairs: Vec<PairResult>,
    /// Pairs probed in total (`summary.pairs` when given, else the listed ones).
    pub total: usize,
    /// Hosts that took part.
    pub hosts: Vec<String>,
    /// Hosts the tool found without an address (`hosts_without_address`).
    pub unaddressed: Vec<String>,
}

/// Reads a `get_reachability` answer (`{"hosts": {…}, "summary": {…}, "results": [{src, dst,
/// status, …}]}`); pairs are found wherever they sit in the JSON.
pub fn reachability(text: &str) -> ReachLine {
    let Some(v) = json_in(text) else {
        return ReachLine::default();
    };
    let mut r = ReachLine::default();
    collect_pairs(&v, &mut r.pairs);
    r.total = v
        .pointer("/summary/pairs")
        .and_then(Value::as_u64)
        .map(|n| n as usize)
        .unwrap_or(r.pairs.len())
        .max(r.pairs.len());
    let mut hosts: Vec<String> = match v.get("hosts") {
        Some(Value::Object(m)) => m.keys().cloned().collect(),
        _ => Vec::new(),
    };
    for p in &r.pairs {
        for h in [&p.src, &p.dst] {
            if !hosts.contains(h) {
                hosts.push(h.clone());
            }
        }
    }
    r.hosts = hosts;
    r.unaddressed = v
        .get("hosts_without_address")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default();
    r
}

fn collect_pairs(v: &Value, out: &mut Vec<PairResult>) {
    match v {
        Value::Object(m) => {
            let s = |k: &str| m.get(k).and_then(Value::as_str).map(str::to_string);
            if let (Some(src), Some(dst), Some(status)) = (s("src"), s("dst"), s("status")) {
                out.push(PairResult {
                    src,
                    dst,
                    status: status.to_ascii_lowercase(),
                });
            } else {
                m.values().for_each(|x| collect_pairs(x, out));
            }
        }
        Value::Array(a) => a.iter().for_each(|x| collect_pairs(x, out)),
        Value::String(s) if s.trim_start().starts_with(['{', '[']) => {
            if let Ok(inner) = serde_json::from_str::<Value>(s) {
                collect_pairs(&inner, out);
            }
        }
        _ => {}
    }
}

/// The first JSON value in `text` (tools may add a footer after it).
fn json_in(text: &str) -> Option<Value> {
    let start = text.find(['{', '['])?;
    let mut de = serde_json::Deserializer::from_str(&text[start..]).into_iter::<Value>();
    de.next()?.ok()
}

/// Loss percentage from ping's summary line (`… 33% packet loss …`).
pub fn ping_loss(text: &str) -> Option<f64> {
    let idx = text.find("% packet loss")?;
    let head = &text[..idx];
    let num: String = head
        .chars()
        .rev()
        .take_while(|c| c.is_ascii_digit() || *c == '.')
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .collect();
    num.parse().ok()
}

/// Routing daemons a `/etc/frr/daemons` file enables (`ospfd=yes`).
pub fn enabled_daemons(text: &str) -> Vec<String> {
    text.lines()
        .filter_map(|l| {
            let (k, v) = l.trim().split_once('=')?;
            (v.trim().trim_matches('"') == "yes"
                && k.ends_with('d')
                && !k.contains(' ')
                && !k.starts_with('#'))
            .then(|| k.trim().to_string())
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reachability_json() {
        let text = r#"{"hosts":{"pc1":"10.0.1.2","pc2":"10.0.2.2"},"results":[
            {"src":"pc1","dst":"pc2","dst_ip":"10.0.2.2","tx":2,"rx":0,"loss_percent":100,"status":"down"},
            {"src":"pc2","dst":"pc1","status":"ok"}]}
[note] something"#;
        let r = reachability(text);
        assert_eq!((r.pairs.len(), r.total), (2, 2));
        assert!(!r.pairs[0].ok() && r.pairs[1].ok());
        assert_eq!(r.hosts, vec!["pc1", "pc2"]);
        assert!(reachability("not json").pairs.is_empty());
        let cut = reachability(
            r#"{"hosts":{"a":"1.1.1.1"},"hosts_without_address":["b"],"summary":{"pairs":12,"ok":11},"results":[{"src":"a","dst":"c","status":"down"}]}"#,
        );
        assert_eq!(
            (cut.total, cut.unaddressed.clone()),
            (12, vec!["b".to_string()])
        );
    }

    #[test]
    fn ping_and_daemons() {
        assert_eq!(
            ping_loss("3 packets transmitted, 0 received, 100% packet loss, time 2ms"),
            Some(100.0)
        );
        assert_eq!(
            ping_loss("4 packets transmitted, 3 received, 25.5% packet loss"),
            Some(25.5)
        );
        assert_eq!(ping_loss("connect: Network is unreachable"), None);
        assert_eq!(
            enabled_daemons("zebra=yes\nospfd=yes\nbgpd=no\n# ripd=yes\n#isisd=yes\n"),
            vec!["ospfd"]
        );
    }
}
