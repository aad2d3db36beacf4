//! Schema rules: what a validation against the official schema found, and server
//! methods the revision does not define. Pure: violations in, findings out.

use super::{Finding, rules};
use crate::protocol::Revision;
use crate::schema::{SchemaTarget, Violation};

/// Whether a server message is a notification or a request (they have separate method lists).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MessageKind {
    /// A server notification.
    Notification,
    /// A server request.
    Request,
}

impl MessageKind {
    fn as_str(self) -> &'static str {
        match self {
            MessageKind::Notification => "notification",
            MessageKind::Request => "request",
        }
    }
}

/// One finding per violation of `target`, validated at `pointer` in its frame.
pub fn violations(
    target: &SchemaTarget,
    violations: Vec<Violation>,
    revision: Revision,
    pointer: &str,
) -> Vec<Finding> {
    violations
        .into_iter()
        .map(|v| {
            Finding::new(
                &rules::SCHEMA_VALID,
                revision,
                format!(
                    "{target} at `{}`: {}",
                    display_pointer(&v.instance_pointer),
                    v.message
                ),
            )
            .pointer(format!("{pointer}{}", v.instance_pointer))
            .expected(format!("{target} (schema path {})", v.schema_path))
        })
        .collect()
}

/// A server `kind` message whose `method` the revision does not define for servers.
pub fn unknown_method(method: &str, kind: MessageKind, revision: Revision, base: &str) -> Finding {
    Finding::new(
        &rules::SCHEMA_KNOWN_METHOD,
        revision,
        format!(
            "the server sent a `{method}` {}, which {revision} does not define for servers",
            kind.as_str()
        ),
    )
    .pointer(format!("{base}/method"))
}

fn display_pointer(p: &str) -> &str {
    if p.is_empty() { "/" } else { p }
}

#[cfg(test)]
mod tests {
    use super::*;

    const R3: Revision = Revision::V2025_06_18;

    #[test]
    fn a_violation_points_into_the_frame_and_at_the_schema() {
        let target = SchemaTarget::Definition("ListToolsResult".into());
        let v = Violation {
            instance_pointer: "/tools".into(),
            schema_path: "/properties/tools/type".into(),
            message: "1 is not of type \"array\"".into(),
        };
        let root = Violation {
            instance_pointer: String::new(),
            ..v.clone()
        };
        let f = violations(&target, vec![v, root], R3, "/0/result");
        assert_eq!(f.len(), 2);
        assert_eq!(f[0].rule, rules::SCHEMA_VALID.id);
        assert_eq!(
            f[0].message,
            "ListToolsResult at `/tools`: 1 is not of type \"array\""
        );
        assert_eq!(f[0].pointer.as_deref(), Some("/0/result/tools"));
        assert_eq!(
            f[0].expected.as_deref(),
            Some("ListToolsResult (schema path /properties/tools/type)")
        );
        assert!(f[1].message.starts_with("ListToolsResult at `/`:"));
    }

    #[test]
    fn an_unknown_method_is_a_warning_naming_its_kind() {
        let f = unknown_method("x/y", MessageKind::Request, R3, "");
        assert_eq!(f.rule, rules::SCHEMA_KNOWN_METHOD.id);
        assert_eq!(
            f.message,
            "the server sent a `x/y` request, which 2025-06-18 does not define for servers"
        );
        assert_eq!(f.pointer.as_deref(), Some("/method"));
    }
}
