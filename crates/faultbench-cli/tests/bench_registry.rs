//! Names on the command line go through the registries: a user's external agent declared in a
//! templates file (`--agent-templates`, `$FAULTBENCH_AGENT_TEMPLATES`) runs through `bench` on
//! the mock emulator like a built-in one; a bad templates file is refused with file and line;
//! unknown names list what is registered.
//!
//! The stand-in CLI agent is the external-agent tests' script
//! (`crates/faultbench-agents/tests/data/standin_agent.py`): it speaks MCP with the official
//! Python client to the run's bridge and prints a Claude-style JSON result. Its Python comes
//! from the venv `scripts/install-deps.sh` makes (override with `FAULTBENCH_MCP_PYTHON`).

use std::path::{Path, PathBuf};
use std::process::Command;

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/bench")
}

/// A templates file declaring the stand-in as `mine`.
fn templates(dir: &Path) -> PathBuf {
    let script = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../faultbench-agents/tests/data/standin_agent.py");
    let path = dir.join("agents.toml");
    let text = format!(
        "# my team's CLI agent\n[agents.mine]\nprogram = {:?}\n\
         args = [{:?}, \"--mcp-config\", \"{{mcp_config}}\", \"--max-turns\", \"{{max_turns}}\", \"{{prompt}}\"]\n\
         output = \"claude-json\"\n",
        faultbench_testkit::mcp_python().display().to_string(),
        script.display().to_string(),
    );
    std::fs::write(&path, text).unwrap();
    path
}

/// `faultbench bench` on the fixture dataset and the mock emulator; a clean place for the
/// external agent's run directories (outside any repository).
fn bench(runs: &Path, scratch: &Path, extra: &[&str], env: &[(&str, &Path)]) -> (i32, String) {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_faultbench"));
    cmd.arg("bench")
        .args(["--emulator", "mock", "--scenarios", "tri-r1-ospfd-down"])
        .arg("--dataset")
        .arg(fixtures().join("dataset"))
        .arg("--topologies")
        .arg(fixtures().join("topologies"))
        .arg("--runs-root")
        .arg(runs)
        .args(["--no-report", "--wall-clock", "120"])
        .args(extra)
        .env_remove("FAULTBENCH_AGENT_TEMPLATES")
        .env("FAULTBENCH_EXTERNAL_CWD", scratch);
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().unwrap();
    let text = format!(
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.code().unwrap_or(-1), text)
}

fn clean_scratch() -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    for a in d.path().ancestors() {
        assert!(!a.join(".git").exists(), "temp dir inside a repository");
    }
    d
}

#[test]
fn a_user_agent_from_a_templates_file_runs_through_bench() {
    let tmp = clean_scratch();
    let file = templates(tmp.path());
    let runs = tmp.path().join("runs");
    let (code, out) = bench(
        &runs,
        tmp.path(),
        &[
            "--agents",
            "baseline,external:mine",
            "--agent-templates",
            file.to_str().unwrap(),
        ],
        &[],
    );
    assert_eq!(code, 0, "{out}");
    let manifest = std::fs::read_to_string(runs.join("MANIFEST.csv")).unwrap();
    let rows: Vec<Vec<&str>> = manifest
        .lines()
        .skip(1)
        .map(|l| l.split(',').collect())
        .collect();
    let mine = rows
        .iter()
        .find(|r| r[4] == "external:mine")
        .unwrap_or_else(|| panic!("no external:mine row:\n{manifest}\n{out}"));
    assert_eq!(mine[6], "scored", "{manifest}\n{out}");
    // Its diagnosis came from the stand-in's MCP investigation of the mock network, where r1's
    // ospfd was killed: pairs fail (the fixture scripts no `show ip ospf neighbor`, so the
    // stand-in blames no device, and the `assert-identifies: r1` axis fails).
    let result = walk(&runs)
        .into_iter()
        .find(|p| {
            p.ends_with("result.json")
                && p.components()
                    .any(|c| c.as_os_str().to_string_lossy().contains("mine"))
        })
        .expect("a result.json for external:mine");
    let record: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&result).unwrap()).unwrap();
    let text = record.to_string();
    assert!(text.contains("get_reachability"), "{text}");
    assert_eq!(record["diagnosis"]["is_anomaly"], true, "{text}");
    assert_eq!(
        record["diagnosis"]["text"].as_str().unwrap().trim(),
        "Some pairs fail. (saw 22 tools)",
        "{text}"
    );
    assert_eq!(record["scores"]["judge"], "rubric", "{text}");
    assert_eq!(
        record["phases"]["agent"]["outcome"]["tool_calls"], 3,
        "{text}"
    );
    // The run identity records the user's agent like a built-in one.
    let identity = std::fs::read_to_string(runs.join("identity.json")).unwrap();
    assert!(identity.contains("external:mine"), "{identity}");

    // The same file through the environment variable (a dry run: plan only).
    let (code, out) = bench(
        &tmp.path().join("runs-env"),
        tmp.path(),
        &["--agents", "external:mine", "--dry-run"],
        &[("FAULTBENCH_AGENT_TEMPLATES", &file)],
    );
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("external:mine"), "{out}");
    // Without it, the name is unknown and the message says how to add it.
    let (code, out) = bench(
        &tmp.path().join("runs-none"),
        tmp.path(),
        &["--agents", "external:mine", "--dry-run"],
        &[],
    );
    assert_ne!(code, 0, "{out}");
    assert!(
        out.contains("no external agent template `mine`") && out.contains("[agents.mine]"),
        "{out}"
    );
}

#[test]
fn a_bad_templates_file_is_refused_with_file_and_line() {
    let tmp = clean_scratch();
    let file = tmp.path().join("agents.toml");
    std::fs::write(
        &file,
        "[agents.mine]\nprogram = \"my-cli\"\nargs = [\"{promt}\"]\n",
    )
    .unwrap();
    let runs = tmp.path().join("runs");
    let (code, out) = bench(
        &runs,
        tmp.path(),
        &["--agents", "external:mine", "--dry-run"],
        &[("FAULTBENCH_AGENT_TEMPLATES", &file)],
    );
    assert_ne!(code, 0, "{out}");
    assert!(
        out.contains(&format!(
            "{}:3: template `mine`: unknown placeholder `{{promt}}`",
            file.display()
        )),
        "{out}"
    );
    assert!(!runs.exists(), "nothing is written");
}

#[test]
fn unknown_names_list_what_is_registered() {
    let tmp = clean_scratch();
    for (flag, name, known) in [
        (
            "--agents",
            "gpt-agent",
            "baseline, external:NAME, react, sade",
        ),
        ("--judge", "vibes", "llm, rubric"),
    ] {
        let (code, out) = bench(&tmp.path().join(name), tmp.path(), &[flag, name], &[]);
        assert_ne!(code, 0, "{out}");
        assert!(
            out.contains(&format!("`{name}`; choose one of: {known}")),
            "{flag}: {out}"
        );
    }
    // `bench` above names `--emulator mock`; the emulator's name is checked the same way.
    let out = Command::new(env!("CARGO_BIN_EXE_faultbench"))
        .args([
            "bench",
            "--emulator",
            "docker",
            "--scenarios",
            "tri-r1-ospfd-down",
        ])
        .arg("--dataset")
        .arg(fixtures().join("dataset"))
        .arg("--topologies")
        .arg(fixtures().join("topologies"))
        .arg("--runs-root")
        .arg(tmp.path().join("docker"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        err.contains("unknown emulator `docker`; choose one of: kathara, mock, netns"),
        "{err}"
    );
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}
