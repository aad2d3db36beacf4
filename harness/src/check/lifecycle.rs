//! Lifecycle rules (`basic/lifecycle`): version negotiation in `initialize`, and no server
//! requests before `notifications/initialized`. Pure: answers in, findings (and the agreed revision) out.

use super::{Finding, rules};
use crate::protocol::{ErrorObject, Revision};

/// What the version negotiation of a default `initialize` settled.
#[derive(Debug, PartialEq)]
pub struct Negotiation {
    /// The revision to speak from now on, when the server moved the session to another one.
    pub switch_to: Option<Revision>,
    /// What the answer broke, or noted.
    pub findings: Vec<Finding>,
}

/// Judges the `protocolVersion` a server answered (`None`: missing, a schema violation
/// reported elsewhere) to a request for `requested`. "Otherwise, the server MUST respond with
/// another protocol version it supports": any version, one mcpcheck does not know included
/// (InitializeResult.protocolVersion: "This may not match the version that the client
/// requested"). Only an answer that names no version, or a revision without the handshake
/// (2026-07-28 basic/versioning: `initialize` selects a legacy version), breaks it.
pub fn negotiate(requested: Revision, answered: Option<&str>) -> Negotiation {
    let mut out = Negotiation {
        switch_to: None,
        findings: Vec::new(),
    };
    let Some(v) = answered else {
        return out;
    };
    if v == requested.as_str() {
        return out;
    }
    match v.parse::<Revision>() {
        Ok(other) if other.has_handshake() => {
            out.findings.push(Finding::new(
                &rules::LIFECYCLE_VERSION_DOWNGRADE,
                requested,
                format!(
                    "requested {requested}, the server answered {other}; the session continues in {other}"
                ),
            ));
            out.switch_to = Some(other);
        }
        Err(_) if !v.trim().is_empty() => out.findings.push(Finding::new(
            &rules::LIFECYCLE_VERSION_UNKNOWN,
            requested,
            format!(
                "requested {requested}, the server answered \"{v}\", a version mcpcheck does not speak (allowed if the server supports it; a client that cannot MUST disconnect): the session is judged as {requested}"
            ),
        )),
        _ => out.findings.push(
            Finding::new(
                &rules::LIFECYCLE_VERSION,
                requested,
                format!("requested {requested}, the server answered \"{v}\", which is not a handshake revision of MCP"),
            )
            .pointer("/result/protocolVersion")
            .expected(format!("\"{requested}\", or another revision the server supports")),
        ),
    }
    out
}

/// A default `initialize` answered with an error.
pub fn initialize_failed(error: &ErrorObject, revision: Revision) -> Finding {
    Finding::new(
        &rules::LIFECYCLE_VERSION,
        revision,
        format!(
            "`initialize` failed with error {} \"{}\"; the server may speak only the stateless revision (2026-07-28), which has no handshake: `--protocol-version auto` asks it what it supports",
            error.code, error.message
        ),
    )
}

/// A server request (`method`) before the client sent `notifications/initialized`:
/// only `ping` is expected then.
pub fn request_before_initialized(
    method: &str,
    initialized_sent: bool,
    revision: Revision,
) -> Option<Finding> {
    (method != "ping" && !initialized_sent).then(|| {
        Finding::new(
            &rules::LIFECYCLE_REQUEST_BEFORE_INITIALIZED,
            revision,
            format!("the server sent a `{method}` request before `notifications/initialized`"),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::outcome::Severity;

    const R3: Revision = Revision::V2025_06_18;

    #[test]
    fn the_requested_version_or_nothing_to_say() {
        assert_eq!(
            negotiate(R3, Some("2025-06-18")),
            Negotiation {
                switch_to: None,
                findings: vec![]
            }
        );
        assert!(negotiate(R3, None).findings.is_empty());
    }

    #[test]
    fn another_handshake_revision_is_a_downgrade_to_follow() {
        let n = negotiate(R3, Some("2025-03-26"));
        assert_eq!(n.switch_to, Some(Revision::V2025_03_26));
        assert_eq!(n.findings.len(), 1);
        assert_eq!(n.findings[0].rule, rules::LIFECYCLE_VERSION_DOWNGRADE.id);
        assert_eq!(n.findings[0].severity, Severity::Info);
    }

    #[test]
    fn a_version_mcpcheck_does_not_know_is_allowed() {
        // The TypeScript SDK still accepts the pre-release 2024-10-07.
        for v in ["2024-10-07", "1999-01-01"] {
            let n = negotiate(R3, Some(v));
            assert_eq!(n.switch_to, None, "{v}");
            assert_eq!(n.findings.len(), 1, "{v}");
            assert_eq!(n.findings[0].rule, rules::LIFECYCLE_VERSION_UNKNOWN.id);
            assert_eq!(n.findings[0].severity, Severity::Info);
        }
    }

    #[test]
    fn no_version_or_a_stateless_version_is_a_failure() {
        for v in ["", " ", "2026-07-28"] {
            let n = negotiate(R3, Some(v));
            assert_eq!(n.switch_to, None, "{v}");
            assert_eq!(n.findings[0].rule, rules::LIFECYCLE_VERSION.id);
            assert_eq!(
                n.findings[0].pointer.as_deref(),
                Some("/result/protocolVersion")
            );
        }
    }

    #[test]
    fn only_ping_may_come_before_initialized() {
        assert!(request_before_initialized("ping", false, R3).is_none());
        assert!(request_before_initialized("roots/list", true, R3).is_none());
        let f = request_before_initialized("roots/list", false, R3).expect("too early");
        assert_eq!(f.severity, Severity::Warning);
    }

    #[test]
    fn a_failed_initialize_names_the_error() {
        let e = ErrorObject {
            code: -32601,
            message: "nope".into(),
            data: None,
        };
        let f = initialize_failed(&e, R3);
        assert!(
            f.message
                .starts_with("`initialize` failed with error -32601 \"nope\"")
        );
    }
}
