//! Bring your own judge: implement `Judge`, score a diagnosis with it and with the rubric.
//!
//! `cargo run --example custom_judge [SCENARIO_FILE]` (default: a Wrong-Device scenario of the
//! public release, whose ticket blames router1 for router0's dead RIP daemon).

use faultbench::core::Diagnosis;
use faultbench::core::judge::{AxisVerdict, Judge, JudgeError, JudgeInput, Scores};
use faultbench::core::scenario::{Assertion, ScenarioFile};
use faultbench::judge::RubricJudge;

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
            kind: "must".into(),
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
        scores.finish(); // the release's formula: 0.7 × required + 0.3 × bonus
        Ok(scores)
    }
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let path = std::env::args().nth(1).unwrap_or_else(|| {
        "/work/shared/upstream-sample/kath2_Q/cex/kath2-router0-ripd-down-misdirected.txt".into()
    });
    let scenario = ScenarioFile::load(&path)?;
    let answer = Diagnosis::parse(
        "=== DIAGNOSIS ===\nis_anomaly: true\nfaulty_devices: router0\n\
        diagnosis_text:\nrouter1 is healthy: its uplinks are up and it is not the cause. The RIP \
        daemon on router0 is dead, so router1 aged out the IT and CS prefixes.\n=== END ===",
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
