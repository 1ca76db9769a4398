//! Bring your own judge: implement `Judge`, score a diagnosis with it and with the rubric.
//!
//! `cargo run --example custom_judge [SCENARIO_FILE]` (default: a Wrong-Device scenario of the
//! repository's dataset, whose ticket blames the healthy switch3 for router1's dead RIP daemon).

use faultbench::core::Diagnosis;
use faultbench::core::judge::{AxisVerdict, Judge, JudgeError, JudgeInput, OutcomeRule, Scores};
use faultbench::core::scenario::{Assertion, AxisKind, ScenarioFile};
use faultbench::judge::RubricJudge;
use std::path::{Path, PathBuf};

/// Checks only the verdict and the blamed devices; ignores the explanation.
struct VerdictAndDevices;

#[async_trait::async_trait]
impl Judge for VerdictAndDevices {
    fn name(&self) -> &str {
        "verdict-and-devices"
    }

    async fn judge(&self, input: &JudgeInput<'_>) -> Result<Scores, JudgeError> {
        let (s, d) = (input.scenario, input.diagnosis);
        let blamed = |dev: &str| d.faulty_devices.iter().any(|f| f.eq_ignore_ascii_case(dev));
        let mut scores = Scores::new(self.name());
        let right_verdict = d.is_anomaly == Some(s.category().has_fault());
        scores.push_axis(AxisVerdict {
            axis: "verdict".into(),
            kind: AxisKind::Must,
            score: right_verdict as u8 as f64,
            rationale: format!("is_anomaly {:?}", d.is_anomaly),
        });
        for axis in s.scoring_axes() {
            let pass = match axis.assertion() {
                Some(Assertion::Identifies(dev)) => blamed(&dev),
                Some(Assertion::NotIdentifies(dev)) => !blamed(&dev),
                _ => continue,
            };
            scores.push_axis(AxisVerdict::new(axis, pass, "exact device name"));
        }
        scores.finish(OutcomeRule::Release); // the release's formula: 0.7 × required + 0.3 × bonus
        Ok(scores)
    }
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let path = std::env::args()
        .nth(1)
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("dataset/kath2_Q/cex/kath2-router1-ripd-killed-misdirected.txt")
        });
    let scenario = ScenarioFile::load(&path)?;
    let answer = Diagnosis::parse(
        "=== DIAGNOSIS ===\nis_anomaly: true\nfaulty_devices: router1\n\
        diagnosis_text:\nswitch3 is healthy: pc0 and laptop0 reach each other and their gateway \
        192.168.4.1 through it, so it is not the cause. The RIP daemon (ripd) on router1 is not \
        running, so router1 lost every RIP route. Fix: start ripd on router1 and enter its \
        router rip configuration again.\n=== END ===",
    )?;
    let input = JudgeInput::new(&scenario, &answer);
    for judge in [&VerdictAndDevices as &dyn Judge, &RubricJudge::new()] {
        let s = judge.judge(&input).await?;
        println!(
            "{:<20} outcome {:.3} ({}/{} required)",
            s.judge, s.outcome, s.must_passed, s.must_total
        );
    }
    Ok(())
}
