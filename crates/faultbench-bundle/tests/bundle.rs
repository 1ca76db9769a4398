//! pack → verify on a synthetic runs root (real scenario files, real rubric judge, real
//! archive code; see `faultbench_bundle::synth`), and each tampering the issue lists caught by
//! the rule meant for it.

use faultbench_bundle::pack::reseal;
use faultbench_bundle::read::Caps;
use faultbench_bundle::synth::{SynthOptions, runs_root};
use faultbench_bundle::{
    BundleVerdict, Member, PackOptions, PublicKey, SecretKey, VerifyOptions, VerifyRule, keygen,
    pack, verify,
};
use faultbench_core::ScenarioFile;
use faultbench_report::stats::Bootstrap;
use std::path::{Path, PathBuf};

fn dataset() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../dataset/nika_bgp_Q")
}

struct Fixture {
    _tmp: tempfile::TempDir,
    dir: PathBuf,
    bundle: PathBuf,
    secret: PathBuf,
    public: PathBuf,
}

/// Five scenarios (two core fault, two false premise, one persona) × two agents: core runs
/// twice, persona once; packed and signed.
fn fixture() -> Fixture {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().to_path_buf();
    let files = [
        "base/simple-bgp-router2-bgpd-killed.txt",
        "base/simple-bgp-pc2-eth0-down.txt",
        "cex/simple-bgp-false-premise-router-id-clash.txt",
        "cex/simple-bgp-router1-stray-snat-misdirected.txt",
        "naive/simple-bgp-false-premise-interas-interface-errors-naive.txt",
    ];
    let scenarios: Vec<ScenarioFile> = files
        .iter()
        .map(|f| ScenarioFile::load(dataset().join(f)).unwrap())
        .collect();
    let refs: Vec<&ScenarioFile> = scenarios.iter().collect();
    let opts = SynthOptions {
        agents: vec!["a".into(), "b".into()],
        core_passes: 2,
        persona_passes: 1,
        tool_calls: 3,
        output_chars: 200,
    };
    let n = runs_root(&dir.join("runs"), &refs, &opts).unwrap();
    assert_eq!(n, 2 * (4 * 2 + 1));
    let (secret, public) = keygen(&dir.join("keys")).unwrap();
    let bundle = dir.join("out/runs.fbundle");
    let s = pack(&dir.join("runs"), &bundle, &options(&secret)).unwrap();
    assert_eq!(s.runs, 18);
    assert!(s.signed_by.is_some());
    Fixture {
        _tmp: tmp,
        dir,
        bundle,
        secret,
        public,
    }
}

fn options(secret: &Path) -> PackOptions {
    PackOptions {
        key: Some(SecretKey::read(secret).unwrap()),
        bootstrap: Bootstrap {
            resamples: 200,
            seed: 7,
        },
    }
}

fn pinned(f: &Fixture) -> VerifyOptions {
    VerifyOptions {
        pubkeys: vec![PublicKey::read(&f.public).unwrap()],
        allow_mock: true,
        caps: Caps::default(),
    }
}

fn unpinned() -> VerifyOptions {
    VerifyOptions {
        allow_mock: true,
        ..Default::default()
    }
}

fn failing(v: &BundleVerdict) -> (VerifyRule, String) {
    let f = v.first_failure().expect("a rule should fail");
    (f.rule, f.detail.clone())
}

/// A forger's key, and the bundle rewritten by `edit` and signed with it.
fn forged(f: &Fixture, name: &str, edit: impl FnOnce(&mut Vec<Member>)) -> PathBuf {
    let (secret, _) = keygen(&f.dir.join(format!("forger-{name}"))).unwrap();
    let out = f.dir.join(format!("{name}.fbundle"));
    reseal(
        &f.bundle,
        &out,
        Some(&SecretKey::read(&secret).unwrap()),
        edit,
    )
    .unwrap();
    out
}

fn member<'a>(members: &'a mut [Member], suffix: &str) -> &'a mut Member {
    members
        .iter_mut()
        .find(|m| m.name.ends_with(suffix))
        .unwrap()
}

