//! `${var}` interpolation in scenario values.
//!
//! A string that is exactly one reference becomes the referenced value with its JSON
//! type (`"${tools}"` -> an array); references inside a longer string become text.
//! A reference is a variable name, optionally followed by a JSON pointer
//! (`${tool/name}`) or dotted path (`${tool.name}`, shorthand for `/name`), and optionally
//! by a filter (`${tool|sample_arguments}`, see `scenario::synth`).

use std::collections::BTreeMap;

use serde_json::Value;

use super::model::Template;
use super::synth;

/// The built-in variable that is new for every step run (a progress token in a loop).
pub const UNIQUE: &str = "unique";

/// Variables in scope while a scenario runs.
pub type Vars = BTreeMap<String, Value>;

/// A reference to a variable that is not defined, or a path that does not resolve.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("`${{{reference}}}`: {reason}")]
pub struct Unresolved {
    /// The reference as written, without `${` and `}`.
    pub reference: String,
    /// Why it does not resolve.
    pub reason: String,
}

impl Template {
    /// The value with every reference replaced.
    pub fn render(&self, vars: &Vars) -> Result<Value, Unresolved> {
        render_value(&self.0, vars)
    }
}

fn render_value(v: &Value, vars: &Vars) -> Result<Value, Unresolved> {
    Ok(match v {
        Value::String(s) => render_string(s, vars)?,
        Value::Array(items) => Value::Array(
            items
                .iter()
                .map(|i| render_value(i, vars))
                .collect::<Result<_, _>>()?,
        ),
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| Ok((text_of(&render_string(k, vars)?), render_value(v, vars)?)))
                .collect::<Result<_, Unresolved>>()?,
        ),
        other => other.clone(),
    })
}

/// Renders a string: a lone reference keeps its type; otherwise references become text.
fn render_string(s: &str, vars: &Vars) -> Result<Value, Unresolved> {
    if let Some(inner) = s.strip_prefix("${").and_then(|r| r.strip_suffix('}'))
        && !inner.contains("${")
        && !inner.contains('}')
    {
        return lookup(inner, vars);
    }
    let mut out = String::new();
    let mut rest = s;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let Some(end) = after.find('}') else {
            out.push_str(&rest[start..]);
            return Ok(Value::String(out));
        };
        out.push_str(&text_of(&lookup(&after[..end], vars)?));
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(Value::String(out))
}

fn text_of(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

fn lookup(reference: &str, vars: &Vars) -> Result<Value, Unresolved> {
    if let Some((inner, filter)) = reference.split_once('|') {
        let value = lookup(inner.trim(), vars).map_err(|mut e| {
            e.reference = reference.to_owned();
            e
        })?;
        let tool_args = vars.get(synth::TOOL_ARGS);
        return synth::apply(filter.trim(), &value, tool_args).map_err(|reason| Unresolved {
            reference: reference.to_owned(),
            reason,
        });
    }
    let unresolved = |reason: String| Unresolved {
        reference: reference.to_owned(),
        reason,
    };
    let split = reference.find(['/', '.']).unwrap_or(reference.len());
    let (name, path) = reference.split_at(split);
    let value = vars
        .get(name)
        .ok_or_else(|| unresolved(format!("no variable `{name}` (defined: {})", names(vars))))?;
    if path.is_empty() {
        return Ok(value.clone());
    }
    let pointer = if let Some(dotted) = path.strip_prefix('.') {
        dotted
            .split('.')
            .map(|seg| format!("/{}", crate::protocol::pointer_token(seg)))
            .collect::<String>()
    } else {
        path.to_owned()
    };
    value
        .pointer(&pointer)
        .cloned()
        .ok_or_else(|| unresolved(format!("`{name}` has nothing at `{pointer}`")))
}

fn names(vars: &Vars) -> String {
    if vars.is_empty() {
        "none".into()
    } else {
        vars.keys()
            .map(String::as_str)
            .collect::<Vec<_>>()
            .join(", ")
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn vars() -> Vars {
        let mut v = Vars::new();
        v.insert("revision".into(), json!("2025-06-18"));
        v.insert("tool".into(), json!({"name": "echo", "a/b": 1, "n": 3}));
        v.insert("tools".into(), json!([{"name": "echo"}]));
        v
    }

    #[test]
    fn lone_references_keep_their_type() {
        assert_eq!(
            Template(json!("${tools}")).render(&vars()).unwrap(),
            json!([{"name": "echo"}])
        );
        assert_eq!(
            Template(json!("${tool.n}")).render(&vars()).unwrap(),
            json!(3)
        );
        assert_eq!(
            Template(json!("${tool/a~1b}")).render(&vars()).unwrap(),
            json!(1)
        );
    }

    #[test]
    fn embedded_references_become_text_everywhere() {
        let t = Template(
            json!({"name": "${tool.name}", "msg": "v=${revision}, n=${tool.n}", "list": ["${tool/name}"]}),
        );
        assert_eq!(
            t.render(&vars()).unwrap(),
            json!({"name": "echo", "msg": "v=2025-06-18, n=3", "list": ["echo"]})
        );
    }

    #[test]
    fn unknown_names_and_paths_are_errors_that_say_what_exists() {
        let e = Template(json!("${nope}")).render(&vars()).unwrap_err();
        assert!(
            e.to_string()
                .contains("no variable `nope` (defined: revision, tool, tools)"),
            "{e}"
        );
        let e = Template(json!("x ${tool.missing}"))
            .render(&vars())
            .unwrap_err();
        assert!(e.to_string().contains("nothing at `/missing`"), "{e}");
    }

    #[test]
    fn filters_apply_to_the_referenced_value() {
        let mut v = vars();
        v.insert(
            "prompt".into(),
            json!({"name": "greet", "arguments": [{"name": "who", "required": true}]}),
        );
        assert_eq!(
            Template(json!({"arguments": "${prompt|required_arguments}"}))
                .render(&v)
                .unwrap(),
            json!({"arguments": {"who": "mcpcheck"}})
        );
        let e = Template(json!("${prompt|nope}")).render(&v).unwrap_err();
        assert!(e.to_string().contains("no filter `nope`"), "{e}");
    }

    #[test]
    fn text_without_references_is_untouched() {
        assert_eq!(
            Template(json!("plain $ { } ${")).render(&vars()).unwrap(),
            json!("plain $ { } ${")
        );
    }
}
