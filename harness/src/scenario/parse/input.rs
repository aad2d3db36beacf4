//! `answer_input:` beside a `request`: how mcpcheck answers the request's `input_required`
//! results (multi round-trip requests, 2026-07-28 basic/patterns/mrtr).

use saphyr::{ScalarOwned, YamlDataOwned};

use super::checks::checks;
use super::vars::Scope;
use super::yaml::{Ctx, Map, Node, R, boolean, integer, sequence, string, string_list};
use crate::scenario::model::{AnswerInput, AnswerKeys, Check, Rounds};

/// The most retries a scenario may allow: a flow the spec shows takes one or two.
const MAX_ROUNDS: i64 = 16;

/// `answer_input: true`, `answer_input: N` (at most N retries), or
/// `answer_input: { rounds: [ {checks}, ... ], answer: first }` (exactly these rounds, each
/// checked; `answer` chooses which input requests are answered).
pub(super) fn answer_input(ctx: &Ctx<'_>, node: &Node, scope: &Scope) -> R<AnswerInput> {
    match &node.data {
        YamlDataOwned::Value(ScalarOwned::Boolean(_)) => {
            if !boolean(ctx, node, "`answer_input`")? {
                return Err(ctx
                    .error(node, "`answer_input: false` is the default")
                    .with_hint("leave `answer_input` out to judge the first answer as it is"));
            }
            Ok(AnswerInput::at_most(AnswerInput::DEFAULT_ROUNDS))
        }
        YamlDataOwned::Value(ScalarOwned::Integer(_)) => {
            Ok(AnswerInput::at_most(retries(ctx, node)?))
        }
        _ => {
            let map = Map::new(ctx, node, "`answer_input`").map_err(|e| {
                e.with_hint("`answer_input: true`, a number of retries, or `{ rounds: [...], answer: first }`")
            })?;
            map.only(ctx, &["rounds", "answer"], "`answer_input`")?;
            if map.get("rounds").is_none() && map.get("answer").is_none() {
                return Err(ctx
                    .error(
                        node,
                        "`answer_input` as a mapping needs `rounds`, `answer` or both",
                    )
                    .with_hint(
                        "`answer_input: true` answers every input request, at most 4 times",
                    ));
            }
            let rounds = match map.get("rounds") {
                Some(n) => Rounds::Exactly(rounds(ctx, n, scope)?),
                None => Rounds::AtMost(AnswerInput::DEFAULT_ROUNDS),
            };
            let answer = match map.get("answer") {
                Some(n) => answer_keys(ctx, n)?,
                None => AnswerKeys::All,
            };
            Ok(AnswerInput { rounds, answer })
        }
    }
}

fn retries(ctx: &Ctx<'_>, node: &Node) -> R<usize> {
    let n = integer(ctx, node, "`answer_input`")?;
    if !(1..=MAX_ROUNDS).contains(&n) {
        return Err(ctx.error(
            node,
            format!("`answer_input: {n}`: the retries must be 1 to {MAX_ROUNDS}"),
        ));
    }
    Ok(n as usize)
}

/// `rounds: [ {checks}, ... ]`: one set of checks per `input_required` result.
fn rounds(ctx: &Ctx<'_>, node: &Node, scope: &Scope) -> R<Vec<Vec<Check>>> {
    let items = sequence(ctx, node, "`rounds`")?;
    if items.is_empty() || items.len() as i64 > MAX_ROUNDS {
        return Err(ctx.error(
            node,
            format!(
                "`rounds` lists 1 to {MAX_ROUNDS} rounds (checks on each `input_required` result)"
            ),
        ));
    }
    items
        .iter()
        .map(|item| checks(ctx, item, scope, "a round's checks", &[]))
        .collect()
}

/// `answer: all` (the default), `answer: first` (the first input request in the server's
/// order, whatever its key), or `answer: [key, ...]` (only those keys).
fn answer_keys(ctx: &Ctx<'_>, node: &Node) -> R<AnswerKeys> {
    if matches!(node.data, YamlDataOwned::Sequence(_)) {
        let keys = string_list(ctx, node, "`answer`")?;
        if keys.is_empty() {
            return Err(ctx
                .error(node, "`answer` lists no keys")
                .with_hint("`answer: all` answers every input request"));
        }
        return Ok(AnswerKeys::Only(
            keys.into_iter().map(|(k, _)| k.to_owned()).collect(),
        ));
    }
    match string(ctx, node, "`answer`")? {
        "all" => Ok(AnswerKeys::All),
        "first" => Ok(AnswerKeys::First),
        other => Err(ctx
            .error(node, format!("`answer: {other}` is not `all`, `first` or a list of keys"))
            .with_hint("`first`: the first input request in the server's order; `[user_name]`: only that key")),
    }
}
