//! The faults of a scenario, each with its own `[POST-INJECT-CHECK]` lines.
//!
//! A scenario usually holds one fault, and all its checks watch that fault. A multi-fault
//! scenario (written by `faultbench generate --multi-fault N`) holds several, and "the fault is
//! gone" must mean *every* fault is gone: one fixed fault makes its own checks fail while the
//! others still hold. The file stays in the release's format: the checks of each fault follow a
//! comment line
//!
//! ```text
//! # fault 1/2: host-link-down on pc1
//! pc1  ping -c2 -W1 10.0.2.2  => expect loss>0
//! # fault 2/2: service-stopped on srv1
//! pc2  curl -s -m2 http://10.0.3.2/  => expect empty
//! ```
//!
//! which the release's reader skips (`#` lines), so the same file runs there with every check
//! in one list. Without such marks, all checks form one group (a single fault).
//!
//! ```
//! use faultbench_core::scenario::fault_groups;
//! let body = [
//!     "# fault 1/2: a on r1",
//!     "r1  pgrep ospfd  => expect empty",
//!     "# fault 2/2: b on pc1",
//!     "pc1  ping -c1 10.0.0.1  => expect loss>0",
//! ]
//! .join("\n");
//! let groups = fault_groups(&body).unwrap();
//! assert_eq!(groups.len(), 2);
//! assert_eq!(groups[1].label, "b on pc1");
//! assert_eq!(groups[1].checks[0].device, "pc1");
//! // A single-fault body is one group.
//! assert_eq!(fault_groups("r1  pgrep ospfd  => expect empty").unwrap().len(), 1);
//! ```

use super::check::{CheckLineError, PostInjectCheck, parse_checks};
use serde::{Deserialize, Serialize};

/// The comment that opens a fault's checks: `# fault K/N: <label>`.
pub const FAULT_MARK: &str = "# fault ";

/// The checks that watch one fault.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FaultGroup {
    /// What the mark says (`host-link-down on pc1`); empty for an unmarked single fault.
    pub label: String,
    /// Its checks, in file order.
    pub checks: Vec<PostInjectCheck>,
}

/// The label of a fault mark line (`# fault 1/2: x` gives `x`), or `None` for any other line.
fn mark_label(line: &str) -> Option<&str> {
    let rest = line.trim().strip_prefix(FAULT_MARK)?;
    let (count, label) = rest.split_once(':')?;
    let (k, n) = count.trim().split_once('/')?;
    (k.trim().parse::<u32>().is_ok() && n.trim().parse::<u32>().is_ok()).then(|| label.trim())
}

/// Splits a `[POST-INJECT-CHECK]` body into its faults' groups (see the module documentation).
/// Checks before the first mark form a group of their own; groups without a check are left
/// out, so an empty body gives no group.
pub fn fault_groups(body: &str) -> Result<Vec<FaultGroup>, CheckLineError> {
    let mut groups: Vec<(String, String)> = vec![(String::new(), String::new())];
    for line in body.lines() {
        if let Some(label) = mark_label(line) {
            groups.push((label.to_string(), String::new()));
        } else if let Some((_, text)) = groups.last_mut() {
            text.push_str(line);
            text.push('\n');
        }
    }
    let mut out = Vec::new();
    for (label, text) in groups {
        let checks = parse_checks(&text)?;
        if !checks.is_empty() {
            out.push(FaultGroup { label, checks });
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn marks_split_the_checks_and_other_comments_do_not() {
        let body = "# a plain comment\n# fault 1/3: one on r1\nr1  true  => expect 0\n\
                    # fault 2/3: two on r2\n# still two\nr2  true  => expect 0\nr2  false  => expect 1\n\
                    # fault 3/3: three\n";
        let g = fault_groups(body).unwrap();
        assert_eq!(g.len(), 2, "the third fault has no check and is left out");
        assert_eq!(g[0].label, "one on r1");
        assert_eq!(g[1].checks.len(), 2);
    }

    #[test]
    fn malformed_marks_are_plain_comments() {
        let body =
            "# fault x/2: nope\nr1  true  => expect 0\n# fault 1-2: no\nr2  true  => expect 0";
        let g = fault_groups(body).unwrap();
        assert_eq!(g.len(), 1);
        assert_eq!(g[0].checks.len(), 2);
    }
}
