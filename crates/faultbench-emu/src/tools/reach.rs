//! `get_reachability`: ping between the lab's end hosts, deterministically.
//!
//! The hosts are the lab's end hosts — devices whose role is host or server, decided from
//! evidence (the lab's files, then a probe of the device), the release's naming rule
//! ([`is_end_host`]) only where there is none; or a fixed list (see `hosts.rs`) — in natural
//! name order (`pc2` before `pc10`). Each host's address is its first IPv4 address on eth0 (else
//! any). The release pinged two random destinations per source; here every ordered pair is
//! pinged by default ([`Reachability::AllPairs`]), or a seeded sample of destinations
//! ([`Reachability::Sample`]) — the same seed always gives the same pairs. Pings run in parallel
//! (`ping -c 2 -n -q -i 0.2 -W 1`): one command per source host starts all of that host's pings
//! at once inside the device (a fixed script over the addresses we resolved), falling back to
//! one `ping` per pair where the device cannot run it. Every pair gets a status: `ok` (no loss),
//! `unstable` (some loss), `down` (no reply), `timeout` (ping did not finish in time) or
//! `unknown` (no ping summary; the error is given).

use super::NikaTools;
use super::args::parse;
use faultbench_core::{Command, ToolError, ToolOutput};
use futures_util::stream::{self, StreamExt};
use serde::Serialize;
use serde::ser::SerializeMap;
use serde_json::Value;
use std::sync::OnceLock;

/// Which pairs `get_reachability` pings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reachability {
    /// Every ordered pair of distinct hosts.
    AllPairs,
    /// `destinations` destinations chosen with `seed`; every host pings each of them.
    Sample {
        /// How many destinations.
        destinations: usize,
        /// The seed; the same seed picks the same destinations.
        seed: u64,
    },
}

/// The release's rule for end hosts, now the last resort when a device shows no evidence of
/// its role: the name contains `pc`, `host` or `client`, or names a server (`dns`, `dhcp`,
/// `web`, `lb`, `vpn`, `influxdb`). Case-insensitive.
///
/// ```
/// use faultbench_emu::tools::is_end_host;
/// assert!(is_end_host("pc1") && is_end_host("web_server") && is_end_host("DHCP"));
/// assert!(!is_end_host("r1") && !is_end_host("switch0"));
/// ```
pub fn is_end_host(name: &str) -> bool {
    faultbench_core::lab::roles::name_suggests_end_host(name)
}

/// Sort key that orders digit runs by value: `pc2` < `pc10`.
fn natural_key(s: &str) -> Vec<(String, u64)> {
    let mut out = Vec::new();
    let mut text = String::new();
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if c.is_ascii_digit() {
            let mut num = u64::from(c.to_digit(10).unwrap_or(0));
            while let Some(d) = chars.peek().and_then(|c| c.to_digit(10)) {
                num = num.saturating_mul(10).saturating_add(u64::from(d));
                chars.next();
            }
            out.push((std::mem::take(&mut text), num));
        } else {
            text.push(c);
        }
    }
    out.push((text, u64::MAX));
    out
}