#[test]
fn a_packed_root_verifies_rule_by_rule_and_packing_is_deterministic() {
    let f = fixture();
    let v = verify(&f.bundle, &pinned(&f)).unwrap();
    assert!(v.passed(), "{:#?}", v.rules);
    assert_eq!(v.rules.len(), 15);
    assert!(v.signer_pinned);
    // Same root, same key: the same bytes.
    let again = f.dir.join("again.fbundle");
    pack(&f.dir.join("runs"), &again, &options(&f.secret)).unwrap();
    assert_eq!(
        std::fs::read(&f.bundle).unwrap(),
        std::fs::read(&again).unwrap()
    );
    // Without mock runs allowed, the protocol rule says why it is not a leaderboard bundle.
    let strict = VerifyOptions {
        pubkeys: vec![PublicKey::read(&f.public).unwrap()],
        ..Default::default()
    };
    let (rule, detail) = failing(&verify(&f.bundle, &strict).unwrap());
    assert_eq!(rule, VerifyRule::Protocol);
    assert!(detail.contains("emulator `mock`"), "{detail}");
}

#[test]
fn an_unsigned_bundle_and_a_foreign_key_fail_the_signature_rule() {
    let f = fixture();
    let unsigned = f.dir.join("unsigned.fbundle");
    reseal(&f.bundle, &unsigned, None, |_| {}).unwrap();
    let (rule, detail) = failing(&verify(&unsigned, &pinned(&f)).unwrap());
    assert_eq!(rule, VerifyRule::Signature);
    assert!(detail.contains("not signed"), "{detail}");
    let other = forged(&f, "same", |_| {});
    let (rule, detail) = failing(&verify(&other, &pinned(&f)).unwrap());
    assert_eq!(rule, VerifyRule::Signature);
    assert!(detail.contains("not a trusted --pubkey"), "{detail}");
}

/// Raises one run's outcome: without re-signing the hash rule names the member; re-signed
/// with the forger's own key, pinning names the key, and without pinning the rubric judge's
/// re-score names the run.
#[test]
fn tampering_with_one_score_is_caught() {
    let f = fixture();
    let tamper = |members: &mut Vec<Member>| {
        let m = member(members, "a/p1/result.json");
        let mut v: serde_json::Value = serde_json::from_slice(&m.bytes).unwrap();
        let s = &mut v["scores"];
        // Consistent with its own axis counts, so only re-scoring can tell.
        for a in s["per_axis"].as_array_mut().unwrap() {
            a["score"] = 1.0.into();
        }
        let (mt, bt) = (s["must_total"].clone(), s["bonus_total"].clone());
        s["must_passed"] = mt;
        s["bonus_passed"] = bt;
        s["outcome"] = 1.0.into();
        m.bytes = serde_json::to_vec_pretty(&v).unwrap();
    };
    // Edited in place, manifest untouched.
    let raw = f.dir.join("raw.fbundle");
    {
        let mut manifest_kept = None;
        let mut members = Vec::new();
        faultbench_bundle::read::for_each_member(
            &f.bundle,
            Caps::default(),
            |m| -> Result<(), ()> {
                if m.name == faultbench_bundle::names::MANIFEST {
                    manifest_kept = Some(m.bytes.clone());
                }
                members.push(m);
                Ok(())
            },
        )
        .unwrap()
        .unwrap();
        tamper(&mut members);
        write_raw(&raw, &members);
    }
    let (rule, detail) = failing(&verify(&raw, &pinned(&f)).unwrap());
    assert_eq!(rule, VerifyRule::Hashes);
    assert!(
        detail.contains("a/p1/result.json") && detail.contains("SHA-256"),
        "{detail}"
    );

    let resigned = forged(&f, "score", tamper);
    let (rule, _) = failing(&verify(&resigned, &pinned(&f)).unwrap());
    assert_eq!(rule, VerifyRule::Signature);
    let v = verify(&resigned, &unpinned()).unwrap();
    let scores = v
        .rules
        .iter()
        .find(|r| r.rule == VerifyRule::Scores)
        .unwrap();
    assert!(!scores.passed, "{v:#?}");
    assert!(
        scores.detail.contains("agent a pass 1") && scores.detail.contains("rubric judge gives"),
        "{}",
        scores.detail
    );
    // The registry row no longer matches its record either (the outcome column changed).
    assert!(!v.passed());
}

#[test]
fn dropping_one_run_is_caught_by_the_plan() {
    let f = fixture();
    let dropped = forged(&f, "drop", |members| {
        let victim = members
            .iter()
            .find(|m| m.name.ends_with("b/p2/result.json"))
            .unwrap()
            .name
            .trim_end_matches("/result.json")
            .to_string();
        members.retain(|m| !m.name.starts_with(&format!("{victim}/")));
    });
    let (rule, detail) = failing(&verify(&dropped, &unpinned()).unwrap());
    assert_eq!(rule, VerifyRule::Plan, "{detail}");
    assert!(
        detail.contains("agent b pass 2") && detail.contains("no record"),
        "{detail}"
    );
}

