//! `lab.conf` and `lab.dep` grammar.

use crate::text::echo;
use regex::Regex;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::LazyLock;

/// A lab file that could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub struct LabError {
    /// The file (empty when parsing a string).
    pub file: PathBuf,
    /// 1-based line (0 when not line-specific).
    pub line: usize,
    /// What is wrong.
    pub message: String,
    /// What was expected.
    pub expected: String,
}

impl LabError {
    fn at(line: usize, message: impl Into<String>, expected: impl Into<String>) -> Self {
        LabError {
            file: PathBuf::new(),
            line,
            message: message.into(),
            expected: expected.into(),
        }
    }

    pub(crate) fn in_file(mut self, file: &Path) -> Self {
        self.file = file.to_path_buf();
        self
    }
}

impl fmt::Display for LabError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let file = if self.file.as_os_str().is_empty() {
            "lab.conf".to_string()
        } else {
            self.file.display().to_string()
        };
        write!(f, "{file}:{}: {}", self.line, self.message)?;
        if !self.expected.is_empty() {
            write!(f, " (expected {})", self.expected)?;
        }
        Ok(())
    }
}

/// `LAB_*` metadata lines.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LabMeta {
    /// `LAB_NAME`.
    pub name: Option<String>,
    /// `LAB_DESCRIPTION`.
    pub description: Option<String>,
    /// `LAB_VERSION`.
    pub version: Option<String>,
    /// `LAB_AUTHOR`.
    pub author: Option<String>,
    /// `LAB_EMAIL`.
    pub email: Option<String>,
    /// `LAB_WEB`.
    pub web: Option<String>,
}

/// One interface: `ethN` attached to a collision domain.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Interface {
    /// Index N of `ethN`.
    pub index: u32,
    /// Collision domain name.
    pub domain: String,
    /// Fixed MAC address, if given (`CD/02:42:…`).
    pub mac: Option<String>,
}

impl Interface {
    /// `ethN`.
    pub fn name(&self) -> String {
        format!("eth{}", self.index)
    }
}

/// One device of the lab.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Device {
    /// Device name.
    pub name: String,
    /// Interfaces in index order (contiguous from 0).
    pub interfaces: Vec<Interface>,
    /// Options in file order (`image`, `mem`, `exec`, `sysctl`, …). Repeatable options repeat.
    pub options: Vec<(String, String)>,
    /// Options Kathará does not know (`r1[memory]=…`), in file order: Kathará stores them and
    /// ignores them, and so does faultbench (after a warning, see [`LabConf::warnings`]).
    pub unknown_options: Vec<UnknownOption>,
}

/// An option name Kathará does not know, kept as written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownOption {
    /// The name between the brackets.
    pub key: String,
    /// Its value, without quotes.
    pub value: String,
    /// 1-based line of lab.conf.
    pub line: usize,
}

/// Something in lab.conf that Kathará accepts and ignores: the lab runs, but the line has no
/// effect (often a typo such as `mem` spelled `memory`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LabWarning {
    /// 1-based line of lab.conf.
    pub line: usize,
    /// What is ignored, and what would take effect instead.
    pub message: String,
}

impl fmt::Display for LabWarning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "lab.conf:{}: {}", self.line, self.message)
    }
}

impl Device {
    /// The last value of an option.
    pub fn option(&self, key: &str) -> Option<&str> {
        self.options
            .iter()
            .rev()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    /// Every value of a repeatable option (`exec`, `sysctl`, `env`, …).
    pub fn options_named<'a>(&'a self, key: &'a str) -> impl Iterator<Item = &'a str> + 'a {
        self.options
            .iter()
            .filter(move |(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    /// The image (`kathara/base` when unset, as in Kathará).
    pub fn image(&self) -> &str {
        self.option("image").unwrap_or("kathara/base")
    }
}

/// A parsed `lab.conf`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LabConf {
    /// `LAB_*` lines.
    pub meta: LabMeta,
    /// Devices in order of first appearance.
    pub devices: Vec<Device>,
}

/// The options Kathará 3.8 knows.
pub const KNOWN_OPTIONS: [&str; 16] = [
    "image",
    "mem",
    "cpus",
    "port",
    "bridged",
    "ipv6",
    "exec",
    "sysctl",
    "env",
    "shell",
    "num_terms",
    "ulimit",
    "privileged",
    "entrypoint",
    "args",
    "volume",
];

static LINE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r#"^(?P<key>[a-z0-9_]{1,30})\[(?P<arg>\w+)\]=(?P<q>["']?)(?P<value>[^"']+)(?P<q2>["']?)(?P<comment>\s+#.*)?$"#)
        .unwrap()
});
static CD: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"^\w+$").unwrap());
static MAC: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^[0-9a-fA-F]{2}(:[0-9a-fA-F]{2}){5}$").unwrap());
static MEM: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"^[0-9]+[bkmgBKMG]?$").unwrap());

