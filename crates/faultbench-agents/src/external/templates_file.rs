//! A user's templates file (`--agent-templates FILE`, `$FAULTBENCH_AGENT_TEMPLATES`): read,
//! validated, and laid over the built-in templates.
//!
//! The file has the format of the built-in one (`crates/faultbench-agents/data/external.toml`):
//! one `[agents.NAME]` table per CLI. Every problem is reported as `FILE:LINE: what is wrong`,
//! before any run starts: TOML syntax, unknown keys and wrong types (from the TOML reader), and
//! what the reader cannot see — a name that cannot be part of a run path, an empty `program`,
//! a misspelt placeholder (`{promt}`), `{model}` outside `model_args`, an environment variable
//! name that is not one, a `faultbench` transport without an MCP command.

use super::{ExternalTemplate, ExternalTemplates, Transport};
use std::path::{Path, PathBuf};

/// The environment variable naming a templates file when `--agent-templates` is not given.
pub const TEMPLATES_ENV: &str = "FAULTBENCH_AGENT_TEMPLATES";

/// Largest templates file read, in bytes.
const MAX_FILE: u64 = 1 << 20;

/// Placeholders a template may use (in `args`, `mcp_command`; `model` only in `model_args`).
pub const PLACEHOLDERS: [&str; 10] = [
    "prompt",
    "system",
    "mcp_config",
    "mcp_url",
    "max_turns",
    "workdir",
    "lab",
    "record",
    "faultbench",
    "model",
];

/// A templates file that cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum TemplateFileError {
    /// The file could not be read.
    #[error("cannot read agent templates {}: {source}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// The file is bigger than a templates file can reasonably be.
    #[error("{}: {size} bytes; an agent templates file is at most {MAX_FILE} bytes", path.display())]
    TooLarge {
        /// The file.
        path: PathBuf,
        /// Its size.
        size: u64,
    },
    /// A problem at a place in the file.
    #[error("{}:{line}: {message}", path.display())]
    Invalid {
        /// The file.
        path: PathBuf,
        /// 1-based line.
        line: usize,
        /// What is wrong, and how to fix it.
        message: String,
    },
}

impl ExternalTemplates {
    /// Reads and validates a user's templates file and lays it over the built-in templates (a
    /// template of the same name replaces the built-in one).
    pub fn load_over_defaults(path: &Path) -> Result<Self, TemplateFileError> {
        let mut all = ExternalTemplates::defaults();
        all.agents
            .extend(ExternalTemplates::load_file(path)?.agents);
        Ok(all)
    }

    /// The templates the CLI uses: `file` (`--agent-templates`), else the file named by
    /// `$FAULTBENCH_AGENT_TEMPLATES` when set and not empty, each over the built-ins; else the
    /// built-ins alone.
    pub fn discover(file: Option<&Path>) -> Result<Self, TemplateFileError> {
        let from_env = std::env::var_os(TEMPLATES_ENV).filter(|v| !v.is_empty());
        match file.map(Path::to_path_buf).or(from_env.map(PathBuf::from)) {
            Some(p) => ExternalTemplates::load_over_defaults(&p),
            None => Ok(ExternalTemplates::defaults()),
        }
    }

    /// Reads and validates a templates file alone.
    pub fn load_file(path: &Path) -> Result<Self, TemplateFileError> {
        // A regular file only (a FIFO is refused, not waited on), of at most MAX_FILE bytes.
        let text = faultbench_core::fsutil::read_regular_string_capped(path, MAX_FILE).map_err(
            |e| match e.problem {
                faultbench_core::fsutil::InputProblem::TooBig { len, .. } => {
                    TemplateFileError::TooLarge {
                        path: path.to_path_buf(),
                        size: len,
                    }
                }
                _ => TemplateFileError::Read {
                    path: path.to_path_buf(),
                    source: e.into(),
                },
            },
        )?;
        ExternalTemplates::parse_file_text(&text).map_err(|(line, message)| {
            TemplateFileError::Invalid {
                path: path.to_path_buf(),
                line,
                message,
            }
        })
    }

