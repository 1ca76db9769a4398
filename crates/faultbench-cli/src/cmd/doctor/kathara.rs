//! The Kathará engine part of `faultbench doctor`: is there a Docker engine real Kathará can
//! run faultbench's labs on, and if not, the command that fixes each missing piece.
//!
//! What "ready" means (what `scripts/install-deps.sh --kathara` sets up): dockerd answers;
//! Kathará is installed; every image the shipped labs name is present; the network plugins
//! Kathará looks up (`kathara/katharanp:amd64`, its default `kathara/katharanp_vde:amd64`) are
//! installed and enabled; and every plugin bridge that exists has its `FORWARD` accept (Docker
//! sets that chain's policy to `DROP` and sends bridged frames through it).
//!
//! Every probe is a child process with a bounded time and only `PATH` (and `DOCKER_HOST`, when
//! set) in its environment. The parsing is separate from the probing, so each verdict is tested
//! on recorded output.

use std::time::Duration;

use serde::Serialize;

/// Images the shipped topologies name (`topologies/*/lab.conf`), all tagged by
/// scripts/kathara-images.sh. A test keeps the three lists equal.
pub const IMAGES: [&str; 4] = [
    "kathara/frr",
    "kathara/base",
    "kathara/dhcp",
    "faultbench/frr-vrrp",
];
/// The managed plugins Kathará 3.8 looks up, by setting (`network_plugin`).
pub const PLUGINS: [&str; 2] = ["kathara/katharanp:amd64", "kathara/katharanp_vde:amd64"];
/// The one command that sets everything up.
pub const SETUP: &str = "sudo ./scripts/install-deps.sh --kathara";
/// The plugin's bridges: `kt-` and 12 hex digits of the network id.
const BRIDGE_PREFIX: &str = "kt-";
const PROBE_TIMEOUT: Duration = Duration::from_secs(20);

/// One thing checked.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct Check {
    /// What was checked.
    pub name: &'static str,
    /// Whether it is as Kathará needs it.
    pub ok: bool,
    /// What was found.
    pub detail: String,
    /// The command that fixes it, when not ok.
    pub fix: Option<String>,
}

impl Check {
    fn ok(name: &'static str, detail: impl Into<String>) -> Self {
        Self {
            name,
            ok: true,
            detail: detail.into(),
            fix: None,
        }
    }

    fn missing(name: &'static str, detail: impl Into<String>, fix: impl Into<String>) -> Self {
        Self {
            name,
            ok: false,
            detail: detail.into(),
            fix: Some(fix.into()),
        }
    }
}

/// Everything checked, in order.
#[derive(Debug, Clone, Serialize)]
pub struct EngineReport {
    /// Every check made; later ones are skipped when dockerd does not answer.
    pub checks: Vec<Check>,
    /// All checks passed.
    pub ready: bool,
}

/// Runs `program args` with a bounded time: stdout on success, the reason otherwise.
async fn run(program: &str, args: &[&str]) -> Result<String, String> {
    let mut cmd = tokio::process::Command::new(program);
    cmd.args(args)
        .env_clear()
        .env(
            "PATH",
            "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
        )
        .stdin(std::process::Stdio::null())
        .kill_on_drop(true);
    if let Ok(h) = std::env::var("DOCKER_HOST") {
        cmd.env("DOCKER_HOST", h);
    }
    match tokio::time::timeout(PROBE_TIMEOUT, cmd.output()).await {
        Err(_) => Err(format!(
            "`{program} {}` gave no answer within {} s",
            args.join(" "),
            PROBE_TIMEOUT.as_secs()
        )),
        Ok(Err(e)) => Err(format!("cannot run {program}: {e}")),
        Ok(Ok(o)) if o.status.success() => Ok(String::from_utf8_lossy(&o.stdout).into_owned()),
        Ok(Ok(o)) => Err(String::from_utf8_lossy(&o.stderr)
            .lines()
            .last()
            .unwrap_or("failed")
            .trim()
            .to_owned()),
    }
}

/// Which of [`IMAGES`] a `docker images --format '{{.Repository}}:{{.Tag}}'` listing lacks.
pub fn check_images(listing: &str) -> Check {
    let have: Vec<&str> = listing.lines().map(str::trim).collect();
    let missing: Vec<&str> = IMAGES
        .iter()
        .copied()
        .filter(|i| !have.iter().any(|h| *h == format!("{i}:latest") || h == i))
        .collect();
    if missing.is_empty() {
        Check::ok("device images", IMAGES.join(", "))
    } else {
        Check::missing(
            "device images",
            format!("missing: {}", missing.join(", ")),
            "sudo ./scripts/kathara-images.sh",
        )
    }
}

