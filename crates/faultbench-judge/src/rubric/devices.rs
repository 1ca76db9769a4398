//! Device names: which words of a scenario are devices, when two spellings name the same
//! device, and whether a diagnosis blames or clears a device.
//!
//! Two names are the same device when their keys are equal: lowercase, separators (`_`, `-`)
//! removed, and the spelled-out role prefixes `router`/`rtr`, `switch` and `server` shortened
//! to `r`, `sw` and `srv` when a number follows (so `R1`, `r1`, `router1` and `router_1` meet,
//! while `router_core_3` stays itself).

use super::text::{Doc, Polarity};
use faultbench_core::Diagnosis;
use faultbench_core::scenario::{Assertion, Scenario};

/// The comparison key of a device name.
///
/// ```
/// use faultbench_judge::rubric::device_key;
/// assert_eq!(device_key("Router1"), device_key("r1"));
/// assert_eq!(device_key("router_2"), "r2");
/// assert_eq!(device_key("leaf_router_0_0"), "leafrouter00");
/// assert_ne!(device_key("router_core_3"), device_key("r3"));
/// ```
pub fn device_key(name: &str) -> String {
    let lower: String = name
        .trim()
        .to_lowercase()
        .chars()
        .filter(|c| !matches!(c, '_' | '-'))
        .collect();
    for (long, short) in [
        ("router", "r"),
        ("rtr", "r"),
        ("switch", "sw"),
        ("server", "srv"),
    ] {
        if let Some(rest) = lower.strip_prefix(long)
            && rest.chars().next().is_some_and(|c| c.is_ascii_digit())
        {
            return format!("{short}{rest}");
        }
    }
    lower
}

/// Interface-like names that are never devices.
fn is_interface(w: &str) -> bool {
    let prefixes = [
        "eth", "ens", "enp", "eno", "wlan", "veth", "bond", "br", "lo", "vlan", "tun", "gre",
        "dummy", "wg", "ppp", "team", "vxlan", "ge", "gi", "fa", "te", "xe", "se",
    ];
    prefixes.iter().any(|p| {
        w.strip_prefix(p).is_some_and(|rest| {
            !rest.is_empty()
                && rest
                    .chars()
                    .all(|c| c.is_ascii_digit() || c == '.' || c == '/' || c == '_' || c == 'v')
        })
    })
}

/// Whether a word looks like a device name (a letter-led word with a digit or an underscore,
/// and not an interface, address, protocol version or unit).
pub fn looks_like_device(w: &str) -> bool {
    let w = w.trim_matches(|c: char| !c.is_ascii_alphanumeric() && c != '_');
    if w.len() < 2 || !w.starts_with(|c: char| c.is_ascii_lowercase()) || is_interface(w) {
        return false;
    }
    if w.contains('.') || w.contains('/') {
        return false;
    }
    let not_devices = [
        "ipv4",
        "ipv6",
        "ospfv2",
        "ospfv3",
        "ripv2",
        "bind9",
        "rfc1918",
        "l2",
        "l3",
        "l4",
        "x86",
        "http2",
        "sha256",
        "md5",
        "lower_up",
        "no_carrier",
        "ttl",
        "ospf6d",
        "as",
    ];
    if not_devices.contains(&w) || w.starts_with("as6") || w.starts_with("rfc") {
        return false;
    }
    let has_digit = w.chars().any(|c| c.is_ascii_digit());
    let has_underscore =
        w.contains('_') && w.chars().filter(|c| c.is_ascii_alphabetic()).count() >= 2;
    has_digit || has_underscore
}

/// The devices a scenario talks about, by key, with one display name each.
#[derive(Debug, Clone, Default)]
pub struct Inventory {
    names: Vec<(String, String)>,
}

