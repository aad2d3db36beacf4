//! `answer_input:` beside a `request`: how mcpcheck answers the request's `input_required`
//! results (multi round-trip requests, 2026-07-28 basic/patterns/mrtr).

use saphyr::{ScalarOwned, YamlDataOwned};

use super::checks::checks;
use super::vars::Scope;
use super::yaml::{Ctx, Map, Node, R, boolean, integer, sequence};
use crate::scenario::model::AnswerInput;

/// The most retries a scenario may allow: a flow the spec shows takes one or two.
const MAX_ROUNDS: i64 = 16;

/// `answer_input: true`, `answer_input: N` (at most N retries), or
/// `answer_input: { rounds: [ {checks}, ... ] }` (exactly these rounds, each checked).
pub(super) fn answer_input(ctx: &Ctx<'_>, node: &Node, scope: &Scope) -> R<AnswerInput> {
    match &node.data {
        YamlDataOwned::Value(ScalarOwned::Boolean(_)) => {
            if !boolean(ctx, node, "`answer_input`")? {
                return Err(ctx
                    .error(node, "`answer_input: false` is the default")
                    .with_hint("leave `answer_input` out to judge the first answer as it is"));
            }
            Ok(AnswerInput::AtMost(AnswerInput::DEFAULT_ROUNDS))
        }
        YamlDataOwned::Value(ScalarOwned::Integer(_)) => {
            let n = integer(ctx, node, "`answer_input`")?;
            if !(1..=MAX_ROUNDS).contains(&n) {
                return Err(ctx.error(
                    node,
                    format!("`answer_input: {n}`: the retries must be 1 to {MAX_ROUNDS}"),
                ));
            }
            Ok(AnswerInput::AtMost(n as usize))
        }
        _ => {
            let map = Map::new(ctx, node, "`answer_input`").map_err(|e| {
                e.with_hint("`answer_input: true`, a number of retries, or `{ rounds: [...] }`")
            })?;
            map.only(ctx, &["rounds"], "`answer_input`")?;
            let rounds_node = map.require(ctx, "rounds", "`answer_input`")?;
            let items = sequence(ctx, rounds_node, "`rounds`")?;
            if items.is_empty() || items.len() as i64 > MAX_ROUNDS {
                return Err(ctx.error(
                    rounds_node,
                    format!("`rounds` lists 1 to {MAX_ROUNDS} rounds (checks on each `input_required` result)"),
                ));
            }
            let rounds = items
                .iter()
                .map(|item| checks(ctx, item, scope, "a round's checks", &[]))
                .collect::<R<Vec<_>>>()?;
            Ok(AnswerInput::Rounds(rounds))
        }
    }
}
