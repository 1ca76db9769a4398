//! The agent's `=== DIAGNOSIS ===` answer (garbage model output): parsing never panics, and a
//! parsed diagnosis renders to text that parses again with the same verdict and devices.
#![no_main]

use faultbench_core::Diagnosis;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let lenient = Diagnosis::parse_lenient(&text);
    let _ = lenient.render();
    if let Ok(d) = Diagnosis::parse(&text) {
        let again = Diagnosis::parse(&d.render()).expect("a rendered diagnosis parses");
        assert_eq!(again.is_anomaly, d.is_anomaly);
        assert_eq!(again.faulty_devices, d.faulty_devices);
    }
});
