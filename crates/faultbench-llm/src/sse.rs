//! An incremental reader of Server-Sent Events (the `text/event-stream` format both providers
//! stream replies in).
//!
//! Bytes arrive in arbitrary pieces; [`SseParser::push`] returns every event completed by the
//! piece. An event is a run of `field: value` lines ended by an empty line; only `event` and
//! `data` matter here (several `data` lines are joined by `\n`), comments (`:` lines, used as
//! keep-alives) and other fields are skipped. Lines end in `\n` or `\r\n`. A single line longer
//! than [`MAX_LINE`] is an error rather than unbounded memory.

/// Longest line accepted, in bytes (a streamed chunk is a few hundred bytes).
pub const MAX_LINE: usize = 1 << 20;

/// One event of the stream.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SseEvent {
    /// The `event:` field (Anthropic names its events; OpenAI sends none).
    pub event: Option<String>,
    /// The `data:` lines, joined by newlines.
    pub data: String,
}

/// The incremental parser.
#[derive(Debug, Default)]
pub struct SseParser {
    line: Vec<u8>,
    event: Option<String>,
    data: Option<String>,
}

/// A line over [`MAX_LINE`] bytes.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("an event-stream line is longer than {MAX_LINE} bytes")]
pub struct LineTooLong;

impl SseParser {
    /// A parser at the start of a stream.
    pub fn new() -> Self {
        SseParser::default()
    }

    /// Feeds `bytes`; returns the events they complete, in order.
    pub fn push(&mut self, bytes: &[u8]) -> Result<Vec<SseEvent>, LineTooLong> {
        let mut out = Vec::new();
        for &b in bytes {
            if b == b'\n' {
                let mut line = std::mem::take(&mut self.line);
                if line.last() == Some(&b'\r') {
                    line.pop();
                }
                if let Some(ev) = self.line_done(&line) {
                    out.push(ev);
                }
            } else {
                if self.line.len() >= MAX_LINE {
                    return Err(LineTooLong);
                }
                self.line.push(b);
            }
        }
        Ok(out)
    }

    /// The event left open when the stream ended without its closing empty line.
    pub fn finish(&mut self) -> Option<SseEvent> {
        let line = std::mem::take(&mut self.line);
        let mut ev = if line.is_empty() {
            None
        } else {
            self.line_done(&line)
        };
        if ev.is_none() {
            ev = self.line_done(b"");
        }
        ev
    }

    fn line_done(&mut self, line: &[u8]) -> Option<SseEvent> {
        if line.is_empty() {
            let data = self.data.take()?;
            return Some(SseEvent {
                event: self.event.take(),
                data,
            });
        }
        if line[0] == b':' {
            return None;
        }
        let text = String::from_utf8_lossy(line);
        let (field, value) = match text.split_once(':') {
            Some((f, v)) => (f, v.strip_prefix(' ').unwrap_or(v)),
            None => (text.as_ref(), ""),
        };
        match field {
            "data" => match &mut self.data {
                Some(d) => {
                    d.push('\n');
                    d.push_str(value);
                }
                None => self.data = Some(value.to_string()),
            },
            "event" => self.event = Some(value.to_string()),
            _ => {}
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_across_arbitrary_splits() {
        let stream = b": keep-alive\r\nevent: message_start\r\ndata: {\"a\":1}\r\n\r\ndata: x\ndata: y\n\ndata: [DONE]\n\n";
        // Every split point gives the same events.
        for cut in 0..stream.len() {
            let mut p = SseParser::new();
            let mut ev = p.push(&stream[..cut]).unwrap();
            ev.extend(p.push(&stream[cut..]).unwrap());
            assert_eq!(
                ev,
                vec![
                    SseEvent {
                        event: Some("message_start".into()),
                        data: "{\"a\":1}".into()
                    },
                    SseEvent {
                        event: None,
                        data: "x\ny".into()
                    },
                    SseEvent {
                        event: None,
                        data: "[DONE]".into()
                    },
                ],
                "split at {cut}"
            );
            assert_eq!(p.finish(), None);
        }
    }

    #[test]
    fn an_unterminated_last_event_is_kept_and_long_lines_refused() {
        let mut p = SseParser::new();
        assert!(p.push(b"data: tail").unwrap().is_empty());
        assert_eq!(p.finish().unwrap().data, "tail");
        let mut p = SseParser::new();
        let long = vec![b'a'; MAX_LINE + 1];
        assert_eq!(p.push(&long), Err(LineTooLong));
    }
}
