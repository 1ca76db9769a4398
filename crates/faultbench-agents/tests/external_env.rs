//! Issue 19, findings 2 and 3: what an external CLI agent can see of the harness. The stand-in
//! is `/bin/sh` dumping its environment and the permissions of its working directory and MCP
//! config; it must see the allow-list (PATH, HOME, LANG, TZ, TERM), its template's own `env`
//! and `env_pass` variables, and nothing else — not the judge's key, not other secrets, not
//! the bridge's URL (which holds its token).
//!
//! One test in this binary: it sets process environment variables.

mod common;

use faultbench_agents::ExternalAgent;
use faultbench_agents::external::ExternalTemplates;
use faultbench_core::agent::Agent;

const SCRIPT: &str = r#"env | sort
echo "perms dir=$(stat -c %a "$1") config=$(stat -c %a "$2")"
echo '=== DIAGNOSIS ==='
echo 'is_anomaly: false'
echo 'faulty_devices:'
echo 'diagnosis_text:'
echo 'nothing'
echo '=== END ==='
"#;

#[tokio::test]
async fn the_cli_sees_only_its_allow_list() {
    // SAFETY: the only test of this binary; set before any other thread reads the environment.
    unsafe {
        std::env::set_var("OPENAI_API_KEY", "sk-judge-secret");
        std::env::set_var("ANTHROPIC_API_KEY", "sk-ant-agent");
        std::env::set_var("AWS_SECRET_ACCESS_KEY", "aws-secret");
        std::env::set_var("LANG", "C.UTF-8");
        std::env::set_var("TZ", "UTC");
    }
    let text = format!(
        r#"[agents.envdump]
program = "/bin/sh"
args = ["-c", {script:?}, "sh", "{{workdir}}", "{{mcp_config}}"]
output = "text"
env = {{ STANDIN_MODE = "env" }}
env_pass = ["ANTHROPIC_API_KEY", "NOT_SET_ANYWHERE"]
"#,
        script = SCRIPT
    );
    let template = ExternalTemplates::from_toml_str(&text).unwrap().agents["envdump"].clone();
    let base = tempfile::tempdir().unwrap();
    let out = ExternalAgent::new("envdump", template)
        .with_workdir_base(base.path())
        .run(
            &common::input("pc1 cannot reach web1", 5),
            common::tools(common::lab(false)),
        )
        .await;
    assert!(out.error.is_none(), "{:?}", out.error);
    let seen: Vec<&str> = out
        .final_text
        .lines()
        .take_while(|l| !l.starts_with("perms "))
        .filter_map(|l| l.split_once('=').map(|(k, _)| k))
        .collect();
    for want in [
        "PATH",
        "HOME",
        "LANG",
        "TZ",
        "STANDIN_MODE",
        "ANTHROPIC_API_KEY",
    ] {
        assert!(seen.contains(&want), "{want} missing from {seen:?}");
    }
    // The shell adds PWD, SHLVL and `_` itself.
    let allowed = [
        "PATH",
        "HOME",
        "LANG",
        "TZ",
        "TERM",
        "STANDIN_MODE",
        "ANTHROPIC_API_KEY",
        "PWD",
        "SHLVL",
        "_",
    ];
    let extra: Vec<&&str> = seen.iter().filter(|k| !allowed.contains(k)).collect();
    assert!(extra.is_empty(), "leaked to the agent: {extra:?}");
    assert!(!out.final_text.contains("sk-judge-secret"));
    assert!(!out.final_text.contains("aws-secret"));
    assert!(
        out.final_text.contains("perms dir=700 config=600"),
        "{}",
        out.final_text
    );
}
