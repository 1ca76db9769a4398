//! Reading `kathara linfo -d DIR`: the table of a running lab's devices.
//!
//! Kathará draws the table with Rich box characters: a header row (`NETWORK SCENARIO ID`,
//! `NAME`, `USER`, `STATUS`, `IMAGE`, …) between `│`, then one row per device. With a wide
//! `COLUMNS` no cell wraps, so one line is one device. A lab with no device prints a panel
//! saying `No Devices Found`.
//!
//! ```
//! use faultbench_emu::kathara::parse_linfo;
//!
//! let table = "\
//! │ NETWORK SCENARIO ID │ NAME │ USER │ STATUS  │ IMAGE       │
//! ╞═════════════════════╪══════╪══════╪═════════╪═════════════╡
//! │ q1w2e3              │ r1   │ root │ running │ kathara/frr │
//! ";
//! let devices = parse_linfo(table).unwrap();
//! assert_eq!(devices[0].name, "r1");
//! assert!(devices[0].is_running());
//! assert!(parse_linfo("║   No Devices Found   ║").unwrap().is_empty());
//! ```

/// One row of the table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeviceStatus {
    /// Device name.
    pub name: String,
    /// Container status (Docker: `running`, `exited`, …) or pod phase (Kubernetes: `Running`, …).
    pub status: String,
    /// Image, when shown.
    pub image: Option<String>,
}

impl DeviceStatus {
    /// Docker's `running` or Kubernetes' `Running`.
    pub fn is_running(&self) -> bool {
        self.status.eq_ignore_ascii_case("running")
    }
}

fn cells(line: &str) -> Option<Vec<String>> {
    let line = line.trim();
    let bar = |c: char| c == '│' || c == '┃' || c == '|';
    if !line.starts_with(bar) {
        return None;
    }
    Some(
        line.trim_matches(bar)
            .split(bar)
            .map(|c| c.trim().to_string())
            .collect(),
    )
}

/// `linfo` output without a device table (e.g. Kathará printed an error instead).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("no device table in linfo output: {text}")]
pub struct LinfoError {
    /// The output, trimmed.
    pub text: String,
}

/// Parses `linfo` output into its rows. `Err` when the text has neither a device table nor the
/// "No Devices Found" panel (e.g. Kathará printed an error instead).
pub fn parse_linfo(text: &str) -> Result<Vec<DeviceStatus>, LinfoError> {
    if text.contains("No Devices Found") {
        return Ok(Vec::new());
    }
    let mut header: Option<(usize, usize, Option<usize>)> = None;
    let mut rows = Vec::new();
    for line in text.lines() {
        let Some(c) = cells(line) else { continue };
        match header {
            None => {
                let pos = |h: &str| c.iter().position(|x| x == h);
                if let (Some(n), Some(s)) = (pos("NAME"), pos("STATUS")) {
                    header = Some((n, s, pos("IMAGE")));
                }
            }
            Some((n, s, i)) => {
                if c.len() <= n.max(s) || c[n].is_empty() {
                    continue;
                }
                rows.push(DeviceStatus {
                    name: c[n].clone(),
                    status: c[s].clone(),
                    image: i.and_then(|i| c.get(i)).cloned(),
                });
            }
        }
    }
    if header.is_none() {
        return Err(LinfoError {
            text: text.trim().to_string(),
        });
    }
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Rendered by Kathará 3.8.3's own `create_lab_table` (fake statistics, `COLUMNS=300`).
    const REAL: &str = include_str!("../../tests/fixtures/linfo_table.txt");

    #[test]
    fn reads_the_table_kathara_renders() {
        let d = parse_linfo(REAL).unwrap();
        assert_eq!(
            d.iter()
                .map(|x| (x.name.as_str(), x.status.as_str()))
                .collect::<Vec<_>>(),
            vec![("r1", "running"), ("pc1", "exited")]
        );
        assert_eq!(d[0].image.as_deref(), Some("kathara/frr"));
        assert!(d[0].is_running() && !d[1].is_running());
    }

    #[test]
    fn an_error_is_not_an_empty_lab() {
        let e = parse_linfo("CRITICAL (DockerDaemonConnectionError) Cannot connect").unwrap_err();
        assert!(e.text.contains("Cannot connect"), "{e}");
    }
}
