//! Bounds on what untrusted input may make faultbench hold or print.
//!
//! Every value read from a file is untrusted; a value that is only *unusual* must not make a
//! command allocate without limit. [`json_shape`] measures a JSON document's nesting depth and
//! number of values in one pass over its bytes, without building it, so a reader can refuse a
//! document that would expand into far more memory than its size (deep nesting, millions of
//! tiny values) before parsing. Messages that repeat input cut it with
//! [`text::echo`](crate::text::echo).
//!
//! The caps themselves sit beside the readers that apply them (for example
//! [`identity`](crate::identity)'s `MAX_IDENTITY_*`).

/// What [`json_shape`] measured.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct JsonShape {
    /// Deepest nesting of objects and arrays (a scalar document is 0, `{}` is 1).
    pub depth: usize,
    /// Values in the document, counting every object, array, member value and array element
    /// (an upper bound when the text is not valid JSON, which the parser then refuses).
    pub values: usize,
}

/// Measures the nesting depth and the number of values of a JSON text in one pass over its
/// bytes (strings are skipped, escapes included). It does not validate: invalid JSON gets some
/// measure and is left to the parser, which sees it only if the measure is within the caps.
///
/// ```
/// use faultbench_core::bounds::json_shape;
/// let s = json_shape(br#"{"a": [1, 2, {"b": "x,]"}], "c": null}"#);
/// assert_eq!(s.depth, 3);
/// assert_eq!(s.values, 7); // the object, the array, 1, 2, the inner object, "x,]", null
/// ```
pub fn json_shape(text: &[u8]) -> JsonShape {
    let mut shape = JsonShape::default();
    let mut depth = 0usize;
    let mut in_string = false;
    let mut escaped = false;
    // Whether a value has started since the last `[`, `{`, `,` or `:` (counts scalars once).
    let mut counted = false;
    // Per open container, whether it is an object; and whether the next string is a member
    // name (it follows `{`, or `,` inside an object), which is not a value.
    let mut in_object: Vec<bool> = Vec::new();
    let mut expect_key = false;
    for &b in text {
        if in_string {
            if escaped {
                escaped = false;
            } else if b == b'\\' {
                escaped = true;
            } else if b == b'"' {
                in_string = false;
            }
            continue;
        }
        match b {
            b'"' => {
                in_string = true;
                let key = std::mem::take(&mut expect_key);
                if !key && !counted {
                    shape.values += 1;
                    counted = true;
                }
            }
            b'{' | b'[' => {
                shape.values += 1;
                depth += 1;
                shape.depth = shape.depth.max(depth);
                // Only the nesting of the current path is kept, so this stack is as deep as
                // the document: the callers refuse a deep one before parsing.
                in_object.push(b == b'{');
                expect_key = b == b'{';
                counted = false;
            }
            b'}' | b']' => {
                depth = depth.saturating_sub(1);
                in_object.pop();
                expect_key = false;
                counted = true;
            }
            b',' => {
                expect_key = in_object.last().copied().unwrap_or(false);
                counted = false;
            }
            b':' => {
                expect_key = false;
                counted = false;
            }
            b' ' | b'\t' | b'\n' | b'\r' => {}
            _ => {
                if !counted {
                    shape.values += 1;
                    counted = true;
                }
            }
        }
    }
    shape
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shape_counts_depth_and_values_and_skips_strings() {
        assert_eq!(
            json_shape(b"1"),
            JsonShape {
                depth: 0,
                values: 1
            }
        );
        assert_eq!(
            json_shape(b"[]"),
            JsonShape {
                depth: 1,
                values: 1
            }
        );
        assert_eq!(
            json_shape(br#"[[[["[[[[\"]]"]]]]"#),
            JsonShape {
                depth: 4,
                values: 5
            }
        );
        assert_eq!(json_shape(b"[0,0,0,0]").values, 5);
        assert_eq!(json_shape(br#"{"k":1,"l":{"m":true}}"#).values, 4);
        let deep = "[".repeat(100_000);
        assert_eq!(json_shape(deep.as_bytes()).depth, 100_000);
        // Garbage gets a measure, never a panic.
        let _ = json_shape(b"}}]],,::\"\\");
    }
}