#[test]
fn changing_a_setting_is_caught() {
    let f = fixture();
    for (field, value, rule, needle) in [
        (
            "max_turns",
            serde_json::json!(30),
            VerifyRule::Budget,
            "max_turns is 30",
        ),
        (
            "ticket_hint",
            serde_json::json!("skeptical"),
            VerifyRule::TicketHint,
            "skeptical",
        ),
        (
            "reuse_labs",
            serde_json::json!(true),
            VerifyRule::FreshLabs,
            "reuse_labs",
        ),
        (
            "link_model",
            serde_json::json!("veth"),
            VerifyRule::Protocol,
            "link model `veth`",
        ),
    ] {
        let changed = forged(&f, field, |members| {
            let m = member(members, "identity.json");
            let mut v: serde_json::Value = serde_json::from_slice(&m.bytes).unwrap();
            v[field] = value;
            m.bytes = serde_json::to_vec_pretty(&v).unwrap();
        });
        let (got, detail) = failing(&verify(&changed, &unpinned()).unwrap());
        assert_eq!(got, rule, "{field}: {detail}");
        assert!(detail.contains(needle), "{detail}");
    }
    // A run's model changed while the identity says otherwise.
    let changed = forged(&f, "model", |members| {
        let m = member(members, "b/p1/result.json");
        let mut v: serde_json::Value = serde_json::from_slice(&m.bytes).unwrap();
        v["faultbench_version"] = "9.9.9".into();
        m.bytes = serde_json::to_vec_pretty(&v).unwrap();
    });
    let (rule, detail) = failing(&verify(&changed, &unpinned()).unwrap());
    assert_eq!(rule, VerifyRule::OneConfiguration, "{detail}");
    assert!(detail.contains("9.9.9"), "{detail}");
}

#[test]
fn changed_tables_are_caught() {
    let f = fixture();
    let changed = forged(&f, "tables", |members| {
        let m = member(members, "bundle/tables.json");
        let text = String::from_utf8(m.bytes.clone()).unwrap();
        m.bytes = text
            .replacen("\"runs\": 18", "\"runs\": 19", 1)
            .into_bytes();
        assert_ne!(m.bytes, text.as_bytes(), "the edit must change something");
    });
    let (rule, detail) = failing(&verify(&changed, &unpinned()).unwrap());
    assert_eq!(rule, VerifyRule::Tables, "{detail}");
}

/// Writes members as a plain zstd tar (no manifest processing), for crafted bundles.
/// The signature covers the members through their hashes; the tar framing around them is held
/// to what `pack` writes, so a changed header field (its checksum fixed up), padding byte or
/// trailer, or data after the end of the archive, is refused although every member is intact.
#[test]
fn changes_to_the_tar_framing_are_refused() {
    use std::io::{Read, Write};
    let f = fixture();
    let mut tar_bytes = Vec::new();
    zstd::stream::read::Decoder::new(std::fs::File::open(&f.bundle).unwrap())
        .unwrap()
        .read_to_end(&mut tar_bytes)
        .unwrap();
    let first_size = {
        let h = tar::Header::from_byte_slice(&tar_bytes[..512]);
        h.size().unwrap() as usize
    };
    assert!(
        first_size % 512 != 0,
        "the first member needs padding for this test"
    );
    let padding_at = 512 + first_size;
    let end = tar_bytes.len();
    let header_edit = |field: std::ops::Range<usize>, value: &[u8]| {
        let mut t = tar_bytes.clone();
        t[field.start..field.start + value.len()].copy_from_slice(value);
        let mut h = tar::Header::from_byte_slice(&t[..512]).clone();
        h.set_cksum();
        t[..512].copy_from_slice(h.as_bytes());
        t
    };
    let mut cases: Vec<(&str, Vec<u8>)> = vec![
        ("mtime", header_edit(136..148, b"00000000001\0")),
        ("mode", header_edit(100..108, b"0000755\0")),
        ("owner name", header_edit(265..270, b"root\0")),
    ];
    let mut t = tar_bytes.clone();
    t[padding_at] = b'x';
    cases.push(("a padding byte", t));
    let mut t = tar_bytes.clone();
    t[end - 1] = 1;
    cases.push(("the second end block", t));
    let mut t = tar_bytes.clone();
    t.extend_from_slice(&[0u8; 512]);
    cases.push(("a block after the end", t));
    for (what, t) in cases {
        let p = f.dir.join("framed.fbundle");
        let mut enc =
            zstd::stream::write::Encoder::new(std::fs::File::create(&p).unwrap(), 3).unwrap();
        enc.write_all(&t).unwrap();
        enc.finish().unwrap();
        match verify(&p, &pinned(&f)) {
            Ok(v) => assert!(!v.passed(), "a changed {what} passed"),
            Err(e) => assert!(e.to_string().contains("refused"), "{what}: {e}"),
        }
    }
}

