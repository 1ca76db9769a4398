//! Run identities (`identity.json` from another person's runs root): reading never panics,
//! an identity that reads renders its report rows and Markdown, compares equal to itself, and
//! survives a write → read round trip.
#![no_main]

use faultbench_core::identity::RunIdentity;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(id) = serde_json::from_slice::<RunIdentity>(data) else {
        return;
    };
    assert!(id.differences(&id).is_empty(), "an identity differs from itself");
    let _ = (id.rows(), id.markdown());
    let text = serde_json::to_string(&id).expect("a read identity serialises");
    let back: RunIdentity = serde_json::from_str(&text).expect("our own identity reads back");
    assert!(id.differences(&back).is_empty(), "round trip changed the identity");
});