/// The plugins' state from a `docker plugin ls --format '{{.Name}} {{.Enabled}}'` listing.
pub fn check_plugins(listing: &str) -> Check {
    let mut absent = Vec::new();
    let mut disabled = Vec::new();
    for p in PLUGINS {
        match listing
            .lines()
            .find_map(|l| l.trim().strip_prefix(p).map(str::trim))
        {
            None => absent.push(p),
            Some("true") => {}
            Some(_) => disabled.push(p),
        }
    }
    if absent.is_empty() && disabled.is_empty() {
        return Check::ok("network plugins", format!("{} enabled", PLUGINS.join(", ")));
    }
    let mut detail = Vec::new();
    if !absent.is_empty() {
        detail.push(format!("not installed: {}", absent.join(", ")));
    }
    if !disabled.is_empty() {
        detail.push(format!("disabled: {}", disabled.join(", ")));
    }
    let fix = if absent.is_empty() {
        disabled
            .iter()
            .map(|p| format!("sudo docker plugin enable {p}"))
            .collect::<Vec<_>>()
            .join(" && ")
    } else {
        "sudo ./scripts/kathara-plugin.sh".to_owned()
    };
    Check::missing("network plugins", detail.join("; "), fix)
}

/// Whether every plugin bridge in `bridges` has its accept in `rules` (`iptables -S FORWARD`).
pub fn check_forward(rules: &str, bridges: &[String]) -> Check {
    let policy_accept = rules.lines().any(|l| l.trim() == "-P FORWARD ACCEPT");
    let lacking: Vec<&String> = bridges
        .iter()
        .filter(|b| {
            let rule = format!("-A FORWARD -i {b} -o {b} -j ACCEPT");
            !rules.lines().any(|l| l.trim() == rule)
        })
        .collect();
    if policy_accept || lacking.is_empty() {
        let why = if policy_accept {
            "policy ACCEPT".to_owned()
        } else {
            format!(
                "policy DROP; {} plugin bridge(s), each with its ACCEPT",
                bridges.len()
            )
        };
        return Check::ok("FORWARD accept", why);
    }
    let fix = lacking
        .iter()
        .map(|b| format!("sudo iptables -A FORWARD -i {b} -o {b} -j ACCEPT"))
        .collect::<Vec<_>>()
        .join(" && ");
    Check::missing(
        "FORWARD accept",
        format!(
            "policy DROP and no ACCEPT for {}: frames between devices are dropped",
            lacking
                .iter()
                .map(|b| b.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ),
        fix,
    )
}

/// The plugin bridges on this host (names from /sys/class/net).
fn plugin_bridges() -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir("/sys/class/net")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| e.file_name().into_string().ok())
        .filter(|n| n.starts_with(BRIDGE_PREFIX))
        .collect();
    v.sort();
    v
}

/// Probes the engine.
pub async fn probe() -> EngineReport {
    let mut checks = Vec::new();
    let docker = run("docker", &["version", "--format", "{{.Server.Version}}"]).await;
    match &docker {
        Ok(v) => checks.push(Check::ok("dockerd", format!("answers ({})", v.trim()))),
        Err(e) => checks.push(Check::missing("dockerd", e.clone(), SETUP)),
    }
    #[cfg(feature = "kathara")]
    let kathara = match faultbench_emu::kathara::KatharaCli::discover() {
        Ok(cli) => Check::ok("Kathará", cli.display()),
        Err(e) => Check::missing("Kathará", e.to_string(), SETUP),
    };
    #[cfg(not(feature = "kathara"))]
    let kathara = Check::missing(
        "Kathará",
        crate::cmd::lab::KATHARA_NOT_BUILT,
        "cargo build --release -p faultbench-cli",
    );
    checks.push(kathara);
    if docker.is_ok() {
        checks.push(
            match run(
                "docker",
                &["images", "--format", "{{.Repository}}:{{.Tag}}"],
            )
            .await
            {
                Ok(l) => check_images(&l),
                Err(e) => Check::missing("device images", e, "sudo ./scripts/kathara-images.sh"),
            },
        );
        checks.push(
            match run(
                "docker",
                &["plugin", "ls", "--format", "{{.Name}} {{.Enabled}}"],
            )
            .await
            {
                Ok(l) => check_plugins(&l),
                Err(e) => Check::missing("network plugins", e, "sudo ./scripts/kathara-plugin.sh"),
            },
        );
        checks.push(match run("iptables", &["-w", "5", "-S", "FORWARD"]).await {
            Ok(rules) => check_forward(&rules, &plugin_bridges()),
            Err(e) => Check::missing(
                "FORWARD accept",
                format!("cannot read the FORWARD chain: {e}"),
                "run `faultbench doctor` as root",
            ),
        });
    }
    let ready = checks.iter().all(|c| c.ok);
    EngineReport { checks, ready }
}

