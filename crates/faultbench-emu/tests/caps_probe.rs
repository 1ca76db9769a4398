//! The capability probe: the trial in a scratch namespace agrees with the kernel's own build
//! configuration, and the answer is cached and serializable.

use faultbench_emu::hostcaps::{Feature, HostCaps, KernelConfig, ProbeSource};

#[test]
fn trial_agrees_with_the_kernel_config() {
    let caps = HostCaps::probe();
    assert_eq!(caps.source, ProbeSource::Trial, "{:?}", caps.notes);
    let release = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap();
    assert_eq!(caps.kernel_release, release.trim());
    let config = KernelConfig::load(release.trim()).expect("kernel config readable here");
    for f in Feature::ALL {
        assert_eq!(
            caps.has(f),
            config.enabled(f.kconfig()),
            "{f}: trial says {}, {} says otherwise",
            caps.has(f),
            f.kconfig()
        );
    }
    // Every feature the emulations are built from is present where the tests run.
    assert!(caps.can_emulate_links() && caps.can_emulate_loss());
}

#[test]
fn probe_is_cached_and_round_trips() {
    let a = HostCaps::probe();
    let b = HostCaps::probe();
    assert_eq!(a, b);
    let json = serde_json::to_string(&a).unwrap();
    assert!(json.contains("\"vlan_8021q\""));
    assert_eq!(serde_json::from_str::<HostCaps>(&json).unwrap(), a);
    // A fresh probe gives the same answer.
    assert_eq!(HostCaps::probe_uncached().features, a.features);
}
