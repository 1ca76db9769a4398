//! From one poll of every device to one verdict on the lab.

use super::model::{Assessment, ProtocolItem};
use super::net::NetView;
use super::snapshot::Snapshot;
use super::{bgp, eigrp, isis, linkstate, rip};
use std::time::Duration;

/// Extra quiet after EIGRP looks settled (its updates go out at once, reliably).
const EIGRP_QUIET: Duration = Duration::from_millis(500);

/// Judges the lab: every protocol over the devices running it.
pub(super) fn assess(snaps: &[Snapshot], base_quiet: Duration) -> Assessment {
    let mut a = Assessment {
        quiet: base_quiet,
        ..Assessment::default()
    };
    for s in snaps {
        for item in &s.silent {
            a.block(item.clone());
        }
        if let Some(v) = s.vrrp_wait {
            a.need_quiet(v);
            a.state(&ProtocolItem::new(
                &s.net.device,
                "keepalived",
                "VRRP",
                format!("takeover time {} ms", v.as_millis()),
            ));
        }
        if let Some(adj) = &s.isis {
            isis::assess(&s.net.device, adj, &mut a);
        }
    }
    linkstate::assess("ospfd", &pairs(snaps, |s| s.ospf.as_ref()), &mut a);
    linkstate::assess("ospf6d", &pairs(snaps, |s| s.ospf6.as_ref()), &mut a);
    rip::assess("ripd", &pairs(snaps, |s| s.rip.as_ref()), &mut a);
    rip::assess("ripngd", &pairs(snaps, |s| s.ripng.as_ref()), &mut a);
    let eigrp_routers = pairs(snaps, |s| s.eigrp.as_ref());
    if !eigrp_routers.is_empty() {
        a.need_quiet(EIGRP_QUIET);
        eigrp::assess(&eigrp_routers, &mut a);
    }
    let nets: Vec<NetView> = snaps.iter().map(|s| s.net.clone()).collect();
    let speakers: Vec<&str> = snaps
        .iter()
        .filter(|s| s.daemons.contains(&"bgpd"))
        .map(|s| s.net.device.as_str())
        .collect();
    bgp::assess(&pairs(snaps, |s| s.bgp.as_ref()), &nets, &speakers, &mut a);
    a
}

/// The devices running one protocol, with what it reports.
fn pairs<'a, T>(
    snaps: &'a [Snapshot],
    f: impl Fn(&'a Snapshot) -> Option<&'a T>,
) -> Vec<(&'a NetView, &'a T)> {
    snaps
        .iter()
        .filter_map(|s| f(s).map(|x| (&s.net, x)))
        .collect()
}
