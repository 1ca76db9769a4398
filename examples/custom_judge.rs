//! Bring your own judge: implement `Judge` (or hand a closure to `judge_fn`); score one answer.
//! `cargo run --example custom_judge [SCENARIO_FILE]` (default: a Wrong-Device scenario of this
//! repository's dataset, whose ticket blames the healthy switch3 for router1's dead RIP daemon).

use faultbench::core::judge::{AxisVerdict, Judge, JudgeError, JudgeInput, OutcomeRule, Scores};
use faultbench::core::scenario::{Assertion, AxisKind, ScenarioFile};
use faultbench::core::{Diagnosis, judge_fn};
use faultbench::judge::RubricJudge;
use std::sync::Arc;

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
        let right = d.is_anomaly == Some(s.category().has_fault());
        let why = format!("is_anomaly {:?}", d.is_anomaly);
        scores.push_axis(AxisVerdict::graded(
            "verdict",
            AxisKind::Must,
            f64::from(u8::from(right)),
            why,
        ));
        for axis in s.scoring_axes() {
            let pass = match axis.assertion() {
                Some(Assertion::Identifies(dev)) => blamed(&dev),
                Some(Assertion::NotIdentifies(dev)) => !blamed(&dev),
                _ => continue,
            };
            scores.push_axis(AxisVerdict::new(axis, pass, "exact device name"));
        }
        // The outcome from the pass counts: every required axis, or nothing.
        scores.finish(OutcomeRule::Strict);
        Ok(scores)
    }
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let root = env!("CARGO_MANIFEST_DIR");
    let default = format!("{root}/dataset/kath2_Q/cex/kath2-router1-ripd-killed-misdirected.txt");
    let scenario = ScenarioFile::load(std::env::args().nth(1).unwrap_or(default))?;
    let answer = Diagnosis::parse(
        "=== DIAGNOSIS ===\nis_anomaly: true\nfaulty_devices: router1\ndiagnosis_text:\n\
        switch3 is healthy: pc0 and laptop0 reach their gateway through it. The RIP daemon \
        (ripd) on router1 is not running, so router1 lost every RIP route. Fix: start ripd on \
        router1 and enter its router rip configuration again.\n=== END ===",
    )?;
    // A judge from a closure: passes when the explanation is long enough to be an explanation.
    let wordy = judge_fn("wordy", |input| async move {
        let mut s = Scores::new("wordy");
        let long = f64::from(u8::from(input.diagnosis.text.split(' ').count() >= 20));
        s.push_axis(AxisVerdict::graded("20 words", AxisKind::Bonus, long, ""));
        s.finish(OutcomeRule::Release);
        Ok(s)
    });
    // Judges are values: `Arc<dyn Judge>`, `Box<dyn Judge>`, `Arc<Box<…>>` all judge.
    let boxed: Box<dyn Judge> = Box::new(wordy);
    let judges: [Arc<dyn Judge>; 3] = [
        Arc::new(VerdictAndDevices),
        Arc::new(boxed),
        Arc::new(RubricJudge::new()),
    ];
    let input = JudgeInput::new(&scenario, &answer);
    for judge in &judges {
        let s = judge.judge(&input).await?;
        let required = format!("{}/{} required", s.must_passed, s.must_total);
        println!("{:<20} outcome {:.3} ({required})", s.judge, s.outcome);
    }
    Ok(())
}
