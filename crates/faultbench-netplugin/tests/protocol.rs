//! The plugin binary driven over its unix socket, call by call as Docker makes them, against the
//! real kernel in a scratch network namespace (root needed; see tests/support).

mod support;

use serde_json::json;
use support::{EP1, EP2, NET, Scratch};

fn bridge() -> String {
    format!("kt-{}", &NET[..12])
}

fn host_end(ep: &str) -> String {
    format!("kv-{}", &ep[..12])
}

fn peer_end(ep: &str) -> String {
    format!("ki-{}", &ep[..12])
}

#[test]
fn a_collision_domain_lives_through_create_join_leave_and_delete() {
    let p = Scratch::new();
    let (s, a) = p.call("Plugin.Activate", &json!(null));
    assert_eq!(
        (s, a["Implements"][0].as_str()),
        (200, Some("NetworkDriver"))
    );

    // CreateNetwork: a bridge set up as Kathará's switch, and its FORWARD accept.
    let (s, _) = p.call(
        "NetworkDriver.CreateNetwork",
        &json!({"NetworkID": NET, "Options": {}, "IPv4Data": [], "IPv6Data": []}),
    );
    assert_eq!(s, 200);
    let br = p.link(&bridge()).expect("the bridge exists");
    let data = &br["linkinfo"]["info_data"];
    assert_eq!(br["linkinfo"]["info_kind"], "bridge");
    assert_eq!(data["stp_state"], 0, "{data}");
    assert_eq!(data["forward_delay"], 0, "{data}");
    assert_eq!(data["ageing_time"], 0, "{data}");
    assert_eq!(data["group_fwd_mask"], "0xfff8", "{data}");
    assert!(br["flags"].as_array().unwrap().iter().any(|f| f == "UP"));
    let rule = format!("-A FORWARD -i {b} -o {b} -j ACCEPT", b = bridge());
    assert!(p.forward_rules().contains(&rule), "{}", p.forward_rules());

    // CreateEndpoint with the lab's MAC: answered back so Docker puts it on the interface.
    let (s, a) = p.call(
        "NetworkDriver.CreateEndpoint",
        &json!({"NetworkID": NET, "EndpointID": EP1, "Interface": {},
                "Options": {"kathara.iface": "0", "kathara.link": "A", "kathara.mac_addr": "02:AA:BB:00:00:01"}}),
    );
    assert_eq!(s, 200, "{a}");
    assert_eq!(a["Interface"]["MacAddress"], "02:aa:bb:00:00:01");
    assert!(p.link(&host_end(EP1)).is_none(), "no veth before Join");

    // Join: a veth pair, the host end a bridge port and up, the other end carrying the MAC.
    let (s, a) = p.call(
        "NetworkDriver.Join",
        &json!({"NetworkID": NET, "EndpointID": EP1, "SandboxKey": "/var/run/docker/netns/x", "Options": {}}),
    );
    assert_eq!(s, 200, "{a}");
    assert_eq!(a["InterfaceName"]["SrcName"], peer_end(EP1));
    assert_eq!(a["InterfaceName"]["DstPrefix"], "eth");
    let peer = p.link(&peer_end(EP1)).expect("the container end exists");
    assert_eq!(peer["address"], "02:aa:bb:00:00:01");
    let host = p.link(&host_end(EP1)).expect("the host end exists");
    assert_eq!(host["master"], bridge());
    assert!(host["flags"].as_array().unwrap().iter().any(|f| f == "UP"));
    let (s, a) = p.call(
        "NetworkDriver.EndpointOperInfo",
        &json!({"NetworkID": NET, "EndpointID": EP1}),
    );
    assert_eq!(s, 200);
    assert_eq!(a["Value"]["mac_address"], "02:aa:bb:00:00:01");
    assert_eq!(a["Value"]["veth_outside"], host_end(EP1));

    // Leave: the pair is gone.
    let (s, _) = p.call(
        "NetworkDriver.Leave",
        &json!({"NetworkID": NET, "EndpointID": EP1}),
    );
    assert_eq!(s, 200);
    assert!(p.link(&host_end(EP1)).is_none());
    assert!(p.link(&peer_end(EP1)).is_none());

    // DeleteEndpoint: forgotten.
    let (s, _) = p.call(
        "NetworkDriver.DeleteEndpoint",
        &json!({"NetworkID": NET, "EndpointID": EP1}),
    );
    assert_eq!(s, 200);
    let (s, a) = p.call(
        "NetworkDriver.EndpointOperInfo",
        &json!({"NetworkID": NET, "EndpointID": EP1}),
    );
    assert_eq!(s, 500);
    assert!(a["Err"].as_str().unwrap().contains("not known"), "{a}");

    // DeleteNetwork: bridge and rule gone.
    let (s, _) = p.call("NetworkDriver.DeleteNetwork", &json!({"NetworkID": NET}));
    assert_eq!(s, 200);
    assert!(p.link(&bridge()).is_none());
    assert!(!p.forward_rules().contains(&rule), "{}", p.forward_rules());
}