fn write_raw(out: &Path, members: &[Member]) {
    let file = std::fs::File::create(out).unwrap();
    let enc = zstd::stream::write::Encoder::new(file, 3).unwrap();
    let mut tar = tar::Builder::new(enc);
    for m in members {
        let mut h = tar::Header::new_ustar();
        h.set_path(&m.name).unwrap();
        h.set_size(m.bytes.len() as u64);
        // The framing `faultbench pack` writes, so that only the members' bytes differ.
        h.set_mode(0o644);
        h.set_uid(0);
        h.set_gid(0);
        h.set_mtime(0);
        h.set_entry_type(tar::EntryType::Regular);
        h.set_cksum();
        tar.append(&h, m.bytes.as_slice()).unwrap();
    }
    tar.into_inner().unwrap().finish().unwrap();
}

#[test]
fn truncated_and_corrupt_bundles_are_named_never_a_panic() {
    let f = fixture();
    let bytes = std::fs::read(&f.bundle).unwrap();
    let mut seen_member = false;
    for cut in [bytes.len() / 2, bytes.len() * 9 / 10, 40, bytes.len() - 3] {
        let p = f.dir.join(format!("cut-{cut}.fbundle"));
        std::fs::write(&p, &bytes[..cut]).unwrap();
        let e = verify(&p, &pinned(&f)).unwrap_err().to_string();
        assert!(e.contains(&format!("cut-{cut}.fbundle")), "{e}");
        seen_member |= e.contains("member `");
    }
    assert!(seen_member, "a cut inside the stream names the member");
    for at in [bytes.len() / 3, bytes.len() / 2] {
        let mut bad = bytes.clone();
        for b in &mut bad[at..at + 64] {
            *b ^= 0x5a;
        }
        let p = f.dir.join("corrupt.fbundle");
        std::fs::write(&p, &bad).unwrap();
        // Either the stream or a member's hash breaks; never a pass, never a panic.
        match verify(&p, &pinned(&f)) {
            Err(e) => assert!(e.to_string().contains("corrupt.fbundle"), "{e}"),
            Ok(v) => assert!(!v.passed()),
        }
    }
    let p = f.dir.join("not-a-bundle.fbundle");
    std::fs::write(&p, b"hello").unwrap();
    assert!(
        verify(&p, &pinned(&f))
            .unwrap_err()
            .to_string()
            .contains("zstd")
    );
}

/// A raw `ustar` header with any name bytes and entry type (what a hostile packer writes).
fn hostile(out: &Path, name: &[u8], kind: tar::EntryType, link: Option<&str>) {
    let file = std::fs::File::create(out).unwrap();
    let enc = zstd::stream::write::Encoder::new(file, 3).unwrap();
    let mut tar = tar::Builder::new(enc);
    let mut h = tar::Header::new_ustar();
    h.as_old_mut().name[..name.len()].copy_from_slice(name);
    h.set_entry_type(kind);
    if let Some(l) = link {
        h.set_link_name(l).unwrap();
    }
    let body: &[u8] = if kind.is_file() { b"x" } else { b"" };
    h.set_size(body.len() as u64);
    h.set_mode(0o644);
    h.set_cksum();
    tar.append(&h, body).unwrap();
    tar.into_inner().unwrap().finish().unwrap();
}

