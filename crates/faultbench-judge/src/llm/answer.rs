//! Reading and validating the judge model's JSON answers.
//!
//! Models wrap JSON in prose or code fences more often than they should, so the reader takes the
//! outermost `{…}` of the reply. Then each answer is checked field by field; a problem is
//! described in words that go back to the model in the repair request.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One rubric item's verdict.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ItemVerdict {
    /// Pass or fail.
    pub pass: bool,
    /// One line of why.
    pub reason: String,
}

/// The outcome judgement: one verdict per item, in item order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OutcomeAnswer {
    /// Verdicts in the order of the items sent.
    pub items: Vec<ItemVerdict>,
}

/// The fix judgement.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FixAnswer {
    /// 0, 0.5 or 1 (snapped).
    pub score: f64,
    /// One line of why.
    pub reason: String,
}

/// The reasoning judgement.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReasoningAnswer {
    /// The short analysis.
    pub analysis: String,
    /// 0–10.
    pub grounding: f64,
    /// 0–10.
    pub causality: f64,
    /// 0–10.
    pub coverage: f64,
}

/// What is wrong with a judge model's answer, in words the model is shown when asked to
/// repair it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct AnswerError(pub String);

impl From<String> for AnswerError {
    fn from(s: String) -> Self {
        AnswerError(s)
    }
}

impl From<&str> for AnswerError {
    fn from(s: &str) -> Self {
        AnswerError(s.to_string())
    }
}

/// The JSON object in a reply.
pub fn extract_object(reply: &str) -> Result<Value, AnswerError> {
    let start = reply
        .find('{')
        .ok_or_else(|| "the reply contains no JSON object".to_string())?;
    let end = reply
        .rfind('}')
        .filter(|e| *e > start)
        .ok_or_else(|| "the JSON object is not closed".to_string())?;
    let v: Value = serde_json::from_str(&reply[start..=end])
        .map_err(|e| format!("the JSON object does not parse ({e})"))?;
    if v.is_object() {
        Ok(v)
    } else {
        Err(AnswerError("the answer is not a JSON object".into()))
    }
}

fn one_line(s: &str) -> String {
    let flat: String = s.split_whitespace().collect::<Vec<_>>().join(" ");
    match flat.char_indices().nth(300) {
        Some((b, _)) => format!("{}…", &flat[..b]),
        None => flat,
    }
}

fn number(v: &Value, key: &str) -> Result<f64, String> {
    match v.get(key) {
        Some(Value::Number(n)) => n.as_f64().ok_or_else(|| format!("`{key}` is not a number")),
        Some(Value::String(s)) => s
            .trim()
            .parse()
            .map_err(|_| format!("`{key}` is \"{s}\", not a number")),
        Some(_) => Err(format!("`{key}` is not a number")),
        None => Err(format!("`{key}` is missing")),
    }
}

fn boolean(v: &Value, key: &str) -> Result<bool, String> {
    match v.get(key) {
        Some(Value::Bool(b)) => Ok(*b),
        Some(Value::String(s)) if s.eq_ignore_ascii_case("true") => Ok(true),
        Some(Value::String(s)) if s.eq_ignore_ascii_case("false") => Ok(false),
        Some(_) => Err(format!("`{key}` is not true or false")),
        None => Err(format!("`{key}` is missing")),
    }
}

/// Validates an outcome answer for `n` items: every id from 1 to `n` exactly once, each with a
/// boolean `pass` and a non-empty `reason`.
pub fn parse_outcome(reply: &str, n: usize) -> Result<OutcomeAnswer, AnswerError> {
    let v = extract_object(reply)?;
    let list = v
        .get("axes")
        .and_then(Value::as_array)
        .ok_or("`axes` is missing or not a list")?;
    let mut items: Vec<Option<ItemVerdict>> = vec![None; n];
    for (k, entry) in list.iter().enumerate() {
        let id = number(entry, "id").map_err(|e| format!("entry {}: {e}", k + 1))?;
        if id.fract() != 0.0 || id < 1.0 || id > n as f64 {
            return Err(format!(
                "entry {}: id {id} is not an item number from 1 to {n}",
                k + 1
            )
            .into());
        }
        let i = id as usize - 1;
        if items[i].is_some() {
            return Err(format!("item {id} is answered twice").into());
        }
        let pass = boolean(entry, "pass").map_err(|e| format!("item {id}: {e}"))?;
        let reason = entry
            .get("reason")
            .and_then(Value::as_str)
            .map(one_line)
            .filter(|r| !r.is_empty())
            .ok_or_else(|| format!("item {id}: `reason` is missing or empty"))?;
        items[i] = Some(ItemVerdict { pass, reason });
    }
    let missing: Vec<String> = items
        .iter()
        .enumerate()
        .filter(|(_, v)| v.is_none())
        .map(|(i, _)| (i + 1).to_string())
        .collect();
    if !missing.is_empty() {
        return Err(format!("items {} are not answered", missing.join(", ")).into());
    }
    Ok(OutcomeAnswer {
        items: items.into_iter().flatten().collect(),
    })
}

