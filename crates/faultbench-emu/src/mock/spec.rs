//! The mock network file: devices, named states, and rules that answer commands.
//!
//! The file is TOML; [`MockNetwork::parse`] reads it and checks it (every device a rule names is
//! declared, every state a rule uses is declared, every regex compiles), so that a typo is an
//! error naming the rule and the fix, not a silently unmatched command at test time.

use regex::Regex;
use serde::Deserialize;
use std::path::Path;

/// A parsed, checked mock network.
#[derive(Debug, Clone)]
pub struct MockNetwork {
    /// Network name (the lab instance name is derived from it).
    pub name: String,
    /// Devices in file order.
    pub devices: Vec<DeviceSpec>,
    /// Declared state names.
    pub states: Vec<String>,
    /// States that are on when a lab is deployed (e.g. a network that starts broken).
    pub initially_on: Vec<String>,
    /// The answer to a command no rule matches.
    pub default: Reply,
    /// Rules in file order.
    pub rules: Vec<MockRule>,
}

/// A device and the facts it answers without rules.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DeviceSpec {
    /// Device name.
    pub name: String,
    /// Free-form role (`router`, `host`, `server`, …), informational.
    #[serde(default)]
    pub role: Option<String>,
    /// Interfaces; they answer `ip -j addr` (and `ip -j -4 addr show`) unless a rule does.
    #[serde(default, rename = "interface")]
    pub interfaces: Vec<InterfaceSpec>,
}

/// One interface of a device.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InterfaceSpec {
    /// Interface name, e.g. `eth0`.
    pub name: String,
    /// IPv4 address with prefix length, e.g. `10.0.1.2/24`.
    #[serde(default)]
    pub addr: Option<String>,
    /// Link state (default `UP`).
    #[serde(default)]
    pub state: Option<String>,
    /// The collision domain the interface is cabled to, for a folder without `lab.conf`
    /// (default: its subnet; see `faultbench_core::lab::MOCK_FILE`). Not used by the mock.
    #[serde(default)]
    pub link: Option<String>,
}

/// What a command gets back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reply {
    /// Standard output; `{device}` and `{command}` (and a regex's named groups) are substituted.
    pub stdout: String,
    /// Standard error, substituted like `stdout`.
    pub stderr: String,
    /// Exit code.
    pub exit_code: i32,
    /// The command "hangs" until the caller's timeout.
    pub timeout: bool,
    /// Simulated run time in milliseconds (a delay past the caller's timeout is a timeout).
    pub delay_ms: u64,
}

impl Default for Reply {
    /// The default for unmatched commands: exit 127 and a message naming the command.
    fn default() -> Self {
        Reply {
            stdout: String::new(),
            stderr: "mock: `{command}` is not scripted for device `{device}` (command not found in mock)"
                .into(),
            exit_code: 127,
            timeout: false,
            delay_ms: 0,
        }
    }
}

/// How a rule's pattern is compared with the command text.
#[derive(Debug, Clone)]
pub enum Pattern {
    /// The whole command, whitespace-normalised.
    Exact(String),
    /// The command starts with this text.
    Prefix(String),
    /// The command contains this text.
    Contains(String),
    /// The regex matches somewhere in the command (anchor it with `^…$` for whole matches).
    Regex(Regex),
}

/// The former name of [`StateCondition`] (one public name per concept across the crates:
/// faultbench-gen's families have conditions of their own; issue 28).
#[deprecated(note = "renamed to `StateCondition`; the old name goes in the next release")]
pub type Condition = StateCondition;

/// A state condition of a mock rule: the named state must be on (or off, for `!name`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StateCondition {
    /// State name.
    pub state: String,
    /// Required value.
    pub on: bool,
}

/// The former name of [`MockRule`] (one public name per concept across the crates:
/// faultbench-core's role table has `RoleRule`; issue 28).
#[deprecated(note = "renamed to `MockRule`; the old name goes in the next release")]
pub type Rule = MockRule;

/// One rule of a mock network: which commands on which devices it answers, when, with what, and what it switches.
#[derive(Debug, Clone)]
pub struct MockRule {
    /// 1-based position in the file (for messages).
    pub index: usize,
    /// Devices it applies to; empty = every device (`"*"`).
    pub devices: Vec<String>,
    /// The command pattern.
    pub pattern: Pattern,
    /// All must hold for the rule to apply.
    pub when: Vec<StateCondition>,
    /// The answer.
    pub reply: Reply,
    /// States switched on when the rule answers (an injection, usually).
    pub set: Vec<String>,
    /// States switched off when the rule answers (a fix, usually).
    pub clear: Vec<String>,
}

