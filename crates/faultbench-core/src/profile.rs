//! What a run records about the agent or the judge that took part in it.
//!
//! [`Agent`](crate::agent::Agent) and [`Judge`](crate::judge::Judge) each describe themselves
//! with the same three facts — a short name, the model they call (if any) and a version of their
//! prompts or rules — which go into records and into a runs root's identity, where a change of
//! any of them is a change of configuration. Both traits answer [`Profile`] from those methods,
//! so code that records either reads one value instead of three calls.

use serde::{Deserialize, Serialize};

/// The name, model and prompt version of an agent or a judge.
///
/// ```
/// use faultbench_core::profile::Profile;
/// let p = Profile::new("react").with_model("gpt-5-mini");
/// assert_eq!((p.name.as_str(), p.model.as_deref(), p.prompt_version), ("react", Some("gpt-5-mini"), None));
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Profile {
    /// Short name used in run paths, records and reports (`baseline`, `rubric`, `llm:…`).
    pub name: String,
    /// The model it calls, if any.
    pub model: Option<String>,
    /// A short version of its prompt texts or rules (a content hash), if it has any.
    pub prompt_version: Option<String>,
}

impl Profile {
    /// A profile with a name only (no model, no prompts).
    pub fn new(name: impl Into<String>) -> Profile {
        Profile {
            name: name.into(),
            ..Profile::default()
        }
    }

    /// The same profile with a model.
    pub fn with_model(mut self, model: impl Into<String>) -> Profile {
        self.model = Some(model.into());
        self
    }

    /// The same profile with a prompt version.
    pub fn with_prompt_version(mut self, version: impl Into<String>) -> Profile {
        self.prompt_version = Some(version.into());
        self
    }

    /// What `name`, `model` and `prompt_version` answer (the traits' default `profile`).
    pub fn of(name: &str, model: Option<&str>, prompt_version: Option<String>) -> Profile {
        Profile {
            name: name.to_string(),
            model: model.map(str::to_string),
            prompt_version,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Profile;
    use crate::judge::{Judge, JudgeError, JudgeInput, Scores};
    use std::sync::Arc;

    struct Fixed;

    #[async_trait::async_trait]
    impl Judge for Fixed {
        fn name(&self) -> &str {
            "fixed"
        }
        fn model(&self) -> Option<&str> {
            Some("m-1")
        }
        fn prompt_version(&self) -> Option<String> {
            Some("v1".into())
        }
        async fn judge(&self, _: &JudgeInput<'_>) -> Result<Scores, JudgeError> {
            Err(JudgeError::InvalidAnswer("not called".into()))
        }
    }

    #[test]
    fn the_default_profile_collects_name_model_and_prompt_version_through_wrappers() {
        let want = Profile::new("fixed")
            .with_model("m-1")
            .with_prompt_version("v1");
        assert_eq!(Fixed.profile(), want);
        let boxed: Box<dyn Judge> = Box::new(Fixed);
        assert_eq!(boxed.profile(), want);
        assert_eq!(Arc::new(Fixed).profile(), want);
    }
}
