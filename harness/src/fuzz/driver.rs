//! The fuzzing loop: start the server, learn what it serves, run cases, apply the
//! oracles after every write and case, and turn each new finding into a minimized,
//! replay-checked reproducer. Crashed or wedged servers are replaced and the run goes on.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;
use std::time::{Duration, Instant};

use rand::SeedableRng;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use super::generate::{Generator, Surface};
use super::minimize::{self, Budget};
use super::oracle::{self, Oracle, Signature};
use super::repro::{self, Repro};
use super::wire::{Expected, Framing, Wire};
use super::{FUZZ_REPORT_FORMAT_VERSION, FuzzConfig, FuzzError, FuzzFinding, FuzzReport, Rng};
use crate::check::{Finding, Severity, rules};
use crate::protocol::{Message, RequestId, Revision};
use crate::scenario::exec::{ExecConfig, ToolPolicy};
use crate::schema::SchemaStore;
use crate::session::{Reply, Session, SessionError};
use crate::transport::StderrLog;
use crate::transport::stdio::ShutdownWaits;
use crate::transport::target::Target;

/// Cases sent back to back before their answers are awaited.
const CASES_PER_BATCH: u64 = 8;
/// How the HTTP transport says an exchange got no response headers in time.
const HEADER_TIMEOUT: &str = "no response headers within";
/// Failed starts in a row (process or HTTP session) after which the run stops.
const MAX_FAILED_STARTS: u32 = 3;

/// One server process (over HTTP: one MCP session) and what the fuzzer knows about it.
struct Proc {
    session: Session,
    /// The process to sample memory of: only one mcpcheck started.
    pid: Option<u32>,
    stderr: StderrLog,
    lines: Framing,
    sent_ids: HashSet<RequestId>,
    /// Every write since the handshake: the input a finding is minimized from.
    history: Vec<Vec<u8>>,
    history_bytes: usize,
    cases: u64,
    findings_seen: usize,
    stderr_checked: u64,
    rss_base: Option<u64>,
    rss_sampled: Instant,
    rss_reported: bool,
}

/// What an oracle saw.
#[derive(Debug)]
struct Observed {
    oracle: Oracle,
    method: String,
    detail: String,
    finding: Finding,
    /// The request left unanswered (no-response and hang).
    unanswered: Option<RequestId>,
}

impl Observed {
    /// Whether the process has to be replaced.
    fn fatal(&self) -> bool {
        matches!(self.oracle, Oracle::Crash | Oracle::Hang)
    }
}

/// How a wait for a tool call ended (`None`: the timeout passed in silence).
enum Awaited {
    Reply(Reply),
    /// No answer yet, but progress notifications: the tool is running.
    Progressing,
}

enum Ping {
    Alive,
    Silent,
    /// The server is gone; over HTTP, why the exchange failed.
    Gone(Option<String>),
}