    /// Parses and validates a templates file's text; errors are `(line, message)`.
    fn parse_file_text(text: &str) -> Result<Self, (usize, String)> {
        let templates: ExternalTemplates = toml::from_str(text).map_err(|e| {
            let line = e.span().map_or(1, |s| line_at(text, s.start));
            (line, e.message().trim().to_string())
        })?;
        if templates.agents.is_empty() {
            return Err((
                1,
                "no templates: add one as `[agents.NAME]` with at least `program = \"...\"`".into(),
            ));
        }
        for (name, t) in &templates.agents {
            check_template(name, t).map_err(|(field, message)| {
                (
                    line_of(text, name, field),
                    format!("template `{name}`: {message}"),
                )
            })?;
        }
        Ok(templates)
    }
}

/// Checks what the TOML reader cannot; errors are `(field, message)`.
fn check_template(name: &str, t: &ExternalTemplate) -> Result<(), (Option<&'static str>, String)> {
    let name_ok = !name.is_empty()
        && name.len() <= 64
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
        && !name.starts_with('.');
    if !name_ok {
        return Err((
            None,
            "a template name is 1–64 letters, digits, `-`, `_` or `.` (not starting with `.`): \
             it becomes part of the agent label `external:NAME` and of run paths"
                .into(),
        ));
    }
    if t.program.trim().is_empty() {
        return Err((
            Some("program"),
            "`program` is empty; name the CLI's executable".into(),
        ));
    }
    for (field, values, model_ok) in [
        ("args", &t.args, false),
        ("model_args", &t.model_args, true),
        ("mcp_command", &t.mcp_command, false),
    ] {
        for v in values {
            for p in placeholders(v) {
                let known = PLACEHOLDERS.contains(&p) && (model_ok || p != "model");
                if !known {
                    let hint = if p == "model" {
                        "`{model}` belongs in `model_args` (added only when a model is chosen)"
                            .to_string()
                    } else {
                        format!(
                            "known: {}",
                            PLACEHOLDERS.map(|p| format!("{{{p}}}")).join(" ")
                        )
                    };
                    return Err((
                        Some(field),
                        format!("unknown placeholder `{{{p}}}`; {hint}"),
                    ));
                }
            }
        }
    }
    if let Some(k) = t
        .env
        .keys()
        .find(|k| k.is_empty() || k.contains(['=', '\0']))
    {
        return Err((
            Some("env"),
            format!(
                "`{}` is not an environment variable name",
                k.escape_default()
            ),
        ));
    }
    if t.transport == Transport::Faultbench && t.mcp_command.is_empty() {
        return Err((
            Some("mcp_command"),
            "transport \"faultbench\" needs an `mcp_command` (or leave it out for the default)"
                .into(),
        ));
    }
    Ok(())
}

/// `{name}` placeholders of one argument (names of lowercase letters and `_` only, so that
/// JSON or shell braces in an argument are not taken for placeholders).
fn placeholders(arg: &str) -> impl Iterator<Item = &str> {
    arg.split('{').skip(1).filter_map(|after| {
        let name = &after[..after.find('}')?];
        (!name.is_empty() && name.chars().all(|c| c.is_ascii_lowercase() || c == '_'))
            .then_some(name)
    })
}

/// 1-based line of byte offset `at`.
fn line_at(text: &str, at: usize) -> usize {
    text.as_bytes()[..at.min(text.len())]
        .iter()
        .filter(|&&b| b == b'\n')
        .count()
        + 1
}