const BOOLS: [&str; 12] = [
    "y", "yes", "t", "true", "on", "1", "n", "no", "f", "false", "off", "0",
];

impl LabConf {
    /// Parses `lab.conf` text.
    pub fn parse(text: &str) -> Result<LabConf, LabError> {
        let mut conf = LabConf::default();
        for (i, raw) in text.lines().enumerate() {
            let n = i + 1;
            let line = raw.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            if line.starts_with("LAB_") {
                parse_meta(line, n, &mut conf.meta)?;
                continue;
            }
            let Some(c) = LINE.captures(line) else {
                return Err(LabError::at(
                    n,
                    format!("cannot read `{}`", echo(line)),
                    "`device[N]=domain`, `device[option]=\"value\"`, `LAB_NAME=…` or a `#` comment",
                ));
            };
            if c["q"] != c["q2"] {
                return Err(LabError::at(
                    n,
                    "unbalanced quotes",
                    "`\"value\"` or a bare value",
                ));
            }
            let dev = &c["key"];
            if matches!(dev, "shared" | "_test") {
                return Err(LabError::at(
                    n,
                    format!("`{dev}` is a reserved name"),
                    "another device name",
                ));
            }
            let arg = &c["arg"];
            let value = c["value"].to_string();
            let idx = match conf.devices.iter().position(|d| d.name == dev) {
                Some(i) => i,
                None => {
                    conf.devices.push(Device {
                        name: dev.to_string(),
                        interfaces: Vec::new(),
                        options: Vec::new(),
                        unknown_options: Vec::new(),
                    });
                    conf.devices.len() - 1
                }
            };
            let device = &mut conf.devices[idx];
            if let Ok(index) = arg.parse::<u32>() {
                let (domain, mac) = match value.split_once('/') {
                    Some((d, m)) => (d.to_string(), Some(m.to_string())),
                    None => (value.clone(), None),
                };
                if !CD.is_match(&domain) {
                    return Err(LabError::at(
                        n,
                        format!("collision domain `{}` is not a word", echo(&domain)),
                        "letters, digits and `_` only",
                    ));
                }
                if let Some(m) = &mac
                    && !MAC.is_match(m)
                {
                    return Err(LabError::at(
                        n,
                        format!("bad MAC `{}`", echo(m)),
                        "`xx:xx:xx:xx:xx:xx`",
                    ));
                }
                if device.interfaces.iter().any(|i| i.index == index) {
                    return Err(LabError::at(
                        n,
                        format!("{}[{index}] is assigned twice", echo(dev)),
                        "each interface number once",
                    ));
                }
                if device.interfaces.iter().any(|i| i.domain == domain) {
                    return Err(LabError::at(
                        n,
                        format!(
                            "{} is attached to collision domain `{}` twice",
                            echo(dev),
                            echo(&domain)
                        ),
                        "a device on each collision domain at most once",
                    ));
                }
                device.interfaces.push(Interface { index, domain, mac });
            } else if KNOWN_OPTIONS.contains(&arg) {
                check_option(arg, &value, n)?;
                device.options.push((arg.to_string(), value));
            } else {
                // Kathará's `Machine.add_meta` stores any option name and nothing reads the
                // unknown ones: the lab deploys. Refusing it would stop labs that run there.
                device.unknown_options.push(UnknownOption {
                    key: arg.to_string(),
                    value,
                    line: n,
                });
            }
        }
        for d in &mut conf.devices {
            d.interfaces.sort_by_key(|i| i.index);
            for (want, have) in d.interfaces.iter().enumerate() {
                if have.index as usize != want {
                    return Err(LabError::at(
                        0,
                        format!(
                            "{}: interfaces are not contiguous (eth{want} is missing)",
                            echo(&d.name)
                        ),
                        "interfaces numbered 0, 1, 2, … without gaps",
                    ));
                }
            }
            if d.interfaces.is_empty() {
                return Err(LabError::at(
                    0,
                    format!("device `{}` has no interface", echo(&d.name)),
                    format!("at least one `{}[0]=<domain>` line", echo(&d.name)),
                ));
            }
        }
        if conf.devices.is_empty() {
            return Err(LabError::at(0, "no device", "lines such as `r1[0]=A`"));
        }
        Ok(conf)
    }