/// A mock file that could not be read or is inconsistent.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{source_name}: {message}")]
pub struct MockSpecError {
    /// The file (or `<string>`).
    pub source_name: String,
    /// What is wrong and how to fix it (TOML errors carry line and column).
    pub message: String,
}

// ---- raw TOML shape ----------------------------------------------------------------------

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawNetwork {
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    states: Vec<String>,
    #[serde(default)]
    initially_on: Vec<String>,
    #[serde(default)]
    default: Option<RawReply>,
    #[serde(default, rename = "device")]
    devices: Vec<DeviceSpec>,
    #[serde(default, rename = "rule")]
    rules: Vec<RawRule>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawReply {
    #[serde(default)]
    stdout: Option<String>,
    #[serde(default)]
    stderr: Option<String>,
    #[serde(default)]
    exit_code: Option<i32>,
    #[serde(default)]
    timeout: bool,
    #[serde(default)]
    delay_ms: u64,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum OneOrMany {
    One(String),
    Many(Vec<String>),
}

impl OneOrMany {
    fn into_vec(self) -> Vec<String> {
        match self {
            OneOrMany::One(s) => vec![s],
            OneOrMany::Many(v) => v,
        }
    }
}

#[derive(Deserialize, Clone, Copy, Default)]
#[serde(rename_all = "lowercase")]
enum RawMatch {
    #[default]
    Exact,
    Prefix,
    Contains,
    Regex,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRule {
    device: OneOrMany,
    command: String,
    #[serde(default, rename = "match")]
    kind: RawMatch,
    #[serde(default)]
    when: Option<OneOrMany>,
    #[serde(default)]
    set: Option<OneOrMany>,
    #[serde(default)]
    clear: Option<OneOrMany>,
    #[serde(default)]
    stdout: String,
    #[serde(default)]
    stderr: String,
    #[serde(default)]
    exit_code: i32,
    #[serde(default)]
    timeout: bool,
    #[serde(default)]
    delay_ms: u64,
}

/// Largest mock file or exec trace read.
pub const MAX_MOCK_FILE_BYTES: u64 = 64 << 20;

impl MockNetwork {
    /// Reads and checks a mock file (a regular file of at most [`MAX_MOCK_FILE_BYTES`]).
    pub fn load(path: impl AsRef<Path>) -> Result<MockNetwork, MockSpecError> {
        let path = path.as_ref();
        let text = faultbench_core::fsutil::read_regular_string_capped(path, MAX_MOCK_FILE_BYTES)
            .map_err(|e| MockSpecError {
            source_name: path.display().to_string(),
            message: e.reason(),
        })?;
        Self::parse_named(&text, &path.display().to_string())
    }

    /// Parses and checks mock-file text.
    pub fn parse(text: &str) -> Result<MockNetwork, MockSpecError> {
        Self::parse_named(text, "<string>")
    }

    fn parse_named(text: &str, source_name: &str) -> Result<MockNetwork, MockSpecError> {
        let err = |message: String| MockSpecError {
            source_name: source_name.to_string(),
            message,
        };
        let raw: RawNetwork = toml::from_str(text).map_err(|e| err(e.to_string()))?;
        let mut devices: Vec<String> = Vec::new();
        for d in &raw.devices {
            if d.name.trim().is_empty() {
                return Err(err("a [[device]] has an empty name".into()));
            }
            if devices.contains(&d.name) {
                return Err(err(format!("device `{}` is declared twice", d.name)));
            }
            for i in &d.interfaces {
                if let Some(a) = &i.addr {
                    parse_cidr(a).ok_or_else(|| {
                        err(format!(
                            "device `{}` interface `{}`: `{a}` is not an IPv4 address with prefix (e.g. 10.0.0.1/24)",
                            d.name, i.name
                        ))
                    })?;
                }
            }
            devices.push(d.name.clone());
        }
        let check_state = |s: &str, what: &str| -> Result<(), MockSpecError> {
            if raw.states.iter().any(|x| x == s) {
                Ok(())
            } else {
                Err(err(format!(
                    "{what}: state `{s}` is not declared (add it to `states = [...]` at the top)"
                )))
            }
        };
        for s in &raw.initially_on {
            check_state(s, "initially_on")?;
        }
        let mut rules = Vec::new();
        for (i, r) in raw.rules.into_iter().enumerate() {
            let index = i + 1;
            let here = format!("rule {index} (`{}`)", r.command);
            let mut rule_devices = r.device.into_vec();
            if rule_devices.iter().any(|d| d == "*") {
                rule_devices.clear();
            } else {
                for d in &rule_devices {
                    if !devices.contains(d) {
                        return Err(err(format!(
                            "{here}: device `{d}` is not declared (declare it with [[device]] name = \"{d}\", or use \"*\")"
                        )));
                    }
                }
            }
            let pattern = match r.kind {
                RawMatch::Exact => Pattern::Exact(normalize(&r.command)),
                RawMatch::Prefix => Pattern::Prefix(normalize(&r.command)),
                RawMatch::Contains => Pattern::Contains(r.command.clone()),
                RawMatch::Regex => Pattern::Regex(
                    Regex::new(&r.command)
                        .map_err(|e| err(format!("{here}: invalid regex: {e}")))?,
                ),
            };
            let mut when = Vec::new();
            for c in r.when.map(OneOrMany::into_vec).unwrap_or_default() {
                let (state, on) = match c.strip_prefix('!') {
                    Some(s) => (s.trim().to_string(), false),
                    None => (c.trim().to_string(), true),
                };
                check_state(&state, &here)?;
                when.push(StateCondition { state, on });
            }
            let set = r.set.map(OneOrMany::into_vec).unwrap_or_default();
            let clear = r.clear.map(OneOrMany::into_vec).unwrap_or_default();
            for s in set.iter().chain(&clear) {
                check_state(s, &here)?;
            }
            rules.push(MockRule {
                index,
                devices: rule_devices,
                pattern,
                when,
                reply: Reply {
                    stdout: r.stdout,
                    stderr: r.stderr,
                    exit_code: r.exit_code,
                    timeout: r.timeout,
                    delay_ms: r.delay_ms,
                },
                set,
                clear,
            });
        }
        let default = match raw.default {
            None => Reply::default(),
            Some(d) => {
                let base = Reply::default();
                Reply {
                    stdout: d.stdout.unwrap_or(base.stdout),
                    stderr: d.stderr.unwrap_or(base.stderr),
                    exit_code: d.exit_code.unwrap_or(base.exit_code),
                    timeout: d.timeout,
                    delay_ms: d.delay_ms,
                }
            }
        };
        Ok(MockNetwork {
            name: raw.name.unwrap_or_else(|| "mock".into()),
            devices: raw.devices,
            states: raw.states,
            initially_on: raw.initially_on,
            default,
            rules,
        })
    }

    /// Device names in file order.
    pub fn device_names(&self) -> Vec<String> {
        self.devices.iter().map(|d| d.name.clone()).collect()
    }
}

impl MockRule {
    /// Whether the rule applies to this device and command text (ignoring states). Returns the
    /// regex's named captures for substitution.
    pub fn matches(&self, device: &str, text: &str) -> Option<Vec<(String, String)>> {
        if !self.devices.is_empty() && !self.devices.iter().any(|d| d == device) {
            return None;
        }
        match &self.pattern {
            Pattern::Exact(p) => (normalize(text) == *p).then(Vec::new),
            Pattern::Prefix(p) => normalize(text).starts_with(p.as_str()).then(Vec::new),
            Pattern::Contains(p) => text.contains(p.as_str()).then(Vec::new),
            Pattern::Regex(re) => re.captures(text).map(|caps| {
                re.capture_names()
                    .flatten()
                    .filter_map(|n| {
                        caps.name(n)
                            .map(|m| (n.to_string(), m.as_str().to_string()))
                    })
                    .collect()
            }),
        }
    }
}

/// Trims and collapses runs of whitespace, so `ping  -c 2 x` equals `ping -c 2 x`.
pub fn normalize(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Splits `a.b.c.d/len` into the address and the prefix length.
pub(crate) fn parse_cidr(s: &str) -> Option<(std::net::Ipv4Addr, u8)> {
    let (a, l) = s.split_once('/')?;
    let addr = a.parse().ok()?;
    let len: u8 = l.parse().ok()?;
    (len <= 32).then_some((addr, len))
}
