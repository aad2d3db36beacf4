//! Multi round-trip requests (2026-07-28 basic/patterns/mrtr): a request step with
//! `answer_input` answers each `input_required` result its request gets and sends the
//! request again, as a client does, until the server completes it or the allowed rounds
//! run out. The retry follows the client requirements of the pattern: every input request
//! answered, the `requestState` echoed exactly (and none sent when none came), a new id.

use serde_json::{Map, Value, json};

use super::{Executor, Stop};
use crate::protocol::RequestId;
use crate::scenario::model::{AnswerInput, AnswerKeys, RequestStep};
use crate::session::{Reply, input_response};

impl Executor<'_> {
    /// Waits for the answer to request `first` (sent with `params`) and answers its
    /// `input_required` rounds; returns the id and reply of the last attempt.
    pub(super) async fn answer_input(
        &mut self,
        r: &RequestStep,
        answer: &AnswerInput,
        method: &str,
        params: Option<Value>,
        first: RequestId,
    ) -> Result<(RequestId, Reply), Stop> {
        let mut id = first;
        let mut reply = self.reply_to(&id).await?;
        let mut rounds = 0;
        while let Some(result) = reply.result().filter(|v| is_input_required(v)).cloned() {
            if let Some(checks) = answer.round_checks(rounds) {
                let what = format!("`{method}`'s input_required result {}", rounds + 1);
                self.apply_checks(checks, &result, "/result", reply.frame, &what);
            }
            rounds += 1;
            if rounds > answer.max_retries() {
                let allowed = answer.max_retries();
                let f = self
                    .fail(
                        r.line,
                        format!("`{method}` still answered `input_required` after {allowed} answered round(s), the most this step allows"),
                        reply.frame,
                    )
                    .pointer("/result/resultType")
                    .expected(format!("a complete result within {allowed} round(s)"));
                self.findings.push(f);
                return Err(Stop::Failed);
            }
            let retry = match retry_params(params.as_ref(), &result, &answer.answer) {
                Ok(retry) => retry,
                Err(why) => {
                    let f = self
                        .fail(r.line, format!("`{method}`: {}", why.message), reply.frame)
                        .pointer(format!("/result{}", why.pointer))
                        .expected("input requests mcpcheck can answer: elicitation/create, sampling/createMessage or roots/list");
                    self.findings.push(f);
                    return Err(Stop::Failed);
                }
            };
            let retry = self.fresh_progress_token(method, retry, r.line);
            id = self.session.allocate_id();
            self.session
                .send_request(id.clone(), method, Some(retry))
                .await
                .map_err(|e| self.session_failure(&e))?;
            if method == "tools/call" {
                self.coverage.tool_call_sent();
            }
            reply = self.reply_to(&id).await?;
        }
        if let Some(expected) = answer.exact_rounds()
            && rounds < expected
            && reply.result().is_some()
        {
            let f = self
                .fail(
                    r.line,
                    format!("`{method}` completed after {rounds} input_required round(s); the step expects {expected}"),
                    reply.frame,
                )
                .pointer("/result/resultType")
                .expected(format!("{expected} input_required round(s) before the complete result"));
            self.findings.push(f);
        }
        Ok((id, reply))
    }

    async fn reply_to(&mut self, id: &RequestId) -> Result<Reply, Stop> {
        match self.session.wait_reply(id).await {
            Ok(reply) => Ok(reply),
            Err(e) => Err(self.session_failure(&e)),
        }
    }

    /// A retried `tools/call` asks for progress under a token of its own.
    fn fresh_progress_token(&mut self, method: &str, mut params: Value, line: usize) -> Value {
        if method == "tools/call"
            && let Some(meta) = params.get_mut("_meta").and_then(Value::as_object_mut)
            && meta.contains_key("progressToken")
        {
            let token = format!("{}-line{line}", self.fresh());
            meta.insert("progressToken".into(), json!(token));
        }
        params
    }
}

/// Whether a result is an `InputRequiredResult` (its `resultType`, 2026-07-28).
fn is_input_required(result: &Value) -> bool {
    result.get("resultType").and_then(Value::as_str) == Some("input_required")
}

/// Why an `input_required` result cannot be answered, and where in the result.
#[derive(Debug, PartialEq)]
pub(super) struct Unanswerable {
    pub message: String,
    pub pointer: String,
}

/// The params of the retry: the original ones with `inputResponses` (mcpcheck's answer
/// to each chosen input request, under its key) and `requestState` (the result's,
/// verbatim: the client "MUST NOT inspect, parse, modify"; absent when the result has
/// none, since the client "MUST NOT include one in the retry"). A result without
/// `inputRequests` is retried without answers ("the client MAY retry the original request
/// immediately").
pub(super) fn retry_params(
    original: Option<&Value>,
    result: &Value,
    chosen: &AnswerKeys,
) -> Result<Value, Unanswerable> {
    let mut params = match original {
        Some(Value::Object(p)) => p.clone(),
        _ => Map::new(),
    };
    params.remove("inputResponses");
    params.remove("requestState");
    if let Some(requests) = result.get("inputRequests") {
        let Some(requests) = requests.as_object() else {
            return Err(Unanswerable {
                message: "`inputRequests` is not an object of input requests".into(),
                pointer: "/inputRequests".into(),
            });
        };
        params.insert("inputResponses".into(), answers(requests, chosen)?);
    }
    if let Some(state) = result.get("requestState") {
        params.insert("requestState".into(), state.clone());
    }
    Ok(Value::Object(params))
}