#[test]
fn endpoints_without_a_lab_mac_get_stable_derived_ones() {
    let p = Scratch::new();
    assert_eq!(
        p.call("NetworkDriver.CreateNetwork", &json!({"NetworkID": NET}))
            .0,
        200
    );
    let create = |ep: &str, opts: serde_json::Value| {
        p.call(
            "NetworkDriver.CreateEndpoint",
            &json!({"NetworkID": NET, "EndpointID": ep, "Options": opts}),
        )
    };
    // From machine and interface: the same pair gives the same MAC, whatever the endpoint.
    let (_, a1) = create(EP1, json!({"kathara.machine": "r1", "kathara.iface": "0"}));
    let (_, a2) = create(EP2, json!({"kathara.machine": "r1", "kathara.iface": "0"}));
    let m1 = a1["Interface"]["MacAddress"].as_str().unwrap().to_owned();
    assert_eq!(a2["Interface"]["MacAddress"], m1.as_str());
    let first = u8::from_str_radix(&m1[..2], 16).unwrap();
    assert_eq!(first & 0x03, 0x02, "locally administered unicast: {m1}");
    // Without either (Kathará 3.8.3 passes no machine): from network and endpoint ids.
    let (_, b1) = create(EP1, json!({"kathara.iface": "0"}));
    let (_, b2) = create(EP2, json!({"kathara.iface": "0"}));
    assert_ne!(b1["Interface"]["MacAddress"], b2["Interface"]["MacAddress"]);
    // The derived MAC is the one the container end gets.
    assert_eq!(
        p.call(
            "NetworkDriver.Join",
            &json!({"NetworkID": NET, "EndpointID": EP2})
        )
        .0,
        200
    );
    assert_eq!(
        p.link(&peer_end(EP2)).unwrap()["address"],
        b2["Interface"]["MacAddress"]
    );
    // A MAC Docker itself assigns wins and is not answered back.
    let (s, a) = p.call(
        "NetworkDriver.CreateEndpoint",
        &json!({"NetworkID": NET, "EndpointID": EP1, "Interface": {"MacAddress": "02:00:00:00:00:09"}}),
    );
    assert_eq!((s, &a["Interface"]), (200, &serde_json::Value::Null));
}

#[test]
fn bad_requests_are_refused_with_a_reason_and_change_nothing() {
    let p = Scratch::new();
    let (s, a) = p.call(
        "NetworkDriver.CreateNetwork",
        &json!({"NetworkID": "../../sys/x"}),
    );
    assert_eq!(s, 500);
    assert!(
        a["Err"].as_str().unwrap().contains("not a Docker id"),
        "{a}"
    );
    assert!(p.link("kt-.._.._sys_").is_none());
    assert_eq!(
        p.call("NetworkDriver.CreateNetwork", &json!({"NetworkID": NET}))
            .0,
        200
    );
    for mac in ["01:00:5e:00:00:01", "02:00:00:00:01", "zz:00:00:00:00:01"] {
        let (s, a) = p.call(
            "NetworkDriver.CreateEndpoint",
            &json!({"NetworkID": NET, "EndpointID": EP1, "Options": {"kathara.mac_addr": mac}}),
        );
        assert_eq!(s, 500, "{mac}");
        assert!(
            a["Err"].as_str().unwrap().contains("kathara.mac_addr"),
            "{a}"
        );
    }
    let (s, a) = p.call("NetworkDriver.Frobnicate", &json!({}));
    assert_eq!(s, 500);
    assert!(a["Err"].as_str().unwrap().contains("unknown call"));
}

