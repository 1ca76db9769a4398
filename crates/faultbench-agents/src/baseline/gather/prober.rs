//! The [`Prober`]: every tool call of the baseline goes through it, within the call cap and
//! the wall-clock deadline.

use faultbench_core::toolbox::{ToolError, Toolbox};
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::Instant;

/// Runs tools within the call cap and the wall-clock deadline.
pub struct Prober {
    tools: Arc<dyn Toolbox>,
    /// Calls made.
    pub calls: u32,
    max_calls: u32,
    deadline: Instant,
    /// A call was skipped for lack of budget.
    pub out_of_budget: bool,
    /// `exec_shell` works here (not refused, scripts answer).
    pub shell: bool,
}

/// A tool's answer: text, and whether the tool reported an error.
pub struct Answer {
    /// The output (or the error message).
    pub text: String,
    /// The call failed or the command exited non-zero.
    pub failed: bool,
    /// The policy refused the call.
    pub refused: bool,
}

impl Prober {
    /// A prober over `tools`.
    pub fn new(tools: Arc<dyn Toolbox>, max_calls: u32, deadline: Instant) -> Prober {
        Prober {
            tools,
            calls: 0,
            max_calls,
            deadline,
            out_of_budget: false,
            shell: true,
        }
    }

    /// Calls a tool; `None` when the budget is spent.
    pub async fn call(&mut self, tool: &str, args: Value) -> Option<Answer> {
        if self.calls >= self.max_calls || Instant::now() >= self.deadline {
            self.out_of_budget = true;
            return None;
        }
        self.calls += 1;
        let remaining = self.deadline.saturating_duration_since(Instant::now());
        match tokio::time::timeout(remaining, self.tools.call(tool, args)).await {
            Ok(Ok(out)) => Some(Answer {
                text: out.text,
                failed: out.is_error,
                refused: false,
            }),
            Ok(Err(e)) => Some(Answer {
                refused: matches!(e, ToolError::Refused { .. }),
                text: format!("ERROR: {e}"),
                failed: true,
            }),
            Err(_) => {
                self.out_of_budget = true;
                None
            }
        }
    }

    /// Runs several calls, at most [`PARALLEL`] at a time; answers come back in the order
    /// of the requests (so everything downstream stays deterministic). A call the budget
    /// does not cover answers `None`.
    pub async fn call_many(&mut self, reqs: Vec<(&'static str, Value)>) -> Vec<Option<Answer>> {
        let mut out = Vec::with_capacity(reqs.len());
        let mut reqs = reqs.into_iter().peekable();
        while reqs.peek().is_some() {
            let chunk: Vec<(&'static str, Value)> = reqs.by_ref().take(PARALLEL).collect();
            let now = Instant::now();
            if now >= self.deadline {
                self.out_of_budget = true;
            }
            let allowed = if self.out_of_budget {
                0
            } else {
                (self.max_calls.saturating_sub(self.calls) as usize).min(chunk.len())
            };
            if allowed < chunk.len() {
                self.out_of_budget = true;
            }
            self.calls += allowed as u32;
            let remaining = self.deadline.saturating_duration_since(now);
            let tools = self.tools.clone();
            let futs = chunk.iter().take(allowed).map(|(tool, args)| {
                let tools = tools.clone();
                let args = args.clone();
                async move {
                    match tokio::time::timeout(remaining, tools.call(tool, args)).await {
                        Ok(Ok(o)) => Some(Answer {
                            text: o.text,
                            failed: o.is_error,
                            refused: false,
                        }),
                        Ok(Err(e)) => Some(Answer {
                            refused: matches!(e, ToolError::Refused { .. }),
                            text: format!("ERROR: {e}"),
                            failed: true,
                        }),
                        Err(_) => None,
                    }
                }
            });
            let answers = futures_util::future::join_all(futs).await;
            if answers.iter().any(Option::is_none) {
                self.out_of_budget = true;
            }
            out.extend(answers);
            out.extend((allowed..chunk.len()).map(|_| None));
        }
        out
    }

    /// Runs the same kind of read-only script on several devices through `exec_shell`;
    /// `None` per device when the shell is unavailable or the budget is spent. A refusal
    /// (read-only policy) switches the shell off for the rest of the run.
    pub async fn shells(&mut self, jobs: Vec<(String, String)>) -> Vec<Option<Answer>> {
        if !self.shell {
            return jobs.iter().map(|_| None).collect();
        }
        let reqs = jobs
            .into_iter()
            .map(|(d, c)| ("exec_shell", json!({"host_name": d, "command": c})))
            .collect();
        let answers = self.call_many(reqs).await;
        if answers
            .iter()
            .flatten()
            .any(|a| a.refused || a.text.starts_with("ERROR: unknown tool"))
        {
            self.shell = false;
            return answers.iter().map(|_| None).collect();
        }
        answers
    }
}

/// Tool calls in flight at once (the labs share two cores with everything else).
pub const PARALLEL: usize = 4;
