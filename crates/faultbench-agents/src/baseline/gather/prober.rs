//! The [`Prober`]: every tool call of the baseline goes through it, within the call cap and
//! the wall-clock deadline.

use faultbench_core::toolbox::{ToolError, Toolbox};
use futures_util::stream::{self, StreamExt};
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
    /// does not cover answers `None`. The window rolls: a call starts as soon as any earlier
    /// one ends, rather than each group of [`PARALLEL`] waiting for its slowest call (a ping
    /// that must time out held three quick reads back).
    pub async fn call_many(&mut self, reqs: Vec<(&'static str, Value)>) -> Vec<Option<Answer>> {
        let n = reqs.len();
        let allowed = if Instant::now() >= self.deadline {
            0
        } else {
            (self.max_calls.saturating_sub(self.calls) as usize).min(n)
        };
        if allowed < n {
            self.out_of_budget = true;
        }
        let deadline = self.deadline;
        let tools = self.tools.clone();
        // Calls actually made (one past the deadline is not).
        let made = Arc::new(std::sync::atomic::AtomicU32::new(0));
        // The futures are built first and then streamed: a `map` closure over the requests
        // would make the agent's future not `Send` (a higher-ranked lifetime in the closure).
        let calls: Vec<_> = reqs
            .into_iter()
            .take(allowed)
            .enumerate()
            .map(|(i, (tool, args))| {
                let tools = tools.clone();
                let made = made.clone();
                async move { (i, Self::one(&tools, &made, deadline, tool, args).await) }
            })
            .collect();
        // Unordered, so that a finished call frees its slot at once (an ordered buffer keeps
        // it until every earlier call is done); put back in request order after.
        let mut tagged: Vec<(usize, Option<Answer>)> = stream::iter(calls)
            .buffer_unordered(PARALLEL)
            .collect()
            .await;
        tagged.sort_by_key(|(i, _)| *i);
        let mut out: Vec<Option<Answer>> = tagged.into_iter().map(|(_, a)| a).collect();
        self.calls += made.load(std::sync::atomic::Ordering::Relaxed);
        if out.iter().any(Option::is_none) {
            self.out_of_budget = true;
        }
        out.extend((allowed..n).map(|_| None));
        out
    }

    /// One call of [`Prober::call_many`]: `None` past the deadline.
    async fn one(
        tools: &Arc<dyn Toolbox>,
        made: &std::sync::atomic::AtomicU32,
        deadline: Instant,
        tool: &'static str,
        args: Value,
    ) -> Option<Answer> {
        let remaining = deadline.saturating_duration_since(Instant::now());
        if remaining.is_zero() {
            return None;
        }
        made.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
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

#[cfg(test)]
mod tests {
    use super::*;
    use faultbench_core::toolbox::{ToolOutput, ToolSpec};
    use std::sync::Mutex;
    use std::time::Duration;

    /// Call 0 answers only once call `PARALLEL + 1` has started; every other call answers at
    /// once with its own number. Records the most calls in flight.
    #[derive(Default)]
    struct Gated {
        started: Mutex<Vec<u64>>,
        in_flight: Mutex<(usize, usize)>,
        last_started: tokio::sync::Notify,
    }

    #[async_trait::async_trait]
    impl Toolbox for Gated {
        fn specs(&self) -> Vec<ToolSpec> {
            Vec::new()
        }
        async fn call(&self, _name: &str, args: Value) -> Result<ToolOutput, ToolError> {
            let i = args["i"].as_u64().unwrap_or(0);
            {
                let mut f = self.in_flight.lock().unwrap();
                f.0 += 1;
                f.1 = f.1.max(f.0);
            }
            self.started.lock().unwrap().push(i);
            if i == PARALLEL as u64 + 1 {
                self.last_started.notify_one();
            }
            if i == 0 {
                self.last_started.notified().await;
            }
            self.in_flight.lock().unwrap().0 -= 1;
            Ok(ToolOutput::text(i.to_string()))
        }
    }

    #[tokio::test]
    async fn a_slow_call_does_not_hold_back_the_next_ones_and_order_is_kept() {
        let tools = Arc::new(Gated::default());
        let far = Instant::now() + Duration::from_secs(3600);
        let mut p = Prober::new(tools.clone(), 100, far);
        let n = PARALLEL + 2;
        let reqs = (0..n).map(|i| ("t", json!({ "i": i }))).collect();
        // With fixed groups of PARALLEL, call 0 would wait for a call that never starts: the
        // bound turns that hang into a failure.
        let answers = tokio::time::timeout(Duration::from_secs(60), p.call_many(reqs))
            .await
            .expect("later calls started while the first one waited");
        let texts: Vec<String> = answers.into_iter().map(|a| a.unwrap().text).collect();
        let want: Vec<String> = (0..n).map(|i| i.to_string()).collect();
        assert_eq!(texts, want, "answers in request order");
        assert_eq!(p.calls, n as u32);
        assert!(!p.out_of_budget);
        assert!(
            tools.in_flight.lock().unwrap().1 <= PARALLEL,
            "at most PARALLEL at once"
        );
    }

    #[tokio::test]
    async fn calls_past_the_cap_answer_none() {
        let tools = Arc::new(Gated::default());
        let far = Instant::now() + Duration::from_secs(3600);
        let mut p = Prober::new(tools, 2, far);
        // Calls 1..=3 answer at once (none is the gated call 0).
        let reqs = (1..=3).map(|i| ("t", json!({ "i": i }))).collect();
        let answers = p.call_many(reqs).await;
        assert_eq!(answers.iter().filter(|a| a.is_some()).count(), 2);
        assert!(answers[2].is_none());
        assert_eq!(p.calls, 2);
        assert!(p.out_of_budget);
    }
}
