//! RIP peers a link's two configurations expect but that do not exchange routes, and why
//! (version, network statement, passive interface, authentication).

use super::*;

pub(super) fn rip_links(cx: &Ctx) -> Vec<Finding> {
    let mut out = Vec::new();
    // The version most RIP routers run.
    let versions: Vec<(String, String)> = cx
        .obs
        .routers
        .iter()
        .filter_map(|(r, s)| {
            let c = s.config.as_ref()?;
            let rip = c.rip.as_ref()?;
            Some((
                r.clone(),
                rip.version.clone().unwrap_or_else(|| "default".into()),
            ))
        })
        .collect();
    let majority = {
        let mut counts: BTreeMap<&str, usize> = Default::default();
        for (_, v) in &versions {
            *counts.entry(v.as_str()).or_default() += 1;
        }
        let best = counts.values().copied().max().unwrap_or(0);
        let tops: Vec<&str> = counts
            .iter()
            .filter(|(_, c)| **c == best)
            .map(|(v, _)| *v)
            .collect();
        (tops.len() == 1).then(|| tops[0].to_string())
    };
    for (a, b) in router_links(cx) {
        let (Some(ca), Some(cb)) = (cfg(cx, &a.device), cfg(cx, &b.device)) else {
            continue;
        };
        if ca.rip.is_none() || cb.rip.is_none() {
            continue;
        }
        let heard = |me: &Attachment, other: &Attachment| {
            cx.obs
                .routers
                .get(&me.device)
                .and_then(|s| s.rip.as_ref())
                .map(|st| st.sources.contains(&other.net.addr))
        };
        let (ha, hb) = (heard(a, b), heard(b, a));
        if ha != Some(false) && hb != Some(false) {
            continue;
        }
        let link = format!("{} {} - {} {}", a.device, a.iface, b.device, b.iface);
        let mut found = false;
        for (me, mc) in [(a, ca), (b, cb)] {
            let v = mc
                .rip
                .as_ref()
                .and_then(|r| r.version.clone())
                .unwrap_or_else(|| "default".into());
            if let Some(m) = &majority
                && !versions_interoperate(&v, m)
            {
                found = true;
                out.push(Finding::on(
                    &me.device,
                    3,
                    format!(
                        "RIP version mismatch: {} runs RIP version {v} while the other RIP routers use version {m}; updates on {link} are ignored",
                        me.device
                    ),
                    format!("set `version {m}` under router rip on {}", me.device),
                ));
            }
            if mc.rip_passive(&me.iface) {
                found = true;
                out.push(Finding::on(
                    &me.device,
                    3,
                    format!("RIP passive-interface {} on {} stops updates towards its neighbour on {link}", me.iface, me.device),
                    format!("no passive-interface {} under router rip on {}", me.iface, me.device),
                ));
            }
            if !mc.rip_covers(&me.iface, me.net) {
                found = true;
                out.push(Finding::on(
                    &me.device,
                    3,
                    format!(
                        "RIP network statement missing on {}: no `network` covers {} ({}), so it exchanges no routes on {link}",
                        me.device, me.iface, me.net.network()
                    ),
                    format!("add `network {}` under router rip on {}", me.net.network(), me.device),
                ));
            }
        }
        if !found {
            out.push(Finding::general(
                2,
                format!("RIP updates are not exchanged on {link} although both routers configure RIP there"),
                "compare the two routers' RIP settings and filters (UDP 520)",
            ));
        }
    }
    out
}

/// The RIP version a router sends with `version` set to `v` (`default`: FRR sends version 2).
fn sends(v: &str) -> &str {
    if v == "1" { "1" } else { "2" }
}

/// Whether a router accepts updates of version `sent` with `version` set to `v` (`default`:
/// FRR accepts versions 1 and 2).
fn accepts(v: &str, sent: &str) -> bool {
    v == "default" || v == sent
}

/// Two RIP configurations exchange routes when each accepts what the other sends: `version 2`
/// and FRR's default do, `version 1` and either of them do not.
fn versions_interoperate(a: &str, b: &str) -> bool {
    accepts(a, sends(b)) && accepts(b, sends(a))
}

#[cfg(test)]
mod tests {
    use super::versions_interoperate as ok;

    #[test]
    fn default_and_version_2_interoperate_version_1_does_not() {
        assert!(ok("default", "2") && ok("2", "default") && ok("1", "1"));
        assert!(!ok("1", "2") && !ok("2", "1") && !ok("1", "default") && !ok("default", "1"));
    }
}