/// mcpcheck's answers to the chosen input requests, each under its key. The server's
/// order is kept (serde_json preserves it), so `first` is the first the server wrote.
fn answers(requests: &Map<String, Value>, chosen: &AnswerKeys) -> Result<Value, Unanswerable> {
    let picked: Vec<(&String, &Value)> = match chosen {
        AnswerKeys::All => requests.iter().collect(),
        AnswerKeys::First => requests.iter().take(1).collect(),
        AnswerKeys::Only(keys) => requests.iter().filter(|(k, _)| keys.contains(k)).collect(),
    };
    let mut answers = Map::new();
    for (key, request) in picked {
        answers.insert(key.clone(), answer(key, request)?);
    }
    Ok(Value::Object(answers))
}

/// mcpcheck's answer to one input request, or why no client could give one.
fn answer(key: &str, request: &Value) -> Result<Value, Unanswerable> {
    let method = request.get("method").and_then(Value::as_str);
    method
        .and_then(|m| input_response(m, request.get("params")))
        .ok_or_else(|| {
            let what = method.map_or("no method".to_owned(), |m| format!("`{m}`"));
            Unanswerable {
                message: format!(
                    "input request `{key}` asks for {what}, which no client can answer"
                ),
                pointer: format!(
                    "/inputRequests/{}/method",
                    crate::protocol::pointer_token(key)
                ),
            }
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn elicit(property: &str) -> Value {
        json!({ "method": "elicitation/create", "params": { "message": "?", "requestedSchema":
            { "type": "object", "properties": { property: { "type": "string" } } } } })
    }

    #[test]
    fn every_input_request_is_answered_under_its_key_and_the_state_echoed_verbatim() {
        let original =
            json!({ "name": "t", "arguments": { "a": 1 }, "_meta": { "progressToken": "p" } });
        let result = json!({ "resultType": "input_required",
            "inputRequests": {
                "user": elicit("name"),
                "q": { "method": "sampling/createMessage", "params": { "messages": [], "maxTokens": 5 } },
                "r": { "method": "roots/list" } },
            "requestState": "  opaque+/= state " });
        let retry = retry_params(Some(&original), &result, &AnswerKeys::All).unwrap();
        assert_eq!(retry["name"], "t");
        assert_eq!(retry["arguments"], json!({ "a": 1 }));
        assert_eq!(retry["_meta"], json!({ "progressToken": "p" }));
        assert_eq!(retry["requestState"], "  opaque+/= state ");
        let answers = retry["inputResponses"].as_object().unwrap();
        assert_eq!(answers.len(), 3);
        assert_eq!(
            answers["user"],
            json!({ "action": "accept", "content": { "name": "mcpcheck-name" } })
        );
        assert_eq!(answers["q"]["role"], "assistant");
        assert_eq!(answers["r"], json!({ "roots": [] }));
    }

    #[test]
    fn no_state_is_sent_when_none_came_and_old_answers_are_replaced() {
        let original =
            json!({ "name": "t", "inputResponses": { "old": {} }, "requestState": "stale" });
        let result =
            json!({ "resultType": "input_required", "inputRequests": { "next": elicit("color") } });
        let retry = retry_params(Some(&original), &result, &AnswerKeys::All).unwrap();
        assert!(retry.get("requestState").is_none());
        assert_eq!(
            retry["inputResponses"]
                .as_object()
                .unwrap()
                .keys()
                .collect::<Vec<_>>(),
            ["next"]
        );
    }

    #[test]
    fn a_state_alone_is_retried_without_answers() {
        let result = json!({ "resultType": "input_required", "requestState": "s" });
        let retry = retry_params(None, &result, &AnswerKeys::All).unwrap();
        assert_eq!(retry, json!({ "requestState": "s" }));
    }

    #[test]
    fn an_input_request_no_client_can_answer_is_named() {
        let result = json!({ "resultType": "input_required",
            "inputRequests": { "a/b": { "method": "tools/call", "params": {} } } });
        let why = retry_params(None, &result, &AnswerKeys::All).unwrap_err();
        assert_eq!(why.pointer, "/inputRequests/a~1b/method");
        assert!(
            why.message.contains("`a/b` asks for `tools/call`"),
            "{}",
            why.message
        );
        let result = json!({ "resultType": "input_required", "inputRequests": ["x"] });
        assert_eq!(
            retry_params(None, &result, &AnswerKeys::All)
                .unwrap_err()
                .pointer,
            "/inputRequests"
        );
    }

    #[test]
    fn first_answers_the_first_key_the_server_wrote_and_only_those_keys_listed() {
        let result = json!({ "resultType": "input_required",
            "inputRequests": {
                "zeta": elicit("name"),
                "alpha": { "method": "roots/list" },
                "mid": { "method": "tasks/get" } } });
        let keys = |chosen: &AnswerKeys| {
            let retry = retry_params(None, &result, chosen).unwrap();
            let answers = retry["inputResponses"].as_object().unwrap().clone();
            answers.keys().cloned().collect::<Vec<_>>()
        };
        assert_eq!(keys(&AnswerKeys::First), ["zeta"]);
        assert_eq!(keys(&AnswerKeys::Only(vec!["alpha".into()])), ["alpha"]);
        assert_eq!(
            keys(&AnswerKeys::Only(vec!["absent".into()])),
            Vec::<String>::new()
        );
        // An input request left unanswered is not judged answerable.
        let why = retry_params(None, &result, &AnswerKeys::All).unwrap_err();
        assert_eq!(why.pointer, "/inputRequests/mid/method");
    }

    #[test]
    fn only_input_required_results_are_answered() {
        assert!(is_input_required(
            &json!({ "resultType": "input_required" })
        ));
        assert!(!is_input_required(&json!({ "resultType": "complete" })));
        assert!(!is_input_required(&json!({ "content": [] })));
    }
}
