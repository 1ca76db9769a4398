//! Held-out splits: `dev` and `test` draw from disjoint seed ranges, and a test run commits to
//! what it generated without publishing it.
//!
//! `--seed N` is the N-th seed of its split: dev uses `N`, test uses [`TEST_SEED_BASE`]` + N`,
//! so no test variant can come from a dev seed. The commitment is a SHA-256 over the effective
//! seed, the topology, the count and the digest of every family and claim file; publishing the
//! hash before a test set is used, and the hashed lines afterwards, lets anyone check the test
//! set was fixed in advance.

use crate::content::sha256_hex;

/// First seed of the test split.
pub const TEST_SEED_BASE: u64 = 1 << 40;

/// A seed that does not fit its split.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("--seed {0}: must be below {TEST_SEED_BASE} (the test split's seeds start there)")]
pub struct SeedOutOfRange(pub u64);

/// The effective seed of `seed` in `split` (`None` and `dev` are the same range).
pub fn seed_in(split: Option<&str>, seed: u64) -> Result<u64, SeedOutOfRange> {
    if seed >= TEST_SEED_BASE {
        return Err(SeedOutOfRange(seed));
    }
    Ok(match split {
        Some("test") => TEST_SEED_BASE + seed,
        _ => seed,
    })
}

/// The commitment of a test run: the hash and the lines it hashes. `files` are `(name,
/// text)` of every family file used; the built-in claim file is always included.
pub fn commitment(
    seed: u64,
    topology: &str,
    count: Option<usize>,
    files: &[(String, String)],
) -> (String, String) {
    let mut lines = vec![
        "faultbench generate --split test".to_string(),
        format!("seed {seed}"),
        format!("topology {topology}"),
        format!("count {}", count.map_or("all".into(), |c| c.to_string())),
        format!("claims {}", sha256_hex(crate::claims::BUILTIN.as_bytes())),
    ];
    let mut sorted = files.to_vec();
    sorted.sort();
    for (name, text) in sorted {
        lines.push(format!("family {name} {}", sha256_hex(text.as_bytes())));
    }
    let body = lines.join("\n") + "\n";
    (sha256_hex(body.as_bytes()), body)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dev_and_test_seeds_never_meet() {
        for n in [0, 1, 7, TEST_SEED_BASE - 1] {
            let dev = seed_in(Some("dev"), n).unwrap();
            let test = seed_in(Some("test"), n).unwrap();
            assert!(dev < TEST_SEED_BASE && test >= TEST_SEED_BASE);
            assert_eq!(seed_in(None, n).unwrap(), dev);
        }
        assert_eq!(
            seed_in(Some("test"), TEST_SEED_BASE),
            Err(SeedOutOfRange(TEST_SEED_BASE))
        );
    }

    #[test]
    fn the_commitment_changes_with_any_input_and_not_with_file_order() {
        let f = |t: &str| {
            vec![
                ("a.toml".to_string(), t.to_string()),
                ("b.toml".into(), "x".into()),
            ]
        };
        let (h, body) = commitment(5, "Kath2", Some(10), &f("one"));
        assert!(body.contains("seed 5") && body.contains("family a.toml "));
        let mut rev = f("one");
        rev.reverse();
        assert_eq!(commitment(5, "Kath2", Some(10), &rev).0, h);
        assert_ne!(commitment(5, "Kath2", Some(10), &f("two")).0, h);
        assert_ne!(commitment(6, "Kath2", Some(10), &f("one")).0, h);
        assert_ne!(commitment(5, "Kath3", Some(10), &f("one")).0, h);
        assert_ne!(commitment(5, "Kath2", None, &f("one")).0, h);
    }
}
