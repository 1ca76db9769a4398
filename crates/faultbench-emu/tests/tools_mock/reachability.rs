//! `get_reachability`: complete, deterministic, explicit about timeouts, errors and what the cap left out.

use super::*;

#[tokio::test]
async fn reachability_is_complete_deterministic_and_follows_faults() {
    let lab = triangle();
    let t = tools(&lab);
    let a = call(&t, "get_reachability", json!({})).await.text;
    let b = call(&t, "get_reachability", json!(null)).await.text;
    assert_eq!(a, b, "same network, same report");
    let v = parse(&a);
    assert_eq!(v["mode"], "all_pairs");
    assert_eq!(
        v["hosts"],
        json!({"pc1": "10.0.1.2", "pc2": "10.0.2.2", "web1": "10.0.3.2"})
    );
    // The JSON object keeps the natural host order.
    assert!(a.find("\"pc1\"").unwrap() < a.find("\"web1\"").unwrap());
    let rows = v["results"].as_array().unwrap();
    let pairs: Vec<(String, String)> = rows
        .iter()
        .map(|r| {
            (
                r["src"].as_str().unwrap().into(),
                r["dst"].as_str().unwrap().into(),
            )
        })
        .collect();
    let want: Vec<(String, String)> = [
        ("pc1", "pc2"),
        ("pc1", "web1"),
        ("pc2", "pc1"),
        ("pc2", "web1"),
        ("web1", "pc1"),
        ("web1", "pc2"),
    ]
    .iter()
    .map(|(s, d)| (s.to_string(), d.to_string()))
    .collect();
    assert_eq!(pairs, want);
    assert_eq!(rows[0]["status"], "ok");
    assert_eq!(rows[0]["tx"], 2);
    assert_eq!(rows[0]["rtt_avg_ms"], 0.058);

    lab.exec("r1", &Command::shell("pkill ospfd"), Duration::from_secs(1))
        .await
        .unwrap();
    let v = parse(&call(&t, "get_reachability", json!({})).await.text);
    assert_eq!(
        v["summary"],
        json!({"pairs": 6, "ok": 2, "unstable": 0, "down": 4, "timeout": 0, "unknown": 0})
    );
    let down: Vec<&Value> = v["results"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["status"] == "down")
        .collect();
    assert!(down.iter().all(|r| r["src"] == "pc1" || r["dst"] == "pc1"));
    assert_eq!(down[0]["loss_percent"], 100.0);
}

