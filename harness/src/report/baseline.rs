//! `--expected-failures FILE`: known failures a project accepts for now, each with a reason.
//!
//! A failure is named by a scenario id (a failing scenario) or a rule id (a failure-level
//! finding of the protocol sweep or of a scenario session outside its scenario). Listed
//! failures do not fail the run; unlisted ones do; a listed scenario that ran and passed, or a
//! listed rule no session broke, is *stale* and fails the run too, so the file only shrinks
//! as the server gets fixed. `--update-baseline` rewrites the file to the run's failures.

use std::collections::BTreeMap;
use std::path::Path;

use saphyr::{LoadableYamlNode, Yaml};

use super::expected::{Accepted, Comparison, Failure};
use crate::outcome::{Role, RunReport, Verdict};
use crate::protocol::Revision;

/// A baseline file's problem: exit code 2.
#[derive(Debug, thiserror::Error)]
pub enum BaselineError {
    /// The file could not be read.
    #[error("reading {path}: {source}")]
    Read {
        /// The file.
        path: String,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// The file could not be written.
    #[error("writing {path}: {source}")]
    Write {
        /// The file.
        path: String,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// The file is not a valid expected-failures file.
    #[error("{path}: {message}")]
    Invalid {
        /// The file.
        path: String,
        /// What is wrong with it.
        message: String,
    },
}

/// The parsed file, entries in file order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Baseline {
    /// The accepted failures.
    pub entries: Vec<Accepted>,
    /// The official suite's `server:` ids, when the file is (or holds) one of its
    /// expected-failures lists (`baseline_official`); `None` for mcpcheck's own format.
    pub official: Option<Vec<Accepted>>,
    /// Its `client:` ids, for `mcpcheck client` (`None` as for `official`).
    pub official_client: Option<Vec<Accepted>>,
}

impl Baseline {
    /// Reads and parses the file at `path`.
    pub fn load(path: &Path) -> Result<Self, BaselineError> {
        let text = std::fs::read_to_string(path).map_err(|source| BaselineError::Read {
            path: path.display().to_string(),
            source,
        })?;
        Self::parse(&text).map_err(|message| BaselineError::Invalid {
            path: path.display().to_string(),
            message,
        })
    }

    /// Parses `expected-failures: [{id, reason}, ...]`, the official suite's `server: [ids]`,
    /// or both in one file; an empty document is an empty baseline.
    pub fn parse(text: &str) -> Result<Self, String> {
        let docs = Yaml::load_from_str(text).map_err(|e| format!("not YAML: {e}"))?;
        let Some(doc) = docs.first() else {
            return Ok(Baseline::default());
        };
        if doc.is_null() {
            return Ok(Baseline::default());
        }
        let official = super::baseline_official::parse(doc, "server")?;
        let official_client = super::baseline_official::parse(doc, "client")?;
        let list = match (doc.as_mapping_get("expected-failures"), &official) {
            (Some(list), _) => list,
            (None, Some(_)) => {
                return Ok(Baseline {
                    entries: Vec::new(),
                    official,
                    official_client,
                });
            }
            (None, None) => {
                return Err(
                    "expected a mapping with the key `expected-failures` (mcpcheck's \
                            format) or `server` (the official suite's)"
                        .into(),
                );
            }
        };
        if list.is_null() {
            return Ok(Baseline {
                entries: Vec::new(),
                official,
                official_client,
            });
        }
        let items = list
            .as_vec()
            .ok_or("`expected-failures` must be a list of {id, reason}")?;
        let mut entries = Vec::new();
        let mut seen = std::collections::HashSet::new();
        for (n, item) in items.iter().enumerate() {
            let field = |key: &str| {
                item.as_mapping_get(key)
                    .and_then(|v| v.as_str())
                    .map(str::trim)
                    .filter(|s| !s.is_empty())
                    .map(str::to_owned)
            };
            let id = field("id").ok_or(format!("entry {}: `id` (a string) is missing", n + 1))?;
            let reason = field("reason").ok_or(format!(
                "entry {} ({id}): `reason` is missing: say why the failure is accepted",
                n + 1
            ))?;
            let revision = match field("revision") {
                None => None,
                Some(r) => Some(
                    r.parse::<Revision>()
                        .map_err(|e| format!("entry {} ({id}): `revision`: {e}", n + 1))?,
                ),
            };
            if !seen.insert((id.clone(), revision)) {
                return Err(format!("entry {}: `{id}` is listed twice", n + 1));
            }
            entries.push(Accepted {
                id,
                reason,
                revision,
            });
        }
        Ok(Baseline {
            entries,
            official,
            official_client,
        })
    }