    /// What lab.conf says that has no effect, in line order: every unknown option, naming its
    /// line and the known option it may be a misspelling of.
    pub fn warnings(&self) -> Vec<LabWarning> {
        let mut out: Vec<LabWarning> = self
            .devices
            .iter()
            .flat_map(|d| {
                d.unknown_options.iter().map(move |o| LabWarning {
                    line: o.line,
                    message: unknown_option_message(&d.name, o),
                })
            })
            .collect();
        out.sort_by_key(|w| w.line);
        out
    }

    /// Device names in order.
    pub fn device_names(&self) -> Vec<&str> {
        self.devices.iter().map(|d| d.name.as_str()).collect()
    }

    /// A device by name.
    pub fn device(&self, name: &str) -> Option<&Device> {
        self.devices.iter().find(|d| d.name == name)
    }

    /// Collision domains and their members `(device, interface index)`, sorted by domain name.
    pub fn domains(&self) -> Vec<(String, Vec<(String, u32)>)> {
        let mut map: std::collections::BTreeMap<String, Vec<(String, u32)>> = Default::default();
        for d in &self.devices {
            for i in &d.interfaces {
                map.entry(i.domain.clone())
                    .or_default()
                    .push((d.name.clone(), i.index));
            }
        }
        map.into_iter().collect()
    }
}

fn parse_meta(line: &str, n: usize, meta: &mut LabMeta) -> Result<(), LabError> {
    let parts: Vec<&str> = line.split('=').collect();
    if parts.len() != 2 {
        return Err(LabError::at(
            n,
            "a LAB_* value may not contain `=`",
            "`LAB_NAME=value` with a single `=`",
        ));
    }
    let value = parts[1]
        .trim()
        .trim_matches(|c| c == '"' || c == '\'')
        .to_string();
    let slot = match parts[0].trim() {
        "LAB_NAME" => &mut meta.name,
        "LAB_DESCRIPTION" => &mut meta.description,
        "LAB_VERSION" => &mut meta.version,
        "LAB_AUTHOR" => &mut meta.author,
        "LAB_EMAIL" => &mut meta.email,
        "LAB_WEB" => &mut meta.web,
        other => {
            return Err(LabError::at(
                n,
                format!("unknown metadata `{}`", echo(other)),
                "LAB_NAME, LAB_DESCRIPTION, LAB_VERSION, LAB_AUTHOR, LAB_EMAIL or LAB_WEB",
            ));
        }
    };
    *slot = Some(value);
    Ok(())
}

fn unknown_option_message(device: &str, o: &UnknownOption) -> String {
    let lower = o.key.to_ascii_lowercase();
    // A known option the name starts with, or that starts with the name (`memory`, `cpu`,
    // `sysctls`, `M`): the likely intended one.
    let close = KNOWN_OPTIONS
        .iter()
        .find(|k| lower != **k && (lower.starts_with(**k) || k.starts_with(lower.as_str())));
    let hint = match close {
        Some(k) => format!("; did you mean `{}[{k}]`?", echo(device)),
        None if lower != o.key && KNOWN_OPTIONS.contains(&lower.as_str()) => {
            format!(
                "; option names are lowercase: `{}[{}]`",
                echo(device),
                echo(&lower)
            )
        }
        None => format!("; known options: {}", KNOWN_OPTIONS.join(", ")),
    };
    format!(
        "unknown option `{}` of device {} (value `{}`) is ignored, as Kathará ignores it{hint}",
        echo(&o.key),
        echo(device),
        echo(&o.value)
    )
}

