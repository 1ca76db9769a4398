//! A running mock lab: answers commands from the rules of a [`MockNetwork`] and keeps its
//! named states and a history of what was run.

use super::spec::{MockNetwork, Reply, parse_cidr};
use super::text::command_text;
use faultbench_core::snapshot::{Aspect, AspectState, DeviceState, parse_device};
use faultbench_core::{Command, EmuError, ExecOutput, Lab};
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// One command the mock answered.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExecRecord {
    /// Device it ran on.
    pub device: String,
    /// The command's matching text (see [`command_text`]).
    pub command: String,
    /// 1-based index of the rule that answered; `None` for built-in facts and the default.
    pub rule: Option<usize>,
    /// Exit code given back (`None` for a timeout).
    pub exit_code: Option<i32>,
    /// States that changed, as `+name` / `-name`.
    pub changed: Vec<String>,
}

#[derive(Debug)]
struct Inner {
    on: BTreeSet<String>,
    history: Vec<ExecRecord>,
    running: bool,
}

/// A lab whose devices answer from declarative rules. Safe to use concurrently; each deployed
/// instance has its own states.
#[derive(Debug)]
pub struct MockLab {
    name: String,
    net: Arc<MockNetwork>,
    inner: Mutex<Inner>,
}

impl MockLab {
    /// A running instance of `net` named `name`, with the network's initial states.
    pub fn new(name: impl Into<String>, net: Arc<MockNetwork>) -> Self {
        let on = net.initially_on.iter().cloned().collect();
        MockLab {
            name: name.into(),
            net,
            inner: Mutex::new(Inner {
                on,
                history: Vec::new(),
                running: true,
            }),
        }
    }

    /// The network this lab runs.
    pub fn network(&self) -> &MockNetwork {
        &self.net
    }

    /// Whether a state is on.
    pub fn is_on(&self, state: &str) -> bool {
        self.lock().on.contains(state)
    }

    /// The states that are on, sorted.
    pub fn states_on(&self) -> Vec<String> {
        self.lock().on.iter().cloned().collect()
    }

    /// Switches a declared state on or off (as an injection or a fix would).
    pub fn set_state(&self, state: &str, on: bool) -> Result<(), EmuError> {
        if !self.net.states.iter().any(|s| s == state) {
            return Err(EmuError::Other(format!(
                "mock lab `{}` has no state `{state}` (declared: {})",
                self.name,
                self.net.states.join(", ")
            )));
        }
        let mut g = self.lock();
        if on {
            g.on.insert(state.to_string());
        } else {
            g.on.remove(state);
        }
        Ok(())
    }

    /// Every command answered so far, in order.
    pub fn history(&self) -> Vec<ExecRecord> {
        self.lock().history.clone()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        // A panic while holding the lock cannot leave the state half-written (every update is
        // a single insert/remove/push), so a poisoned lock is still usable.
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Picks the answer for a command and applies its state changes, atomically.
    fn answer(&self, device: &str, text: &str) -> Result<(Reply, Vec<(String, String)>), EmuError> {
        let mut g = self.lock();
        if !g.running {
            return Err(EmuError::NotRunning(self.name.clone()));
        }
        if !self.net.devices.iter().any(|d| d.name == device) {
            return Err(EmuError::UnknownDevice {
                lab: self.name.clone(),
                device: device.into(),
            });
        }
        // The most specific rule wins: the one with the most state conditions that hold, then
        // one that names its devices over a `*` rule; among equals, the first in the file. So a
        // fault rule overrides the healthy answer no matter where it is written.
        let mut best: Option<(&super::spec::MockRule, Vec<(String, String)>)> = None;
        for rule in &self.net.rules {
            if !rule.when.iter().all(|c| g.on.contains(&c.state) == c.on) {
                continue;
            }
            if let Some(caps) = rule.matches(device, text) {
                let better = match &best {
                    None => true,
                    Some((b, _)) => specificity(rule) > specificity(b),
                };
                if better {
                    best = Some((rule, caps));
                }
            }
        }
        let (reply, caps, rule_index, changed) = match best {
            Some((rule, caps)) => {
                let mut changed = Vec::new();
                for s in &rule.set {
                    if g.on.insert(s.clone()) {
                        changed.push(format!("+{s}"));
                    }
                }
                for s in &rule.clear {
                    if g.on.remove(s) {
                        changed.push(format!("-{s}"));
                    }
                }
                (rule.reply.clone(), caps, Some(rule.index), changed)
            }
            None => match self.builtin(device, text) {
                Some(r) => (r, Vec::new(), None, Vec::new()),
                None => (self.net.default.clone(), Vec::new(), None, Vec::new()),
            },
        };
        g.history.push(ExecRecord {
            device: device.into(),
            command: text.into(),
            rule: rule_index,
            exit_code: (!reply.timeout).then_some(reply.exit_code),
            changed,
        });
        Ok((reply, caps))
    }

    /// Answers that follow from the device declaration: `hostname` and `ip -j addr`.
    fn builtin(&self, device: &str, text: &str) -> Option<Reply> {
        let dev = self.net.devices.iter().find(|d| d.name == device)?;
        let words: Vec<&str> = text.split_whitespace().collect();
        let ok = |stdout: String| Reply {
            stdout,
            stderr: String::new(),
            exit_code: 0,
            timeout: false,
            delay_ms: 0,
        };
        if words == ["hostname"] {
            return Some(ok(format!("{device}\n")));
        }
        let is_ip_json_addr = words.first() == Some(&"ip")
            && words
                .iter()
                .any(|w| matches!(*w, "-j" | "-json" | "--json"))
            && words.iter().any(|w| matches!(*w, "a" | "addr" | "address"))
            && words[1..].iter().all(|w| {
                matches!(
                    *w,
                    "-j" | "-json" | "--json" | "-4" | "a" | "addr" | "address" | "show" | "list"
                )
            });
        if !is_ip_json_addr {
            return None;
        }
        let mut ifaces = vec![serde_json::json!({
            "ifindex": 1, "ifname": "lo", "flags": ["LOOPBACK", "UP", "LOWER_UP"],
            "operstate": "UNKNOWN",
            "addr_info": [{"family": "inet", "local": "127.0.0.1", "prefixlen": 8, "scope": "host", "label": "lo"}]
        })];
        for (i, iface) in dev.interfaces.iter().enumerate() {
            let state = iface.state.clone().unwrap_or_else(|| "UP".into());
            let addr_info: Vec<serde_json::Value> = iface
                .addr
                .as_deref()
                .and_then(parse_cidr)
                .map(|(a, len)| {
                    serde_json::json!({"family": "inet", "local": a.to_string(), "prefixlen": len,
                        "scope": "global", "label": iface.name})
                })
                .into_iter()
                .collect();
            ifaces.push(serde_json::json!({
                "ifindex": i + 2, "ifname": iface.name,
                "flags": if state == "UP" { vec!["BROADCAST", "MULTICAST", "UP", "LOWER_UP"] } else { vec!["BROADCAST", "MULTICAST"] },
                "operstate": state, "addr_info": addr_info
            }));
        }
        Some(ok(serde_json::Value::Array(ifaces).to_string()))
    }
}

fn specificity(rule: &super::spec::MockRule) -> (usize, bool) {
    (rule.when.len(), !rule.devices.is_empty())
}

fn substitute(template: &str, device: &str, command: &str, caps: &[(String, String)]) -> String {
    if !template.contains('{') {
        return template.to_string();
    }
    let mut out = template
        .replace("{device}", device)
        .replace("{command}", command);
    for (k, v) in caps {
        out = out.replace(&format!("{{{k}}}"), v);
    }
    out
}

#[async_trait::async_trait]
impl Lab for MockLab {
    fn name(&self) -> &str {
        &self.name
    }

