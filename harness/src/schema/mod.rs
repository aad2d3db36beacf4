//! The official MCP JSON Schemas: located at run time, compiled once per definition,
//! and used to validate every inbound message against the definition that fits it.

pub mod ensure;
pub mod errata;
pub mod fetch;
pub mod pins;
pub mod resolve;
#[cfg(test)]
pub(crate) mod test_dir;

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};

use crate::protocol::Revision;
pub use resolve::{Located, Missing, Origin, SearchPath};

/// What a message is checked against.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum SchemaTarget {
    /// A named definition, e.g. `InitializeResult`.
    Definition(String),
    /// The `error` member of an error response.
    ErrorObject,
}

impl std::fmt::Display for SchemaTarget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SchemaTarget::Definition(d) => f.write_str(d),
            SchemaTarget::ErrorObject => f.write_str("JSON-RPC error object"),
        }
    }
}

/// One way an instance fails its schema.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Violation {
    /// JSON pointer into the validated value.
    pub instance_pointer: String,
    /// JSON pointer into the schema document, through the definition.
    pub schema_path: String,
    /// What is wrong, in the validator's words.
    pub message: String,
}

/// Failure to load a schema file into a usable set.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// The file is not valid JSON.
    #[error("{path}: not valid JSON: {source}")]
    Json {
        /// The file.
        path: String,
        /// The JSON parser's error.
        source: serde_json::Error,
    },
    /// The file has no definitions to validate against.
    #[error("{path}: has no `definitions` or `$defs`")]
    NoDefinitions {
        /// The file.
        path: String,
    },
}

/// How requests map to definitions in one revision, read from the schema itself so it
/// follows the data rather than a hand-kept list.
#[derive(Clone, Debug, Default)]
pub struct MethodTable {
    /// Client-to-server request method -> (request definition, result definition).
    pub client_requests: BTreeMap<String, (String, String)>,
    /// Server-to-client request method -> request definition.
    pub server_requests: BTreeMap<String, String>,
    /// Server-to-client notification method -> notification definition.
    pub server_notifications: BTreeMap<String, String>,
    /// Client-to-server notification method -> notification definition.
    pub client_notifications: BTreeMap<String, String>,
}

/// One revision's schema, compiled lazily per definition and cached.
pub struct SchemaSet {
    /// The revision it describes.
    pub revision: Revision,
    /// Where it was found.
    pub located: Located,
    root: Value,
    defs_key: &'static str,
    methods: MethodTable,
    compiled: Mutex<HashMap<SchemaTarget, Arc<jsonschema::Validator>>>,
}

impl std::fmt::Debug for SchemaSet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SchemaSet")
            .field("revision", &self.revision)
            .field("path", &self.located.path)
            .finish()
    }
}

impl SchemaSet {
    /// Parses the located file; fails when it is not JSON or has no definitions.
    pub fn load(revision: Revision, located: Located) -> Result<Self, LoadError> {
        let path = located.path.display().to_string();
        let mut root: Value =
            serde_json::from_slice(&located.bytes).map_err(|source| LoadError::Json {
                path: path.clone(),
                source,
            })?;
        let defs_key = if root.get("$defs").is_some() {
            "$defs"
        } else if root.get("definitions").is_some() {
            "definitions"
        } else {
            return Err(LoadError::NoDefinitions { path });
        };
        errata::apply(&mut root[defs_key]);
        let methods = method_table(&root[defs_key]);
        Ok(SchemaSet {
            revision,
            located,
            root,
            defs_key,
            methods,
            compiled: Mutex::new(HashMap::new()),
        })
    }

    /// Each method's request and result definitions.
    pub fn methods(&self) -> &MethodTable {
        &self.methods
    }

    /// Whether the schema defines `name`.
    pub fn has_definition(&self, name: &str) -> bool {
        self.root[self.defs_key].get(name).is_some()
    }

    /// The raw definition, for generators that read schemas (the fuzzer).
    pub fn definition(&self, name: &str) -> Option<&Value> {
        self.root[self.defs_key].get(name)
    }

    /// The whole schema document.
    pub fn root(&self) -> &Value {
        &self.root
    }

    fn validator(&self, target: &SchemaTarget) -> Result<Arc<jsonschema::Validator>, String> {
        let mut cache = self.compiled.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(v) = cache.get(target) {
            return Ok(v.clone());
        }
        let reference = match target {
            SchemaTarget::Definition(name) => {
                if !self.has_definition(name) {
                    return Err(format!(
                        "{} schema has no definition `{name}`",
                        self.revision
                    ));
                }
                format!("#/{}/{}", self.defs_key, name)
            }
            SchemaTarget::ErrorObject if self.has_definition("Error") => {
                format!("#/{}/Error", self.defs_key)
            }
            SchemaTarget::ErrorObject => {
                format!("#/{}/JSONRPCError/properties/error", self.defs_key)
            }
        };
        let mut wrapper = json!({ "$ref": reference });
        wrapper[self.defs_key] = self.root[self.defs_key].clone();
        if let Some(dialect) = self.root.get("$schema") {
            wrapper["$schema"] = dialect.clone();
        }
        let validator = jsonschema::options()
            .should_validate_formats(false)
            .build(&wrapper)
            .map_err(|e| {
                format!(
                    "{} schema for {target} does not compile: {e}",
                    self.revision
                )
            })?;
        let validator = Arc::new(validator);
        cache.insert(target.clone(), validator.clone());
        Ok(validator)
    }