#[test]
fn dot_dot_absolute_and_link_members_are_refused_and_nothing_is_written() {
    let tmp = tempfile::tempdir().unwrap();
    let cases: [(&[u8], tar::EntryType, Option<&str>, &str); 8] = [
        (
            b"././@LongLink",
            tar::EntryType::GNULongName,
            None,
            "`.` step",
        ),
        (
            b"LongLink",
            tar::EntryType::GNULongName,
            None,
            "GNU long-name header",
        ),
        (
            b"pax",
            tar::EntryType::XHeader,
            None,
            "pax extension header",
        ),
        (b"../evil", tar::EntryType::Regular, None, "`..` step"),
        (b"a/../../evil", tar::EntryType::Regular, None, "`..` step"),
        (b"/tmp/evil", tar::EntryType::Regular, None, "absolute path"),
        (
            b"link",
            tar::EntryType::Symlink,
            Some("/etc/passwd"),
            "symbolic link",
        ),
        (
            b"hard",
            tar::EntryType::Link,
            Some("/etc/passwd"),
            "hard link",
        ),
    ];
    for (i, (name, kind, link, needle)) in cases.into_iter().enumerate() {
        let p = tmp.path().join(format!("h{i}.fbundle"));
        hostile(&p, name, kind, link);
        let e = verify(&p, &unpinned()).unwrap_err().to_string();
        assert!(e.contains(needle) && e.contains("member `"), "{e}");
        // The leaderboard shows it as unreadable and writes nothing outside its folder.
        let site = tmp.path().join(format!("site{i}"));
        let s = faultbench_bundle::leaderboard::build(
            &[faultbench_bundle::leaderboard::LeaderboardEntry::Bundle(
                p.clone(),
            )],
            &site,
            &unpinned(),
        )
        .unwrap();
        assert_eq!(s.rows[0].status_label(), "unreadable");
        assert!(!tmp.path().join("evil").exists() && !Path::new("/tmp/evil").exists());
    }
    // A name twice (a second copy could replace what was checked).
    let p = tmp.path().join("twice.fbundle");
    let m = Member {
        name: "MANIFEST.csv".into(),
        bytes: b"x".to_vec(),
    };
    write_raw(&p, &[m.clone(), m]);
    let e = faultbench_bundle::read::for_each_member(&p, Caps::default(), |_| Ok::<(), ()>(()))
        .unwrap_err()
        .to_string();
    assert!(e.contains("(member `MANIFEST.csv`): appears twice"), "{e}");
    // Caps: a member over the size cap is refused before it is read.
    let p = tmp.path().join("big.fbundle");
    write_raw(
        &p,
        &[Member {
            name: "bundle/manifest.json".into(),
            bytes: vec![b' '; 4096],
        }],
    );
    let caps = Caps {
        member_bytes: 1024,
        ..Caps::default()
    };
    let e = verify(&p, &VerifyOptions { caps, ..unpinned() })
        .unwrap_err()
        .to_string();
    assert!(e.contains("at most 1024 bytes"), "{e}");
}

#[test]
fn the_leaderboard_lists_bundles_with_viewers_and_never_ranks_unverified_ones() {
    let f = fixture();
    let forged = forged(&f, "lb", |members| {
        let m = member(members, "identity.json");
        let mut v: serde_json::Value = serde_json::from_slice(&m.bytes).unwrap();
        v["max_turns"] = 30.into();
        m.bytes = serde_json::to_vec_pretty(&v).unwrap();
    });
    let site = f.dir.join("site");
    let s = faultbench_bundle::leaderboard::build(
        &[
            faultbench_bundle::leaderboard::LeaderboardEntry::Bundle(f.bundle.clone()),
            faultbench_bundle::leaderboard::LeaderboardEntry::Bundle(forged),
        ],
        &site,
        &pinned(&f),
    )
    .unwrap();
    assert!(
        s.rows.iter().all(|r| r.rank.is_none()),
        "mock and forged: none ranked"
    );
    let labels: Vec<&str> = s.rows.iter().map(|r| r.status_label()).collect();
    assert!(
        labels.contains(&"verified-mock") && labels.contains(&"unverified"),
        "{labels:?}"
    );
    let html = std::fs::read_to_string(&s.index).unwrap();
    assert!(html.contains("Content-Security-Policy") && html.contains("script-src &#39;sha256-"));
    assert!(
        html.contains("UNVERIFIED") && html.contains("rule signature"),
        "{html}"
    );
    let viewer = s.rows[0].viewer.as_ref().unwrap();
    assert!(site.join(viewer).is_file(), "{viewer}");
    assert_eq!(s.rows.iter().filter(|r| r.agent == "a").count(), 2);
}

