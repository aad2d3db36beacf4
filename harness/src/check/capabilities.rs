//! Capability rules (`basic/lifecycle#operation`): the server uses only capabilities it
//! declared, and asks only for client features mcpcheck declared. Pure: capabilities in, findings out.

use serde_json::Value;

use super::{Finding, rules};
use crate::protocol::Revision;

/// Checks a server notification against the capabilities the server declared at
/// initialize (`None`: no profile yet, nothing to judge against).
///
/// `notifications/{tools,prompts,resources}/list_changed` needs `listChanged: true` in the
/// matching capability; `notifications/message` needs `logging`
/// (`server/utilities/logging#capabilities`).
pub fn server_notification(
    method: &str,
    declared: Option<&Value>,
    revision: Revision,
    base: &str,
) -> Option<Finding> {
    let (area, sub) = match method
        .strip_prefix("notifications/")
        .and_then(|m| m.strip_suffix("/list_changed"))
    {
        Some(a @ ("tools" | "prompts" | "resources")) => (a, Some("listChanged")),
        _ if method == "notifications/message" => ("logging", None),
        _ => return None,
    };
    let declared = declared?;
    let cap = declared.get(area).filter(|c| !c.is_null());
    let ok = match sub {
        Some(sub) => cap.and_then(|c| c.get(sub)).and_then(Value::as_bool) == Some(true),
        None => cap.is_some(),
    };
    if ok {
        return None;
    }
    let needed = match sub {
        Some(sub) => format!("{area}.{sub}: true"),
        None => area.to_owned(),
    };
    let f = Finding::new(
        &rules::LIFECYCLE_SERVER_CAPABILITY,
        revision,
        format!("the server sent `{method}` without declaring `capabilities.{needed}`"),
    )
    .pointer(format!("{base}/method"))
    .expected(format!("no `{method}`, or `{needed}` at initialize"));
    Some(f)
}

/// The client capability a server request needs, if any.
fn client_feature(method: &str) -> Option<&'static str> {
    match method {
        "roots/list" => Some("roots"),
        "sampling/createMessage" => Some("sampling"),
        "elicitation/create" => Some("elicitation"),
        _ => None,
    }
}

/// A server request for a client feature the client did not declare: the feature's name
/// (for the error answer) and the finding.
pub fn undeclared_client_feature(
    method: &str,
    declared: &Value,
    revision: Revision,
) -> Option<(&'static str, Finding)> {
    let cap = client_feature(method)?;
    declared.get(cap).is_none().then(|| {
        let f = Finding::new(
            &rules::LIFECYCLE_UNDECLARED_CLIENT_CAPABILITY,
            revision,
            format!(
                "the server sent `{method}`, but mcpcheck did not declare the `{cap}` capability"
            ),
        );
        (cap, f)
    })
}