/// A small deterministic generator (splitmix64) for seeded sampling.
fn splitmix(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Picks `k` of `n` indices with a seeded shuffle, returned in ascending order.
fn sample_indices(n: usize, k: usize, seed: u64) -> Vec<usize> {
    let mut idx: Vec<usize> = (0..n).collect();
    let mut st = seed;
    for i in (1..n).rev() {
        let j = (splitmix(&mut st) % (i as u64 + 1)) as usize;
        idx.swap(i, j);
    }
    let mut chosen: Vec<usize> = idx.into_iter().take(k.min(n)).collect();
    chosen.sort_unstable();
    chosen
}

/// Ping's summary numbers.
#[derive(Debug, Clone, Default, PartialEq)]
struct PingStats {
    tx: u64,
    rx: u64,
    loss: f64,
    time_ms: Option<f64>,
    rtt: Option<[f64; 4]>,
}

fn parse_ping(text: &str) -> Option<PingStats> {
    static SUMMARY: OnceLock<regex::Regex> = OnceLock::new();
    static RTT: OnceLock<regex::Regex> = OnceLock::new();
    let summary = SUMMARY.get_or_init(|| {
        regex::Regex::new(
            r"(\d+) packets transmitted, (\d+) (?:packets )?received,(?: \+\d+ (?:errors|duplicates),)* ([\d.]+)% packet loss(?:, time (\d+(?:\.\d+)?)ms)?",
        )
        .expect("static regex")
    });
    let rtt = RTT.get_or_init(|| {
        regex::Regex::new(r"min/avg/max(?:/mdev)? = ([\d.]+)/([\d.]+)/([\d.]+)(?:/([\d.]+))? ms")
            .expect("static regex")
    });
    let c = summary.captures(text)?;
    let num = |i: usize| c.get(i).and_then(|m| m.as_str().parse::<f64>().ok());
    let r = rtt.captures(text).map(|r| {
        let g = |i: usize| {
            r.get(i)
                .and_then(|m| m.as_str().parse().ok())
                .unwrap_or(0.0)
        };
        [g(1), g(2), g(3), g(4)]
    });
    Some(PingStats {
        tx: c[1].parse().ok()?,
        rx: c[2].parse().ok()?,
        loss: num(3)?,
        time_ms: num(4),
        rtt: r,
    })
}

/// One pair's result, in the release's field names.
#[derive(Debug, Clone, Serialize)]
struct PairResult {
    src: String,
    dst: String,
    dst_ip: String,
    status: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    tx: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    rx: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    loss_percent: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    time_ms: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    rtt_avg_ms: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    rtt_min_ms: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    rtt_max_ms: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    rtt_mdev_ms: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<String>,
}

/// Name → value pairs serialized as a JSON object in the given order.
#[derive(Debug, Clone, Default)]
struct Ordered(Vec<(String, String)>);

impl Serialize for Ordered {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(self.0.len()))?;
        for (k, v) in &self.0 {
            m.serialize_entry(k, v)?;
        }
        m.end()
    }
}

#[derive(Debug, Clone, Default, Serialize)]
struct Summary {
    pairs: usize,
    ok: usize,
    unstable: usize,
    down: usize,
    timeout: usize,
    unknown: usize,
}

#[derive(Debug, Clone, Serialize)]
struct Report {
    mode: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    seed: Option<u64>,
    hosts: Ordered,
    #[serde(skip_serializing_if = "Option::is_none")]
    hosts_without_address: Option<Vec<String>>,
    summary: Summary,
    results: Vec<PairResult>,
    /// Present when `results` was shortened to fit the cap: what was left out.
    #[serde(skip_serializing_if = "Option::is_none")]
    truncated: Option<String>,
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct NoArgs {}

impl NikaTools {
    /// The end hosts in natural order ([`NikaTools::host_choice`]).
    pub async fn end_hosts(&self) -> Vec<String> {
        let mut hosts = self.host_choice().await.hosts.clone();
        hosts.sort_by_key(|h| natural_key(h));
        hosts.dedup();
        hosts
    }

