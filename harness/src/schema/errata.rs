//! Known errors of the published JSON Schemas, mended in memory when a schema loads, so
//! a correct peer is never failed for the generator's mistake. Each erratum names the
//! `schema.ts` declaration (the spec's source of truth) that the JSON lost; the file on
//! disk stays as pinned.

use serde_json::Value;

/// Mends every known erratum in `defs` (a schema's definitions).
pub fn apply(defs: &mut Value) {
    elicit_result_numbers(defs);
}

/// `ElicitResult.content` is `{ [key: string]: string | number | boolean | string[] }` in
/// schema.ts, but the JSON Schemas list `integer` where `number` stands, so a client that
/// accepts a form with a `NumberSchema` field (`95.5`) would break the schema.
fn elicit_result_numbers(defs: &mut Value) {
    let Some(Value::Array(options)) =
        defs.pointer_mut("/ElicitResult/properties/content/additionalProperties/anyOf")
    else {
        return;
    };
    for option in options {
        if let Some(Value::Array(types)) = option.get_mut("type")
            && !types.iter().any(|t| t == "number")
        {
            for t in types.iter_mut() {
                if t == "integer" {
                    *t = Value::from("number");
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn elicit_result_content_takes_any_number() {
        let mut defs = json!({"ElicitResult": {"properties": {"content": {"additionalProperties": {"anyOf": [
            {"type": "array", "items": {"type": "string"}},
            {"type": ["string", "integer", "boolean"]}
        ]}}}}});
        apply(&mut defs);
        assert_eq!(
            defs.pointer("/ElicitResult/properties/content/additionalProperties/anyOf/1/type")
                .unwrap(),
            &json!(["string", "number", "boolean"])
        );
        // A schema without the definition is left alone.
        let mut other = json!({"Tool": {}});
        apply(&mut other);
        assert_eq!(other, json!({"Tool": {}}));
    }
}
