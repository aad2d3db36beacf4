//! Evaluating a scenario's checks against a received value.

use serde_json::Value;

use super::model::{Check, JsonType, Matcher};
use super::template::Vars;
use crate::protocol::jsonrpc::type_name;
use crate::schema::{SchemaSet, SchemaTarget};

/// A check that did not hold, with what was expected and what was there.
#[derive(Clone, Debug, PartialEq)]
pub struct Mismatch {
    /// JSON pointer of the check, relative to the value checked.
    pub pointer: String,
    /// What the check wanted, in words.
    pub expected: String,
    /// What was there, quoted.
    pub actual: String,
    /// Line of the check in its scenario file.
    pub line: usize,
}

/// What matchers may consult: variables (for templates) and the session's schema.
#[derive(Clone, Copy, Debug)]
pub struct MatchContext<'a> {
    /// The variables `${...}` references in matchers resolve against.
    pub vars: &'a Vars,
    /// The session revision's schema, if one is loaded (`schema` matchers need it).
    pub schema: Option<&'a SchemaSet>,
}

/// The outcome of a set of checks.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CheckReport {
    /// Checks that did not hold.
    pub mismatches: Vec<Mismatch>,
    /// Checks that could not run (a `schema` matcher with no schema at hand), and why.
    /// They are reported as skipped, never as passed.
    pub skipped: Vec<String>,
}

/// Applies every check to `value`.
pub fn check_all(checks: &[Check], value: &Value, cx: MatchContext<'_>) -> CheckReport {
    let mut report = CheckReport::default();
    for c in checks {
        let actual = value.pointer(&c.pointer);
        match eval(&c.matcher, actual, cx) {
            Ok(()) => {}
            Err(Unmet::Skipped(why)) => report.skipped.push(format!("line {}: {why}", c.line)),
            Err(Unmet::Expected(expected)) => report.mismatches.push(Mismatch {
                pointer: c.pointer.clone(),
                expected,
                actual: actual
                    .map(|a| short(a, 200))
                    .unwrap_or_else(|| "nothing (no such member)".into()),
                line: c.line,
            }),
        }
    }
    report
}

/// Why a matcher did not hold.
enum Unmet {
    /// What was expected instead.
    Expected(String),
    /// The matcher could not be evaluated.
    Skipped(String),
}

impl From<String> for Unmet {
    fn from(s: String) -> Self {
        Unmet::Expected(s)
    }
}