/// With an LLM judge the recorded verdicts are kept (not re-asked), its prompt version is
/// checked, and an outcome that does not follow from its own axis verdicts is caught.
#[test]
fn llm_judge_verdicts_are_kept_their_version_checked_and_edits_caught() {
    let f = fixture();
    let as_llm = |version: String, edit_outcome: bool| {
        move |members: &mut Vec<Member>| {
            let m = member(members, "identity.json");
            let mut v: serde_json::Value = serde_json::from_slice(&m.bytes).unwrap();
            v["judge"]["kind"] = "llm".into();
            v["judge"]["prompt_version"] = version.into();
            m.bytes = serde_json::to_vec_pretty(&v).unwrap();
            if edit_outcome {
                let m = member(members, "b/p2/result.json");
                let mut v: serde_json::Value = serde_json::from_slice(&m.bytes).unwrap();
                let o = v["scores"]["outcome"].as_f64().unwrap();
                v["scores"]["outcome"] = (if o > 0.5 { 0.1 } else { 0.9 }).into();
                m.bytes = serde_json::to_vec_pretty(&v).unwrap();
            }
        }
    };
    let current = faultbench_judge::llm::prompts::prompt_version();
    let kept = forged(&f, "llm-ok", as_llm(current.clone(), false));
    let v = verify(&kept, &unpinned()).unwrap();
    let rule = |r: VerifyRule| v.rules.iter().find(|x| x.rule == r).unwrap().clone();
    assert!(
        rule(VerifyRule::JudgeVersion).passed,
        "{:?}",
        rule(VerifyRule::JudgeVersion)
    );
    assert!(
        rule(VerifyRule::Scores).passed
            && rule(VerifyRule::Scores).detail.contains("kept as recorded")
    );

    let old = forged(&f, "llm-old", as_llm("llm-0000".into(), false));
    let (r, detail) = failing(&verify(&old, &unpinned()).unwrap());
    assert_eq!(r, VerifyRule::JudgeVersion, "{detail}");

    let edited = forged(&f, "llm-edit", as_llm(current, true));
    let v = verify(&edited, &unpinned()).unwrap();
    let scores = v
        .rules
        .iter()
        .find(|x| x.rule == VerifyRule::Scores)
        .unwrap();
    assert!(!scores.passed);
    assert!(
        scores.detail.contains("agent b pass 2") && scores.detail.contains("does not follow"),
        "{}",
        scores.detail
    );
}

/// Any single flipped byte of a signed bundle that changes what it says is caught — by the
/// stream (zstd's checksum, tar's header checksum), a hash, or the signature — and none
/// panics. A flip may also leave the content as it was (zstd decodes a few bits of a
/// compressed block, or of its frame header, the same either way): such a bundle still says
/// exactly what was signed, byte for byte once decompressed, and passes.
#[test]
fn every_single_byte_flip_is_caught() {
    let f = fixture();
    let bytes = std::fs::read(&f.bundle).unwrap();
    let p = f.dir.join("flip.fbundle");
    let mut x: u64 = 0x2545_f491_4f6c_dd1d;
    for _ in 0..60 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let at = (x % bytes.len() as u64) as usize;
        let mut bad = bytes.clone();
        bad[at] ^= 1 << (x >> 60 & 7);
        std::fs::write(&p, &bad).unwrap();
        if let Ok(v) = verify(&p, &pinned(&f))
            && v.passed()
        {
            let same = zstd::decode_all(&bad[..]).ok() == zstd::decode_all(&bytes[..]).ok();
            assert!(
                same,
                "a flip at byte {at} of {} changed the content and passed",
                bytes.len()
            );
        }
    }
}

/// Packing reads the root as untrusted too: a run's trace planted as a link to a file outside
/// the root is refused (its content never enters a bundle), naming the file.
#[test]
fn pack_refuses_a_trace_planted_as_a_link() {
    let f = fixture();
    let runs = f.dir.join("runs");
    let trace = faultbench_core::fsutil::find_files(&runs, |n| n == "trace.jsonl")
        .unwrap()
        .files
        .remove(0);
    let secret = f.dir.join("secret.txt");
    std::fs::write(&secret, "do not pack me").unwrap();
    std::fs::remove_file(&trace).unwrap();
    std::os::unix::fs::symlink(&secret, &trace).unwrap();
    let out = f.dir.join("linked.fbundle");
    let e = pack(&runs, &out, &options(&f.secret))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("trace.jsonl") && e.contains("symbolic link"),
        "{e}"
    );
    assert!(!out.exists());
}