/// Validates a fix answer: `score` a number in \[0, 1\] (snapped to 0, 0.5 or 1).
pub fn parse_fix(reply: &str) -> Result<FixAnswer, AnswerError> {
    let v = extract_object(reply)?;
    let score = number(&v, "score")?;
    if !(0.0..=1.0).contains(&score) {
        return Err(format!("`score` is {score}; it must be 0, 0.5 or 1").into());
    }
    let reason = v
        .get("reason")
        .and_then(Value::as_str)
        .map(one_line)
        .unwrap_or_default();
    Ok(FixAnswer {
        score: faultbench_core::judge::snap_fix(score),
        reason,
    })
}

/// Validates a reasoning answer: the three dimensions are numbers in \[0, 10\] and the
/// analysis is present.
pub fn parse_reasoning(reply: &str) -> Result<ReasoningAnswer, AnswerError> {
    let v = extract_object(reply)?;
    let dim = |k: &str| -> Result<f64, String> {
        let x = number(&v, k)?;
        if (0.0..=10.0).contains(&x) {
            Ok(x)
        } else {
            Err(format!("`{k}` is {x}; it must be between 0 and 10"))
        }
    };
    let analysis = v
        .get("analysis")
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|a| !a.is_empty())
        .ok_or("`analysis` is missing or empty")?
        .to_string();
    Ok(ReasoningAnswer {
        analysis,
        grounding: dim("grounding")?,
        causality: dim("causality")?,
        coverage: dim("coverage")?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outcome_answers() {
        let ok = "Here you go:\n```json\n{\"axes\": [{\"id\": 2, \"pass\": false, \"reason\": \"no\"}, \
                  {\"id\": 1, \"pass\": true, \"reason\": \"names r1\\nclearly\"}]}\n```";
        let a = parse_outcome(ok, 2).unwrap();
        assert!(a.items[0].pass && !a.items[1].pass);
        assert_eq!(a.items[0].reason, "names r1 clearly");
        assert!(
            parse_outcome(ok, 3)
                .unwrap_err()
                .0
                .contains("items 3 are not answered")
        );
        let dup = r#"{"axes": [{"id": 1, "pass": true, "reason": "a"}, {"id": 1, "pass": true, "reason": "b"}]}"#;
        assert!(parse_outcome(dup, 1).unwrap_err().0.contains("twice"));
        assert!(parse_outcome("pass", 1).unwrap_err().0.contains("no JSON"));
        let bad = r#"{"axes": [{"id": 1, "pass": "maybe", "reason": "a"}]}"#;
        assert!(parse_outcome(bad, 1).unwrap_err().0.contains("`pass`"));
    }

    #[test]
    fn fix_and_reasoning_answers() {
        assert_eq!(
            parse_fix(r#"{"score": 0.8, "reason": "ok"}"#)
                .unwrap()
                .score,
            1.0
        );
        assert_eq!(parse_fix(r#"{"score": "0.5"}"#).unwrap().score, 0.5);
        assert!(parse_fix(r#"{"score": 2}"#).is_err());
        let r = parse_reasoning(
            r#"{"analysis": "fine", "grounding": 8, "causality": 7.5, "coverage": 3}"#,
        )
        .unwrap();
        assert_eq!(r.causality, 7.5);
        assert!(
            parse_reasoning(r#"{"analysis": "x", "grounding": 11, "causality": 1, "coverage": 1}"#)
                .unwrap_err()
                .0
                .contains("between 0 and 10")
        );
        assert!(parse_reasoning(r#"{"grounding": 1, "causality": 1, "coverage": 1}"#).is_err());
    }
}