impl Inventory {
    /// Collects device names from the scenario (assertions, injection, ground truth, ticket,
    /// axes) and the diagnosis' own device list.
    pub fn from_scenario(scenario: &dyn Scenario, diagnosis: &Diagnosis) -> Inventory {
        let mut inv = Inventory::default();
        for axis in scenario.scoring_axes() {
            if let Some(Assertion::Identifies(d) | Assertion::NotIdentifies(d)) = axis.assertion() {
                inv.add(&d);
            }
            if axis.slug() == "must-identify-device"
                && let Some(first) = axis.argument().and_then(|a| a.split_whitespace().next())
            {
                inv.add(first.trim_matches(|c: char| !c.is_ascii_alphanumeric() && c != '_'));
            }
        }
        for d in scenario.injection().devices() {
            inv.add(d);
        }
        for d in &diagnosis.faulty_devices {
            inv.add(d);
        }
        let mut texts = vec![scenario.ground_truth(), scenario.ticket()];
        let axes: Vec<&str> = scenario
            .scoring_axes()
            .iter()
            .map(|a| a.raw.as_str())
            .collect();
        texts.extend(axes);
        for t in texts {
            for w in super::text::words(t) {
                if looks_like_device(&w) {
                    inv.add(&w);
                }
            }
        }
        inv
    }

    /// Adds a name (ignored when empty or `none`).
    pub fn add(&mut self, name: &str) {
        let n = name.trim().to_lowercase();
        if n.is_empty() || n == "none" {
            return;
        }
        let key = device_key(&n);
        if !self.names.iter().any(|(k, _)| *k == key) {
            self.names.push((key, n));
        }
    }

    /// The key of a word if it names a known device.
    pub fn key_of(&self, word: &str) -> Option<&str> {
        let key = device_key(word);
        self.names
            .iter()
            .find(|(k, _)| *k == key)
            .map(|(k, _)| k.as_str())
    }

    /// The display name of a key.
    pub fn name_of(&self, key: &str) -> Option<&str> {
        self.names
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, n)| n.as_str())
    }
}

/// How a diagnosis treats one device.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Stance {
    /// Listed in `faulty_devices`.
    pub listed: bool,
    /// Named in a fault clause of the text.
    pub blamed_in_text: bool,
    /// Named in a health clause or right after a negator.
    pub cleared_in_text: bool,
    /// Named at all.
    pub mentioned: bool,
}

/// The stance of a diagnosis towards the device with `key`.
pub fn stance(key: &str, diagnosis: &Diagnosis, doc: &Doc) -> Stance {
    let mut s = Stance {
        listed: diagnosis
            .faulty_devices
            .iter()
            .any(|d| device_key(d) == key),
        ..Stance::default()
    };
    for pos in doc.device_positions(key) {
        s.mentioned = true;
        if doc.negated_at(pos) {
            s.cleared_in_text = true;
            continue;
        }
        match doc.polarity_at(pos) {
            Polarity::Fault => s.blamed_in_text = true,
            Polarity::Health => s.cleared_in_text = true,
            Polarity::Neutral => {}
        }
    }
    s
}

impl Stance {
    /// Whether the diagnosis blames the device: listed, or — when nothing is listed — blamed
    /// in the text.
    pub fn blamed(&self, diagnosis: &Diagnosis) -> bool {
        self.listed || (diagnosis.faulty_devices.is_empty() && self.blamed_in_text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn device_words() {
        for d in [
            "r1",
            "router2",
            "pc_0_0",
            "leaf_router_0_0",
            "dns_server",
            "csw1",
            "it_lab3",
        ] {
            assert!(looks_like_device(d), "{d}");
        }
        for w in [
            "eth0", "br0.10", "br_v5", "bond0", "ipv4", "10.0.0.1", "ospfv2", "lo", "x",
        ] {
            assert!(!looks_like_device(w), "{w}");
        }
    }

    #[test]
    fn stance_reads_text() {
        let d = Diagnosis {
            is_anomaly: Some(true),
            faulty_devices: vec![],
            text: "CSW1 is healthy. ospfd is dead on R1.".into(),
            parsed_ok: true,
        };
        let doc = Doc::new(&d.text);
        let r1 = stance(&device_key("r1"), &d, &doc);
        assert!(r1.blamed_in_text && r1.blamed(&d));
        let csw1 = stance(&device_key("csw1"), &d, &doc);
        assert!(csw1.cleared_in_text && !csw1.blamed(&d));
    }
}
