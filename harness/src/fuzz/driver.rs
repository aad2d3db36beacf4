//! The fuzzing loop: start the server, learn what it serves, run cases in batches, and
//! replace a crashed, wedged or long-lived server; the oracles and findings live beside it.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::time::{Duration, Instant};

use rand::SeedableRng;
use serde_json::{Value, json};

use super::generate::{Generator, Surface};
use super::oracle::{Judge, Signature};
use super::process::Proc;
use super::wire::{Framing, Wire};
use super::{FUZZ_REPORT_FORMAT_VERSION, FuzzConfig, FuzzCounts, FuzzError, FuzzReport, Rng};
use crate::protocol::Revision;
use crate::schema::SchemaStore;
use crate::transport::target::Target;

/// Cases sent back to back before their answers are awaited.
const CASES_PER_BATCH: u64 = 8;
/// Failed starts in a row (process or HTTP session) after which the run stops.
const MAX_FAILED_STARTS: u32 = 3;

/// A run in progress: its configuration, what it has found, and its report so far.
pub(super) struct Fuzzer<'c> {
    pub config: &'c FuzzConfig,
    pub schemas: Arc<SchemaStore>,
    pub started: Instant,
    pub revision: Revision,
    pub report: FuzzReport,
    /// Signatures seen, with their index in `report.findings`.
    pub known: HashMap<Signature, usize>,
    pub log: &'c mut (dyn FnMut(&str) + Send),
    /// Time spent minimizing, left out of the throughput.
    pub minimizing: Duration,
}

/// Runs `mcpcheck fuzz`. `log` receives progress lines and findings as they happen.
pub async fn run(
    config: &FuzzConfig,
    schemas: Arc<SchemaStore>,
    log: &mut (dyn FnMut(&str) + Send),
) -> Result<FuzzReport, FuzzError> {
    let started = Instant::now();
    let mut f = Fuzzer {
        config,
        schemas: schemas.clone(),
        started,
        revision: config.session.revision,
        report: empty_report(config),
        known: HashMap::new(),
        log,
        minimizing: Duration::ZERO,
    };
    let mut rng = Rng::seed_from_u64(config.seed);
    let (proc, profile) = f.spawn().await?;
    f.revision = proc.session.revision();
    f.report.revision = f.revision;
    let set = schemas.get(f.revision);
    let set = match set.as_ref() {
        Ok(s) => s,
        Err(reason) => {
            return Err(FuzzError::NoSchema {
                revision: f.revision,
                reason: reason.clone(),
            });
        }
    };
    let mut surface = Surface {
        capabilities: profile,
        ..Surface::default()
    };
    let current = f.discover(proc, &mut surface).await;
    let surface = surface;
    let over_http = matches!(config.target, Target::Http(_) | Target::Sse(_));
    let mut generator = Generator::new(set, &surface).over_http(over_http);
    f.announce(&generator, &surface, over_http);
    f.fuzz(&mut generator, &mut rng, current, over_http).await?;
    let fuzz_time = started.elapsed().saturating_sub(f.minimizing);
    f.report.duration_ms = started.elapsed().as_millis() as u64;
    f.report.counts.messages_per_sec = (f.report.counts.messages + f.report.counts.probes) as f64
        / fuzz_time.as_secs_f64().max(1e-3);
    let line = f.status();
    (f.log)(&line);
    Ok(f.report)
}

/// The report of a run that has not started: nothing counted yet.
fn empty_report(config: &FuzzConfig) -> FuzzReport {
    FuzzReport {
        format_version: FUZZ_REPORT_FORMAT_VERSION,
        mcpcheck_version: env!("CARGO_PKG_VERSION"),
        server: config.target.describe(),
        transport: transport_name(&config.target),
        stopped: None,
        seed: config.seed,
        revision: config.session.revision,
        duration_ms: 0,
        counts: FuzzCounts::default(),
        methods: BTreeMap::new(),
        tools: BTreeMap::new(),
        findings: Vec::new(),
    }
}

/// What the fuzzing loop does for want of a server.
enum Spawned {
    /// A new server (or HTTP session), ready for cases.
    Ready(Box<Proc>),
    /// The start failed; the next batch tries again.
    Retry,
    /// The HTTP endpoint stopped answering: the run ends with what it found.
    Stop,
}

