//! JSON-RPC 2.0 classification of one parsed frame.
//!
//! Classification is total: every JSON value is either a well-formed message (or batch of
//! them) or [`Invalid`] with the precise rule it breaks. Nothing here panics or allocates
//! more than a small multiple of the input.

use serde::Deserialize;
use serde_json::Value;
use serde_json::value::RawValue;

use super::id::RequestId;
use super::text::{Mark, clip_marked};

/// A well-formed JSON-RPC 2.0 message.
#[derive(Clone, Debug, PartialEq)]
pub enum Message {
    /// A message with a method and an id: it expects a response.
    Request(Request),
    /// A message with a method and no id: it expects none.
    Notification(Notification),
    /// A result or error answering a request.
    Response(Response),
}

/// A JSON-RPC request: a method call that expects a response with the same id.
#[derive(Clone, Debug, PartialEq)]
pub struct Request {
    /// The id the response must echo exactly.
    pub id: RequestId,
    /// The method called, e.g. `tools/list`.
    pub method: String,
    /// The parameters (an object or array), if any.
    pub params: Option<Value>,
}

/// A JSON-RPC notification: a method call without an id, never answered.
#[derive(Clone, Debug, PartialEq)]
pub struct Notification {
    /// The method, e.g. `notifications/initialized`.
    pub method: String,
    /// The parameters (an object or array), if any.
    pub params: Option<Value>,
}

/// A JSON-RPC response: a result or an error for the request with its id.
#[derive(Clone, Debug, PartialEq)]
pub struct Response {
    /// `None` is the JSON-RPC `null` id, or (2025-11-25 on) an omitted one: allowed only on
    /// errors for requests whose id could not be read (parse errors, invalid requests).
    pub id: Option<RequestId>,
    /// The error omitted `id` instead of sending `null`, which only 2025-11-25 and later
    /// allow; the session judges it by revision.
    pub id_omitted: bool,
    /// The result or the error.
    pub outcome: Outcome,
}

/// What a response carries: exactly one of `result` and `error`.
#[derive(Clone, Debug, PartialEq)]
pub enum Outcome {
    /// The `result` member, any JSON value.
    Result(Value),
    /// The `error` member.
    Error(ErrorObject),
}

/// A JSON-RPC error object.
#[derive(Clone, Debug, PartialEq)]
pub struct ErrorObject {
    /// The error code, e.g. `-32601` (method not found).
    pub code: i64,
    /// The error's short description.
    pub message: String,
    /// The optional `data` member, any JSON value.
    pub data: Option<Value>,
}

impl Message {
    /// The method of a request or notification.
    pub fn method(&self) -> Option<&str> {
        match self {
            Message::Request(r) => Some(&r.method),
            Message::Notification(n) => Some(&n.method),
            Message::Response(_) => None,
        }
    }

    /// What kind of message this is, in words for reports (`request`, `error response`, ...).
    pub fn kind(&self) -> &'static str {
        match self {
            Message::Request(_) => "request",
            Message::Notification(_) => "notification",
            Message::Response(Response {
                outcome: Outcome::Result(_),
                ..
            }) => "result response",
            Message::Response(Response {
                outcome: Outcome::Error(_),
                ..
            }) => "error response",
        }
    }
}

/// What one frame turned out to be.
#[derive(Clone, Debug, PartialEq)]
pub enum Classified {
    /// A single JSON object: one message, or why it is not one.
    Single(Result<Message, Invalid>),
    /// A JSON array: a batch. Whether batches are allowed depends on the revision, which
    /// classification does not know; the session decides.
    Batch(Vec<Result<Message, Invalid>>),
}

/// Why a value is not a JSON-RPC 2.0 message, with the JSON pointer of the offending member.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{reason} (at `{pointer}`)")]
pub struct Invalid {
    /// The rule the value breaks.
    pub reason: InvalidReason,
    /// JSON pointer into the frame (`""` is the whole frame; `/3/id` inside a batch).
    pub pointer: String,
}

