//! Which tools a piece of outbound bytes would make a server run: the `tools/call`
//! messages inside them, read as a server would read them. The tool-call gate
//! (`session::gate`) asks this of every write, whatever built the bytes (a scenario's
//! request, raw `send` bytes, an `http` step's body, a fuzz mutation), so one rule decides
//! what may leave.
//!
//! Bytes that parse are read exactly, batches and messages without an id included (a
//! sloppy server may run a `tools/call` sent as a notification). Bytes serde_json refuses
//! are scanned member by member ([`raw_id`]), since a lenient parser may still take them.
//! What neither can read but still mentions `tools/call` is [`ToolCall::Unreadable`]: the
//! gate then decides by the tool names the text quotes.

use serde_json::Value;

use super::raw_id;

/// The method that runs a tool (spec: server/tools#calling-tools).
pub const TOOLS_CALL: &str = "tools/call";

/// One `tools/call` found in outbound bytes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ToolCall {
    /// It names this tool (`params.name`, decoded).
    Named(String),
    /// A `tools/call` whose name is no string, or is absent: no server can look a tool up
    /// by it.
    Nameless,
    /// Text that mentions `tools/call` but is no JSON a scan can read (cut short, garbled):
    /// its tool, if any, cannot be told.
    Unreadable,
}

/// The `tools/call` messages in `bytes`: one JSON message or batch, or several lines of
/// them (stdio raw writes). Empty when the bytes call no tool.
pub fn tool_calls(bytes: &[u8]) -> Vec<ToolCall> {
    if let Ok(value) = serde_json::from_slice::<Value>(bytes) {
        return calls_in_value(&value);
    }
    bytes
        .split(|b| *b == b'\n')
        .filter(|line| !line.iter().all(u8::is_ascii_whitespace))
        .flat_map(calls_in_line)
        .collect()
}

/// The `tools/call` messages in one line of text.
fn calls_in_line(line: &[u8]) -> Vec<ToolCall> {
    if let Ok(value) = serde_json::from_slice::<Value>(line) {
        return calls_in_value(&value);
    }
    if let Some(items) = raw_id::elements(line) {
        return items.into_iter().flat_map(calls_in_line).collect();
    }
    if raw_id::members(line).is_some() {
        return scanned_call(line).into_iter().collect();
    }
    if mentions_tools_call(line) {
        return vec![ToolCall::Unreadable];
    }
    Vec::new()
}

/// The calls in a parsed message or batch.
fn calls_in_value(value: &Value) -> Vec<ToolCall> {
    match value {
        Value::Array(items) => items.iter().filter_map(parsed_call).collect(),
        one => parsed_call(one).into_iter().collect(),
    }
}

fn parsed_call(message: &Value) -> Option<ToolCall> {
    (message.get("method")?.as_str()? == TOOLS_CALL).then(|| {
        match message.pointer("/params/name").and_then(Value::as_str) {
            Some(name) => ToolCall::Named(name.to_owned()),
            None => ToolCall::Nameless,
        }
    })
}

/// A closed object serde_json refused (a number beyond `f64`, say), read member by member.
fn scanned_call(object: &[u8]) -> Option<ToolCall> {
    if raw_id::string_member(object, "method")? != TOOLS_CALL {
        return None;
    }
    let name = raw_id::member(object, "params").and_then(|p| raw_id::string_member(p, "name"));
    Some(name.map_or(ToolCall::Nameless, ToolCall::Named))
}

/// Whether unreadable text spells `tools/call`, its slash escaped (`\/`, `\u002f`) or not.
fn mentions_tools_call(text: &[u8]) -> bool {
    let text = String::from_utf8_lossy(text);
    [
        "tools/call",
        r"tools\/call",
        r"tools\u002fcall",
        r"tools\u002Fcall",
    ]
    .iter()
    .any(|spelling| text.contains(spelling))
}

/// Whether unreadable `text` quotes `name` as a JSON string, the way a `params.name`
/// holding it would be written.
pub fn quotes_name(text: &[u8], name: &str) -> bool {
    let quoted = serde_json::to_string(name).expect("strings always serialize");
    String::from_utf8_lossy(text).contains(&quoted)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn named(n: &str) -> ToolCall {
        ToolCall::Named(n.into())
    }

    #[test]
    fn a_request_names_its_tool() {
        let bytes = br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo"}}"#;
        assert_eq!(tool_calls(bytes), vec![named("echo")]);
    }

    #[test]
    fn other_methods_call_nothing() {
        let bytes = br#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#;
        assert!(tool_calls(bytes).is_empty());
        assert!(tool_calls(b"").is_empty());
        assert!(tool_calls(b"not json at all").is_empty());
    }

    #[test]
    fn notifications_batches_and_lines_are_all_read() {
        let notification = br#"{"jsonrpc":"2.0","method":"tools/call","params":{"name":"a"}}"#;
        assert_eq!(tool_calls(notification), vec![named("a")]);
        let batch = br#"[{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a"}},
            {"jsonrpc":"2.0","id":2,"method":"ping"},
            {"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"b"}}]"#;
        assert_eq!(tool_calls(batch), vec![named("a"), named("b")]);
        let lines = b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"a\"}}\n\
            {\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"b\"}}\n";
        assert_eq!(tool_calls(lines), vec![named("a"), named("b")]);
    }

    #[test]
    fn escaped_names_and_methods_are_decoded() {
        let bytes =
            br#"{"jsonrpc":"2.0","id":1,"method":"tools\/call","params":{"name":"ec\u0068o"}}"#;
        assert_eq!(tool_calls(bytes), vec![named("echo")]);
    }

    #[test]
    fn a_name_that_is_no_string_is_nameless() {
        let bytes = br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":7}}"#;
        assert_eq!(tool_calls(bytes), vec![ToolCall::Nameless]);
        let bytes = br#"{"jsonrpc":"2.0","id":1,"method":"tools/call"}"#;
        assert_eq!(tool_calls(bytes), vec![ToolCall::Nameless]);
    }

    #[test]
    fn text_serde_refuses_is_scanned() {
        let bytes = br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"n":1e309}}}"#;
        assert_eq!(tool_calls(bytes), vec![named("echo")]);
    }

    #[test]
    fn cut_short_text_mentioning_tools_call_is_unreadable() {
        let bytes = br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo""#;
        assert_eq!(tool_calls(bytes), vec![ToolCall::Unreadable]);
        assert!(quotes_name(bytes, "echo"));
        assert!(!quotes_name(bytes, "ech"));
        let escaped = br#"{"id":1,"method":"tools\u002fcall","params":{"name":"echo""#;
        assert_eq!(tool_calls(escaped), vec![ToolCall::Unreadable]);
        let other = br#"{"id":1,"method":"resources\u002fread","params":{"uri":"a""#;
        assert!(
            tool_calls(other).is_empty(),
            "an escaped slash alone is no tools/call"
        );
    }
}