impl Fuzzer<'_> {
    /// Says what the run will fuzz (its coverage starts at zero for each method and tool),
    /// and, over HTTP, what it cannot.
    fn announce(&mut self, generator: &Generator<'_>, surface: &Surface, over_http: bool) {
        for m in generator.methods() {
            self.report.methods.insert(m.clone(), 0);
        }
        for (t, _) in &surface.tools {
            self.report.tools.insert(t.clone(), 0);
        }
        (self.log)(&format!(
            "fuzzing {} ({}, seed {}): {} methods, {} tools callable ({} withheld by --call-tools)",
            self.report.server,
            self.revision,
            self.config.seed,
            self.report.methods.len(),
            surface.tools.len(),
            surface.forbidden_tools.len()
        ));
        if over_http {
            (self.log)(&format!(
                "over HTTP each write is one POST body (a new session per server \"process\"); not generated: {} mutations (no byte stream to split), second `initialize` requests (they open a new session); no memory or stderr oracles (no process)",
                super::mutate::STREAM_ONLY.join(", ")
            ));
        }
    }

    /// Sends batches of cases until a limit is reached, replacing a crashed, wedged or
    /// long-lived server (`current` is the one discovery left running, if any).
    async fn fuzz(
        &mut self,
        generator: &mut Generator<'_>,
        rng: &mut Rng,
        mut current: Option<Proc>,
        over_http: bool,
    ) -> Result<(), FuzzError> {
        let mut last_status = Instant::now();
        let mut failed_spawns = 0;
        while !self.limits_reached() {
            let case = self.batch(generator, rng);
            if self.config.dry_run {
                for w in &case {
                    (self.log)(&format!(
                        "case {} [{}] {}",
                        self.report.counts.cases,
                        w.origin,
                        preview(&w.bytes)
                    ));
                }
                if self.config.limits.iterations.is_none() && self.report.counts.cases >= 20 {
                    break;
                }
                continue;
            }
            let mut p = match current.take() {
                Some(p) => p,
                None => match self.respawn(&mut failed_spawns, over_http).await? {
                    Spawned::Ready(mut p) => {
                        generator.new_process();
                        // The server's tools, as discovery listed them, for the new
                        // session's tool-call gate (it lists nothing itself).
                        p.session.know_tools(generator.tool_listing());
                        *p
                    }
                    Spawned::Retry => continue,
                    Spawned::Stop => break,
                },
            };
            let observed = self.run_case(&mut p, &case, generator).await;
            let mut fatal = false;
            for o in observed {
                fatal |= o.fatal();
                self.record(o, &p.history).await?;
            }
            p.cases += CASES_PER_BATCH;
            // A crashed or wedged server is replaced; so is one that ran long enough (its
            // history is the input findings are minimized from).
            if fatal || p.cases >= self.config.cases_per_process || p.history_bytes > 64 << 20 {
                p.finish().await;
            } else {
                current = Some(p);
            }
            if last_status.elapsed() >= Duration::from_secs(5) {
                last_status = Instant::now();
                let line = self.status();
                (self.log)(&line);
            }
        }
        if let Some(p) = current {
            p.finish().await;
        }
        Ok(())
    }

    /// Whether the run's duration or its number of cases is used up.
    fn limits_reached(&self) -> bool {
        let limits = &self.config.limits;
        limits.duration.is_some_and(|d| self.started.elapsed() >= d)
            || limits
                .iterations
                .is_some_and(|n| self.report.counts.cases >= n)
    }

    /// The next batch: several cases go out back to back before the answers are awaited,
    /// as round trips, not the server, would bound the rate otherwise (minimization finds
    /// the write that mattered). A dry run takes one case at a time.
    fn batch(&mut self, generator: &mut Generator<'_>, rng: &mut Rng) -> Vec<Wire> {
        let mut case = generator.case(rng);
        self.report.counts.cases += 1;
        if !self.config.dry_run {
            for _ in 1..CASES_PER_BATCH {
                if self
                    .config
                    .limits
                    .iterations
                    .is_some_and(|n| self.report.counts.cases >= n)
                {
                    break;
                }
                case.extend(generator.case(rng));
                self.report.counts.cases += 1;
            }
        }
        case
    }

    /// Starts a server to replace the last one. After [`MAX_FAILED_STARTS`] failures in a
    /// row the run stops: over HTTP with what it found (the endpoint is gone, and its crash
    /// is a finding already), else with the error.
    async fn respawn(
        &mut self,
        failed_spawns: &mut u32,
        over_http: bool,
    ) -> Result<Spawned, FuzzError> {
        let e = match self.spawn().await {
            Ok((p, _)) => {
                *failed_spawns = 0;
                return Ok(Spawned::Ready(Box::new(p)));
            }
            Err(e) => e,
        };
        *failed_spawns += 1;
        if *failed_spawns >= MAX_FAILED_STARTS {
            if over_http {
                let why = format!(
                    "the endpoint stopped answering: {MAX_FAILED_STARTS} new sessions failed ({e})"
                );
                (self.log)(&format!("mcpcheck fuzz: {why}; stopping"));
                self.report.stopped = Some(why);
                return Ok(Spawned::Stop);
            }
            return Err(e);
        }
        if over_http {
            tokio::time::sleep(Duration::from_millis(500) * *failed_spawns).await;
        }
        Ok(Spawned::Retry)
    }
}

