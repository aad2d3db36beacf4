//! Schema validation of inbound messages against the negotiated revision's official
//! schema, and the record of whether it ran (a missing schema is a skip, never a pass).

use std::sync::Arc;

use serde_json::Value;

use super::{SchemaStatus, Session};
use crate::check::schema::{self as schema_check, MessageKind};
use crate::protocol::Revision;
use crate::schema::{SchemaStore, SchemaTarget};

impl Session {
    /// Whether `store` judges this session's revision as the session's own store did (both
    /// disabled, or both with or both without its schema), so it can take over
    /// ([`use_schemas`](Self::use_schemas)) with the messages so far judged alike: a
    /// planning probe's session, opened before the leg resolved its schemas (fetched,
    /// `--no-schema`), goes on as the leg's sweep only then.
    pub fn schemas_agree(&self, store: &SchemaStore) -> bool {
        let has = |s: &SchemaStore| s.get(self.revision).is_ok();
        self.schemas.is_disabled() == store.is_disabled() && has(&self.schemas) == has(store)
    }

    /// Validates what comes from now on with `store`.
    pub fn use_schemas(&mut self, store: Arc<SchemaStore>) {
        self.schemas = store;
    }

    /// The result definition of a client request `method` in `revision`.
    pub(super) fn result_definition(&self, revision: Revision, method: &str) -> Option<String> {
        let set = self.schemas.get(revision);
        let set = set.as_ref().as_ref().ok()?;
        set.methods()
            .client_requests
            .get(method)
            .map(|(_, result)| result.clone())
    }

    /// Validates the `error` member of an error response found at `base`.
    pub(super) fn check_error_schema(&mut self, value: &Value, index: Option<usize>, base: &str) {
        if let Some(error) = value.get("error") {
            self.validate(
                self.revision,
                &SchemaTarget::ErrorObject,
                error,
                index,
                &format!("{base}/error"),
            );
        }
    }

    /// Validates a server notification or request against the definition its method
    /// names in this revision; an undefined method is a finding of its own.
    pub(super) fn check_schema(
        &mut self,
        value: &Value,
        index: Option<usize>,
        base: &str,
        method: &str,
        kind: MessageKind,
    ) {
        let rev = self.revision;
        let set = self.schemas.get(rev);
        let Ok(set) = set.as_ref() else {
            self.note_schema_skip(rev);
            return;
        };
        let def = match kind {
            MessageKind::Notification => set.methods().server_notifications.get(method),
            MessageKind::Request => set.methods().server_requests.get(method),
        }
        .cloned();
        match def {
            Some(def) => self.validate(rev, &SchemaTarget::Definition(def), value, index, base),
            None => {
                let f = schema_check::unknown_method(method, kind, rev, base);
                self.push_at(f, index);
            }
        }
    }

    /// Remembers the first reason a schema was not at hand.
    fn note_schema_skip(&mut self, revision: Revision) {
        if self.schema_skipped.is_none() {
            let set = self.schemas.get(revision);
            if let Err(reason) = set.as_ref() {
                self.schema_skipped = Some(reason.clone());
            }
        }
    }

    /// Validates `instance` (found at `pointer` in the frame) and records violations.
    pub(super) fn validate(
        &mut self,
        revision: Revision,
        target: &SchemaTarget,
        instance: &Value,
        index: Option<usize>,
        pointer: &str,
    ) {
        let set = self.schemas.get(revision);
        let set = match set.as_ref() {
            Ok(set) => set,
            Err(_) => {
                self.note_schema_skip(revision);
                return;
            }
        };
        if self.schema_source.is_none() {
            self.schema_source = Some((set.located.path.display().to_string(), set.located.pinned));
        }
        match set.validate(target, instance) {
            Ok(violations) => {
                self.schema_checked += 1;
                let findings = schema_check::violations(target, violations, revision, pointer);
                self.push_all(findings, index);
            }
            Err(reason) => self.schema_skipped = Some(reason),
        }
    }

    /// Whether schema checks ran in this session, and on how many messages.
    pub(super) fn schema_status(&self) -> SchemaStatus {
        match (&self.schema_skipped, &self.schema_source) {
            _ if self.schemas.is_disabled() => SchemaStatus::Disabled {
                reason: crate::schema::DISABLED.to_owned(),
            },
            (Some(reason), _) if self.schema_checked == 0 => SchemaStatus::Skipped {
                reason: reason.clone(),
            },
            (_, Some((source, pinned))) => SchemaStatus::Checked {
                revision: self.revision,
                source: source.clone(),
                pinned: *pinned,
                messages: self.schema_checked,
            },
            (Some(reason), None) => SchemaStatus::Skipped {
                reason: reason.clone(),
            },
            (None, None) => SchemaStatus::Skipped {
                reason: "no message needed a schema check".into(),
            },
        }
    }
}