/// `Ok` if the matcher holds.
fn eval(m: &Matcher, actual: Option<&Value>, cx: MatchContext<'_>) -> Result<(), Unmet> {
    if let Matcher::Exists(want) = m {
        return if actual.is_some() == *want {
            Ok(())
        } else if *want {
            Err(Unmet::Expected("a value here".into()))
        } else {
            Err(Unmet::Expected("no value here".into()))
        };
    }
    if let Matcher::All(all) = m {
        return all.iter().try_for_each(|m| eval(m, actual, cx));
    }
    if let Matcher::Contains(sets) = m {
        return contains(sets, actual, cx);
    }
    if let Matcher::Excludes(sets) = m {
        return excludes(sets, actual, cx);
    }
    if let Matcher::First(set) = m {
        return first(set, actual, cx);
    }
    if let Matcher::Unique(pointer) = m {
        return unique(pointer, actual);
    }
    let Some(actual) = actual else {
        return Err(Unmet::Expected(describe(m, cx)));
    };
    let holds = match m {
        Matcher::Equals(t) => t.render(cx.vars).map_err(|e| e.to_string())? == *actual,
        Matcher::Subset(t) => is_subset(&t.render(cx.vars).map_err(|e| e.to_string())?, actual),
        Matcher::Regex(re) => {
            let re = regex::Regex::new(re).map_err(|e| format!("a valid regex ({e})"))?;
            actual.as_str().is_some_and(|s| re.is_match(s))
        }
        Matcher::Type(t) => has_type(*t, actual),
        Matcher::Length { min, max } => {
            let len = match actual {
                Value::Array(a) => Some(a.len()),
                Value::String(s) => Some(s.chars().count()),
                Value::Object(o) => Some(o.len()),
                _ => None,
            };
            len.is_some_and(|n| min.is_none_or(|m| n >= m) && max.is_none_or(|m| n <= m))
        }
        Matcher::OneOf(options) => {
            let mut any = false;
            for t in options {
                if t.render(cx.vars).map_err(|e| e.to_string())? == *actual {
                    any = true;
                    break;
                }
            }
            any
        }
        Matcher::Range { min, max } => actual
            .as_f64()
            .is_some_and(|n| min.is_none_or(|m| n >= m) && max.is_none_or(|m| n <= m)),
        Matcher::Schema(def) => return schema_definition(def, actual, cx),
        Matcher::ExactlyOne(keys) => actual
            .as_object()
            .is_some_and(|o| keys.iter().filter(|k| o.contains_key(*k)).count() == 1),
        Matcher::OnlyKeys(keys) => return only_keys(m, keys, actual, cx),
        Matcher::Base64(want) => {
            use base64::Engine as _;
            let valid = actual
                .as_str()
                .is_some_and(|s| base64::engine::general_purpose::STANDARD.decode(s).is_ok());
            valid == *want
        }
        Matcher::JsonSchema(want) => return json_schema(*want, actual),
        Matcher::ConformsTo(t) => return conforms_to(t, actual, cx),
        Matcher::Exists(_)
        | Matcher::All(_)
        | Matcher::Contains(_)
        | Matcher::Excludes(_)
        | Matcher::First(_)
        | Matcher::Unique(_) => {
            unreachable!("handled above")
        }
    };
    if holds {
        Ok(())
    } else {
        Err(Unmet::Expected(describe(m, cx)))
    }
}

/// `schema: <definition>`: valid against a definition of the revision's schema.
fn schema_definition(def: &str, actual: &Value, cx: MatchContext<'_>) -> Result<(), Unmet> {
    let Some(set) = cx.schema else {
        return Err(Unmet::Skipped(format!(
            "`schema: {def}` not checked: no schema for this revision"
        )));
    };
    let violations = set
        .validate(&SchemaTarget::Definition(def.to_owned()), actual)
        .map_err(Unmet::Skipped)?;
    match violations.first() {
        Some(v) => Err(Unmet::Expected(format!(
            "{def}: {} at `{}`",
            v.message, v.instance_pointer
        ))),
        None => Ok(()),
    }
}

/// `only_keys`: an object with no key but `keys`.
fn only_keys(
    m: &Matcher,
    keys: &[String],
    actual: &Value,
    cx: MatchContext<'_>,
) -> Result<(), Unmet> {
    let Some(o) = actual.as_object() else {
        return Err(Unmet::Expected(describe(m, cx)));
    };
    let extra: Vec<String> = o
        .keys()
        .filter(|k| !keys.contains(k))
        .map(|k| format!("`{k}`"))
        .collect();
    match extra.is_empty() {
        true => Ok(()),
        false => Err(Unmet::Expected(format!(
            "{} (found {})",
            describe(m, cx),
            extra.join(", ")
        ))),
    }
}

/// `json_schema: true|false`: a valid (or an invalid) JSON Schema itself.
fn json_schema(want: bool, actual: &Value) -> Result<(), Unmet> {
    match (meta_validate(actual), want) {
        (Ok(()), true) | (Err(_), false) => Ok(()),
        (Err(e), true) => Err(Unmet::Expected(format!(
            "a valid JSON Schema ({e} at `{}`)",
            e.instance_path()
        ))),
        (Ok(()), false) => Err(Unmet::Expected("an invalid JSON Schema".into())),
    }
}

/// `conforms_to: <schema>`: valid against a schema the scenario renders (a tool's
/// `outputSchema`, say).
fn conforms_to(
    t: &super::model::Template,
    actual: &Value,
    cx: MatchContext<'_>,
) -> Result<(), Unmet> {
    let schema = t.render(cx.vars).map_err(|e| e.to_string())?;
    let validator = jsonschema::validator_for(&schema).map_err(|e| {
        Unmet::Skipped(format!(
            "`conforms_to` not checked: the schema does not compile ({e})"
        ))
    })?;
    match validator.iter_errors(actual).next() {
        Some(e) => Err(Unmet::Expected(format!(
            "valid against the given schema ({e} at `{}`)",
            e.instance_path()
        ))),
        None => Ok(()),
    }
}