/// The JSON-RPC 2.0 rule a value breaks (the message says which, and what it must be).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum InvalidReason {
    /// The frame is not an object; the JSON type it is.
    #[error("message is a JSON {0}, not an object")]
    NotAnObject(&'static str),
    /// An empty array.
    #[error("empty batch: a JSON-RPC batch must contain at least one message")]
    EmptyBatch,
    /// No `jsonrpc` member.
    #[error("missing `jsonrpc` member; it must be exactly \"2.0\"")]
    MissingJsonrpc,
    /// `jsonrpc` is not `"2.0"`; what it is instead (value or type, shortened).
    #[error("`jsonrpc` is {0}; it must be exactly \"2.0\"")]
    WrongJsonrpc(String),
    /// `method` is not a string; what it is instead (value or type, shortened).
    #[error("`method` is {0}; it must be a string")]
    MethodNotString(String),
    /// `params` is neither object nor array; its JSON type.
    #[error("`params` is {0}; it must be an object or array when present")]
    ParamsNotStructured(&'static str),
    /// The id is neither string nor integer; its JSON type.
    #[error("request id is {0}; ids must be strings or integers")]
    IdWrongType(&'static str),
    /// A request with a null id.
    #[error("request id is null; MCP requests must have a string or integer id")]
    IdNullInRequest,
    /// A response with both `result` and `error`.
    #[error("response has both `result` and `error`; exactly one is allowed")]
    BothResultAndError,
    /// No `method`, `result` or `error`: not a message at all.
    #[error("message has neither `method` nor `result`/`error`")]
    NeitherMethodNorResult,
    /// A result response without `id`.
    #[error("result response has no `id` member")]
    ResponseWithoutId,
    /// A result response with a null id.
    #[error("result response has a null id; only error responses may use null")]
    ResultWithNullId,
    /// `error` is not an object; its JSON type.
    #[error("`error` is {0}; it must be an object with integer `code` and string `message`")]
    ErrorNotObject(&'static str),
    /// The error `code` is not an integer; what it is instead (value or type, shortened).
    #[error("error `code` is {0}; it must be an integer")]
    ErrorCodeNotInteger(String),
    /// The error object has no `code`.
    #[error("error object has no `code`")]
    ErrorCodeMissing,
    /// The error `message` is not a string; what it is instead (value or type, shortened).
    #[error("error `message` is {0}; it must be a string")]
    ErrorMessageNotString(String),
    /// The error object has no `message`.
    #[error("error object has no `message`")]
    ErrorMessageMissing,
}

/// The JSON type name of a value, for messages.
pub fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

fn describe(v: &Value) -> String {
    match v {
        Value::String(_) | Value::Number(_) | Value::Bool(_) | Value::Null => {
            let text = clip_marked(v.to_string(), 40, Mark::Ellipsis);
            format!("{} {text}", type_name(v))
        }
        _ => type_name(v).to_owned(),
    }
}

/// Raw ids of a frame, read once more from its bytes so numbers keep their exact token.
#[derive(Deserialize)]
struct IdProbe<'a> {
    #[serde(borrow, default)]
    id: Option<&'a RawValue>,
}

/// Classifies a parsed frame. `raw` is the frame's text, used only to recover number ids
/// exactly; if it cannot be re-read (say, duplicate keys), the parsed number is used.
pub fn classify(value: &Value, raw: &str) -> Classified {
    match value {
        Value::Array(items) => {
            if items.is_empty() {
                return Classified::Single(Err(Invalid {
                    reason: InvalidReason::EmptyBatch,
                    pointer: String::new(),
                }));
            }
            let raws: Option<Vec<&RawValue>> = serde_json::from_str(raw).ok();
            let out = items
                .iter()
                .enumerate()
                .map(|(i, item)| {
                    let raw_item = raws
                        .as_ref()
                        .and_then(|r| r.get(i))
                        .map(|r| r.get())
                        .unwrap_or("");
                    classify_one(item, raw_item, &format!("/{i}"))
                })
                .collect();
            Classified::Batch(out)
        }
        other => Classified::Single(classify_one(other, raw, "")),
    }
}

fn invalid(reason: InvalidReason, base: &str, member: &str) -> Invalid {
    let pointer = if member.is_empty() {
        base.to_owned()
    } else {
        format!("{base}/{member}")
    };
    Invalid { reason, pointer }
}

fn classify_one(value: &Value, raw: &str, base: &str) -> Result<Message, Invalid> {
    let Value::Object(obj) = value else {
        return Err(invalid(
            InvalidReason::NotAnObject(type_name(value)),
            base,
            "",
        ));
    };
    match obj.get("jsonrpc") {
        None => return Err(invalid(InvalidReason::MissingJsonrpc, base, "")),
        Some(Value::String(s)) if s == "2.0" => {}
        Some(other) => {
            return Err(invalid(
                InvalidReason::WrongJsonrpc(describe(other)),
                base,
                "jsonrpc",
            ));
        }
    }
    let id = read_id(obj.get("id"), raw, base)?;

    if let Some(method) = obj.get("method") {
        let Value::String(method) = method else {
            return Err(invalid(
                InvalidReason::MethodNotString(describe(method)),
                base,
                "method",
            ));
        };
        let params = match obj.get("params") {
            None => None,
            Some(p @ (Value::Object(_) | Value::Array(_))) => Some(p.clone()),
            Some(other) => {
                return Err(invalid(
                    InvalidReason::ParamsNotStructured(type_name(other)),
                    base,
                    "params",
                ));
            }
        };
        return match id {
            IdState::Absent => Ok(Message::Notification(Notification {
                method: method.clone(),
                params,
            })),
            IdState::Null => Err(invalid(InvalidReason::IdNullInRequest, base, "id")),
            IdState::Present(id) => Ok(Message::Request(Request {
                id,
                method: method.clone(),
                params,
            })),
        };
    }

    let outcome = match (obj.get("result"), obj.get("error")) {
        (Some(_), Some(_)) => return Err(invalid(InvalidReason::BothResultAndError, base, "")),
        (None, None) => return Err(invalid(InvalidReason::NeitherMethodNorResult, base, "")),
        (Some(result), None) => Outcome::Result(result.clone()),
        (None, Some(error)) => Outcome::Error(read_error(error, base)?),
    };
    let (id, id_omitted) = match (id, &outcome) {
        (IdState::Absent, Outcome::Result(_)) => {
            return Err(invalid(InvalidReason::ResponseWithoutId, base, ""));
        }
        (IdState::Absent, Outcome::Error(_)) => (None, true),
        (IdState::Null, Outcome::Result(_)) => {
            return Err(invalid(InvalidReason::ResultWithNullId, base, "id"));
        }
        (IdState::Null, Outcome::Error(_)) => (None, false),
        (IdState::Present(id), _) => (Some(id), false),
    };
    Ok(Message::Response(Response {
        id,
        id_omitted,
        outcome,
    }))
}

enum IdState {
    Absent,
    Null,
    Present(RequestId),
}

fn read_id(id: Option<&Value>, raw: &str, base: &str) -> Result<IdState, Invalid> {
    match id {
        None => Ok(IdState::Absent),
        Some(Value::Null) => Ok(IdState::Null),
        Some(Value::String(s)) => Ok(IdState::Present(RequestId::String(s.clone()))),
        Some(Value::Number(n)) => {
            let exact = serde_json::from_str::<IdProbe>(raw)
                .ok()
                .and_then(|p| p.id)
                .and_then(RequestId::from_raw)
                .filter(|id| matches!(id, RequestId::Number(_)));
            Ok(IdState::Present(
                exact.unwrap_or_else(|| RequestId::Number(n.to_string())),
            ))
        }
        Some(other) => Err(invalid(
            InvalidReason::IdWrongType(type_name(other)),
            base,
            "id",
        )),
    }
}

fn read_error(error: &Value, base: &str) -> Result<ErrorObject, Invalid> {
    let Value::Object(err) = error else {
        return Err(invalid(
            InvalidReason::ErrorNotObject(type_name(error)),
            base,
            "error",
        ));
    };
    let code = match err.get("code") {
        None => return Err(invalid(InvalidReason::ErrorCodeMissing, base, "error")),
        Some(Value::Number(n)) => match n.as_i64() {
            Some(c) => c,
            None => {
                return Err(invalid(
                    InvalidReason::ErrorCodeNotInteger(describe(&Value::Number(n.clone()))),
                    base,
                    "error/code",
                ));
            }
        },
        Some(other) => {
            return Err(invalid(
                InvalidReason::ErrorCodeNotInteger(describe(other)),
                base,
                "error/code",
            ));
        }
    };
    let message = match err.get("message") {
        None => return Err(invalid(InvalidReason::ErrorMessageMissing, base, "error")),
        Some(Value::String(m)) => m.clone(),
        Some(other) => {
            return Err(invalid(
                InvalidReason::ErrorMessageNotString(describe(other)),
                base,
                "error/message",
            ));
        }
    };
    Ok(ErrorObject {
        code,
        message,
        data: err.get("data").cloned(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(text: &str) -> Result<Message, Invalid> {
        let v: Value = serde_json::from_str(text).unwrap();
        match classify(&v, text) {
            Classified::Single(r) => r,
            Classified::Batch(_) => panic!("batch"),
        }
    }

    fn reason(text: &str) -> InvalidReason {
        one(text).unwrap_err().reason
    }

    #[test]
    fn well_formed_messages() {
        assert!(matches!(
            one(r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#),
            Ok(Message::Request(_))
        ));
        assert!(matches!(
            one(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#),
            Ok(Message::Notification(_))
        ));
        assert!(matches!(
            one(r#"{"jsonrpc":"2.0","id":"a","result":{}}"#),
            Ok(Message::Response(_))
        ));
        let Ok(Message::Response(r)) =
            one(r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}"#)
        else {
            panic!()
        };
        assert_eq!(r.id, None);
    }

    #[test]
    fn each_invalid_reason() {
        assert_eq!(reason("1"), InvalidReason::NotAnObject("number"));
        assert_eq!(
            reason(r#"{"id":1,"result":{}}"#),
            InvalidReason::MissingJsonrpc
        );
        assert!(matches!(
            reason(r#"{"jsonrpc":"1.0","id":1,"result":{}}"#),
            InvalidReason::WrongJsonrpc(_)
        ));
        assert!(matches!(
            reason(r#"{"jsonrpc":2.0,"id":1,"result":{}}"#),
            InvalidReason::WrongJsonrpc(_)
        ));
        assert_eq!(
            reason(r#"{"jsonrpc":"2.0","id":1,"result":{},"error":{"code":1,"message":"x"}}"#),
            InvalidReason::BothResultAndError
        );
        assert_eq!(
            reason(r#"{"jsonrpc":"2.0","id":1}"#),
            InvalidReason::NeitherMethodNorResult
        );
        assert_eq!(
            reason(r#"{"jsonrpc":"2.0","id":1,"error":{"message":"x"}}"#),
            InvalidReason::ErrorCodeMissing
        );
        assert!(matches!(
            reason(r#"{"jsonrpc":"2.0","id":1,"error":{"code":"x","message":"x"}}"#),
            InvalidReason::ErrorCodeNotInteger(_)
        ));
        assert!(matches!(
            reason(r#"{"jsonrpc":"2.0","id":1,"error":{"code":1.5,"message":"x"}}"#),
            InvalidReason::ErrorCodeNotInteger(_)
        ));
        assert!(matches!(
            reason(r#"{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":3}}"#),
            InvalidReason::ErrorMessageNotString(_)
        ));
        assert_eq!(
            reason(r#"{"jsonrpc":"2.0","id":1,"error":{"code":1}}"#),
            InvalidReason::ErrorMessageMissing
        );
        assert_eq!(
            reason(r#"{"jsonrpc":"2.0","id":1,"error":"bad"}"#),
            InvalidReason::ErrorNotObject("string")
        );
        assert_eq!(
            reason(r#"{"jsonrpc":"2.0","id":{},"method":"x"}"#),
            InvalidReason::IdWrongType("object")
        );
        assert_eq!(
            reason(r#"{"jsonrpc":"2.0","id":null,"method":"x"}"#),
            InvalidReason::IdNullInRequest
        );
        assert_eq!(
            reason(r#"{"jsonrpc":"2.0","id":null,"result":{}}"#),
            InvalidReason::ResultWithNullId
        );
        assert_eq!(
            reason(r#"{"jsonrpc":"2.0","result":{}}"#),
            InvalidReason::ResponseWithoutId
        );
        assert!(matches!(
            reason(r#"{"jsonrpc":"2.0","method":7}"#),
            InvalidReason::MethodNotString(_)
        ));
        assert_eq!(
            reason(r#"{"jsonrpc":"2.0","method":"x","params":3}"#),
            InvalidReason::ParamsNotStructured("number")
        );
    }

    #[test]
    fn big_ids_keep_their_token() {
        let Ok(Message::Response(r)) =
            one(r#"{"jsonrpc":"2.0","id":123456789012345678901234567890,"result":{}}"#)
        else {
            panic!()
        };
        assert_eq!(r.id.unwrap().to_string(), "123456789012345678901234567890");
    }

    #[test]
    fn batches_point_into_the_array() {
        let text =
            r#"[{"jsonrpc":"2.0","id":1,"result":{}}, {"jsonrpc":"2.0","id":true,"result":{}}]"#;
        let v: Value = serde_json::from_str(text).unwrap();
        let Classified::Batch(items) = classify(&v, text) else {
            panic!()
        };
        assert!(items[0].is_ok());
        assert_eq!(items[1].as_ref().unwrap_err().pointer, "/1/id");
        let v: Value = serde_json::from_str("[]").unwrap();
        assert_eq!(
            classify(&v, "[]"),
            Classified::Single(Err(Invalid {
                reason: InvalidReason::EmptyBatch,
                pointer: String::new()
            }))
        );
    }
}
