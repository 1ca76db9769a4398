//! Telemetry: what happened before the ticket, the release's answers when off, the store's limits.

use super::*;

#[tokio::test]
async fn telemetry_shows_what_happened_before_the_ticket() {
    let lab = triangle();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("telemetry.jsonl");
    let store = Arc::new(TelemetryStore::new().write_jsonl(&file).unwrap());
    let collector = Collector::start(lab.clone(), store.clone(), Duration::from_millis(50));
    // Wait (bounded) for a few samples of the healthy network, inject, then wait for a few
    // samples of the broken one.
    let samples = |s: &TelemetryStore| s.count(s.default_bucket(), "device").unwrap_or(0) / 6;
    let wait_for = |n: usize| {
        let store = store.clone();
        async move {
            let deadline = std::time::Instant::now() + Duration::from_secs(10);
            while samples(&store) < n && std::time::Instant::now() < deadline {
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
            samples(&store)
        }
    };
    let before = wait_for(2).await;
    lab.exec(
        "r1",
        &Command::shell("pkill -9 ospfd"),
        Duration::from_secs(1),
    )
    .await
    .unwrap();
    assert!(wait_for(before + 2).await >= before + 2);
    collector.stop();

    // The run's own store, and a second process's view of the same file, agree.
    let follower = Arc::new(TelemetryStore::follow_jsonl(&file));
    for s in [store, follower] {
        let t = tools(&lab).with_telemetry(s);
        let m = parse(&call(&t, "influx_get_measurements", json!({})).await.text);
        assert_eq!(m, json!(["device", "interface", "processes", "routes"]));
        let b = parse(&call(&t, "influx_list_buckets", json!({})).await.text);
        assert_eq!(b[0]["name"], "lab_telemetry");
        assert!(b[0]["points"].as_u64().unwrap() > 20);
        let n = parse(
            &call(
                &t,
                "influx_count_measurements",
                json!({"measurement": "processes"}),
            )
            .await
            .text,
        );
        let total = n[0]["count"].as_u64().unwrap();
        let rows = all_rows(&t, "processes").await;
        assert_eq!(rows.len() as u64, total);
        let ospfd_r1: Vec<bool> = rows
            .iter()
            .filter(|r| r["device"] == "r1" && r["process"] == "ospfd")
            .map(|r| r["running"].as_bool().unwrap())
            .collect();
        assert_eq!(ospfd_r1.first(), Some(&true), "ran at first");
        assert_eq!(ospfd_r1.last(), Some(&false), "then died: {ospfd_r1:?}");
        let routes = all_rows(&t, "routes").await;
        let r1_last = routes.iter().rev().find(|r| r["device"] == "r1").unwrap();
        assert_eq!(r1_last["total"], 1);
        assert!(r1_last["time"].as_str().unwrap().ends_with('Z'));
        // Paging.
        let page = parse(
            &call(
                &t,
                "influx_query_measurement",
                json!({"measurement": "device", "limit": 2, "offset": 1}),
            )
            .await
            .text,
        );
        assert_eq!(page["rows"].as_array().unwrap().len(), 2);
        assert_eq!(page["offset"], 1);
        let missing = call(
            &t,
            "influx_count_measurements",
            json!({"measurement": "cpu"}),
        )
        .await;
        assert!(missing.is_error && missing.text.contains("No measurement `cpu`"));
    }

    // Without a store the tools still exist and say so.
    let none = call(&tools(&lab), "influx_list_buckets", json!({})).await;
    assert!(none.is_error && none.text.contains("No telemetry"));
}

/// `--telemetry off`: the factory starts no collector, and the four tools answer as the
/// release's labs without a collector machine did (plain text), still checking arguments.
#[tokio::test]
async fn telemetry_off_answers_as_the_release_did() {
    use faultbench_core::pipeline::{ToolboxFactory, ToolboxOptions};
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/mock/triangle.toml");
    let lab = Arc::new(MockLab::new(
        "triangle-1a2b",
        Arc::new(MockNetwork::load(path).unwrap()),
    ));
    let off = faultbench_emu::tools::NikaToolsFactory::new()
        .toolbox_with(lab.clone(), &ToolboxOptions { telemetry: false });
    for (tool, args) in [
        ("influx_list_buckets", json!({})),
        ("influx_get_measurements", json!({})),
        (
            "influx_count_measurements",
            json!({"measurement": "processes"}),
        ),
        (
            "influx_query_measurement",
            json!({"measurement": "processes"}),
        ),
    ] {
        let out = call(&off, tool, args).await;
        assert_eq!(
            out.text,
            "Machine collector not found in lab triangle-1a2b."
        );
        assert!(
            !out.is_error,
            "the release returned it as the tool's output"
        );
    }
    assert!(
        off.call("influx_query_measurement", json!({"measurement": "a;b"}))
            .await
            .is_err()
    );
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(
        !lab.history()
            .iter()
            .any(|r| r.command.contains("ip -j -s link")),
        "no collector sampled the lab"
    );
    // On (the default), a collector samples the lab from the start.
    let on = faultbench_emu::tools::NikaToolsFactory::new()
        .with_telemetry_interval(Some(Duration::from_millis(100)))
        .toolbox_with(lab.clone(), &ToolboxOptions { telemetry: true });
    tokio::time::sleep(Duration::from_millis(300)).await;
    let m = call(&on, "influx_get_measurements", json!({})).await;
    assert!(m.text.contains("device"), "{}", m.text);
    assert!(
        lab.history()
            .iter()
            .any(|r| r.command.contains("ip -j -s link")),
        "the collector sampled the lab"
    );
}

/// Pages through a measurement with `next_offset`, as an agent would.
async fn all_rows(t: &NikaTools, m: &str) -> Vec<Value> {
    let mut rows = Vec::new();
    let mut offset = 0;
    loop {
        let out = call(
            t,
            "influx_query_measurement",
            json!({"measurement": m, "limit": 1000, "offset": offset}),
        )
        .await;
        assert!(out.text.chars().count() <= 4000);
        let v = parse(&out.text);
        rows.extend(v["rows"].as_array().unwrap().iter().cloned());
        match v.get("next_offset") {
            Some(n) => {
                assert!(
                    out.truncated
                        && v["truncated"]
                            .as_str()
                            .unwrap()
                            .contains("requested rows not shown")
                );
                offset = n.as_u64().unwrap();
            }
            None => return rows,
        }
    }
}

#[tokio::test]
async fn store_limits_and_manual_points() {
    let s = TelemetryStore::new().with_max_points(3);
    for i in 0..5 {
        s.insert(Point::new("m", i * 1000).field("v", i as i64));
    }
    let (total, rows) = s.query(s.default_bucket(), "m", 10, 0).unwrap();
    assert_eq!(total, 3);
    assert_eq!(rows[0].time_ms, 2000, "oldest dropped first");
    assert_eq!(s.buckets()[0].dropped, 2);
    assert_eq!(
        s.buckets()[0].first.as_deref(),
        Some("1970-01-01T00:00:02.000Z")
    );
    assert!(s.query("nope", "m", 1, 0).is_none());
}
