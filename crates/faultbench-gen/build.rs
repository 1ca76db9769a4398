//! Embeds `families/*.toml` so the binary carries the built-in fault families.

use std::fmt::Write;

fn main() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("families");
    println!("cargo:rerun-if-changed={}", dir.display());
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .map(|rd| {
            rd.filter_map(Result::ok)
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.ends_with(".toml"))
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    let mut out = String::from("[\n");
    for n in &names {
        println!("cargo:rerun-if-changed={}", dir.join(n).display());
        let _ = writeln!(
            out,
            "    ({n:?}, include_str!({:?})),",
            dir.join(n).display().to_string()
        );
    }
    out.push(']');
    let dest =
        std::path::Path::new(&std::env::var("OUT_DIR").unwrap_or_default()).join("families.rs");
    std::fs::write(dest, out).expect("write families.rs");
}