    /// The official list for a run of `role`: `server:` for servers, `client:` for clients.
    fn official_of(&self, role: Role) -> Option<&Vec<Accepted>> {
        match role {
            Role::Server => self.official.as_ref(),
            Role::Client => self.official_client.as_ref(),
        }
    }

    /// The file text: a comment, then one entry per failure (JSON strings are YAML scalars).
    pub fn to_yaml(&self) -> String {
        let client = match self.official_client.as_deref() {
            Some(c) if !c.is_empty() => super::baseline_official::client_yaml(c),
            _ => String::new(),
        };
        let mut out = match &self.official {
            // Only the official lists: the file stays readable by the official suite.
            Some(official) if self.entries.is_empty() => {
                return super::baseline_official::to_yaml(official) + &client;
            }
            Some(official) => super::baseline_official::to_yaml(official) + &client + "\n",
            None => String::new(),
        };
        out.push_str(
            "# mcpcheck expected failures (--expected-failures). Each entry names a failing\n\
             # scenario id or rule id, and why it is accepted for now. Listed failures do not fail\n\
             # the run; a listed one that passes again fails it as stale.\n\
             expected-failures:",
        );
        if self.entries.is_empty() {
            out.push_str(" []\n");
            return out;
        }
        out.push('\n');
        for e in &self.entries {
            let q = |s: &str| serde_json::to_string(s).expect("strings serialize");
            out.push_str(&format!("  - id: {}\n", q(&e.id)));
            if let Some(r) = e.revision {
                out.push_str(&format!("    revision: \"{r}\"\n"));
            }
            out.push_str(&format!("    reason: {}\n", q(&e.reason)));
        }
        out
    }

    /// Writes the baseline to `path` as YAML.
    pub fn save(&self, path: &Path) -> Result<(), BaselineError> {
        std::fs::write(path, self.to_yaml()).map_err(|source| BaselineError::Write {
            path: path.display().to_string(),
            source,
        })
    }

    /// Compares a run with this baseline.
    pub fn compare(&self, report: &RunReport) -> Comparison {
        let failures = failures(report);
        let listed: BTreeMap<&str, &Accepted> =
            self.entries.iter().map(|e| (e.id.as_str(), e)).collect();
        let mut c = Comparison::default();
        for f in failures.values() {
            match listed.get(f.id.as_str()) {
                Some(e) => c.expected.push((*e).clone()),
                None => c.unexpected.push(f.clone()),
            }
        }
        if let Some(official) = self.official_of(report.role) {
            super::baseline_official::compare(official, report, &mut c);
        }
        for e in &self.entries {
            if failures.contains_key(&e.id) {
                continue;
            }
            match report.scenarios.iter().find(|o| o.id == e.id) {
                Some(o) if matches!(o.verdict, Verdict::Pass | Verdict::Warn) => {
                    c.stale.push(e.clone())
                }
                Some(_) => c.unverified.push(e.clone()),
                // Not a scenario of this run: a rule id (stale: no session broke it), or a
                // scenario left out by the selection (unverified).
                None if looks_like_rule(report, &e.id) => c.stale.push(e.clone()),
                None => c.unverified.push(e.clone()),
            }
        }
        c
    }