struct Fuzzer<'c> {
    config: &'c FuzzConfig,
    schemas: Arc<SchemaStore>,
    started: Instant,
    revision: Revision,
    report: FuzzReport,
    known: HashMap<Signature, usize>,
    log: &'c mut (dyn FnMut(&str) + Send),
    /// Time spent minimizing, left out of the throughput.
    minimizing: Duration,
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
        report: FuzzReport {
            format_version: FUZZ_REPORT_FORMAT_VERSION,
            mcpcheck_version: env!("CARGO_PKG_VERSION"),
            server: config.target.describe(),
            transport: transport_name(&config.target),
            stopped: None,
            seed: config.seed,
            revision: config.session.revision,
            duration_ms: 0,
            cases: 0,
            messages: 0,
            probes: 0,
            messages_per_sec: 0.0,
            processes_started: 0,
            skipped: 0,
            slow_tool_calls: 0,
            http_rejected: 0,
            methods: BTreeMap::new(),
            tools: BTreeMap::new(),
            findings: Vec::new(),
        },
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
    let mut current = f.discover(proc, &mut surface).await;
    let surface = surface;
    let over_http = matches!(config.target, Target::Http(_) | Target::Sse(_));
    let mut generator = Generator::new(set, &surface).over_http(over_http);
    for m in generator.methods() {
        f.report.methods.insert(m.clone(), 0);
    }
    for (t, _) in &surface.tools {
        f.report.tools.insert(t.clone(), 0);
    }
    (f.log)(&format!(
        "fuzzing {} ({}, seed {}): {} methods, {} tools callable ({} withheld by --call-tools)",
        f.report.server,
        f.revision,
        config.seed,
        f.report.methods.len(),
        surface.tools.len(),
        surface.forbidden_tools.len()
    ));
    if over_http {
        (f.log)(&format!(
            "over HTTP each write is one POST body (a new session per server \"process\"); not generated: {} mutations (no byte stream to split), second `initialize` requests (they open a new session); no memory or stderr oracles (no process)",
            super::mutate::STREAM_ONLY.join(", ")
        ));
    }
    let mut last_status = Instant::now();
    let mut failed_spawns = 0;
    loop {
        let elapsed = started.elapsed();
        if config.limits.duration.is_some_and(|d| elapsed >= d)
            || config
                .limits
                .iterations
                .is_some_and(|n| f.report.cases >= n)
        {
            break;
        }
        let mut case = generator.case(&mut rng);
        f.report.cases += 1;
        if !config.dry_run {
            // Several cases go out back to back before the answers are awaited: round
            // trips, not the server, bound the rate otherwise. Minimization finds the
            // write that mattered.
            for _ in 1..CASES_PER_BATCH {
                if config
                    .limits
                    .iterations
                    .is_some_and(|n| f.report.cases >= n)
                {
                    break;
                }
                case.extend(generator.case(&mut rng));
                f.report.cases += 1;
            }
        }
        if config.dry_run {
            for w in &case {
                (f.log)(&format!(
                    "case {} [{}] {}",
                    f.report.cases,
                    w.origin,
                    preview(&w.bytes)
                ));
            }
            if config.limits.iterations.is_none() && f.report.cases >= 20 {
                break;
            }
            continue;
        }
        let mut p = match current.take() {
            Some(p) => p,
            None => match f.spawn().await {
                Ok((p, _)) => {
                    failed_spawns = 0;
                    generator.new_process();
                    p
                }
                Err(e) => {
                    failed_spawns += 1;
                    if failed_spawns >= MAX_FAILED_STARTS {
                        if over_http {
                            // The endpoint is gone (its crash is a finding already): the
                            // run ends with what it found rather than failing.
                            let why = format!(
                                "the endpoint stopped answering: {MAX_FAILED_STARTS} new sessions failed ({e})"
                            );
                            (f.log)(&format!("mcpcheck fuzz: {why}; stopping"));
                            f.report.stopped = Some(why);
                            break;
                        }
                        return Err(e);
                    }
                    if over_http {
                        tokio::time::sleep(Duration::from_millis(500) * failed_spawns).await;
                    }
                    continue;
                }
            },
        };
        let observed = f.run_case(&mut p, &case, &mut generator).await;
        let mut fatal = false;
        for o in observed {
            fatal |= o.fatal();
            f.record(o, &p.history).await?;
        }
        p.cases += CASES_PER_BATCH;
        // A crashed or wedged server is replaced; so is one that ran long enough (its
        // history is the input findings are minimized from).
        if fatal || p.cases >= config.cases_per_process || p.history_bytes > 64 << 20 {
            drop(p.session.finish().await);
        } else {
            current = Some(p);
        }
        if last_status.elapsed() >= Duration::from_secs(5) {
            last_status = Instant::now();
            let line = f.status();
            (f.log)(&line);
        }
    }
    if let Some(p) = current {
        drop(p.session.finish().await);
    }
    let fuzz_time = started.elapsed().saturating_sub(f.minimizing);
    f.report.duration_ms = started.elapsed().as_millis() as u64;
    f.report.messages_per_sec =
        (f.report.messages + f.report.probes) as f64 / fuzz_time.as_secs_f64().max(1e-3);
    let line = f.status();
    (f.log)(&line);
    Ok(f.report)
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
            self.report.messages + self.report.probes,
            (self.report.messages + self.report.probes) as f64 / secs,
            self.report.cases,
            covered(&self.report.methods),
            self.report.methods.len(),
            covered(&self.report.tools),
            self.report.tools.len(),
            self.report.processes_started,
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
        self.report.processes_started += 1;
        let pid = transport.pid();
        let stderr = transport.stderr().cloned().unwrap_or_default();
        let mut session = Session::new(
            transport,
            self.schemas.clone(),
            self.config.session.clone(),
            self.started,
        );
        let profile = match session.initialize().await {
            Ok(p) => p,
            Err(e) => {
                let tail = session.stderr_tail(5).join("\n");
                drop(session.finish().await);
                return Err(FuzzError::Handshake(format!("{e}; stderr: {tail}")));
            }
        };
        self.report.probes += 2;
        let mut sent_ids = HashSet::new();
        sent_ids.insert(RequestId::int(1));
        Ok((
            Proc {
                session,
                pid,
                stderr,
                lines: Framing::for_target(&self.config.target),
                sent_ids,
                history: Vec::new(),
                history_bytes: 0,
                cases: 0,
                findings_seen: 0,
                stderr_checked: 0,
                rss_base: None,
                rss_sampled: Instant::now(),
                rss_reported: false,
            },
            profile.capabilities,
        ))
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
                        drop(p.session.finish().await);
                        return None;
                    }
                }
            }
        }
        Some(p)
    }

    /// Runs one case on a live process. Returns what the oracles saw.
    async fn run_case(
        &mut self,
        p: &mut Proc,
        case: &[Wire],
        generator: &mut Generator<'_>,
    ) -> Vec<Observed> {
        let mut observed = Vec::new();
        let mut unawaited = false;
        let mut last_method = "(handshake)".to_owned();
        // The case's writes go out back to back; the answers are awaited after.
        let mut waiting: Vec<(Expected, bool)> = Vec::new();
        for w in case {
            if generator.forbidden_call(&w.bytes).is_some() {
                // Generation never names a forbidden tool; this is the backstop.
                self.report.skipped += 1;
                continue;
            }
            last_method = w.method.clone();
            match self.send(p, w).await {
                Ok(expected) => {
                    // Writes with no answer to wait for prove nothing about liveness.
                    unawaited |= expected.is_empty();
                    let valid = w.origin == "valid";
                    waiting.extend(expected.into_iter().map(|e| (e, valid)));
                }
                Err(o) => {
                    observed.push(o);
                    return observed;
                }
            }
        }
        // A request the case itself cancels may go unanswered (the receiver SHOULD NOT
        // respond to a cancelled request: basic/utilities/cancellation).
        let cancelled = cancelled_ids(case);
        waiting.retain(|(e, _)| !cancelled.contains(&e.id));
        let valid: Vec<bool> = waiting.iter().map(|(_, v)| *v).collect();
        let expected: Vec<Expected> = waiting.into_iter().map(|(e, _)| e).collect();
        let ids: Vec<RequestId> = expected.iter().map(|e| e.id.clone()).collect();
        match self.wait(p, expected).await {
            Ok(replies) => {
                for (e, reply) in replies {
                    let Some(i) = ids.iter().position(|id| *id == e.id) else {
                        continue;
                    };
                    if valid[i]
                        && reply.result().is_some()
                        && let Some(w) = case
                            .iter()
                            .find(|w| w.origin == "valid" && contains_id(&w.bytes, &e.id))
                        && let Ok(v) = serde_json::from_slice::<Value>(&w.bytes)
                    {
                        generator.remember(v);
                    }
                }
            }
            Err(o) => {
                let fatal = o.fatal();
                observed.push(o);
                if fatal {
                    return observed;
                }
            }
        }
        // A line left open would join the next case's first write: close it here.
        if p.lines.is_open() {
            let nl = Wire::raw(b"\n".to_vec(), "(raw)", "framing");
            if let Err(o) = self.write(p, &nl).await {
                observed.push(o);
                return observed;
            }
        }
        if unawaited {
            match self.ping(p).await {
                Ping::Alive => {}
                Ping::Silent => {
                    observed.push(self.hang(p, &last_method, None));
                    return observed;
                }
                Ping::Gone(why) => {
                    observed.push(self.lost(p, &last_method, why).await);
                    return observed;
                }
            }
        }
        observed.extend(self.violations(p, &last_method));
        observed.extend(self.stderr_text(p, &last_method));
        observed.extend(self.memory(p, &last_method));
        observed
    }

    /// Sends one write and waits for the answers it requires. Returns the answers, and
    /// whether it required any.
    async fn write(
        &mut self,
        p: &mut Proc,
        w: &Wire,
    ) -> Result<(Vec<(Expected, Reply)>, bool), Observed> {
        let expected = self.send(p, w).await?;
        let awaited = !expected.is_empty();
        Ok((self.wait(p, expected).await?, awaited))
    }

    /// Sends one write; returns the requests in it that must be answered.
    async fn send(&mut self, p: &mut Proc, w: &Wire) -> Result<Vec<Expected>, Observed> {
        let bytes = p.lines.adapt(&w.bytes);
        let expected = p.lines.peek(&bytes);
        if expected.iter().any(|e| p.sent_ids.contains(&e.id)) {
            // A reused id would make the answer ambiguous: not the server's fault.
            self.report.skipped += 1;
            return Ok(Vec::new());
        }
        p.lines.advance(&bytes);
        for e in &expected {
            p.sent_ids.insert(e.id.clone());
            p.session.expect_reply(e.id.clone(), &e.method);
        }
        p.history_bytes += bytes.len();
        p.history.push(bytes.clone());
        self.report.messages += 1;
        if let Some(n) = self.report.methods.get_mut(&w.method) {
            *n += 1;
        }
        if let Some(t) = &w.tool
            && let Some(n) = self.report.tools.get_mut(t)
        {
            *n += 1;
        }
        // Over HTTP each write is a POST of its own; one refused with an HTTP error status
        // has had its answer (basic/transports: input the server cannot accept).
        let sent = match p.lines {
            Framing::Bodies => p.session.send_frame(bytes).await,
            Framing::Lines(_) => p.session.send_raw(bytes).await,
        };
        if let Err(SessionError::Send {
            source: crate::transport::TransportError::Rejected { .. },
            ..
        }) = sent
        {
            self.report.http_rejected += 1;
            return Ok(Vec::new());
        }
        if let Err(e) = sent {
            let why = match e {
                SessionError::Send { source, .. } => Some(source.to_string()),
                _ => None,
            };
            if why.as_deref().is_some_and(|w| w.contains(HEADER_TIMEOUT)) {
                return Err(self.hang(p, &w.method, None));
            }
            return Err(self.lost(p, &w.method, why).await);
        }
        Ok(expected.into_iter().filter(|e| e.must_answer).collect())
    }

    /// Waits for the answers to requests already sent; the oracles judge what is missing.
    async fn wait(
        &mut self,
        p: &mut Proc,
        expected: Vec<Expected>,
    ) -> Result<Vec<(Expected, Reply)>, Observed> {
        let mut replies = Vec::new();
        for e in expected {
            let reply = if e.method == "tools/call" {
                self.await_tool(p, &e.id).await
            } else {
                p.session
                    .poll_reply(&e.id, self.config.session.timeout)
                    .await
                    .map(Awaited::Reply)
            };
            match reply {
                Some(Awaited::Reply(r)) => replies.push((e, r)),
                Some(Awaited::Progressing) => self.cancel_slow_tool(p, &e.id).await,
                None if p.session.is_closed() => return Err(self.lost(p, &e.method, None).await),
                None => match self.ping(p).await {
                    Ping::Alive if e.method == "tools/call" => {
                        self.cancel_slow_tool(p, &e.id).await
                    }
                    Ping::Alive => {
                        let f = Finding::new(
                            &rules::SESSION_TIMEOUT,
                            self.revision,
                            format!(
                                "`{}` (id {}) got no response within {}, though the server still answers ping",
                                e.method,
                                e.id,
                                humantime::format_duration(self.config.session.timeout)
                            ),
                        );
                        return Err(Observed {
                            oracle: Oracle::NoResponse,
                            method: e.method.clone(),
                            detail: String::new(),
                            finding: f,
                            unanswered: Some(e.id),
                        });
                    }
                    Ping::Silent => return Err(self.hang(p, &e.method, Some(e.id))),
                    Ping::Gone(why) => return Err(self.lost(p, &e.method, why).await),
                },
            }
        }
        Ok(replies)
    }

    /// Waits for a tool call's answer, in slices, watching for progress: a tool that
    /// reports progress is running, however long it takes.
    async fn await_tool(&mut self, p: &mut Proc, id: &RequestId) -> Option<Awaited> {
        let deadline = Instant::now() + self.config.session.timeout;
        loop {
            let slice = deadline
                .saturating_duration_since(Instant::now())
                .min(Duration::from_millis(50));
            if let Some(r) = p.session.poll_reply(id, slice).await {
                return Some(Awaited::Reply(r));
            }
            let progressing = p.session.take_unsolicited().iter().any(|u| {
                matches!(&u.message, Message::Notification(n) if n.method == "notifications/progress")
            });
            if progressing {
                return Some(Awaited::Progressing);
            }
            if p.session.is_closed() || Instant::now() >= deadline {
                return None;
            }
        }
    }

    /// A tool may legitimately run long (progress and cancellation exist for that):
    /// cancel it, and do not call it a defect.
    async fn cancel_slow_tool(&mut self, p: &mut Proc, id: &RequestId) {
        self.report.slow_tool_calls += 1;
        let _ = p
            .session
            .notify(
                "notifications/cancelled",
                Some(json!({"requestId": id.to_value(), "reason": "mcpcheck fuzz: long-running tool"})),
            )
            .await;
    }

    /// Liveness probe: `ping` with a fresh id.
    async fn ping(&mut self, p: &mut Proc) -> Ping {
        self.report.probes += 1;
        let id = p.session.allocate_id();
        p.sent_ids.insert(id.clone());
        match p.session.request_with_id(id, "ping", None).await {
            Ok(_) => Ping::Alive,
            Err(SessionError::Timeout { .. }) => Ping::Silent,
            // Over HTTP, no response headers in time is a wedged server, not a crash.
            Err(SessionError::Send { source, .. })
                if source.to_string().contains(HEADER_TIMEOUT) =>
            {
                Ping::Silent
            }
            Err(SessionError::Send { source, .. }) => Ping::Gone(Some(source.to_string())),
            Err(_) => Ping::Gone(None),
        }
    }

    fn hang(&self, p: &Proc, method: &str, unanswered: Option<RequestId>) -> Observed {
        let after = humantime::format_duration(self.config.session.timeout);
        let mut f = Finding::new(
            &rules::SESSION_TIMEOUT,
            self.revision,
            format!(
                "the server stopped answering after `{method}`: neither it nor a ping got a response within {after}"
            ),
        );
        let tail = p.stderr.crash_excerpt(10);
        if !tail.is_empty() {
            f = f.evidence(format!("stderr:\n{}", tail.join("\n")));
        }
        Observed {
            oracle: Oracle::Hang,
            method: method.to_owned(),
            detail: String::new(),
            finding: f,
            unanswered,
        }
    }

    /// The HTTP endpoint, if the target is one.
    fn endpoint(&self) -> Option<reqwest::Url> {
        match &self.config.target {
            Target::Http(o) | Target::Sse(o) => Some(o.url.clone()),
            Target::Stdio { .. } => None,
        }
    }

    /// The server is gone: its process ended, or over HTTP, an exchange got no HTTP
    /// response at all (the connection was dropped or refused) or the session was lost.
    /// `why` is the transport's error, over HTTP.
    async fn lost(&self, p: &mut Proc, method: &str, why: Option<String>) -> Observed {
        let Some(url) = self.endpoint() else {
            return self.crash(p, method).await;
        };
        let how = if endpoint_up(&url, Duration::ZERO).await {
            why.unwrap_or_else(|| "the exchange failed".into())
        } else {
            format!("{url} refuses connections")
        };
        let f = Finding::new(
            &rules::SESSION_EXITED,
            self.revision,
            format!("the server stopped answering on fuzz input after `{method}`: {how}"),
        );
        Observed {
            oracle: Oracle::Crash,
            method: method.to_owned(),
            // One signature whether or not a supervisor restarted the server in time.
            detail: "no HTTP response".into(),
            finding: f,
            unanswered: None,
        }
    }

    async fn crash(&self, p: &mut Proc, method: &str) -> Observed {
        let exit = p.session.wait_exit(Duration::from_millis(500)).await;
        // The last words on stderr may still be in the pipe.
        tokio::time::sleep(Duration::from_millis(20)).await;
        let how = exit
            .map(|e| e.to_string())
            .unwrap_or_else(|| "closed its output".into());
        let fp = oracle::fingerprint(&p.stderr.tail_text())
            .or_else(|| p.stderr.last_lines(1).first().map(|l| oracle::normalize(l)));
        let mut f = Finding::new(
            &rules::SESSION_EXITED,
            self.revision,
            format!("the server ended ({how}) on fuzz input after `{method}`"),
        );
        let tail = p.stderr.crash_excerpt(10);
        if !tail.is_empty() {
            f = f.evidence(format!("stderr:\n{}", tail.join("\n")));
        }
        Observed {
            oracle: Oracle::Crash,
            // The server's last words identify a crash better than the method that was
            // in flight (one overflow reached from every method is one defect).
            method: if fp.is_some() {
                "*".into()
            } else {
                method.to_owned()
            },
            detail: match fp {
                Some(fp) => format!("{how}; {fp}"),
                None => how,
            },
            finding: f,
            unanswered: None,
        }
    }

    /// New findings of the session's own checks (schema, JSON-RPC, framing).
    fn violations(&self, p: &mut Proc, method: &str) -> Vec<Observed> {
        let all = p.session.findings();
        let new = all[p.findings_seen.min(all.len())..].to_vec();
        p.findings_seen = all.len();
        new.into_iter()
            .filter(|f| f.severity != Severity::Info)
            .map(|f| Observed {
                oracle: Oracle::Violation,
                method: method.to_owned(),
                detail: format!(
                    "{} {}",
                    f.rule,
                    oracle::normalize(f.pointer.as_deref().unwrap_or(""))
                ),
                finding: f,
                unanswered: None,
            })
            .collect()
    }

    fn stderr_text(&self, p: &mut Proc, method: &str) -> Option<Observed> {
        let total = p.stderr.total_bytes();
        if total == p.stderr_checked {
            return None;
        }
        let new = (total - p.stderr_checked) as usize;
        p.stderr_checked = total;
        let tail = p.stderr.tail_text();
        let from = tail.len().saturating_sub(new);
        let fresh = &tail[tail.floor_char_boundary(from)..];
        let fp = oracle::fingerprint(fresh)?;
        let excerpt = p.stderr.crash_excerpt(10).join("\n");
        let f = Finding::new(
            &rules::ROBUSTNESS_CRASH_TEXT,
            self.revision,
            format!(
                "the server printed a crash report to stderr after `{method}` and kept running"
            ),
        )
        .evidence(format!("stderr:\n{excerpt}"));
        Some(Observed {
            oracle: Oracle::StderrCrashText,
            method: method.to_owned(),
            detail: fp,
            finding: f,
            unanswered: None,
        })
    }

    fn memory(&self, p: &mut Proc, method: &str) -> Option<Observed> {
        if p.rss_reported || p.rss_sampled.elapsed() < Duration::from_millis(500) {
            return None;
        }
        p.rss_sampled = Instant::now();
        let rss = oracle::rss_kib(p.pid?)?;
        let Some(base) = p.rss_base else {
            p.rss_base = Some(rss);
            return None;
        };
        let limit = self.config.memory_limit_mib * 1024;
        if rss <= base + limit {
            return None;
        }
        p.rss_reported = true;
        let f = Finding::new(
            &rules::ROBUSTNESS_MEMORY_GROWTH,
            self.revision,
            format!(
                "the server's resident memory grew from {} MiB to {} MiB (limit: +{} MiB) while fuzzed",
                base / 1024,
                rss / 1024,
                self.config.memory_limit_mib
            ),
        );
        Some(Observed {
            oracle: Oracle::MemoryGrowth,
            method: method.to_owned(),
            detail: String::new(),
            finding: f,
            unanswered: None,
        })
    }

    /// Records a sighting: counts a known signature; minimizes, writes and checks the
    /// reproducer of a new one.
    async fn record(&mut self, o: Observed, history: &[Vec<u8>]) -> Result<(), FuzzError> {
        let signature = Signature {
            oracle: o.oracle.clone(),
            method: o.method.clone(),
            detail: o.detail.clone(),
        };
        if let Some(&i) = self.known.get(&signature) {
            self.report.findings[i].count += 1;
            return Ok(());
        }
        let first_seen_s = self.started.elapsed().as_secs_f64();
        (self.log)(&format!(
            "[{first_seen_s:.1}s] finding #{}: {signature}: {}",
            self.report.findings.len() + 1,
            o.finding.message
        ));
        let began = Instant::now();
        let mut entry = FuzzFinding {
            signature: signature.clone(),
            finding: o.finding.clone(),
            count: 1,
            first_seen_s,
            reproducer: None,
            reproduced: None,
            writes_before: history.len(),
            writes_after: history.len(),
            replays: 0,
            faithful: repro::faithful(history),
            note: None,
        };
        if let Some(dir) = self.config.out_dir.clone() {
            let (writes, reproduced, replays) = if o.oracle.replayable() {
                self.minimize(&o, history).await
            } else {
                (history.to_vec(), None, 0)
            };
            if reproduced.is_none()
                && o.oracle.replayable()
                && let Some(url) = self.endpoint()
            {
                entry.note = Some(format!(
                    "{url} was down after the crash: restart it, then replay the reproducer"
                ));
            }
            entry.writes_after = writes.len();
            entry.replays = replays;
            entry.reproduced = reproduced;
            entry.faithful = repro::faithful(&writes);
            let r = self.repro(&o, writes);
            let hash = hex8(&signature.to_string());
            let id = format!("fuzz/{}-{hash}", o.oracle.name());
            let path = dir.join(format!("{}-{hash}.yaml", o.oracle.name()));
            let header = self.header(&signature, &o, &entry);
            let text = repro::to_yaml(&r, &id, &format!("fuzz: {signature}"), &header);
            std::fs::create_dir_all(&dir)
                .and_then(|()| std::fs::write(&path, text))
                .map_err(|source| FuzzError::Write {
                    path: path.clone(),
                    source,
                })?;
            (self.log)(&format!(
                "    reproducer {} ({} of {} writes, {} replays{})",
                path.display(),
                entry.writes_after,
                entry.writes_before,
                replays,
                match reproduced {
                    Some(true) => ", replay fails the same way",
                    Some(false) => ", NOT reproduced by replay",
                    None => ", not checkable by replay",
                }
            ));
            entry.reproducer = Some(path);
        }
        self.minimizing += began.elapsed();
        self.known.insert(signature, self.report.findings.len());
        self.report.findings.push(entry);
        Ok(())
    }

    fn header(&self, signature: &Signature, o: &Observed, entry: &FuzzFinding) -> Vec<String> {
        let mut h = vec![
            format!(
                "Reproducer written by `mcpcheck fuzz` (seed {}).",
                self.config.seed
            ),
            format!("Finding: {signature}"),
            format!("  {}", o.finding.message),
            format!(
                "Replay: mcpcheck run --protocol-version {} {} THIS_FILE",
                self.revision,
                replay_flags(&self.config.target)
            ),
        ];
        if !entry.faithful {
            h.push(
                "Invalid UTF-8 in the input was replaced by U+FFFD: YAML text is Unicode.".into(),
            );
        }
        if !o.oracle.replayable() {
            h.push("Memory growth cannot be checked by a scenario: the replay only resends the input; watch the server's RSS.".into());
        }
        if let Some(note) = &entry.note {
            h.push(format!("Not checked: {note}."));
        }
        h
    }

    fn repro(&self, o: &Observed, writes: Vec<Vec<u8>>) -> Repro {
        let mut lines = Framing::for_target(&self.config.target);
        let expected: Vec<Expected> = writes.iter().flat_map(|w| lines.feed(w)).collect();
        let await_ids = expected
            .iter()
            .filter(|e| e.must_answer)
            .filter(|e| match o.oracle {
                Oracle::NoResponse | Oracle::Hang => o.unanswered.as_ref() == Some(&e.id),
                Oracle::Violation => true,
                _ => false,
            })
            .map(|e| e.id.to_value())
            .collect();
        Repro {
            writes,
            oracle: o.oracle.clone(),
            rule: o.finding.rule.clone(),
            await_ids,
            within: self.config.session.timeout,
            revision: self.revision,
            transport: self.config.target.kind(),
        }
    }

    /// Checks the full history replays the failure, then minimizes it. Returns the writes
    /// to save, whether the replay failed the same way, and the replays used.
    async fn minimize(
        &mut self,
        o: &Observed,
        history: &[Vec<u8>],
    ) -> (Vec<Vec<u8>>, Option<bool>, usize) {
        // Replays go to the same target: a fresh process, or a new session on the endpoint.
        let target = match &self.config.target {
            Target::Stdio { server, options } => Target::Stdio {
                server: server.clone(),
                options: crate::transport::stdio::StdioOptions {
                    shutdown: ShutdownWaits {
                        after_close: Duration::from_millis(500),
                        after_term: Duration::from_millis(500),
                    },
                    ..options.clone()
                },
            },
            other => other.clone(),
        };
        // An HTTP crash leaves the endpoint down unless something restarts it: replays
        // need it up, and one found down stops the checking (never a false "reproduced").
        let endpoint = self.endpoint().filter(|_| o.oracle == Oracle::Crash);
        if let Some(url) = &endpoint
            && !endpoint_up(url, Duration::from_secs(2)).await
        {
            (self.log)(&format!(
                "    {url} is down after the crash: restart it and replay the reproducer to check it"
            ));
            return (history.to_vec(), None, 0);
        }
        let mut gone = false;
        let exec = ExecConfig {
            target,
            session: crate::session::SessionConfig {
                revision: self.revision,
                ..self.config.session.clone()
            },
            tools: ToolPolicy::None,
            tool_args: Default::default(),
        };
        let schemas = self.schemas.clone();
        let rule = o.finding.rule.clone();
        let oracle = o.oracle.clone();
        let mut fails = async |writes: &[Vec<u8>]| {
            if let Some(url) = &endpoint {
                gone = gone || !endpoint_up(url, Duration::from_secs(2)).await;
                if gone {
                    return false;
                }
            }
            let r = self.repro(o, writes.to_vec());
            let yaml = repro::to_yaml(&r, "fuzz/candidate", "candidate", &[]);
            match repro::replay(&yaml, &exec, schemas.clone()).await {
                Ok(outcome) => repro::fails_same_way(&outcome, &oracle, &rule),
                Err(_) => false,
            }
        };
        if !fails(history).await {
            return (history.to_vec(), Some(false), 1);
        }
        if self.config.minimize_time.is_zero() {
            return (history.to_vec(), Some(true), 1);
        }
        let budget = Budget {
            max_tests: 300,
            deadline: Instant::now() + self.config.minimize_time,
        };
        let (writes, tests) = minimize::minimize(history.to_vec(), budget, &mut fails).await;
        (writes, Some(true), tests + 1)
    }
}