    /// Validates `instance` against `target`. An `Err` means the schema itself could not
    /// be used (a harness problem, never the server's fault).
    pub fn validate(
        &self,
        target: &SchemaTarget,
        instance: &Value,
    ) -> Result<Vec<Violation>, String> {
        let validator = self.validator(target)?;
        Ok(validator
            .iter_errors(instance)
            .take(20)
            .map(|e| Violation {
                instance_pointer: e.instance_path().to_string(),
                schema_path: e.schema_path().to_string(),
                message: e.to_string(),
            })
            .collect())
    }
}

fn refs_of(union: Option<&Value>) -> Vec<String> {
    let Some(Value::Array(items)) = union.and_then(|u| u.get("anyOf").or_else(|| u.get("oneOf")))
    else {
        return Vec::new();
    };
    items
        .iter()
        .filter_map(|i| {
            i.get("$ref")?
                .as_str()?
                .rsplit('/')
                .next()
                .map(str::to_owned)
        })
        .collect()
}

fn method_of(def: &Value) -> Option<String> {
    let m = def.get("properties")?.get("method")?;
    m.get("const")
        .or_else(|| m.get("enum").and_then(|e| e.get(0)))?
        .as_str()
        .map(str::to_owned)
}

/// The result definition for a request definition: by name (`XRequest` -> `XResult`),
/// with the requests the spec answers with an empty result.
fn result_def(defs: &Value, request_def: &str) -> String {
    const EMPTY: [&str; 4] = [
        "PingRequest",
        "SetLevelRequest",
        "SubscribeRequest",
        "UnsubscribeRequest",
    ];
    if EMPTY.contains(&request_def) {
        return "EmptyResult".to_owned();
    }
    let candidate = format!("{}Result", request_def.trim_end_matches("Request"));
    if defs.get(&candidate).is_some() {
        candidate
    } else {
        "Result".to_owned()
    }
}

fn method_table(defs: &Value) -> MethodTable {
    let mut table = MethodTable::default();
    let by_def = |name: &str| defs.get(name).and_then(method_of);
    for def in refs_of(defs.get("ClientRequest")) {
        if let Some(m) = by_def(&def) {
            let result = result_def(defs, &def);
            table.client_requests.insert(m, (def, result));
        }
    }
    for def in refs_of(defs.get("ServerRequest")) {
        if let Some(m) = by_def(&def) {
            table.server_requests.insert(m, def);
        }
    }
    for def in refs_of(defs.get("ServerNotification")) {
        if let Some(m) = by_def(&def) {
            table.server_notifications.insert(m, def);
        }
    }
    for def in refs_of(defs.get("ClientNotification")) {
        if let Some(m) = by_def(&def) {
            table.client_notifications.insert(m, def);
        }
    }
    table
}

/// Why schema checks did not run under `--no-schema`.
pub const DISABLED: &str = "schema checks disabled by --no-schema";

/// The schema sets of a run, one per revision, loaded on first use.
#[derive(Debug, Default)]
pub struct SchemaStore {
    search: SearchPath,
    /// `--no-schema`: every lookup answers that schema checks are off.
    disabled: bool,
    sets: Mutex<HashMap<Revision, Arc<Result<SchemaSet, String>>>>,
}

impl SchemaStore {
    /// A store that finds schemas along `search`, loading each revision once.
    pub fn new(search: SearchPath) -> Self {
        SchemaStore {
            search,
            disabled: false,
            sets: Mutex::new(HashMap::new()),
        }
    }

    /// A store for `--no-schema`: no schema is looked up, and every check says why.
    pub fn disabled() -> Self {
        SchemaStore {
            disabled: true,
            ..Self::default()
        }
    }

    /// Whether schema checks are off (`--no-schema`).
    pub fn is_disabled(&self) -> bool {
        self.disabled
    }

    /// The revisions asked for whose schema could not be had, with why (empty when the
    /// store is disabled: that was the user's choice).
    pub fn unavailable(&self) -> Vec<(Revision, String)> {
        let sets = self.sets.lock().unwrap_or_else(|e| e.into_inner());
        let mut out: Vec<_> = sets
            .iter()
            .filter(|_| !self.disabled)
            .filter_map(|(rev, set)| set.as_ref().as_ref().err().map(|e| (*rev, e.clone())))
            .collect();
        out.sort();
        out
    }

    /// The schema for `revision`, or why there is none (a one-line hint for the report).
    pub fn get(&self, revision: Revision) -> Arc<Result<SchemaSet, String>> {
        let mut sets = self.sets.lock().unwrap_or_else(|e| e.into_inner());
        sets.entry(revision)
            .or_insert_with(|| {
                if self.disabled {
                    return Arc::new(Err(DISABLED.to_owned()));
                }
                Arc::new(
                    self.search
                        .locate(revision)
                        .map_err(|e| e.to_string())
                        .and_then(|loc| SchemaSet::load(revision, loc).map_err(|e| e.to_string())),
                )
            })
            .clone()
    }
}
