//! Findings: each sighting is counted under its signature; a new one is minimized, written
//! as a scenario file `mcpcheck run` replays, and checked by that replay.

use std::time::{Duration, Instant};

use sha2::{Digest, Sha256};

use super::driver::Fuzzer;
use super::minimize::{self, Budget};
use super::oracle::{Observed, Oracle, Signature};
use super::process::endpoint_up;
use super::repro::{self, Repro};
use super::wire::{Expected, Framing};
use super::{FuzzError, FuzzFinding};
use crate::scenario::exec::ExecConfig;
use crate::transport::stdio::ShutdownWaits;
use crate::transport::target::Target;

impl Fuzzer<'_> {
    /// Records a sighting: counts a known signature; minimizes, writes and checks the
    /// reproducer of a new one.
    pub(super) async fn record(
        &mut self,
        o: Observed,
        history: &[Vec<u8>],
    ) -> Result<(), FuzzError> {
        let signature = o.signature();
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
        let endpoint = self
            .endpoint()
            .cloned()
            .filter(|_| o.oracle == Oracle::Crash);
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
            // The run's own tool-call grant: a reproducer calls what the run was allowed to.
            session: crate::session::SessionConfig {
                revision: self.revision,
                ..self.config.session.clone()
            },
            tools: self.config.tools,
            tool_args: Default::default(),
            negotiation: Default::default(),
            isolate: true,
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

/// The `mcpcheck run` flags that reach the same target (headers and tokens not repeated).
fn replay_flags(target: &Target) -> String {
    match target {
        Target::Stdio { server, .. } => format!("--server {:?}", server.display()),
        Target::Http(o) => format!("--url {} --transport streamable-http", o.url),
        Target::Sse(o) => format!("--url {} --transport sse", o.url),
    }
}

fn hex8(text: &str) -> String {
    let digest = Sha256::digest(text.as_bytes());
    digest.iter().take(4).map(|b| format!("{b:02x}")).collect()
}