fn check_option(key: &str, value: &str, n: usize) -> Result<(), LabError> {
    let bad = |expected: &str| {
        Err(LabError::at(
            n,
            format!("bad value `{}` for option `{}`", echo(value), echo(key)),
            expected.to_string(),
        ))
    };
    match key {
        "mem" if !MEM.is_match(value.trim()) => bad("a size such as `256m`, `1g` or `512` (MiB)"),
        "cpus"
            if !value
                .trim()
                .parse::<f64>()
                .is_ok_and(|c| c > 0.0 && c.is_finite()) =>
        {
            bad("a positive number of CPUs such as `0.5` or `2`")
        }
        "num_terms" if value.trim().parse::<u32>().is_err() => bad("a whole number of terminals"),
        "bridged" | "ipv6" | "privileged"
            if !BOOLS.contains(&value.trim().to_ascii_lowercase().as_str()) =>
        {
            bad("true or false")
        }
        "sysctl" if !value.trim().starts_with("net.") || !value.contains('=') => {
            bad("`net.<key>=<value>` (Kathará allows only the net. namespace)")
        }
        "env" if !value.contains('=') => bad("`NAME=value`"),
        _ => Ok(()),
    }
}

static DEP: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"^(\w+):\s?((?:\w+ ?)+)$").unwrap());