/// Ids named by `notifications/cancelled` in a case's writes.
fn cancelled_ids(case: &[Wire]) -> Vec<RequestId> {
    case.iter()
        .filter(|w| w.method == "notifications/cancelled")
        .flat_map(|w| w.bytes.split(|&b| b == b'\n'))
        .filter_map(|line| serde_json::from_slice::<Value>(line).ok())
        .filter_map(|v| match v.pointer("/params/requestId")? {
            Value::String(s) => Some(RequestId::String(s.clone())),
            Value::Number(n) => Some(RequestId::Number(n.to_string())),
            _ => None,
        })
        .collect()
}

/// Whether a write carries a request with this id.
fn contains_id(bytes: &[u8], id: &RequestId) -> bool {
    super::wire::requests_in(bytes.strip_suffix(b"\n").unwrap_or(bytes))
        .iter()
        .any(|e| e.id == *id)
}

/// Whether the endpoint accepts TCP connections, trying for up to `wait` (a supervisor
/// may be restarting it). Connect attempts are bounded, so this never hangs.
async fn endpoint_up(url: &reqwest::Url, wait: Duration) -> bool {
    let Some(host) = url.host_str() else {
        return false;
    };
    let host = host
        .trim_start_matches('[')
        .trim_end_matches(']')
        .to_owned();
    let port = url.port_or_known_default().unwrap_or(80);
    let deadline = Instant::now() + wait;
    loop {
        let attempt = tokio::time::timeout(
            Duration::from_millis(500),
            tokio::net::TcpStream::connect((host.as_str(), port)),
        )
        .await;
        if matches!(attempt, Ok(Ok(_))) {
            return true;
        }
        if Instant::now() >= deadline {
            return false;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// The `mcpcheck run` flags that reach the same target (headers and tokens not repeated).
fn replay_flags(target: &Target) -> String {
    match target {
        Target::Stdio { server, .. } => format!("--server {:?}", server.display()),
        Target::Http(o) => format!("--url {} --transport streamable-http", o.url),
        Target::Sse(o) => format!("--url {} --transport sse", o.url),
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

fn hex8(text: &str) -> String {
    let digest = Sha256::digest(text.as_bytes());
    digest.iter().take(4).map(|b| format!("{b:02x}")).collect()
}