/// A server request (or a 2026-07-28 input request) for a client feature whose capability
/// the client declared, but not the part of it the request needs (2025-11-25 on):
/// - an elicitation's mode: "Servers MUST NOT send elicitation requests with modes that
///   are not supported by the client", where an empty `elicitation` object declares form
///   mode only and a request without `mode` is form mode (client/elicitation#capabilities);
/// - tools in sampling: "Servers MUST NOT send tool-enabled sampling requests to Clients
///   that have not declared support for tool use via the `sampling.tools` capability"
///   (client/sampling#tools-in-sampling).
///
/// `params` are the request's, found at `at` (a JSON pointer into its frame).
pub fn undeclared_sub_feature(
    method: &str,
    params: Option<&Value>,
    declared: &Value,
    revision: Revision,
    at: &str,
) -> Option<Finding> {
    if revision < Revision::V2025_11_25 {
        return None;
    }
    match method {
        "elicitation/create" => {
            let elicitation = declared.get("elicitation")?.as_object()?;
            let mode = params
                .and_then(|p| p.get("mode"))
                .and_then(Value::as_str)
                .unwrap_or("form");
            let form_only = !elicitation.contains_key("form") && !elicitation.contains_key("url");
            let supported = elicitation.contains_key(mode) || (mode == "form" && form_only);
            (!supported).then(|| {
                let modes = match form_only {
                    true => "form (an empty `elicitation` object)".to_owned(),
                    false => elicitation.keys().cloned().collect::<Vec<_>>().join(", "),
                };
                Finding::new(
                    &rules::ELICITATION_MODE_DECLARED,
                    revision,
                    format!(
                        "the server asked for elicitation in mode `{mode}`, but the client declared only: {modes}"
                    ),
                )
                .pointer(format!("{at}/params/mode"))
                .expected(format!("elicitation only in a declared mode ({modes})"))
            })
        }
        "sampling/createMessage" => {
            declared.get("sampling")?;
            let params = params?;
            let with_tools = params
                .get("tools")
                .and_then(Value::as_array)
                .is_some_and(|t| !t.is_empty())
                || params.get("toolChoice").is_some();
            let declared_tools = declared.pointer("/sampling/tools").is_some();
            (with_tools && !declared_tools).then(|| {
                Finding::new(
                    &rules::SAMPLING_TOOLS_DECLARED,
                    revision,
                    "the server sent a tool-enabled `sampling/createMessage` (`tools` or `toolChoice`), but the client did not declare `sampling.tools`",
                )
                .pointer(format!("{at}/params/tools"))
                .expected("no tools in sampling without the client's `sampling.tools` capability")
            })
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::outcome::Severity;
    use serde_json::json;

    const R3: Revision = Revision::V2025_06_18;

    #[test]
    fn an_undeclared_client_feature_is_a_should_before_2025_06_18() {
        let none = json!({});
        let (_, f) = undeclared_client_feature("roots/list", &none, R3).expect("a MUST in R3");
        assert_eq!(f.severity, Severity::Failure);
        for old in [Revision::V2024_11_05, Revision::V2025_03_26] {
            let (_, f) = undeclared_client_feature("roots/list", &none, old).expect("a SHOULD");
            assert_eq!(f.severity, Severity::Warning, "{old}");
        }
    }

    #[test]
    fn list_changed_needs_list_changed_true() {
        let caps = json!({ "tools": { "listChanged": true }, "prompts": {} });
        let m = |method| server_notification(method, Some(&caps), R3, "");
        assert!(m("notifications/tools/list_changed").is_none());
        let f = m("notifications/prompts/list_changed").expect("prompts.listChanged missing");
        assert_eq!(f.rule, rules::LIFECYCLE_SERVER_CAPABILITY.id);
        assert_eq!(f.severity, Severity::Failure);
        assert_eq!(
            f.message,
            "the server sent `notifications/prompts/list_changed` without declaring `capabilities.prompts.listChanged: true`"
        );
        assert!(m("notifications/resources/list_changed").is_some());
        assert!(
            m("notifications/roots/list_changed").is_none(),
            "not a server capability"
        );
        assert!(m("notifications/progress").is_none());
    }

    #[test]
    fn logging_needs_the_logging_capability_and_was_a_should_before_2025_06_18() {
        let none = json!({ "logging": null });
        assert!(
            server_notification(
                "notifications/message",
                Some(&json!({ "logging": {} })),
                R3,
                ""
            )
            .is_none()
        );
        let f = server_notification(
            "notifications/message",
            Some(&none),
            Revision::V2025_03_26,
            "/0",
        )
        .expect("logging not declared");
        assert_eq!(f.severity, Severity::Warning);
        assert_eq!(f.pointer.as_deref(), Some("/0/method"));
        assert!(server_notification("notifications/message", None, R3, "").is_none());
    }

    #[test]
    fn client_features_must_have_been_declared() {
        let declared = json!({ "roots": {} });
        assert!(undeclared_client_feature("roots/list", &declared, R3).is_none());
        assert!(undeclared_client_feature("ping", &declared, R3).is_none());
        let (cap, f) =
            undeclared_client_feature("sampling/createMessage", &declared, R3).expect("undeclared");
        assert_eq!(cap, "sampling");
        assert_eq!(f.rule, rules::LIFECYCLE_UNDECLARED_CLIENT_CAPABILITY.id);
    }

    #[test]
    fn an_elicitation_mode_and_tools_in_sampling_must_have_been_declared() {
        const R4: Revision = Revision::V2025_11_25;
        let sub = |method, params: Value, declared: Value, rev| {
            undeclared_sub_feature(method, Some(&params), &declared, rev, "")
        };
        let url = json!({ "mode": "url", "url": "https://example.com", "elicitationId": "e" });
        let form = json!({ "message": "m", "requestedSchema": {} });
        // An empty object is form mode only; a request without a mode is form mode.
        let f = sub(
            "elicitation/create",
            url.clone(),
            json!({ "elicitation": {} }),
            R4,
        )
        .expect("url not declared");
        assert_eq!(f.rule, rules::ELICITATION_MODE_DECLARED.id);
        assert_eq!(f.pointer.as_deref(), Some("/params/mode"));
        assert!(
            sub(
                "elicitation/create",
                form.clone(),
                json!({ "elicitation": {} }),
                R4
            )
            .is_none()
        );
        assert!(
            sub(
                "elicitation/create",
                url.clone(),
                json!({ "elicitation": { "url": {} } }),
                R4
            )
            .is_none()
        );
        assert!(
            sub(
                "elicitation/create",
                form.clone(),
                json!({ "elicitation": { "url": {} } }),
                R4
            )
            .is_some()
        );
        // Modes came in 2025-11-25; the capability itself is another rule's.
        assert!(
            sub(
                "elicitation/create",
                url.clone(),
                json!({ "elicitation": {} }),
                R3
            )
            .is_none()
        );
        assert!(sub("elicitation/create", url, json!({}), R4).is_none());
        let tools = json!({ "messages": [], "maxTokens": 1, "tools": [{ "name": "t", "inputSchema": {} }] });
        let f = sub(
            "sampling/createMessage",
            tools.clone(),
            json!({ "sampling": {} }),
            R4,
        )
        .expect("sampling.tools not declared");
        assert_eq!(f.rule, rules::SAMPLING_TOOLS_DECLARED.id);
        assert!(
            sub(
                "sampling/createMessage",
                tools,
                json!({ "sampling": { "tools": {} } }),
                R4
            )
            .is_none()
        );
        let plain = json!({ "messages": [], "maxTokens": 1 });
        assert!(
            sub(
                "sampling/createMessage",
                plain,
                json!({ "sampling": {} }),
                R4
            )
            .is_none()
        );
    }
}