    fn devices(&self) -> Vec<String> {
        self.net.device_names()
    }

    async fn exec(
        &self,
        device: &str,
        command: &Command,
        timeout: Duration,
    ) -> Result<ExecOutput, EmuError> {
        let text = command_text(command);
        let (reply, caps) = self.answer(device, &text)?;
        let timeout_ms = timeout.as_millis() as u64;
        // A scripted hang answers at once as a timed-out command, so tests stay fast; a
        // scripted delay really waits (bounded by the timeout), so timing code can be tested.
        if reply.timeout || reply.delay_ms > timeout_ms {
            if !reply.timeout {
                tokio::time::sleep(timeout).await;
            }
            return Ok(ExecOutput {
                stdout: String::new(),
                stderr: String::new(),
                exit_code: None,
                timed_out: true,
                truncated: false,
                duration_ms: timeout_ms,
            });
        }
        if reply.delay_ms > 0 {
            tokio::time::sleep(Duration::from_millis(reply.delay_ms)).await;
        }
        Ok(ExecOutput {
            stdout: substitute(&reply.stdout, device, &text, &caps),
            stderr: substitute(&reply.stderr, device, &text, &caps),
            exit_code: Some(reply.exit_code),
            timed_out: false,
            truncated: false,
            duration_ms: reply.delay_ms,
        })
    }

    async fn teardown(&self) -> Result<(), EmuError> {
        self.lock().running = false;
        Ok(())
    }

    /// Answered from the model, not by running the snapshot script: links and addresses as
    /// declared, and the declared states that are on (a state named `<device>_…` belongs to
    /// that device, any other to the first device). Routes, services and the rest are not
    /// modelled and left out.
    async fn device_state(&self, device: &str, _timeout: Duration) -> DeviceState {
        let Some(addr) = self.builtin(device, "ip -j addr show") else {
            return DeviceState::failed(format!("device `{device}` not found in the mock"));
        };
        let mut state = parse_device(&format!("{}\n[]\n@@ip 0\n", addr.stdout));
        state
            .aspects
            .retain(|a, _| matches!(a, Aspect::Links | Aspect::Addresses));
        let first = self.net.devices.first().map(|d| d.name.as_str());
        let owner = |st: &str| {
            self.net
                .devices
                .iter()
                .map(|d| d.name.as_str())
                .find(|d| st.starts_with(&format!("{d}_")))
                .or(first)
        };
        let on: std::collections::BTreeMap<String, String> = self
            .states_on()
            .into_iter()
            .filter(|st| owner(st) == Some(device))
            .map(|st| (st, "on".to_string()))
            .collect();
        state
            .aspects
            .insert(Aspect::ModelStates, AspectState::Items(on));
        state
    }
}