/// Prints the report as the text part of `faultbench doctor`.
pub fn print(r: &EngineReport) {
    println!("  Kathará engine (real Kathará on Docker; docs/kathara.md):");
    for c in &r.checks {
        if c.ok {
            println!("    {:<16} ok       {}", c.name, c.detail);
        } else {
            println!("    {:<16} MISSING  {}", c.name, c.detail);
            if let Some(f) = &c.fix {
                println!("    {:<16}          fix: {f}", "");
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn images_missing_from_a_listing_are_named_with_the_build_command() {
        let all = "kathara/frr:latest\nkathara/base:latest\nkathara/dhcp:latest\nfaultbench/frr-vrrp:latest\n";
        assert!(check_images(all).ok);
        let c = check_images("kathara/frr:latest\nfaultbench/device:abc\n");
        assert!(!c.ok);
        assert!(c.detail.contains("kathara/base") && c.detail.contains("faultbench/frr-vrrp"));
        assert!(!c.detail.contains("kathara/frr,"), "{}", c.detail);
        assert_eq!(c.fix.as_deref(), Some("sudo ./scripts/kathara-images.sh"));
    }

    #[test]
    fn plugins_absent_or_disabled_get_their_own_fix() {
        let ok = "kathara/katharanp:amd64 true\nkathara/katharanp_vde:amd64 true\n";
        assert!(check_plugins(ok).ok);
        let off =
            check_plugins("kathara/katharanp:amd64 true\nkathara/katharanp_vde:amd64 false\n");
        assert!(!off.ok);
        assert_eq!(
            off.fix.as_deref(),
            Some("sudo docker plugin enable kathara/katharanp_vde:amd64")
        );
        let none = check_plugins("");
        assert!(none.detail.contains("not installed"));
        assert_eq!(
            none.fix.as_deref(),
            Some("sudo ./scripts/kathara-plugin.sh")
        );
    }

    #[test]
    fn a_plugin_bridge_without_its_accept_is_named_with_the_rule() {
        let rules = "-P FORWARD DROP\n-A FORWARD -j DOCKER-USER\n-A FORWARD -i kt-aaaaaaaaaaaa -o kt-aaaaaaaaaaaa -j ACCEPT\n";
        let bridges = vec!["kt-aaaaaaaaaaaa".to_owned(), "kt-bbbbbbbbbbbb".to_owned()];
        let c = check_forward(rules, &bridges);
        assert!(!c.ok);
        assert!(c.detail.contains("kt-bbbbbbbbbbbb") && !c.detail.contains("kt-aaaa"));
        assert_eq!(
            c.fix.as_deref(),
            Some("sudo iptables -A FORWARD -i kt-bbbbbbbbbbbb -o kt-bbbbbbbbbbbb -j ACCEPT")
        );
        assert!(check_forward(rules, &bridges[..1]).ok);
        assert!(check_forward("-P FORWARD ACCEPT\n", &bridges).ok);
        assert!(check_forward("-P FORWARD DROP\n", &[]).ok);
    }

    /// The image list here, the tags scripts/kathara-images.sh makes and the images the shipped
    /// labs name must agree, or a lab would fail on Kathará with "image not found".
    #[test]
    fn every_image_a_shipped_lab_names_is_built_and_checked() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let script = std::fs::read_to_string(root.join("scripts/kathara-images.sh")).unwrap();
        let tags_line = script
            .lines()
            .find(|l| l.starts_with("TAGS=("))
            .expect("TAGS=( in kathara-images.sh");
        for i in IMAGES {
            assert!(
                tags_line.contains(i),
                "{i} is not tagged by kathara-images.sh"
            );
        }
        let mut named = std::collections::BTreeSet::new();
        for e in std::fs::read_dir(root.join("topologies"))
            .unwrap()
            .flatten()
        {
            let Ok(conf) = std::fs::read_to_string(e.path().join("lab.conf")) else {
                continue;
            };
            for l in conf.lines() {
                if let Some((_, v)) = l.split_once("[image]=") {
                    named.insert(v.trim().trim_matches('"').to_owned());
                }
            }
        }
        assert!(named.contains("kathara/frr"), "{named:?}");
        for n in &named {
            assert!(
                IMAGES.contains(&n.as_str()),
                "a lab names {n}, which is not built"
            );
        }
    }
}