#[tokio::test]
async fn reachability_reports_timeouts_errors_and_unaddressed_hosts_explicitly() {
    let lab = edge_lab();
    let t = tools(&lab);
    let out = call(&t, "get_reachability", json!({})).await;
    assert!(out.timed_out, "a timed-out ping sets the flag");
    let v = parse(&out.text);
    assert_eq!(v["hosts_without_address"], json!(["client9"]));
    let row = |s: &str, d: &str| {
        v["results"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["src"] == s && r["dst"] == d)
            .cloned()
            .unwrap()
    };
    let to = row("pc1", "pc2");
    assert_eq!(to["status"], "timeout");
    assert!(
        to.get("tx").is_none() && to.get("loss_percent").is_none(),
        "no nulls: {to}"
    );
    let unk = row("pc1", "pc3");
    assert_eq!(unk["status"], "unknown");
    assert_eq!(unk["error"], "ping: sendmsg: Operation not permitted");
    assert_eq!(row("pc2", "pc1")["status"], "unstable");
    assert_eq!(v["summary"]["pairs"], 6);

    // A seeded sample: the same seed gives the same pairs.
    let cfg = |seed| ToolOptions {
        reachability: Reachability::Sample {
            destinations: 1,
            seed,
        },
        ..ToolOptions::fast()
    };
    let s1 = call(
        &tools(&lab).with_config(cfg(7)),
        "get_reachability",
        json!({}),
    )
    .await
    .text;
    let s2 = call(
        &tools(&lab).with_config(cfg(7)),
        "get_reachability",
        json!({}),
    )
    .await
    .text;
    assert_eq!(s1, s2);
    let v = parse(&s1);
    assert_eq!(v["mode"], "sample");
    assert_eq!(v["seed"], 7);
    let dsts: std::collections::BTreeSet<&str> = v["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["dst"].as_str().unwrap())
        .collect();
    assert_eq!(dsts.len(), 1);
    assert_eq!(v["summary"]["pairs"], 2);

    // A configured host list replaces the naming rule.
    let only = ToolOptions {
        hosts: Some(vec!["pc2".into(), "pc1".into()]),
        ..ToolOptions::fast()
    };
    let v = parse(
        &call(
            &tools(&lab).with_config(only),
            "get_reachability",
            json!({}),
        )
        .await
        .text,
    );
    assert_eq!(v["hosts"], json!({"pc1": "10.0.0.1", "pc2": "10.0.0.2"}));
}

#[tokio::test]
async fn reachability_fits_the_cap_and_says_what_it_left_out() {
    // 12 hosts → 132 pairs, far over a 2000-char cap.
    let mut text = String::new();
    for i in 1..=12 {
        text.push_str(&format!(
            "[[device]]\nname = \"pc{i}\"\ninterface = [{{ name = \"eth0\", addr = \"10.0.0.{i}/24\" }}]\n"
        ));
    }
    text.push_str(
        "[[rule]]\ndevice = \"*\"\ncommand = '^ping.*'\nmatch = \"regex\"\nstdout = \"2 packets transmitted, 2 received, 0% packet loss, time 1ms\"\n\
         [[rule]]\ndevice = \"pc3\"\ncommand = '^ping.*'\nmatch = \"regex\"\nexit_code = 1\nstdout = \"2 packets transmitted, 0 received, 100% packet loss, time 1ms\"\n",
    );
    let lab = Arc::new(MockLab::new(
        "big",
        Arc::new(MockNetwork::parse(&text).unwrap()),
    ));
    let cfg = ToolOptions {
        reachability_cap: 2000,
        ..ToolOptions::fast()
    };
    let out = call(&tools(&lab).with_config(cfg), "get_reachability", json!({})).await;
    assert!(out.truncated);
    assert!(out.text.chars().count() <= 2000, "{}", out.text.len());
    let v = parse(&out.text);
    assert_eq!(v["summary"]["pairs"], 132);
    assert_eq!(v["summary"]["down"], 11);
    // Only the problem rows are listed, and the marker says how many ok rows were left out.
    assert!(
        v["results"]
            .as_array()
            .unwrap()
            .iter()
            .all(|r| r["status"] == "down")
    );
    assert_eq!(
        v["truncated"],
        "121 ok rows of 132 not listed (see summary)"
    );
}

#[tokio::test]
async fn reachability_uses_one_batched_command_per_source_when_the_device_runs_it() {
    let net = MockNetwork::parse(
        r#"
        [[device]]
        name = "pc1"
        interface = [{ name = "eth0", addr = "10.0.0.1/24" }]
        [[device]]
        name = "pc2"
        interface = [{ name = "eth0", addr = "10.0.0.2/24" }]
        [[device]]
        name = "web"
        interface = [{ name = "eth0", addr = "10.0.0.3/24" }]
        [[rule]]
        device = "*"
        command = "for ip in "
        match = "prefix"
        stdout = "@@10.0.0.3\n2 packets transmitted, 0 received, 100% packet loss, time 1001ms\n@@10.0.0.2\n2 packets transmitted, 2 received, 0% packet loss, time 201ms\n@@10.0.0.1\n2 packets transmitted, 1 received, 50% packet loss, time 201ms\n"
        "#,
    )
    .unwrap();
    let lab = Arc::new(MockLab::new("b", Arc::new(net)));
    let v = parse(&call(&tools(&lab), "get_reachability", json!({})).await.text);
    let status = |s: &str, d: &str| {
        v["results"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["src"] == s && r["dst"] == d)
            .map(|r| r["status"].as_str().unwrap().to_string())
            .unwrap()
    };
    assert_eq!(status("pc1", "web"), "down");
    assert_eq!(status("pc1", "pc2"), "ok");
    assert_eq!(status("web", "pc1"), "unstable");
    // Three sources: three batched commands (after the three address lookups), no single pings.
    let h = lab.history();
    assert_eq!(
        h.iter()
            .filter(|r| r.command.starts_with("for ip in "))
            .count(),
        3
    );
    assert!(!h.iter().any(|r| r.command.starts_with("ping ")));
    let pc1 = h
        .iter()
        .find(|r| r.device == "pc1" && r.command.starts_with("for ip in "))
        .unwrap();
    assert!(
        pc1.command.starts_with("for ip in 10.0.0.2 10.0.0.3; do"),
        "{}",
        pc1.command
    );
}
