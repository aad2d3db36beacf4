//! Numbers beyond what a float holds (`1e400`) are valid JSON (RFC 8259 section 6 sets no
//! limit) but serde_json refuses them. Rather than call such a line "not JSON", mcpcheck
//! reads it with each out-of-range number token turned into a string holding the token
//! exactly as written, so the message is still judged: an id that matches nothing, a
//! capability value of the wrong type, each quoting the number. The frame's bytes stay as
//! received.

use serde_json::Value;

/// Whether serde_json's error is its refusal of a number too large for a float.
///
/// Matched by message on purpose: serde_json gives this error no kind of its own (its
/// `classify()` says only `Syntax`, like any other malformed input, and the error code is
/// private), so its text, "number out of range", is the one thing that tells it apart. The
/// tests below pin that text, so a serde_json release that rewords it fails them.
pub fn is_out_of_range(error: &serde_json::Error) -> bool {
    error.to_string().starts_with("number out of range")
}

/// Parses `text` with every number token that overflows a float replaced by a string of
/// that token. `None` if the text is still not JSON, or no number needed replacing.
pub fn parse(text: &str) -> Option<Value> {
    let rewritten = quote_overflowing(text)?;
    serde_json::from_str(&rewritten).ok()
}

/// `text` with overflowing number tokens (outside strings) quoted; `None` if there are none.
fn quote_overflowing(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(text.len() + 16);
    let (mut i, mut copied, mut changed) = (0, 0, false);
    let mut in_string = false;
    while i < bytes.len() {
        let b = bytes[i];
        if in_string {
            match b {
                b'\\' => i += 1,
                b'"' => in_string = false,
                _ => {}
            }
            i += 1;
            continue;
        }
        match b {
            b'"' => {
                in_string = true;
                i += 1;
            }
            b'-' | b'0'..=b'9' => {
                let end = i + bytes[i..]
                    .iter()
                    .take_while(|c| matches!(c, b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9'))
                    .count();
                let token = &text[i..end];
                if token.parse::<f64>().is_ok_and(f64::is_infinite) {
                    out.push_str(&text[copied..i]);
                    out.push('"');
                    out.push_str(token);
                    out.push('"');
                    copied = end;
                    changed = true;
                }
                i = end;
            }
            _ => i += 1,
        }
    }
    if !changed {
        return None;
    }
    out.push_str(&text[copied..]);
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn quotes_only_numbers_a_float_cannot_hold() {
        let text = r#"{"a":1e400,"b":"1e400","c":[-2E+999,3.5],"d":12}"#;
        let err = serde_json::from_str::<Value>(text).unwrap_err();
        assert!(is_out_of_range(&err), "{err}");
        assert_eq!(
            parse(text),
            Some(json!({"a": "1e400", "b": "1e400", "c": ["-2E+999", 3.5], "d": 12}))
        );
        assert_eq!(parse(r#"{"a":1}"#), None);
        assert_eq!(parse(r#"{"a":1e400"#), None);
    }
}
