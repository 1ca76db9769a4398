//! The rubric judge against the release judge's recorded verdicts on the 80 release run
//! records (`/work/shared/upstream/runs`): the target is ≥ 90 % agreement on outcome
//! correctness (outcome ≥ 0.7); a judge that always says "correct" reaches about 61 %.

use faultbench_core::Category;
use faultbench_judge::RubricJudge;
use faultbench_judge::agree::Agreement;
use faultbench_judge::rubric::PolicyBook;
use faultbench_judge::saved::load_runs;
use std::path::Path;

#[test]
fn rubric_agrees_with_the_release_llm_judge_on_correctness() {
    let (runs, errors) = load_runs(Path::new("/work/shared/upstream/runs")).unwrap();
    assert!(
        errors.is_empty(),
        "unreadable records: {:?}",
        errors.iter().map(|e| &e.message).collect::<Vec<_>>()
    );
    assert_eq!(runs.len(), 80);
    let mut book = PolicyBook::new();
    for r in &runs {
        book.learn(&r.scenario);
    }
    let rubric = RubricJudge::new().with_policies(book);
    let mut ag = Agreement::new("rubric", "release");
    let mut always_correct = 0;
    for r in &runs {
        let recorded = r.recorded.as_ref().expect("release runs carry verdicts");
        let ours = rubric.score(&r.scenario, r.diagnosis.as_ref().unwrap());
        ag.add(&r.label, r.category(), &r.group, &ours, recorded);
        always_correct += recorded.is_correct() as usize;
    }
    println!("{}", ag.render(true));
    assert!(
        ag.outcome_rate() >= 0.90,
        "agreement {:.3}",
        ag.outcome_rate()
    );
    assert!(ag.outcome_rate() > always_correct as f64 / 80.0 + 0.2);
    // False premises are decided by the mechanical asserts alone: no disagreement there.
    assert_eq!(ag.by_category[Category::FalsePremise.label()].rate(), 1.0);
    // Mechanical axes agree exactly with the release's re-derivation.
    for fam in [
        "assert-no-anomaly",
        "assert-no-faulty-devices",
        "assert-identifies",
    ] {
        assert_eq!(ag.by_axis_family[fam].rate(), 1.0, "{fam}");
    }
}
