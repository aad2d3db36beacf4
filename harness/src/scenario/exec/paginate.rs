//! `paginate` steps: a list method followed cursor by cursor into one list, watching for
//! cursors that loop and for pages that disagree on a list-wide member (`same`).

use std::collections::HashSet;

use serde_json::{Value, json};

use super::{Executor, Stop};
use crate::scenario::model::OnError;

impl Executor<'_> {
    pub(super) async fn paginate(
        &mut self,
        method: &str,
        key: &str,
        base: Option<Value>,
        on_error: OnError,
        same: &[String],
        line: usize,
    ) -> Result<Vec<Value>, Stop> {
        // The first page's value at each `same` pointer; a pointer leaves once it differed,
        // so a long list reports each disagreement once.
        let mut first: Option<Vec<(&str, Option<Value>)>> = None;
        let mut items = Vec::new();
        let mut cursor: Option<String> = None;
        let mut seen = HashSet::new();
        for _ in 0..1000 {
            let mut params = base.clone().unwrap_or_else(|| json!({}));
            if let (Some(c), Value::Object(map)) = (&cursor, &mut params) {
                map.insert("cursor".into(), json!(c));
            }
            let params = if params.as_object().is_some_and(|m| m.is_empty()) {
                None
            } else {
                Some(params)
            };
            let reply = match self.session.request(method, params).await {
                Ok(r) => r,
                Err(e) => return Err(self.session_failure(&e)),
            };
            let Some(result) = reply.result() else {
                // `on_error: next`: the spec lets the server refuse the method (it need
                // not serve `resources/templates/list`), so an error on the first page
                // judges nothing. A later page's error breaks a cursor the server issued.
                if let (OnError::Next, None, Some(e)) = (on_error, &cursor, reply.error()) {
                    self.coverage.error_allowed();
                    return Err(Stop::Next(format!(
                        "`{method}` answered error {} ({}), which the spec allows; nothing to judge",
                        e.code, e.message
                    )));
                }
                let f = self.fail(
                    line,
                    format!("`{method}` answered with an error while paginating"),
                    reply.frame,
                );
                self.findings.push(f);
                return Err(Stop::Failed);
            };
            if on_error == OnError::Next && cursor.is_none() {
                self.coverage.result_judged();
            }
            if let Some(page) = result.get(key).and_then(Value::as_array) {
                items.extend(page.iter().cloned());
            }
            match &mut first {
                None => {
                    let values = same
                        .iter()
                        .map(|p| (p.as_str(), result.pointer(p).cloned()));
                    first = Some(values.collect());
                }
                Some(expected) => {
                    let mut differed = Vec::new();
                    expected.retain(|(p, want)| {
                        let got = result.pointer(p);
                        if got == want.as_ref() {
                            return true;
                        }
                        differed.push((p.to_string(), shown(want.as_ref()), shown(got)));
                        false
                    });
                    for (p, want, got) in differed {
                        let f = self
                            .fail(
                                line,
                                format!(
                                    "a later page of `{method}` has {p} {got}, the first page {want}: \
                                     every page of one list must agree"
                                ),
                                reply.frame,
                            )
                            .pointer(format!("/result{p}"))
                            .expected(format!("{p} {want}, as on the first page"));
                        self.findings.push(f);
                    }
                }
            }
            match result.get("nextCursor").and_then(Value::as_str) {
                None => return Ok(items),
                Some(next) if !seen.insert(next.to_owned()) => {
                    let f = self
                        .fail(
                            line,
                            format!(
                                "`{method}` returned cursor {next:?} twice: the pagination loops"
                            ),
                            reply.frame,
                        )
                        .pointer("/result/nextCursor");
                    self.findings.push(f);
                    return Ok(items);
                }
                Some(next) => cursor = Some(next.to_owned()),
            }
        }
        let f = self.fail(
            line,
            format!("`{method}` was still paginating after 1000 pages"),
            None,
        );
        self.findings.push(f);
        Ok(items)
    }
}

/// A member's value as a finding quotes it.
fn shown(value: Option<&Value>) -> String {
    value.map_or_else(|| "absent".to_owned(), Value::to_string)
}