/// The expectation in words, for reports.
pub fn describe(m: &Matcher, cx: MatchContext<'_>) -> String {
    let render = |t: &super::model::Template| {
        t.render(cx.vars)
            .map(|v| short(&v, 200))
            .unwrap_or_else(|e| e.to_string())
    };
    match m {
        Matcher::Equals(t) => format!("equal to {}", render(t)),
        Matcher::Subset(t) => format!("containing {}", render(t)),
        Matcher::Regex(r) => format!("a string matching /{r}/"),
        Matcher::Type(t) => format!("of type {}", type_word(*t)),
        Matcher::Length { min, max } => format!(
            "a length {}",
            bounds(min.map(|v| v as f64), max.map(|v| v as f64))
        ),
        Matcher::OneOf(options) => format!(
            "one of {}",
            options.iter().map(render).collect::<Vec<_>>().join(", ")
        ),
        Matcher::Range { min, max } => format!("a number {}", bounds(*min, *max)),
        Matcher::Schema(d) => format!("valid {d}"),
        Matcher::Exists(true) => "a value here".into(),
        Matcher::Exists(false) => "no value here".into(),
        Matcher::ExactlyOne(keys) => format!(
            "an object with exactly one of {}",
            keys.iter()
                .map(|k| format!("`{k}`"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        Matcher::OnlyKeys(keys) if keys.is_empty() => "an empty object".into(),
        Matcher::OnlyKeys(keys) => format!(
            "an object with no members but {}",
            keys.iter()
                .map(|k| format!("`{k}`"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        Matcher::Base64(true) => "a valid base64 string".into(),
        Matcher::Base64(false) => "a string that is not valid base64".into(),
        Matcher::JsonSchema(true) => "a valid JSON Schema".into(),
        Matcher::JsonSchema(false) => "an invalid JSON Schema".into(),
        Matcher::ConformsTo(t) => format!("valid against {}", render(t)),
        Matcher::Contains(sets) => format!(
            "an array or object with {}",
            sets.iter()
                .map(|set| format!("an item where {}", describe_checks(set, cx)))
                .collect::<Vec<_>>()
                .join(", and ")
        ),
        Matcher::Excludes(sets) => format!(
            "an array or object with no item where {}",
            sets.iter()
                .map(|set| describe_checks(set, cx))
                .collect::<Vec<_>>()
                .join(", nor where ")
        ),
        Matcher::First(set) => format!(
            "a non-empty array or object whose first item has {}",
            describe_checks(set, cx)
        ),
        Matcher::Unique(pointer) => unique_text(pointer),
        Matcher::All(all) => all
            .iter()
            .map(|m| describe(m, cx))
            .collect::<Vec<_>>()
            .join(" and "),
    }
}

/// A set of checks in words: `/method` equal to "x" and ...
fn describe_checks(set: &[Check], cx: MatchContext<'_>) -> String {
    if set.is_empty() {
        return "anything".into();
    }
    set.iter()
        .map(|c| format!("`{}` is {}", c.pointer, describe(&c.matcher, cx)))
        .collect::<Vec<_>>()
        .join(" and ")
}

/// The elements of an array or the member values of an object, in order; else nothing.
fn items(actual: Option<&Value>) -> Option<Vec<(String, &Value)>> {
    match actual {
        Some(Value::Array(a)) => Some(
            a.iter()
                .enumerate()
                .map(|(i, v)| (i.to_string(), v))
                .collect(),
        ),
        Some(Value::Object(o)) => Some(o.iter().map(|(k, v)| (k.clone(), v)).collect()),
        _ => None,
    }
}

/// What `unique` at `pointer` asks for, in words.
fn unique_text(pointer: &str) -> String {
    match pointer {
        "" => "an array of distinct items".to_owned(),
        p => format!("an array whose items differ at `{p}`"),
    }
}

/// `unique`: an array whose items differ at `pointer`; the first repeated value is named
/// with the two items that carry it.
fn unique(pointer: &str, actual: Option<&Value>) -> Result<(), Unmet> {
    let describe = || unique_text(pointer);
    let Some(Value::Array(items)) = actual else {
        return Err(Unmet::Expected(describe()));
    };
    let mut seen: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    for (i, item) in items.iter().enumerate() {
        let Some(v) = item.pointer(pointer) else {
            continue;
        };
        if let Some(first) = seen.insert(v.to_string(), i) {
            return Err(Unmet::Expected(format!(
                "{} (items {first} and {i} both have {v})",
                describe()
            )));
        }
    }
    Ok(())
}

/// `excludes`: no item passes every check of any set; the first that does is named.
fn excludes(
    sets: &[Vec<Check>],
    actual: Option<&Value>,
    cx: MatchContext<'_>,
) -> Result<(), Unmet> {
    let Some(items) = items(actual) else {
        return Err(Unmet::Expected(describe(
            &Matcher::Excludes(sets.to_vec()),
            cx,
        )));
    };
    for set in sets {
        for (key, item) in &items {
            let report = check_all(set, item, cx);
            if report.mismatches.is_empty() && report.skipped.is_empty() {
                return Err(Unmet::Expected(format!(
                    "no item where {} (`{key}` is one)",
                    describe_checks(set, cx)
                )));
            }
        }
    }
    Ok(())
}

/// `first`: the first element, or the first member value in the server's order, passes
/// every check; the first check that does not hold is reported.
fn first(set: &[Check], actual: Option<&Value>, cx: MatchContext<'_>) -> Result<(), Unmet> {
    let item = match actual {
        Some(Value::Array(a)) => a.first(),
        Some(Value::Object(o)) => o.values().next(),
        _ => None,
    };
    let Some(item) = item else {
        return Err(Unmet::Expected(describe(&Matcher::First(set.to_vec()), cx)));
    };
    let report = check_all(set, item, cx);
    if let Some(m) = report.mismatches.first() {
        return Err(Unmet::Expected(format!(
            "a first item where `{}` is {} (it has {})",
            m.pointer, m.expected, m.actual
        )));
    }
    if !report.skipped.is_empty() {
        return Err(Unmet::Skipped(report.skipped.join("; ")));
    }
    Ok(())
}

/// `contains`: each set of checks is passed by some element or member value. A set that
/// could not be evaluated anywhere (a `schema` with none at hand) is skipped, not passed.
fn contains(
    sets: &[Vec<Check>],
    actual: Option<&Value>,
    cx: MatchContext<'_>,
) -> Result<(), Unmet> {
    let items: Vec<&Value> = match actual {
        Some(Value::Array(a)) => a.iter().collect(),
        Some(Value::Object(o)) => o.values().collect(),
        _ => {
            return Err(Unmet::Expected(describe(
                &Matcher::Contains(sets.to_vec()),
                cx,
            )));
        }
    };
    for set in sets {
        let reports: Vec<CheckReport> = items.iter().map(|v| check_all(set, v, cx)).collect();
        if reports
            .iter()
            .any(|r| r.mismatches.is_empty() && r.skipped.is_empty())
        {
            continue;
        }
        if let Some(r) = reports.iter().find(|r| r.mismatches.is_empty()) {
            return Err(Unmet::Skipped(r.skipped.join("; ")));
        }
        return Err(Unmet::Expected(format!(
            "an item where {} (none of {} has it)",
            describe_checks(set, cx),
            items.len()
        )));
    }
    Ok(())
}

fn bounds(min: Option<f64>, max: Option<f64>) -> String {
    match (min, max) {
        (Some(a), Some(b)) => format!("from {a} to {b}"),
        (Some(a), None) => format!("of at least {a}"),
        (None, Some(b)) => format!("of at most {b}"),
        (None, None) => "of any size".into(),
    }
}

fn type_word(t: JsonType) -> &'static str {
    match t {
        JsonType::Null => "null",
        JsonType::Boolean => "boolean",
        JsonType::Number => "number",
        JsonType::Integer => "integer",
        JsonType::String => "string",
        JsonType::Array => "array",
        JsonType::Object => "object",
    }
}

fn has_type(t: JsonType, v: &Value) -> bool {
    match t {
        JsonType::Integer => {
            v.is_i64() || v.is_u64() || v.as_f64().is_some_and(|f| f.fract() == 0.0)
        }
        other => type_word(other) == type_name(v),
    }
}

/// Whether `actual` contains `expected`: objects by member (recursively), arrays when
/// each expected element is contained in some actual element, scalars by equality.
pub fn is_subset(expected: &Value, actual: &Value) -> bool {
    match (expected, actual) {
        (Value::Object(e), Value::Object(a)) => e
            .iter()
            .all(|(k, ev)| a.get(k).is_some_and(|av| is_subset(ev, av))),
        (Value::Array(e), Value::Array(a)) => {
            e.iter().all(|ev| a.iter().any(|av| is_subset(ev, av)))
        }
        (e, a) => e == a,
    }
}

fn short(v: &Value, max: usize) -> String {
    crate::protocol::text::clip(&v.to_string(), max)
}

/// Validates a JSON Schema against its dialect's metaschema: the declared one when
/// jsonschema bundles it, else 2020-12, the default of "JSON Schema Usage" (2025-11-25
/// basic#json-schema-usage). A dialect mcpcheck does not know is never a failure of its own:
/// implementations "SHOULD handle unsupported dialects gracefully".
fn meta_validate(schema: &Value) -> Result<(), jsonschema::ValidationError<'_>> {
    let unknown = schema
        .get("$schema")
        .and_then(Value::as_str)
        .is_some_and(|uri| jsonschema::Draft::from_schema_uri(uri) == jsonschema::Draft::Unknown);
    if unknown {
        jsonschema::draft202012::meta::validator().validate(schema)
    } else {
        jsonschema::meta::validate(schema)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::scenario::model::Template;

    fn check(pointer: &str, matcher: Matcher) -> Check {
        Check {
            pointer: pointer.into(),
            matcher,
            line: 7,
        }
    }

    fn run(checks: &[Check], value: &Value) -> Vec<Mismatch> {
        let vars: Vars = [("rev".to_string(), json!("2025-06-18"))].into();
        check_all(
            checks,
            value,
            MatchContext {
                vars: &vars,
                schema: None,
            },
        )
        .mismatches
    }

    fn method_is(m: &str) -> Vec<Check> {
        vec![check("/method", Matcher::Equals(Template(json!(m))))]
    }

    #[test]
    fn contains_finds_each_set_in_some_member_whatever_its_key() {
        let asks = json!({
            "a": {"method": "elicitation/create"},
            "b": {"method": "sampling/createMessage"},
        });
        let both = Matcher::Contains(vec![
            method_is("sampling/createMessage"),
            method_is("elicitation/create"),
        ]);
        assert!(run(&[check("", both)], &asks).is_empty());
        let roots = Matcher::Contains(vec![
            method_is("elicitation/create"),
            method_is("roots/list"),
        ]);
        let m = run(&[check("", roots)], &asks);
        assert_eq!(m.len(), 1, "{m:?}");
        assert!(m[0].expected.contains("roots/list"), "{}", m[0].expected);
        assert!(m[0].expected.contains("none of 2"), "{}", m[0].expected);
        // Arrays by element; anything else, or nothing, does not contain.
        let list = json!([{"method": "roots/list"}]);
        assert!(
            run(
                &[check("", Matcher::Contains(vec![method_is("roots/list")]))],
                &list
            )
            .is_empty()
        );
        assert_eq!(
            run(
                &[check(
                    "/x",
                    Matcher::Contains(vec![method_is("roots/list")])
                )],
                &json!({})
            )
            .len(),
            1
        );
        assert_eq!(
            run(
                &[check("", Matcher::Contains(vec![vec![]]))],
                &json!("text")
            )
            .len(),
            1
        );
    }

    #[test]
    fn unique_names_the_first_repeated_value_and_its_items() {
        let by_name = || check("", Matcher::Unique("/name".into()));
        let tools = json!([{"name": "a"}, {"name": "b"}, {"title": "no name"}]);
        assert!(run(&[by_name()], &tools).is_empty());
        let twice = json!([{"name": "a"}, {"name": "b"}, {"name": "a"}]);
        let m = run(&[by_name()], &twice);
        assert_eq!(m.len(), 1, "{m:?}");
        assert!(
            m[0].expected.contains("items 0 and 2 both have \"a\""),
            "{}",
            m[0].expected
        );
        // 1 and "1" differ; anything but an array does not hold.
        let whole = || check("", Matcher::Unique(String::new()));
        assert!(run(&[whole()], &json!([1, "1"])).is_empty());
        assert_eq!(run(&[whole()], &json!({"a": 1})).len(), 1);
    }

    #[test]
    fn excludes_names_the_item_that_passes_a_set() {
        let asks = json!({
            "a": {"method": "sampling/createMessage"},
            "b": {"method": "elicitation/create"},
        });
        let no = |m: &str| check("", Matcher::Excludes(vec![method_is(m)]));
        assert!(run(&[no("roots/list")], &asks).is_empty());
        let m = run(&[no("elicitation/create")], &asks);
        assert_eq!(m.len(), 1, "{m:?}");
        assert!(m[0].expected.contains("`b` is one"), "{}", m[0].expected);
        assert!(run(&[no("x")], &json!([])).is_empty());
        assert_eq!(run(&[no("x")], &json!(null)).len(), 1);
    }

    #[test]
    fn first_judges_the_first_member_in_the_order_written() {
        let asks: Value = serde_json::from_str(
            r#"{"z": {"method": "sampling/createMessage"}, "a": {"method": "roots/list"}}"#,
        )
        .unwrap();
        let first_is = |m: &str| check("", Matcher::First(method_is(m)));
        assert!(run(&[first_is("sampling/createMessage")], &asks).is_empty());
        let m = run(&[first_is("roots/list")], &asks);
        assert_eq!(m.len(), 1, "{m:?}");
        assert!(
            m[0].expected.contains("sampling/createMessage"),
            "{}",
            m[0].expected
        );
        assert!(run(&[first_is("x")], &json!([{"method": "x"}, {}])).is_empty());
        assert_eq!(run(&[first_is("x")], &json!({})).len(), 1);
        assert_eq!(run(&[first_is("x")], &json!([])).len(), 1);
    }

    #[test]
    fn a_schema_check_without_a_schema_is_skipped_not_passed() {
        let vars = Vars::new();
        let r = check_all(
            &[check("", Matcher::Schema("Tool".into()))],
            &json!({}),
            MatchContext {
                vars: &vars,
                schema: None,
            },
        );
        assert!(r.mismatches.is_empty());
        assert_eq!(
            r.skipped,
            vec!["line 7: `schema: Tool` not checked: no schema for this revision"]
        );
    }

    #[test]
    fn content_and_schema_matchers_hold_and_fail() {
        let v = json!({
            "text": {"uri": "a", "text": "hi"},
            "both": {"uri": "b", "text": "hi", "blob": "aGk="},
            "blob": "aGk=",
            "bad": "a$b",
            "schema": {"type": "object", "properties": {"sum": {"type": "number"}}, "required": ["sum"]},
            "broken": {"type": 7},
            // issue 12: a dialect jsonschema does not bundle is checked as 2020-12, not failed
            "dialect": {"$schema": "https://example.com/my-dialect", "type": "object"},
            "dialect_broken": {"$schema": "https://example.com/my-dialect", "type": 7},
            "out": {"sum": 3},
            "wrong": {"sum": "3"}
        });
        let one = || Matcher::ExactlyOne(vec!["text".into(), "blob".into()]);
        let conforms = || {
            Matcher::ConformsTo(Template(
                json!({"type": "object", "required": ["sum"], "properties": {"sum": {"type": "number"}}}),
            ))
        };
        let holds = [
            check("/text", one()),
            check("/blob", Matcher::Base64(true)),
            check("/bad", Matcher::Base64(false)),
            check("/schema", Matcher::JsonSchema(true)),
            check("/broken", Matcher::JsonSchema(false)),
            check("/dialect", Matcher::JsonSchema(true)),
            check("/dialect_broken", Matcher::JsonSchema(false)),
            check("/out", conforms()),
            check(
                "/out",
                Matcher::OnlyKeys(vec!["sum".into(), "_meta".into()]),
            ),
        ];
        assert_eq!(run(&holds, &v), vec![]);
        let fails = [
            check("/both", one()),
            check("/bad", Matcher::Base64(true)),
            check("/broken", Matcher::JsonSchema(true)),
            check("/wrong", conforms()),
            check("/text", Matcher::OnlyKeys(vec!["_meta".into()])),
            check("/blob", Matcher::OnlyKeys(vec![])),
        ];
        let m = run(&fails, &v);
        assert_eq!(m.len(), 6, "{m:#?}");
        assert_eq!(
            m[4].expected,
            "an object with no members but `_meta` (found `uri`, `text`)"
        );
        assert_eq!(m[5].expected, "an empty object");
        assert!(m[0].expected.contains("exactly one of `text`, `blob`"));
        assert!(
            m[2].expected.starts_with("a valid JSON Schema"),
            "{}",
            m[2].expected
        );
        assert!(m[3].expected.contains("at `/sum`"), "{}", m[3].expected);
    }

    #[test]
    fn each_matcher_holds_and_fails() {
        let v = json!({"v": "2025-06-18", "tools": [{"name": "echo", "x": 1}], "n": 5, "i": 3, "f": 2.5});
        let holds = [
            check("/v", Matcher::Equals(Template(json!("${rev}")))),
            check(
                "/tools",
                Matcher::Subset(Template(json!([{"name": "echo"}]))),
            ),
            check("/v", Matcher::Regex(r"^\d{4}-".into())),
            check("/i", Matcher::Type(JsonType::Integer)),
            check(
                "/tools",
                Matcher::Length {
                    min: Some(1),
                    max: Some(1),
                },
            ),
            check(
                "/n",
                Matcher::OneOf(vec![Template(json!(4)), Template(json!(5))]),
            ),
            check(
                "/f",
                Matcher::Range {
                    min: Some(2.0),
                    max: Some(3.0),
                },
            ),
            check("/missing", Matcher::Exists(false)),
            check(
                "",
                Matcher::All(vec![
                    Matcher::Type(JsonType::Object),
                    Matcher::Length {
                        min: Some(5),
                        max: None,
                    },
                ]),
            ),
        ];
        assert!(run(&holds, &v).is_empty(), "{:?}", run(&holds, &v));
        let fails = [
            check("/v", Matcher::Equals(Template(json!("2024-11-05")))),
            check(
                "/tools",
                Matcher::Subset(Template(json!([{"name": "add"}]))),
            ),
            check("/n", Matcher::Regex("5".into())),
            check("/f", Matcher::Type(JsonType::Integer)),
            check(
                "/tools",
                Matcher::Length {
                    min: Some(2),
                    max: None,
                },
            ),
            check("/n", Matcher::OneOf(vec![Template(json!("5"))])),
            check(
                "/n",
                Matcher::Range {
                    min: None,
                    max: Some(4.0),
                },
            ),
            check("/v", Matcher::Exists(false)),
            check("/missing", Matcher::Type(JsonType::String)),
        ];
        let m = run(&fails, &v);
        assert_eq!(m.len(), fails.len(), "{m:?}");
        assert_eq!(m[0].expected, "equal to \"2024-11-05\"");
        assert_eq!(m[0].actual, "\"2025-06-18\"");
        assert_eq!(m[8].actual, "nothing (no such member)");
        assert_eq!(m[8].line, 7);
    }

    #[test]
    fn subset_is_recursive_and_order_free() {
        assert!(is_subset(
            &json!({"a": [2, 1]}),
            &json!({"a": [1, 2, 3], "b": 0})
        ));
        assert!(!is_subset(&json!({"a": {"b": 1}}), &json!({"a": {"b": 2}})));
    }
}
