//! Variables: where they are defined (`capture`, `paginate.into`, `for_each.as`) and the
//! `${...}` references to them inside templates.

use super::yaml::{Ctx, Node, R, as_str, list, suggest, to_json};
use crate::scenario::model::Template;
use saphyr::YamlDataOwned;

/// Variables every scenario can use.
pub const BUILTINS: &[&str] = crate::scenario::builtin_vars::NAMES;

/// The variables in scope at a point of the scenario, in definition order.
#[derive(Debug, Default)]
pub(crate) struct Scope {
    vars: Vec<(String, usize)>,
}

impl Scope {
    pub fn len(&self) -> usize {
        self.vars.len()
    }

    /// Forgets the variables defined after `len` (leaving a `for_each` body).
    pub fn truncate(&mut self, len: usize) {
        self.vars.truncate(len);
    }

    pub fn is_defined(&self, name: &str) -> bool {
        BUILTINS.contains(&name) || self.vars.iter().any(|(n, _)| n == name)
    }

    fn names(&self) -> Vec<&str> {
        BUILTINS
            .iter()
            .copied()
            .chain(self.vars.iter().map(|(n, _)| n.as_str()))
            .collect()
    }

    /// Checks `name` is a valid, new variable name, without defining it yet.
    pub fn check_new(&self, ctx: &Ctx<'_>, node: &Node, name: &str, how: &str) -> R<()> {
        check_name(ctx, node, name, how)?;
        if BUILTINS.contains(&name) {
            return Err(ctx
                .error(
                    node,
                    format!("`{name}` is a built-in variable and cannot be redefined"),
                )
                .with_hint("choose another name"));
        }
        if let Some((_, line)) = self.vars.iter().find(|(n, _)| n == name) {
            return Err(ctx
                .error(
                    node,
                    format!("duplicate variable `{name}`: already defined on line {line}"),
                )
                .with_hint("each variable is defined once; choose another name"));
        }
        Ok(())
    }

    pub fn define(&mut self, name: &str, line: usize) {
        self.vars.push((name.to_owned(), line));
    }

    /// Errors unless `name` (written at `node`) is defined.
    pub fn use_var(&self, ctx: &Ctx<'_>, node: &Node, name: &str) -> R<()> {
        if self.is_defined(name) {
            return Ok(());
        }
        let e = ctx.error(node, format!("undefined variable `{name}`"));
        let names = self.names();
        Err(match suggest(name, &names) {
            Some(s) => e.with_hint(format!("did you mean `{s}`?")),
            None => e.with_hint(
                "variables are defined by an earlier `capture`, `paginate` (`into`) or `for_each` (`as`)",
            ),
        })
    }
}

/// Variable names: a letter or `_`, then letters, digits and `_`.
pub(crate) fn check_name(ctx: &Ctx<'_>, node: &Node, name: &str, how: &str) -> R<()> {
    let mut chars = name.chars();
    let ok = chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_');
    if ok {
        Ok(())
    } else {
        Err(ctx
            .error(node, format!("`{name}` is not a valid {how}"))
            .with_hint("names are a letter or `_` followed by letters, digits or `_`"))
    }
}

/// Checks the `${...}` references in every string of `node` and converts it to JSON.
pub(crate) fn template(ctx: &Ctx<'_>, node: &Node, scope: &Scope) -> R<Template> {
    check_refs(ctx, node, scope)?;
    Ok(Template(to_json(ctx, node)?))
}

fn check_refs(ctx: &Ctx<'_>, node: &Node, scope: &Scope) -> R<()> {
    match &node.data {
        YamlDataOwned::Sequence(items) => items.iter().try_for_each(|i| check_refs(ctx, i, scope)),
        YamlDataOwned::Mapping(map) => map.iter().try_for_each(|(k, v)| {
            check_refs(ctx, k, scope)?;
            check_refs(ctx, v, scope)
        }),
        _ => match as_str(node) {
            Some(s) => check_string_refs(ctx, node, s, scope),
            None => Ok(()),
        },
    }
}

/// A reference is `${name}`, `${name.field.field}` or `${name/json/pointer}`.
pub(crate) fn check_string_refs(ctx: &Ctx<'_>, node: &Node, s: &str, scope: &Scope) -> R<()> {
    let mut rest = s;
    while let Some(start) = rest.find("${") {
        let after = &rest[start + 2..];
        let Some(end) = after.find('}') else {
            return Err(ctx.error(node, "unclosed `${` in a template").with_hint(
                "references look like `${name}`, `${name.field}` or `${name/json/pointer}`",
            ));
        };
        let mut inner = &after[..end];
        if let Some((reference, filter)) = inner.split_once('|') {
            let filter = filter.trim();
            let known = crate::scenario::synth::known_filter(filter)
                .map_err(|why| ctx.error(node, format!("{why} in `${{{inner}}}`")))?;
            if !known {
                let e = ctx.error(node, format!("no filter `{filter}` in `${{{inner}}}`"));
                return Err(match suggest(filter, crate::scenario::synth::FILTERS) {
                    Some(s) => e.with_hint(format!("did you mean `{s}`?")),
                    None => e.with_hint(format!(
                        "filters: {}",
                        list(crate::scenario::synth::FILTERS)
                    )),
                });
            }
            inner = reference.trim();
        }
        let root_end = inner.find(['.', '/']).unwrap_or(inner.len());
        let root = &inner[..root_end];
        check_name(ctx, node, root, "variable name").map_err(|e| {
            e.with_hint("references look like `${name}`, `${name.field}` or `${name/json/pointer}`")
        })?;
        let path = &inner[root_end..];
        if path.starts_with('.') && path.split('.').skip(1).any(str::is_empty) {
            return Err(ctx.error(node, format!("empty field name in `${{{inner}}}`")));
        }
        scope.use_var(ctx, node, root)?;
        rest = &after[end + 1..];
    }
    Ok(())
}
