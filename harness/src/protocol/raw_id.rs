//! Request ids read straight from JSON text, without building values: a request whose other
//! members hold numbers serde_json refuses (`1e309`) still has an id a server may answer.
//!
//! The scan follows JSON's structure (strings, nesting) but takes any scalar token as it
//! stands, so only the shape of the top-level object matters, never what its values mean.

use super::RequestId;

/// The top-level object's `id` as a request id: a string (decoded) or a number token
/// exactly as written. `None` when the text is no object, the object is not closed, or
/// the id is absent or of a type JSON-RPC does not allow (`null`, objects, arrays, booleans).
/// Of duplicate `id` members the last counts, as in serde_json and Python's `json`.
pub fn request_id(text: &[u8]) -> Option<RequestId> {
    let token = member(text, "id")?;
    match token.first()? {
        b'"' => serde_json::from_slice::<String>(token)
            .ok()
            .map(RequestId::String),
        b'-' | b'0'..=b'9' if is_number(token) => std::str::from_utf8(token)
            .ok()
            .map(|n| RequestId::Number(n.to_owned())),
        _ => None,
    }
}

/// The top-level object's `id`, read from its start: the members are scanned in order
/// until `id` (a string or number token), so a line cut short after it (an oversize frame's
/// prefix) or unusable after it (bad UTF-8 further on, nesting too deep to parse) still
/// names the request it answers. `None` when the text does not open an object, or ends or
/// breaks before the id.
pub fn leading_id(text: &[u8]) -> Option<RequestId> {
    let mut s = Scanner { text, at: 0 };
    s.skip_ws();
    s.eat(b'{')?;
    loop {
        let (key, value) = s.name_and_value()?;
        s.skip_ws();
        // A token the text ends in may be cut short (`"id":12` of `"id":123`).
        let after = s.next()?;
        if serde_json::from_slice::<String>(key).ok().as_deref() == Some("id") {
            return request_id(&[b"{\"id\":", value, b"}"].concat());
        }
        if after != b',' {
            return None;
        }
    }
}

/// Whether a token is a JSON number (RFC 8259 section 6), whatever its magnitude:
/// `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`.
fn is_number(token: &[u8]) -> bool {
    fn digits(t: &[u8]) -> usize {
        t.iter().take_while(|b| b.is_ascii_digit()).count()
    }
    let mut t = token.strip_prefix(b"-").unwrap_or(token);
    match t.first() {
        Some(b'0') => t = &t[1..],
        Some(b'1'..=b'9') => t = &t[digits(t)..],
        _ => return false,
    }
    if let Some(rest) = t.strip_prefix(b".") {
        let n = digits(rest);
        if n == 0 {
            return false;
        }
        t = &rest[n..];
    }
    if let Some(rest) = t.strip_prefix(b"e").or_else(|| t.strip_prefix(b"E")) {
        let rest = rest
            .strip_prefix(b"+")
            .or_else(|| rest.strip_prefix(b"-"))
            .unwrap_or(rest);
        let n = digits(rest);
        if n == 0 {
            return false;
        }
        t = &rest[n..];
    }
    t.is_empty()
}

/// The top-level object's member `name` (the last one, if repeated): its value's token
/// exactly as written. Member names are compared decoded (`"\u0069d"` is `id`); what
/// follows the closing brace is not looked at.
pub fn member<'t>(text: &'t [u8], name: &str) -> Option<&'t [u8]> {
    members(text)?
        .into_iter()
        .rev()
        .find(|(key, _)| key.as_deref() == Some(name))
        .map(|(_, value)| value)
}

/// The top-level object's string member `name`, decoded (a request's `method`, say).
pub fn string_member(text: &[u8], name: &str) -> Option<String> {
    serde_json::from_slice::<String>(member(text, name)?).ok()
}

/// The members of the top-level object, in order: the decoded name (`None` when it does
/// not decode) and the value's token. `None` when the text is not a closed object.
pub fn members(text: &[u8]) -> Option<Vec<(Option<String>, &[u8])>> {
    let mut s = Scanner { text, at: 0 };
    s.skip_ws();
    s.eat(b'{')?;
    let mut out = Vec::new();
    s.skip_ws();
    if s.eat(b'}').is_some() {
        return Some(out);
    }
    loop {
        let (key, value) = s.name_and_value()?;
        out.push((serde_json::from_slice::<String>(key).ok(), value));
        s.skip_ws();
        match s.next()? {
            b',' => continue,
            b'}' => return Some(out),
            _ => return None,
        }
    }
}

