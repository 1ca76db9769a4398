//! Scenario files: any bytes either parse or give an error with a line; a parsed scenario
//! writes back to text that parses to the same scenario, and its ids are path-safe.
#![no_main]

use faultbench_core::Scenario;
use faultbench_core::scenario::ScenarioSpec;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let spec = match ScenarioSpec::parse_bytes(data) {
        Ok(s) => s,
        Err(e) => {
            assert!(e.line >= 1, "an error names a line: {e}");
            return;
        }
    };
    let again = ScenarioSpec::parse(&spec.to_text()).expect("written text parses");
    assert_eq!(again, spec, "write then read gives the same scenario");
    for id in [spec.id(), spec.topology()] {
        assert!(!id.contains('/') && id != ".." && id != ".", "{id}");
    }
    let _ = (spec.category(), spec.layer(), spec.fix(), spec.post_inject_checks());
    for c in spec.post_inject_checks() {
        let _ = c.expectation();
    }
});
