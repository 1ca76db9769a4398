//! The read-only policy refuses mutating calls, per call, and says so in the specs.

use super::*;

#[tokio::test]
async fn read_only_policy_refuses_mutations_per_call() {
    let lab = triangle();
    let ro = RecordingToolbox::new(PolicyToolbox::new(tools(&lab), Policy::ReadOnly));
    let refused: Vec<(&str, Value)> = vec![
        (
            "systemctl_ops",
            json!({"host_name": "r1", "service_name": "frr", "operation": "restart"}),
        ),
        (
            "exec_shell",
            json!({"host_name": "r1", "command": "pkill ospfd"}),
        ),
        (
            "exec_shell_dual",
            json!({"host1": "r1", "cmd1": "id", "host2": "r2", "cmd2": "id"}),
        ),
        (
            "frr_exec",
            json!({"router_name": "r1", "command": "configure terminal"}),
        ),
        (
            "iperf_test",
            json!({"client_host_name": "pc1", "server_host_name": "web1"}),
        ),
    ];
    for (name, args) in refused {
        let e = ro.call(name, args).await.unwrap_err();
        assert!(matches!(e, ToolError::Refused { .. }), "{name}: {e}");
        assert!(e.to_string().contains("read-only"), "{e}");
    }
    assert!(lab.history().is_empty(), "refused calls ran nothing");
    assert!(!lab.is_on("r1_ospfd_down"));
    // Observation is allowed, including the read-only forms of mutating tools.
    call(
        &ro,
        "systemctl_ops",
        json!({"host_name": "r1", "service_name": "frr", "operation": "status"}),
    )
    .await;
    call(
        &ro,
        "frr_exec",
        json!({"router_name": "r1", "command": "sh ip route"}),
    )
    .await;
    call(&ro, "get_reachability", json!({})).await;
    let recs = ro.records();
    assert_eq!(recs.len(), 8);
    assert!(recs[..5].iter().all(|r| r.refused && r.error.is_some()));
    assert!(recs[5..].iter().all(|r| !r.refused && r.output_chars > 0));
    let specs = ro.specs();
    assert_eq!(specs.len(), 22);
    let sc = specs.iter().find(|s| s.name == "systemctl_ops").unwrap();
    assert!(sc.description.contains("read-only policy"));

    // The full policy lets the same call through, and it takes effect.
    let full = PolicyToolbox::new(tools(&lab), Policy::Full);
    call(
        &full,
        "exec_shell",
        json!({"host_name": "r1", "command": "pkill ospfd"}),
    )
    .await;
    assert!(lab.is_on("r1_ospfd_down"));
    assert_eq!("read-only".parse::<Policy>().unwrap(), Policy::ReadOnly);
    assert!("sometimes".parse::<Policy>().is_err());
}