/// The elements of a top-level array (a batch), each as its token. `None` when the text
/// is not a closed array.
pub fn elements(text: &[u8]) -> Option<Vec<&[u8]>> {
    let mut s = Scanner { text, at: 0 };
    s.skip_ws();
    s.eat(b'[')?;
    let mut out = Vec::new();
    s.skip_ws();
    if s.eat(b']').is_some() {
        return Some(out);
    }
    loop {
        s.skip_ws();
        out.push(s.value()?);
        s.skip_ws();
        match s.next()? {
            b',' => continue,
            b']' => return Some(out),
            _ => return None,
        }
    }
}

/// A cursor over JSON text that knows where tokens end, not what they mean.
struct Scanner<'t> {
    text: &'t [u8],
    at: usize,
}

impl<'t> Scanner<'t> {
    fn peek(&self) -> Option<u8> {
        self.text.get(self.at).copied()
    }

    fn next(&mut self) -> Option<u8> {
        let b = self.peek()?;
        self.at += 1;
        Some(b)
    }

    fn eat(&mut self, want: u8) -> Option<()> {
        (self.peek()? == want).then(|| self.at += 1)
    }

    fn skip_ws(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.at += 1;
        }
    }

    /// One `"name": value` member of an object: the name's token and the value's.
    fn name_and_value(&mut self) -> Option<(&'t [u8], &'t [u8])> {
        self.skip_ws();
        let key = self.string()?;
        self.skip_ws();
        self.eat(b':')?;
        self.skip_ws();
        Some((key, self.value()?))
    }

    /// A string token, quotes included.
    fn string(&mut self) -> Option<&'t [u8]> {
        let start = self.at;
        self.eat(b'"')?;
        loop {
            match self.next()? {
                b'\\' => {
                    self.next()?;
                }
                b'"' => return Some(&self.text[start..self.at]),
                _ => {}
            }
        }
    }

    /// One value's token: a string, a nested object or array (brackets balanced outside
    /// strings), or a scalar up to the next delimiter, whatever its spelling.
    fn value(&mut self) -> Option<&'t [u8]> {
        let start = self.at;
        match self.peek()? {
            b'"' => self.string(),
            b'{' | b'[' => {
                let mut depth = 0usize;
                loop {
                    match self.peek()? {
                        b'"' => {
                            self.string()?;
                            continue;
                        }
                        b'{' | b'[' => depth += 1,
                        b'}' | b']' => {
                            depth -= 1;
                            if depth == 0 {
                                self.at += 1;
                                return Some(&self.text[start..self.at]);
                            }
                        }
                        _ => {}
                    }
                    self.at += 1;
                }
            }
            _ => {
                while let Some(b) = self.peek() {
                    if matches!(b, b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r') {
                        break;
                    }
                    self.at += 1;
                }
                (self.at > start).then(|| &self.text[start..self.at])
            }
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_leading_id_is_read_from_a_line_unusable_after_it() {
        use super::{RequestId, leading_id};
        let n = |s: &str| Some(RequestId::Number(s.into()));
        assert_eq!(
            leading_id(br#"{"jsonrpc":"2.0","id":1,"result":{"x":"aaaa"#),
            n("1")
        );
        assert_eq!(
            leading_id(b"{\"jsonrpc\":\"2.0\",\"id\":\"a\",\"result\":\"\xff\"}"),
            Some(RequestId::String("a".into()))
        );
        let deep = format!(r#"{{"id":7,"result":{}"#, "[".repeat(100_000));
        assert_eq!(leading_id(deep.as_bytes()), n("7"));
        // Not read: cut inside the id, after a nested value that never closes, no object.
        assert_eq!(leading_id(br#"{"jsonrpc":"2.0","id":12"#), None);
        assert_eq!(leading_id(br#"{"result":{"id":1,"#), None);
        assert_eq!(leading_id(b"Starting server on port 1"), None);
        assert_eq!(leading_id(br#"{"id":null,"error":{}}"#), None);
    }

    use super::*;
    use proptest::prelude::*;
    use serde_json::{Map, Value, json};

    #[test]
    fn reads_the_id_beside_numbers_serde_json_refuses() {
        let text = br#"{"jsonrpc":"2.0","id":1042,"method":"tools/call","params":{"name":1e309}}"#;
        assert!(
            serde_json::from_slice::<Value>(text).is_err(),
            "the premise"
        );
        assert_eq!(request_id(text), Some(RequestId::int(1042)));
        assert_eq!(string_member(text, "method").as_deref(), Some("tools/call"));
    }

    #[test]
    fn keeps_the_id_exactly_as_written() {
        for raw in ["1.0", "1e2", "-0", "18446744073709551616", "1e309"] {
            let text = format!(r#"{{"id": {raw} ,"method":"ping"}}"#);
            assert_eq!(
                request_id(text.as_bytes()),
                Some(RequestId::Number(raw.into()))
            );
        }
        let text = br#"{"a":"}\"{","\u0069d":"fz-\"7\"","b":[{"id":2}]}"#;
        assert_eq!(request_id(text), Some(RequestId::String("fz-\"7\"".into())));
    }

    #[test]
    fn no_id_where_there_is_none_to_answer() {
        for text in [
            &br#"{"id":null,"method":"ping"}"#[..],
            br#"{"id":true}"#,
            br#"{"id":[1]}"#,
            br#"{"params":{"id":3}}"#,
            br#"[{"id":3}]"#,
            br#"{"id":3"#,
            br#"{"id":3,"#,
            br#"{"id":10{42}"#,
            br#"{"id":01}"#,
            br#"{"id":1.}"#,
            br#"{"id":1e}"#,
            br#"{"id":-}"#,
            b"",
            b"NaN",
        ] {
            assert_eq!(request_id(text), None, "{}", String::from_utf8_lossy(text));
        }
        assert_eq!(
            request_id(br#"{"id":1,"id":"two"}"#),
            Some(RequestId::String("two".into())),
            "the last of duplicate members counts"
        );
    }

    #[test]
    fn splits_batches_into_elements() {
        let text = br#"[ {"id":1,"p":1e309} , {"id":"b"}, 7 ]"#;
        let items = elements(text).expect("a closed array");
        assert_eq!(items.len(), 3);
        assert_eq!(request_id(items[0]), Some(RequestId::int(1)));
        assert_eq!(request_id(items[1]), Some(RequestId::String("b".into())));
        assert_eq!(items[2], b"7");
        assert_eq!(elements(b"[]"), Some(vec![]));
        assert_eq!(elements(b"[1,"), None);
    }

    fn leaf() -> impl Strategy<Value = Value> {
        prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(|n| json!(n)),
            any::<f64>()
                .prop_filter("finite", |f| f.is_finite())
                .prop_map(|f| json!(f)),
            ".*".prop_map(Value::String),
        ]
    }

    fn value() -> impl Strategy<Value = Value> {
        leaf().prop_recursive(3, 24, 4, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
                prop::collection::btree_map(".{0,6}", inner, 0..4)
                    .prop_map(|m| Value::Object(m.into_iter().collect())),
            ]
        })
    }

    fn id() -> impl Strategy<Value = Value> {
        prop_oneof![
            any::<i64>().prop_map(|n| json!(n)),
            ".*".prop_map(Value::String)
        ]
    }

    /// Numbers no f64 or i64 holds, as a fuzzer writes them.
    const OUT_OF_RANGE: &[&str] = &["1e309", "-1e400", "123456789012345678901234567890e999"];

    proptest! {
        #[test]
        fn finds_the_id_serde_json_finds(
            before in prop::collection::vec((".{0,6}", value()), 0..4),
            after in prop::collection::vec((".{0,6}", value()), 0..4),
            id in id(),
        ) {
            let mut map = Map::new();
            for (k, v) in before { map.insert(k, v); }
            map.remove("id");
            map.insert("id".into(), id.clone());
            for (k, v) in after { if k != "id" { map.insert(k, v); } }
            let text = serde_json::to_string_pretty(&Value::Object(map)).unwrap();
            let want = match &id {
                Value::String(s) => RequestId::String(s.clone()),
                n => RequestId::Number(n.to_string()),
            };
            prop_assert_eq!(request_id(text.as_bytes()), Some(want));
        }

        #[test]
        fn finds_the_id_beside_out_of_range_numbers(
            members in prop::collection::vec((".{0,6}", value()), 0..5),
            id in id(),
            at in 0usize..6,
            big in 0usize..3,
            nested in any::<bool>(),
        ) {
            // Other members, the id, and a number beyond f64 somewhere among them.
            let mut parts: Vec<String> = members
                .iter()
                .filter(|(k, _)| k != "id")
                .map(|(k, v)| format!("{}:{}", json!(k), v))
                .collect();
            let number = OUT_OF_RANGE[big];
            let odd = if nested {
                format!(r#""params":{{"name":{number},"list":[{number}]}}"#)
            } else {
                format!(r#""n":{number}"#)
            };
            parts.insert(at.min(parts.len()), odd);
            parts.insert(at.min(parts.len()) / 2, format!(r#""id":{id}"#));
            let text = format!("{{{}}}", parts.join(","));
            prop_assert!(serde_json::from_str::<Value>(&text).is_err());
            let want = match &id {
                Value::String(s) => RequestId::String(s.clone()),
                n => RequestId::Number(n.to_string()),
            };
            prop_assert_eq!(request_id(text.as_bytes()), Some(want));
        }

        #[test]
        fn never_panics(bytes in prop::collection::vec(any::<u8>(), 0..200)) {
            let _ = request_id(&bytes);
            let _ = elements(&bytes);
        }
    }
}