/// The line of `field` in template `name`'s table (or of the table's header), best effort:
/// the header `[agents.NAME]` (quoted or not), then the first line in that table starting with
/// the field's key.
fn line_of(text: &str, name: &str, field: Option<&str>) -> usize {
    let lines: Vec<&str> = text.lines().collect();
    let is_header = |l: &str| {
        let l = l.trim();
        l.starts_with('[')
            && l.trim_matches(|c| c == '[' || c == ']')
                .split('.')
                .map(|p| p.trim().trim_matches('"'))
                .eq(["agents", name])
    };
    let Some(header) = lines.iter().position(|l| is_header(l)) else {
        return 1;
    };
    if let Some(field) = field {
        for (i, l) in lines.iter().enumerate().skip(header + 1) {
            let l = l.trim_start();
            if l.starts_with('[') {
                break;
            }
            if l.strip_prefix(field)
                .is_some_and(|rest| rest.trim_start().starts_with('='))
            {
                return i + 1;
            }
        }
    }
    header + 1
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(text: &str) -> (usize, String) {
        ExternalTemplates::parse_file_text(text).unwrap_err()
    }

    #[test]
    fn problems_are_placed_on_their_line() {
        let ok =
            "[agents.mine]\nprogram = \"my-cli\"\nargs = [\"{prompt}\", \"{\\\"json\\\": 1}\"]\n";
        let t = ExternalTemplates::parse_file_text(ok).unwrap();
        assert_eq!(t.agents["mine"].program, "my-cli");

        let (line, m) = err("[agents.mine]\nprogram = \"x\"\nargs = [\"{promt}\"]\n");
        assert_eq!(line, 3, "{m}");
        assert!(
            m.contains("unknown placeholder `{promt}`") && m.contains("{prompt}"),
            "{m}"
        );

        let (line, m) =
            err("# mine\n\n[agents.mine]\nprogram = \"x\"\nargs = [\"--model\", \"{model}\"]\n");
        assert_eq!(line, 5, "{m}");
        assert!(m.contains("model_args"), "{m}");

        let (line, m) = err("[agents.mine]\nprogram = \"x\"\nprogramme = \"y\"\n");
        assert_eq!(line, 3, "{m}");
        assert!(m.contains("programme"), "{m}");

        let (line, m) = err("[agents.mine]\nprogram = \"x\"\nargs = \"{prompt}\"\n");
        assert_eq!(line, 3, "{m}");

        let (line, m) =
            err("[agents.ok]\nprogram = \"x\"\n[agents.\"bad/name\"]\nprogram = \"x\"\n");
        assert_eq!(line, 3, "{m}");
        assert!(m.contains("template `bad/name`"), "{m}");

        let (line, m) = err("[agents.mine]\nargs = []\nprogram = \"  \"\n");
        assert_eq!((line, m.contains("`program` is empty")), (3, true), "{m}");

        let (line, m) = err("[agents.mine\nprogram = \"x\"\n");
        assert_eq!(line, 1, "{m}");
        assert!(err("").1.contains("no templates"));
    }

    #[test]
    fn a_file_error_names_file_and_line_and_the_file_overrides_the_builtins() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("agents.toml");
        std::fs::write(
            &path,
            "[agents.mine]\nprogram = \"x\"\nenv = { \"A=B\" = \"1\" }\n",
        )
        .unwrap();
        let e = ExternalTemplates::load_over_defaults(&path).unwrap_err();
        assert_eq!(
            e.to_string(),
            format!(
                "{}:3: template `mine`: `A=B` is not an environment variable name",
                path.display()
            )
        );
        std::fs::write(
            &path,
            "[agents.claude-code]\nprogram = \"my-claude\"\n[agents.mine]\nprogram = \"x\"\n",
        )
        .unwrap();
        let t = ExternalTemplates::load_over_defaults(&path).unwrap();
        assert_eq!(t.agents["claude-code"].program, "my-claude");
        assert_eq!(t.agents["mine"].program, "x");
        let e = ExternalTemplates::load_file(&dir.path().join("absent.toml")).unwrap_err();
        assert!(matches!(e, TemplateFileError::Read { .. }), "{e}");
        assert!(std::error::Error::source(&e).is_some());
    }
}