    pub(super) async fn get_reachability(&self, a: Value) -> Result<ToolOutput, ToolError> {
        const T: &str = "get_reachability";
        let _: NoArgs = parse(T, a)?;
        let hosts = self.end_hosts().await;
        let par = self.config.parallelism.max(1);

        // Addresses, in parallel, kept in host order.
        let ips: Vec<(String, Option<std::net::Ipv4Addr>)> = stream::iter(hosts.iter().cloned())
            .map(|h| async move {
                let ip = self.primary_ipv4(T, &h).await;
                (h, ip)
            })
            .buffered(par)
            .collect::<Vec<_>>()
            .await
            .into_iter()
            .map(|(h, r)| r.map(|ip| (h, ip)))
            .collect::<Result<_, _>>()?;
        let addressed: Vec<(String, std::net::Ipv4Addr)> = ips
            .iter()
            .filter_map(|(h, ip)| ip.map(|ip| (h.clone(), ip)))
            .collect();
        let unaddressed: Vec<String> = ips
            .iter()
            .filter(|(_, ip)| ip.is_none())
            .map(|(h, _)| h.clone())
            .collect();

        let (mode, seed, dst_idx) = match &self.config.reachability {
            Reachability::AllPairs => ("all_pairs", None, (0..addressed.len()).collect()),
            Reachability::Sample { destinations, seed } => (
                "sample",
                Some(*seed),
                sample_indices(addressed.len(), *destinations, *seed),
            ),
        };
        let dst_idx: Vec<usize> = dst_idx;
        let addressed = &addressed;
        let dst_idx = &dst_idx;
        // One command per source pings all its destinations at once inside the device; the
        // pair order (source, then destination, both in host order) does not depend on timing.
        let results: Vec<PairResult> = stream::iter(0..addressed.len())
            .map(|si| async move {
                let dsts: Vec<usize> = dst_idx.iter().copied().filter(|&d| d != si).collect();
                self.ping_from(&addressed[si].0, &dsts, addressed, par)
                    .await
            })
            .buffered(par)
            .collect::<Vec<_>>()
            .await
            .into_iter()
            .flatten()
            .collect();

        let mut summary = Summary {
            pairs: results.len(),
            ..Default::default()
        };
        for r in &results {
            match r.status {
                "ok" => summary.ok += 1,
                "unstable" => summary.unstable += 1,
                "down" => summary.down += 1,
                "timeout" => summary.timeout += 1,
                _ => summary.unknown += 1,
            }
        }
        let report = Report {
            mode,
            seed,
            hosts: Ordered(
                addressed
                    .iter()
                    .map(|(h, ip)| (h.clone(), ip.to_string()))
                    .collect(),
            ),
            hosts_without_address: (!unaddressed.is_empty()).then_some(unaddressed),
            summary,
            results,
            truncated: None,
        };
        let timed_out = report.summary.timeout > 0;
        let (text, cut) = fit(report, self.config.reachability_cap);
        Ok(ToolOutput {
            text,
            is_error: false,
            truncated: cut,
            timed_out,
            exit_code: None,
        })
    }
}

/// The ping each pair runs (the release's `ping -c 2 -n -q`, with a 0.2 s interval and a 1 s
/// reply wait so an unreachable pair costs about a second, not ten).
const PING_ARGS: [&str; 9] = ["ping", "-c", "2", "-n", "-q", "-i", "0.2", "-W", "1"];

/// A script that pings every address in parallel inside the device and prints each result as
/// one block `@@IP` + ping's output. Each block is written with one `printf`, well under the
/// pipe's atomic-write size, so blocks never interleave. Only addresses we parsed ourselves go
/// into it.
fn batch_script(ips: &[std::net::Ipv4Addr]) -> String {
    let list: Vec<String> = ips.iter().map(|ip| ip.to_string()).collect();
    format!(
        "for ip in {}; do (o=$({} \"$ip\" 2>&1); printf '@@%s\\n%s\\n' \"$ip\" \"$o\") & done; wait",
        list.join(" "),
        PING_ARGS.join(" ")
    )
}

/// Splits a batch's output into `IP → ping output`.
fn split_batch(stdout: &str) -> std::collections::HashMap<String, String> {
    let mut out = std::collections::HashMap::new();
    let mut current: Option<(String, String)> = None;
    for line in stdout.lines() {
        if let Some(ip) = line.strip_prefix("@@") {
            if let Some((k, v)) = current.take() {
                out.insert(k, v);
            }
            current = Some((ip.trim().to_string(), String::new()));
        } else if let Some((_, v)) = current.as_mut() {
            v.push_str(line);
            v.push('\n');
        }
    }
    if let Some((k, v)) = current {
        out.insert(k, v);
    }
    out
}

impl NikaTools {
    /// Pings `dsts` from `src`: one batched command when the device can run it, else (no
    /// `sh`, or a mock that does not script the batch) one `ping` per pair.
    async fn ping_from(
        &self,
        src: &str,
        dsts: &[usize],
        addressed: &[(String, std::net::Ipv4Addr)],
        par: usize,
    ) -> Vec<PairResult> {
        const T: &str = "get_reachability";
        if dsts.is_empty() {
            return Vec::new();
        }
        let t = self.config.exec_timeout;
        let ips: Vec<std::net::Ipv4Addr> = dsts.iter().map(|&d| addressed[d].1).collect();
        let batch = self
            .exec(T, src, Command::Shell(batch_script(&ips)), t)
            .await;
        if let Ok(out) = &batch {
            let blocks = split_batch(&out.stdout);
            // No block at all (no `sh`, a mock that does not script the batch, or a batch
            // that hung before any ping finished): ask pair by pair instead.
            if !blocks.is_empty() {
                return dsts
                    .iter()
                    .map(|&d| {
                        let (dst, ip) = &addressed[d];
                        let one = match blocks.get(&ip.to_string()) {
                            Some(text) => faultbench_core::ExecOutput {
                                stdout: text.clone(),
                                exit_code: Some(0),
                                ..Default::default()
                            },
                            None if out.timed_out => faultbench_core::ExecOutput {
                                timed_out: true,
                                ..Default::default()
                            },
                            None => faultbench_core::ExecOutput {
                                stderr: "no result from ping".into(),
                                exit_code: out.exit_code,
                                ..Default::default()
                            },
                        };
                        pair_result(src.to_string(), dst.clone(), ip.to_string(), Ok(one))
                    })
                    .collect();
            }
        }
        stream::iter(dsts.iter().copied())
            .map(|d| {
                let (dst, ip) = addressed[d].clone();
                async move {
                    let mut argv: Vec<String> = PING_ARGS.iter().map(|s| s.to_string()).collect();
                    argv.push(ip.to_string());
                    let out = self.exec(T, src, Command::Argv(argv), t).await;
                    pair_result(src.to_string(), dst, ip.to_string(), out)
                }
            })
            .buffered(par.max(1))
            .collect()
            .await
    }
}

fn pair_result(
    src: String,
    dst: String,
    dst_ip: String,
    out: Result<faultbench_core::ExecOutput, ToolError>,
) -> PairResult {
    let mut r = PairResult {
        src,
        dst,
        dst_ip,
        status: "unknown",
        tx: None,
        rx: None,
        loss_percent: None,
        time_ms: None,
        rtt_avg_ms: None,
        rtt_min_ms: None,
        rtt_max_ms: None,
        rtt_mdev_ms: None,
        error: None,
    };
    let out = match out {
        Ok(o) => o,
        Err(e) => {
            r.error = Some(e.to_string());
            return r;
        }
    };
    if out.timed_out {
        r.status = "timeout";
        return r;
    }
    match parse_ping(&out.stdout) {
        Some(s) => {
            r.status = if s.tx == 0 {
                "unknown"
            } else if s.rx == 0 {
                "down"
            } else if s.rx >= s.tx && s.loss == 0.0 {
                "ok"
            } else {
                "unstable"
            };
            r.tx = Some(s.tx);
            r.rx = Some(s.rx);
            r.loss_percent = Some(s.loss);
            r.time_ms = s.time_ms;
            if let Some([min, avg, max, mdev]) = s.rtt {
                r.rtt_min_ms = Some(min);
                r.rtt_avg_ms = Some(avg);
                r.rtt_max_ms = Some(max);
                r.rtt_mdev_ms = Some(mdev);
            }
        }
        None => {
            let why = if out.stderr.trim().is_empty() {
                out.stdout.trim()
            } else {
                out.stderr.trim()
            };
            let mut e: String = why.lines().next().unwrap_or("").chars().take(200).collect();
            if e.is_empty() {
                e = format!("no ping summary (exit code {:?})", out.exit_code);
            }
            r.error = Some(e);
        }
    }
    r
}

/// Serializes the report within `cap` characters: first drop the `ok` rows (the summary
/// still counts them), then cut rows from the end; `truncated` says what was left out.
fn fit(mut report: Report, cap: usize) -> (String, bool) {
    let full = serde_json::to_string(&report).unwrap_or_default();
    if full.chars().count() <= cap {
        return (full, false);
    }
    let total = report.results.len();
    report.results.retain(|r| r.status != "ok");
    let kept_problems = report.results.len();
    report.truncated = Some(format!(
        "{} ok rows of {total} not listed (see summary)",
        total - kept_problems
    ));
    let mut text = serde_json::to_string(&report).unwrap_or_default();
    while text.chars().count() > cap && !report.results.is_empty() {
        let drop = (report.results.len() / 4).max(1);
        let keep = report.results.len() - drop;
        report.results.truncate(keep);
        report.truncated = Some(format!(
            "{} ok rows not listed (see summary); {} of {kept_problems} other rows cut to fit {cap} chars",
            total - kept_problems,
            kept_problems - keep
        ));
        text = serde_json::to_string(&report).unwrap_or_default();
    }
    (text, true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_iputils_and_busybox_summaries() {
        let s = parse_ping(
            "--- 10.0.0.2 ping statistics ---\n2 packets transmitted, 2 received, 0% packet loss, time 201ms\nrtt min/avg/max/mdev = 0.041/0.050/0.060/0.009 ms\n",
        )
        .unwrap();
        assert_eq!((s.tx, s.rx, s.loss, s.time_ms), (2, 2, 0.0, Some(201.0)));
        assert_eq!(s.rtt, Some([0.041, 0.050, 0.060, 0.009]));
        let s = parse_ping(
            "2 packets transmitted, 0 received, +2 errors, 100% packet loss, time 1001ms",
        )
        .unwrap();
        assert_eq!((s.rx, s.loss), (0, 100.0));
        let s = parse_ping("4 packets transmitted, 3 packets received, 25% packet loss\nround-trip min/avg/max = 0.1/0.2/0.3 ms").unwrap();
        assert_eq!((s.tx, s.rx, s.loss), (4, 3, 25.0));
        assert_eq!(s.rtt.unwrap()[1], 0.2);
        assert!(parse_ping("ping: connect: Network is unreachable").is_none());
    }

    #[test]
    fn batch_script_and_its_output() {
        let ips = ["10.0.0.2".parse().unwrap(), "10.0.0.3".parse().unwrap()];
        let s = batch_script(&ips);
        assert!(
            s.starts_with(
                "for ip in 10.0.0.2 10.0.0.3; do (o=$(ping -c 2 -n -q -i 0.2 -W 1 \"$ip\" 2>&1);"
            ),
            "{s}"
        );
        let b = split_batch(
            "@@10.0.0.3\n2 packets transmitted, 0 received, 100% packet loss\n\n@@10.0.0.2\nping: connect: Network is unreachable\n",
        );
        assert_eq!(b.len(), 2);
        assert!(b["10.0.0.3"].contains("100% packet loss"));
        assert_eq!(b["10.0.0.2"], "ping: connect: Network is unreachable\n");
        assert!(split_batch("sh: not found").is_empty());
    }

    #[test]
    fn natural_order_and_seeded_sampling() {
        let mut v = vec!["pc10", "pc2", "dns", "pc1"];
        v.sort_by_key(|s| natural_key(s));
        assert_eq!(v, ["dns", "pc1", "pc2", "pc10"]);
        let a = sample_indices(20, 3, 42);
        assert_eq!(a, sample_indices(20, 3, 42));
        assert_eq!(a.len(), 3);
        assert_ne!(a, sample_indices(20, 3, 43));
        assert_eq!(sample_indices(2, 5, 1), vec![0, 1]);
    }
}