/// A short, printable preview of a write.
fn preview(bytes: &[u8]) -> String {
    crate::protocol::text::clip_bytes(bytes.strip_suffix(b"\n").unwrap_or(bytes), 200)
}

impl Fuzzer<'_> {
    fn status(&self) -> String {
        let secs = self
            .started
            .elapsed()
            .saturating_sub(self.minimizing)
            .as_secs_f64()
            .max(1e-3);
        let covered = |m: &BTreeMap<String, u64>| m.values().filter(|n| **n > 0).count();
        format!(
            "[{:.0}s] {} messages ({:.0}/s), {} cases, methods {}/{}, tools {}/{}, {} {}, {} findings",
            self.started.elapsed().as_secs_f64(),
            self.report.counts.messages + self.report.counts.probes,
            (self.report.counts.messages + self.report.counts.probes) as f64 / secs,
            self.report.counts.cases,
            covered(&self.report.methods),
            self.report.methods.len(),
            covered(&self.report.tools),
            self.report.tools.len(),
            self.report.counts.processes_started,
            match self.config.target {
                Target::Stdio { .. } => "processes",
                _ => "sessions",
            },
            self.report.findings.len()
        )
    }

    /// Starts a server (or opens a new HTTP session) and runs the handshake. Returns the
    /// process and its capabilities.
    async fn spawn(&mut self) -> Result<(Proc, Value), FuzzError> {
        let transport = self.config.target.open(self.started)?;
        self.report.counts.processes_started += 1;
        let started = Proc::start(
            transport,
            self.schemas.clone(),
            self.config.session.clone(),
            self.started,
            Framing::for_target(&self.config.target),
        )
        .await?;
        self.report.counts.probes += 2;
        Ok(started)
    }

    /// What the oracles judge by.
    pub(super) fn judge(&self) -> Judge<'_> {
        Judge {
            revision: self.revision,
            timeout: self.config.session.timeout,
            memory_limit_mib: self.config.memory_limit_mib,
            endpoint: self.endpoint(),
        }
    }

    /// The HTTP endpoint, if the target is one.
    pub(super) fn endpoint(&self) -> Option<&reqwest::Url> {
        match &self.config.target {
            Target::Http(o) | Target::Sse(o) => Some(&o.url),
            Target::Stdio { .. } => None,
        }
    }

    /// Lists tools, prompts and resources through the fuzz path (so a server that fails
    /// on them is caught like on any other input). Returns the process if it survived.
    async fn discover(&mut self, mut p: Proc, surface: &mut Surface) -> Option<Proc> {
        let lists = [
            ("tools", "tools/list"),
            ("prompts", "prompts/list"),
            ("resources", "resources/list"),
        ];
        for (cap, method) in lists {
            if surface.capabilities.get(cap).is_none_or(Value::is_null) {
                continue;
            }
            let msg =
                json!({"jsonrpc": "2.0", "id": format!("fz-discover-{cap}"), "method": method});
            let wire = Wire::line(&msg, "discovery");
            match self.write(&mut p, &wire).await {
                Ok((replies, _)) => {
                    let items = replies
                        .first()
                        .and_then(|(_, r)| r.result())
                        .and_then(|r| r.get(cap))
                        .and_then(Value::as_array)
                        .cloned()
                        .unwrap_or_default();
                    match cap {
                        "tools" => surface.add_tools(
                            &items,
                            self.config.tools,
                            self.config.allow_destructive,
                        ),
                        "prompts" => surface.prompts.extend(
                            items
                                .iter()
                                .filter_map(|i| i.get("name")?.as_str().map(str::to_owned)),
                        ),
                        _ => surface.resources.extend(
                            items
                                .iter()
                                .filter_map(|i| i.get("uri")?.as_str().map(str::to_owned)),
                        ),
                    }
                }
                Err(o) => {
                    let fatal = o.fatal();
                    let history = p.history.clone();
                    if let Err(e) = self.record(o, &history).await {
                        (self.log)(&format!("mcpcheck: {e}"));
                    }
                    if fatal {
                        p.finish().await;
                        return None;
                    }
                }
            }
        }
        Some(p)
    }
}

/// The transport's name in the report.
fn transport_name(target: &Target) -> &'static str {
    match target {
        Target::Stdio { .. } => "stdio",
        Target::Http(_) => "streamable-http",
        Target::Sse(_) => "sse",
    }
}
