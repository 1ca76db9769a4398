//! `Snapshot::take` reads devices side by side, never more than `parallelism` at once, and
//! every device ends up in the snapshot whatever order the reads finish in.

use faultbench_core::emulator::{Command, EmuError, ExecOutput, Lab};
use faultbench_core::snapshot::{Snapshot, SnapshotOptions};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

/// Ten devices whose reads count themselves while they run; later devices answer sooner.
#[derive(Debug, Default)]
struct Counted {
    now: AtomicUsize,
    peak: AtomicUsize,
}

#[async_trait::async_trait]
impl Lab for Counted {
    fn name(&self) -> &str {
        "counted-1"
    }
    fn devices(&self) -> Vec<String> {
        (0..10).map(|i| format!("d{i}")).collect()
    }
    async fn exec(&self, d: &str, _c: &Command, _t: Duration) -> Result<ExecOutput, EmuError> {
        let n = self.now.fetch_add(1, Ordering::SeqCst) + 1;
        self.peak.fetch_max(n, Ordering::SeqCst);
        let i: u64 = d[1..].parse().unwrap_or(0);
        tokio::time::sleep(Duration::from_millis(2 * (10 - i))).await;
        self.now.fetch_sub(1, Ordering::SeqCst);
        Ok(ExecOutput::ok(String::new()))
    }
    async fn teardown(&self) -> Result<(), EmuError> {
        Ok(())
    }
}

#[tokio::test]
async fn no_more_than_parallelism_devices_are_read_at_once_and_all_are() {
    for (parallelism, peak) in [(3, 3), (0, 1), (32, 10)] {
        let lab = Counted::default();
        let opts = SnapshotOptions {
            parallelism,
            ..SnapshotOptions::default()
        };
        let snap = Snapshot::take(&lab, &opts).await;
        let mut devices = lab.devices();
        devices.sort();
        assert_eq!(snap.devices.keys().cloned().collect::<Vec<_>>(), devices);
        assert_eq!(
            lab.peak.load(Ordering::SeqCst),
            peak,
            "parallelism {parallelism}"
        );
    }
}
