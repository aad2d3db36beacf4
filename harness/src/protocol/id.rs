//! JSON-RPC request ids, kept exactly as they were written on the wire.
//!
//! A server that echoes `1` as `"1"`, or `9007199254740993` as `9007199254740992`, has
//! broken the id rule; comparing through `f64` or `i64` would hide both. Numbers are
//! therefore kept as their raw token and strings as their decoded text.

use std::fmt;

use serde_json::value::RawValue;

/// A request id as sent: a JSON string or a JSON number token.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum RequestId {
    /// The number exactly as written (`42`, `-7`, `18446744073709551616`, `1.0`).
    Number(String),
    /// The decoded string value.
    String(String),
}

impl RequestId {
    /// An integer id, as mcpcheck allocates them.
    pub fn int(n: i64) -> Self {
        RequestId::Number(n.to_string())
    }

    /// Reads an id from its raw JSON token. `None` for `null` or any type JSON-RPC does
    /// not allow as an id (objects, arrays, booleans).
    pub fn from_raw(raw: &RawValue) -> Option<Self> {
        let text = raw.get().trim();
        match text.as_bytes().first()? {
            b'"' => serde_json::from_str::<String>(text)
                .ok()
                .map(RequestId::String),
            b'-' | b'0'..=b'9' => Some(RequestId::Number(text.to_owned())),
            _ => None,
        }
    }

    /// Reads an id from a parsed JSON value (a frame read past serde's message types, when
    /// salvaging one); `None` as for [`RequestId::from_raw`].
    pub fn from_value(value: &serde_json::Value) -> Option<Self> {
        let raw = serde_json::from_value::<Box<RawValue>>(value.clone()).ok()?;
        Self::from_raw(&raw)
    }

    /// The id as JSON, for writing a message.
    pub fn to_json(&self) -> Box<RawValue> {
        let text = match self {
            RequestId::Number(raw) => raw.clone(),
            RequestId::String(s) => serde_json::to_string(s).expect("a string always serializes"),
        };
        RawValue::from_string(text).expect("ids are valid JSON by construction")
    }

    /// The id as a `serde_json::Value` (numbers too large for `f64` lose precision here,
    /// which is why comparisons never go through this).
    pub fn to_value(&self) -> serde_json::Value {
        serde_json::from_str(self.to_json().get()).unwrap_or(serde_json::Value::Null)
    }

    /// True when `other` carries the same text under the other JSON type, i.e. the
    /// server turned `7` into `"7"` or the reverse.
    pub fn same_text_other_type(&self, other: &RequestId) -> bool {
        match (self, other) {
            (RequestId::Number(n), RequestId::String(s))
            | (RequestId::String(s), RequestId::Number(n)) => n == s,
            _ => false,
        }
    }
}

impl fmt::Display for RequestId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.to_json().get())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(s: &str) -> Box<RawValue> {
        RawValue::from_string(s.to_owned()).unwrap()
    }

    #[test]
    fn keeps_big_numbers_exactly() {
        let a = RequestId::from_raw(&raw("9007199254740993")).unwrap();
        let b = RequestId::from_raw(&raw("9007199254740992")).unwrap();
        assert_ne!(a, b);
        assert_eq!(a.to_string(), "9007199254740993");
    }

    #[test]
    fn string_and_number_differ_but_are_recognised() {
        let n = RequestId::from_raw(&raw("7")).unwrap();
        let s = RequestId::from_raw(&raw("\"7\"")).unwrap();
        assert_ne!(n, s);
        assert!(n.same_text_other_type(&s));
    }

    #[test]
    fn escaped_strings_compare_by_value() {
        let a = RequestId::from_raw(&raw(r#""\u00e9""#)).unwrap();
        let b = RequestId::from_raw(&raw("\"é\"")).unwrap();
        assert_eq!(a, b);
    }

    #[test]
    fn rejects_other_types() {
        for bad in ["null", "true", "{}", "[]"] {
            assert!(RequestId::from_raw(&raw(bad)).is_none(), "{bad}");
        }
    }
}
