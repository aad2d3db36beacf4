//! Schema validation of inbound messages against the negotiated revision's official
//! schema, and the record of whether it ran (a missing schema is a skip, never a pass).

use std::sync::Arc;

use serde_json::Value;

use super::{SchemaStatus, Session};
use crate::check::schema::{self as schema_check, MessageKind};
use crate::protocol::Revision;
use crate::schema::{SchemaSet, SchemaStore, SchemaTarget};

impl Session {
    /// Whether `store` judges this session's revision as the session's own store did (both
    /// disabled, or both with or both without its schema), so it can take over
    /// ([`use_schemas`](Self::use_schemas)) with the messages so far judged alike: a
    /// planning probe's session, opened before the leg resolved its schemas (fetched,
    /// `--no-schema`), goes on as the leg's sweep only then.
    pub fn schemas_agree(&self, store: &SchemaStore) -> bool {
        let has = |s: &SchemaStore| s.get(self.revision).is_ok();
        let own = &self.schema.store;
        own.is_disabled() == store.is_disabled() && has(own) == has(store)
    }

    /// Validates what comes from now on with `store`.
    pub fn use_schemas(&mut self, store: Arc<SchemaStore>) {
        self.schema.store = store;
    }

    /// The result definition of a client request `method` in `revision`.
    pub(super) fn result_definition(&self, revision: Revision, method: &str) -> Option<String> {
        let set = self.schema.get(revision);
        let set = set.as_ref().as_ref().ok()?;
        set.methods()
            .client_requests
            .get(method)
            .map(|(_, result)| result.clone())
    }

    /// `CreateTaskResult`, what a task-augmented request accepted as a task answers, when
    /// the revision's schema has it (2025-11-25 on).
    pub(super) fn task_result_definition(&self, revision: Revision) -> Option<String> {
        let set = self.schema.get(revision);
        let set = set.as_ref().as_ref().ok()?;
        let name = "CreateTaskResult";
        set.has_definition(name).then(|| name.to_owned())
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
        let set = self.schema.get(rev);
        let Ok(set) = set.as_ref() else {
            self.schema.note_skip(rev);
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

    /// Validates `instance` (found at `pointer` in the frame) and records violations.
    pub(super) fn validate(
        &mut self,
        revision: Revision,
        target: &SchemaTarget,
        instance: &Value,
        index: Option<usize>,
        pointer: &str,
    ) {
        let set = self.schema.get(revision);
        let Ok(set) = set.as_ref() else {
            self.schema.note_skip(revision);
            return;
        };
        if let Some(violations) = self.schema.validate(set, target, instance) {
            let findings = schema_check::violations(target, violations, revision, pointer);
            self.push_all(findings, index);
        }
    }

    /// Whether schema checks ran in this session, and on how many messages.
    pub(super) fn schema_status(&self) -> SchemaStatus {
        self.schema.status(self.revision)
    }
}

/// What schema validation did in one session: the store it validates with, how many
/// messages it checked, where their schema came from, and the first reason a schema was
/// not at hand. A session that checked nothing says why, never that it passed.
#[derive(Debug)]
pub(super) struct SchemaRecord {
    store: Arc<SchemaStore>,
    checked: usize,
    skipped: Option<String>,
    /// The schema file and whether it is the pinned official one.
    source: Option<(String, bool)>,
}

impl SchemaRecord {
    pub(super) fn new(store: Arc<SchemaStore>) -> Self {
        SchemaRecord {
            store,
            checked: 0,
            skipped: None,
            source: None,
        }
    }

    /// The schema set of `revision`, as the store has it.
    pub(super) fn get(&self, revision: Revision) -> Arc<Result<SchemaSet, String>> {
        self.store.get(revision)
    }

    /// Remembers the first reason a schema was not at hand.
    pub(super) fn note_skip(&mut self, revision: Revision) {
        if self.skipped.is_none()
            && let Err(reason) = self.store.get(revision).as_ref()
        {
            self.skipped = Some(reason.clone());
        }
    }

    /// Validates `instance` with `set`, counting it: its violations, or `None` when the
    /// schema could not judge it (the reason is kept as a skip).
    pub(super) fn validate(
        &mut self,
        set: &SchemaSet,
        target: &SchemaTarget,
        instance: &Value,
    ) -> Option<Vec<crate::schema::Violation>> {
        self.source
            .get_or_insert_with(|| (set.located.path.display().to_string(), set.located.pinned));
        match set.validate(target, instance) {
            Ok(violations) => {
                self.checked += 1;
                Some(violations)
            }
            Err(reason) => {
                self.skipped = Some(reason);
                None
            }
        }
    }

    /// Whether checks ran at `revision`, and on how many messages.
    pub(super) fn status(&self, revision: Revision) -> SchemaStatus {
        match (&self.skipped, &self.source) {
            _ if self.store.is_disabled() => SchemaStatus::Disabled {
                reason: crate::schema::DISABLED.to_owned(),
            },
            (Some(reason), _) if self.checked == 0 => SchemaStatus::Skipped {
                reason: reason.clone(),
            },
            (_, Some((source, pinned))) => SchemaStatus::Checked {
                revision,
                source: source.clone(),
                pinned: *pinned,
                messages: self.checked,
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::test_dir;
    use crate::schema::{Origin, SearchPath};

    fn store(dir: std::path::PathBuf) -> Arc<SchemaStore> {
        Arc::new(SchemaStore::new(SearchPath {
            dirs: vec![(dir, Origin::Flag)],
        }))
    }

    const REV: Revision = Revision::V2025_11_25;

    #[test]
    fn nothing_checked_is_a_skip_with_its_reason_never_a_pass() {
        let record = SchemaRecord::new(store(test_dir::schema_dir()));
        assert!(matches!(
            record.status(REV),
            SchemaStatus::Skipped { reason } if reason.contains("no message")
        ));
        let mut missing = SchemaRecord::new(store("/nonexistent-mcpcheck-schemas".into()));
        missing.note_skip(REV);
        let SchemaStatus::Skipped { reason } = missing.status(REV) else {
            panic!("a missing schema must be a skip: {:?}", missing.status(REV));
        };
        assert!(!reason.is_empty());
    }

    #[test]
    fn a_disabled_store_says_so_whatever_ran() {
        let mut record = SchemaRecord::new(Arc::new(SchemaStore::disabled()));
        record.note_skip(REV);
        assert!(matches!(record.status(REV), SchemaStatus::Disabled { .. }));
    }

    #[test]
    fn checked_messages_are_counted_with_their_source() {
        let mut record = SchemaRecord::new(store(test_dir::schema_dir()));
        let set = record.get(REV);
        let set = set.as_ref().as_ref().expect("the 2025-11-25 schema");
        let ping = serde_json::json!({"jsonrpc": "2.0", "id": 1, "result": {}});
        let target = SchemaTarget::Definition("JSONRPCResponse".into());
        for _ in 0..3 {
            assert!(record.validate(set, &target, &ping).is_some());
        }
        // A later skip does not hide the messages that were checked.
        record.skipped = Some("a later reason".into());
        match record.status(REV) {
            SchemaStatus::Checked {
                messages, pinned, ..
            } => {
                assert_eq!(messages, 3);
                assert!(pinned, "the tests' schemas are the pinned ones");
            }
            other => panic!("expected Checked: {other:?}"),
        }
    }
}