    /// The baseline that accepts exactly this run's failures, keeping known reasons.
    pub fn updated(&self, report: &RunReport) -> Baseline {
        let reasons: BTreeMap<&str, &str> = self
            .entries
            .iter()
            .map(|e| (e.id.as_str(), e.reason.as_str()))
            .collect();
        let failures = failures(report);
        // With an official list, failures an official id covers go there, by that id.
        let key = match report.role {
            Role::Server => "server",
            Role::Client => "client",
        };
        let official = self.official_of(report.role).map(|listed| {
            let failing = failures.keys().cloned().collect();
            let ids = super::baseline_official::failing_ids(report, &failing);
            let mut kept: Vec<Accepted> = ids
                .into_iter()
                .map(|id| Accepted {
                    reason: super::baseline_official::reason(key),
                    id,
                    revision: None,
                })
                .collect();
            let mut c = Comparison::default();
            super::baseline_official::compare(listed, report, &mut c);
            kept.extend(c.unverified);
            kept.sort_by(|a, b| a.id.cmp(&b.id));
            kept.dedup_by(|a, b| a.id == b.id);
            kept
        });
        let covered = |id: &str| {
            official.is_some()
                && report
                    .scenarios
                    .iter()
                    .any(|o| o.id == id && !o.official.is_empty())
        };
        let mut entries: Vec<Accepted> = failures
            .into_values()
            .filter(|f| !covered(&f.id))
            .map(|f| Accepted {
                reason: reasons
                    .get(f.id.as_str())
                    .map(|r| (*r).to_owned())
                    .unwrap_or_else(|| format!("TODO: why is this accepted? ({})", f.what)),
                id: f.id,
                revision: None,
            })
            .collect();
        // Keep entries this run could not confirm (scenarios not selected, skipped).
        let c = self.compare(report);
        let official_ids: std::collections::BTreeSet<&str> = self
            .official_of(report.role)
            .into_iter()
            .flatten()
            .map(|e| e.id.as_str())
            .collect();
        entries.extend(
            c.unverified
                .into_iter()
                .filter(|e| !official_ids.contains(e.id.as_str())),
        );
        entries.sort_by(|a, b| a.id.cmp(&b.id));
        // The run's own list is rewritten; the other side's stays as it was.
        match report.role {
            Role::Server => Baseline {
                entries,
                official,
                official_client: self.official_client.clone(),
            },
            Role::Client => Baseline {
                entries,
                official: self.official.clone(),
                official_client: official,
            },
        }
    }
}

/// The expected failures of a revision matrix: each leg compared with the entries for its
/// revision and the unqualified ones (an old single-revision file applies to every leg).
/// An unqualified entry some leg fails is confirmed: the legs where it passes do not make
/// it stale, since a failure of one era need not exist in the other.
pub fn compare_legs(base: &Baseline, legs: &[&RunReport]) -> Vec<Comparison> {
    let mut all: Vec<Comparison> = legs
        .iter()
        .map(|r| base.for_leg(r.requested_revision).compare(r))
        .collect();
    let confirmed: std::collections::BTreeSet<String> = all
        .iter()
        .flat_map(|c| &c.expected)
        .filter(|e| e.revision.is_none())
        .map(|e| e.id.clone())
        .collect();
    for c in &mut all {
        c.stale
            .retain(|e| e.revision.is_some() || !confirmed.contains(&e.id));
    }
    all
}

/// `--update-baseline` over a revision matrix: one leg keeps the old unqualified format;
/// several legs name each entry's leg with `revision:`.
pub fn update_legs(base: &Baseline, legs: &[&RunReport]) -> Baseline {
    let mut merged = Baseline::default();
    for r in legs {
        let new = base.for_leg(r.requested_revision).updated(r);
        merged.official = merged.official.or(new.official);
        merged.official_client = merged.official_client.or(new.official_client);
        merged.entries.extend(new.entries.into_iter().map(|mut e| {
            if legs.len() > 1 {
                e.revision = Some(r.requested_revision);
            }
            e
        }));
    }
    merged
        .entries
        .sort_by(|a, b| (&a.id, a.revision).cmp(&(&b.id, b.revision)));
    merged
        .entries
        .dedup_by(|a, b| a.id == b.id && a.revision == b.revision);
    merged
}

impl Baseline {
    /// The entries that apply to the leg at `revision`: its own and the unqualified ones.
    pub fn for_leg(&self, revision: Revision) -> Baseline {
        Baseline {
            entries: self
                .entries
                .iter()
                .filter(|e| e.revision.is_none_or(|r| r == revision))
                .cloned()
                .collect(),
            official: self.official.clone(),
            official_client: self.official_client.clone(),
        }
    }
}

/// Whether an id not among the run's scenarios is a rule id rather than a scenario left out:
/// scenario ids of the suite contain `/`; so do rule ids of scenarios, which are scenario
/// ids. Session rule ids are dotted (`stdio.stdout-only-messages`).
fn looks_like_rule(report: &RunReport, id: &str) -> bool {
    !id.contains('/') || report.scenarios.is_empty()
}

/// The run's failures by id: failing scenarios, and findings outside them at or above the
/// `--fail-on` severity (failure by default; warnings too with `--fail-on warning`).
pub fn failures(report: &RunReport) -> BTreeMap<String, Failure> {
    let mut map = BTreeMap::new();
    for o in &report.scenarios {
        if report.fail_on.fails(&o.verdict) {
            map.entry(o.id.clone()).or_insert_with(|| Failure {
                id: o.id.clone(),
                what: o.title.clone(),
            });
        }
    }
    let loose = report
        .sweep
        .findings
        .iter()
        .chain(report.scenarios.iter().flat_map(|o| &o.protocol))
        .filter(|f| f.severity >= report.fail_on.threshold());
    for f in loose {
        map.entry(f.rule.clone()).or_insert_with(|| Failure {
            id: f.rule.clone(),
            what: f.message.clone(),
        });
    }
    map
}