pub(crate) fn parse_dep(
    text: &str,
    conf: &LabConf,
) -> Result<Vec<(String, Vec<String>)>, LabError> {
    let mut out: Vec<(String, Vec<String>)> = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let n = i + 1;
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let Some(c) = DEP.captures(line) else {
            return Err(LabError::at(
                n,
                format!("cannot read `{}`", echo(line)),
                "`device: dep1 dep2`",
            ));
        };
        let dev = c[1].to_string();
        let needs: Vec<String> = c[2].split_whitespace().map(str::to_string).collect();
        for name in std::iter::once(&dev).chain(needs.iter()) {
            if conf.device(name).is_none() {
                return Err(LabError::at(
                    n,
                    format!(
                        "`{}` is not a device of lab.conf (Kathará would not notice)",
                        echo(name)
                    ),
                    "names of devices defined in lab.conf",
                ));
            }
        }
        out.push((dev, needs));
    }
    // Reject cycles.
    let mut visiting = Vec::new();
    fn visit<'a>(
        n: &'a str,
        deps: &'a [(String, Vec<String>)],
        stack: &mut Vec<&'a str>,
        ok: &mut Vec<&'a str>,
    ) -> Result<(), String> {
        if ok.contains(&n) {
            return Ok(());
        }
        if stack.contains(&n) {
            return Err(format!("{} -> {n}", stack.join(" -> ")));
        }
        stack.push(n);
        if let Some((_, needs)) = deps.iter().find(|(d, _)| d == n) {
            for m in needs {
                visit(m, deps, stack, ok)?;
            }
        }
        stack.pop();
        ok.push(n);
        Ok(())
    }
    let mut ok = Vec::new();
    for (d, _) in &out {
        visit(d, &out, &mut visiting, &mut ok).map_err(|cycle| {
            LabError::at(0, format!("dependency loop: {cycle}"), "an acyclic lab.dep")
        })?;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_kathara_forms() {
        let c = LabConf::parse(
            "LAB_DESCRIPTION=\"x y\"\n# c\nr1[0]=\"A\"\nr1[1]=B/02:42:ac:11:00:02\nr1[image]=\"kathara/frr\"   # comment\nr1[exec]=\"echo hi there\"\nr1[sysctl]=\"net.ipv4.ip_forward=1\"\npc1[0]=A\n",
        )
        .unwrap();
        assert_eq!(c.meta.description.as_deref(), Some("x y"));
        let r1 = c.device("r1").unwrap();
        assert_eq!(r1.image(), "kathara/frr");
        assert_eq!(r1.interfaces[1].mac.as_deref(), Some("02:42:ac:11:00:02"));
        assert_eq!(r1.option("exec"), Some("echo hi there"));
        assert_eq!(
            c.domains()[0].1,
            vec![("r1".to_string(), 0), ("pc1".to_string(), 0)]
        );
    }

    #[test]
    fn rejects_what_kathara_rejects_and_what_it_wrongly_accepts() {
        let cases = [
            ("r1 [0]=A", 1, "cannot read"),
            ("r1[0]=A\nr1[2]=B", 0, "not contiguous"),
            ("r1[0]=A\nr1[0]=B", 2, "twice"),
            ("r1[0]=A\nr1[1]=A", 2, "twice"),
            ("LAB_NAME=a=b\nr1[0]=A", 1, "`=`"),
            ("LAB_FOO=x\nr1[0]=A", 1, "unknown metadata"),
            ("r1[0]=A\nr1[mem]=lots", 2, "bad value"),
            ("r1[0]=A\nr1[cpus]=-1", 2, "bad value"),
            ("r1[0]=A\nr1[bridged]=maybe", 2, "bad value"),
            ("r1[image]=kathara/frr", 0, "no interface"),
            ("shared[0]=A", 1, "reserved"),
            ("r1[0]=A.B", 1, "not a word"),
            ("", 0, "no device"),
        ];
        for (text, line, needle) in cases {
            let e = LabConf::parse(text).expect_err(text);
            assert_eq!(e.line, line, "{text}: {e}");
            assert!(e.message.contains(needle), "{text}: {e}");
        }
    }

    /// Issue 29: `r1[M]=…` stopped `lab up` (`lab.conf:9: unknown option`), where Kathará stores
    /// the option, ignores it and deploys the lab.
    #[test]
    fn unknown_options_are_kept_and_warned_about_with_their_line() {
        let c = LabConf::parse(
            "r1[0]=A\nr1[memory]=\"256m\"\n# c\npc1[0]=A\npc1[M]=3\npc1[Image]=kathara/base\nr1[image]=kathara/frr\n",
        )
        .unwrap();
        let r1 = c.device("r1").unwrap();
        assert_eq!(
            r1.unknown_options,
            vec![UnknownOption {
                key: "memory".into(),
                value: "256m".into(),
                line: 2
            }]
        );
        // Unknown options are not options: nothing reads them by accident.
        assert_eq!(r1.option("memory"), None);
        assert_eq!(r1.image(), "kathara/frr");
        assert_eq!(c.device("pc1").unwrap().image(), "kathara/base");
        let w: Vec<String> = c.warnings().iter().map(ToString::to_string).collect();
        assert_eq!(w.len(), 3, "{w:?}");
        assert!(
            w[0].starts_with("lab.conf:2: unknown option `memory` of device r1")
                && w[0].contains("`r1[mem]`"),
            "{w:?}"
        );
        assert!(
            w[1].starts_with("lab.conf:5: ") && w[1].contains("`pc1[mem]`"),
            "{w:?}"
        );
        assert!(
            w[2].starts_with("lab.conf:6: ") && w[2].contains("lowercase: `pc1[image]`"),
            "{w:?}"
        );
        // Known options keep their checks.
        assert!(LabConf::parse("r1[0]=A\nr1[mem]=lots").is_err());
        assert!(LabConf::parse("r1[0]=A\n").unwrap().warnings().is_empty());
    }

    /// Issue 30: a lab.conf line, name or value of 1 MB was quoted whole in the error.
    #[test]
    fn huge_values_are_quoted_as_excerpts() {
        let big = "v".repeat(1_000_000);
        for text in [
            format!("r1 [0]={big}"),
            format!("r1[0]=A\nr1[mem]={big}"),
            format!("r1[0]={big}.x"),
            format!("LAB_{big}=x\nr1[0]=A"),
        ] {
            let e = LabConf::parse(&text).expect_err("refused").to_string();
            assert!(e.len() < 1024, "{} bytes", e.len());
            assert!(e.contains("more bytes)"), "{e}");
        }
        // An unknown option is kept and warned about: the warning quotes an excerpt too.
        let c = LabConf::parse(&format!("r1[0]=A\nr1[{big}]={big}")).unwrap();
        let w = c.warnings()[0].to_string();
        assert!(
            w.len() < 1024 && w.contains("more bytes)"),
            "{} bytes",
            w.len()
        );
    }

    #[test]
    fn lab_dep_must_name_devices_and_have_no_loop() {
        let c = LabConf::parse("a[0]=X\nb[0]=X\n").unwrap();
        assert_eq!(
            parse_dep("a: b\n", &c).unwrap(),
            vec![("a".into(), vec!["b".into()])]
        );
        assert!(
            parse_dep("a: ghost\n", &c)
                .unwrap_err()
                .message
                .contains("ghost")
        );
        assert!(
            parse_dep("a: b\nb: a\n", &c)
                .unwrap_err()
                .message
                .contains("loop")
        );
    }
}