#[test]
fn a_restarted_plugin_keeps_its_networks_endpoints_and_macs() {
    let mut p = Scratch::new();
    assert_eq!(
        p.call("NetworkDriver.CreateNetwork", &json!({"NetworkID": NET}))
            .0,
        200
    );
    let (s, _) = p.call(
        "NetworkDriver.CreateEndpoint",
        &json!({"NetworkID": NET, "EndpointID": EP1, "Options": {"kathara.mac_addr": "02:00:00:00:00:11"}}),
    );
    assert_eq!(s, 200);
    assert_eq!(
        p.call(
            "NetworkDriver.Join",
            &json!({"NetworkID": NET, "EndpointID": EP1})
        )
        .0,
        200
    );
    let (s, _) = p.call(
        "NetworkDriver.CreateEndpoint",
        &json!({"NetworkID": NET, "EndpointID": EP2, "Options": {"kathara.mac_addr": "02:00:00:00:00:22"}}),
    );
    assert_eq!(s, 200);

    p.kill();
    p.start();

    // What was known before is known after: the joined endpoint's info, the created one's MAC.
    let (s, a) = p.call(
        "NetworkDriver.EndpointOperInfo",
        &json!({"NetworkID": NET, "EndpointID": EP1}),
    );
    assert_eq!(s, 200, "{a}");
    assert_eq!(a["Value"]["mac_address"], "02:00:00:00:00:11");
    assert_eq!(a["Value"]["veth_outside"], host_end(EP1));
    assert_eq!(
        p.call(
            "NetworkDriver.Join",
            &json!({"NetworkID": NET, "EndpointID": EP2})
        )
        .0,
        200
    );
    assert_eq!(
        p.link(&peer_end(EP2)).unwrap()["address"],
        "02:00:00:00:00:22"
    );
    assert_eq!(p.link(&host_end(EP2)).unwrap()["master"], bridge());

    // A bridge lost behind the plugin's back (a reboot) is made again when Docker uses it.
    for ep in [EP1, EP2] {
        assert_eq!(
            p.call(
                "NetworkDriver.Leave",
                &json!({"NetworkID": NET, "EndpointID": ep})
            )
            .0,
            200
        );
    }
    p.delete_link(&bridge());
    p.kill();
    p.start();
    assert_eq!(
        p.call(
            "NetworkDriver.Join",
            &json!({"NetworkID": NET, "EndpointID": EP1})
        )
        .0,
        200
    );
    assert_eq!(p.link(&host_end(EP1)).unwrap()["master"], bridge());
    assert_eq!(
        p.link(&peer_end(EP1)).unwrap()["address"],
        "02:00:00:00:00:11"
    );
    let state = std::fs::read_to_string(p.state_file()).unwrap();
    assert!(state.contains(NET) && state.contains(EP2), "{state}");
}

#[test]
fn a_network_whose_forward_rule_fails_leaves_no_bridge_behind() {
    // `false` stands for an iptables that cannot add the rule.
    let p = Scratch::with_args(&["--iptables", "/bin/false", "--ip6tables", ""]);
    let (s, a) = p.call("NetworkDriver.CreateNetwork", &json!({"NetworkID": NET}));
    assert_eq!(s, 500);
    let err = a["Err"].as_str().unwrap();
    assert!(err.contains("iptables") && err.contains(&bridge()), "{err}");
    assert!(p.link(&bridge()).is_none(), "the bridge was rolled back");
}
