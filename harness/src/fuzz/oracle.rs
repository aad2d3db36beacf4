//! Oracles: every check that decides a fuzzed server misbehaved (crash, hang, no response,
//! violation, crash text, memory), and the signature that makes two sightings one finding.

use std::time::{Duration, Instant};

use serde::Serialize;

use super::process::{Proc, endpoint_up};
use crate::check::rules;
use crate::outcome::{Finding, Severity};
use crate::protocol::{RequestId, Revision};

/// Which oracle fired.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Oracle {
    /// The process ended (exit code or signal).
    Crash,
    /// A well-formed request got no response in time, while `ping` still did.
    NoResponse,
    /// Neither the request nor a `ping` liveness probe got a response: the server is wedged.
    Hang,
    /// The session's own checks failed on a message the server sent (schema, JSON-RPC,
    /// framing); the finding's rule says which.
    Violation,
    /// Panic or traceback text on stderr while the server kept running.
    StderrCrashText,
    /// The server's resident memory grew past the limit.
    MemoryGrowth,
}

impl Oracle {
    /// The oracle's name in reports and reproducers.
    pub fn name(&self) -> &'static str {
        match self {
            Oracle::Crash => "crash",
            Oracle::NoResponse => "no-response",
            Oracle::Hang => "hang",
            Oracle::Violation => "violation",
            Oracle::StderrCrashText => "stderr-crash-text",
            Oracle::MemoryGrowth => "memory-growth",
        }
    }

    /// Whether a scenario file can show the failure (memory it cannot check; stderr it
    /// can, with `expect: stderr`, over stdio).
    pub fn replayable(&self) -> bool {
        !matches!(self, Oracle::MemoryGrowth)
    }
}

/// What makes two findings the same: oracle, method, and what it is about (a rule, a
/// stderr fingerprint), with numbers and addresses taken out.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub struct Signature {
    /// Which oracle saw it.
    pub oracle: Oracle,
    /// The method of the case that caused it.
    pub method: String,
    /// What it is about, with numbers and addresses taken out.
    pub detail: String,
}

impl std::fmt::Display for Signature {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.method.as_str() {
            "*" => write!(f, "{}", self.oracle.name())?,
            m => write!(f, "{} in {m}", self.oracle.name())?,
        }
        if !self.detail.is_empty() {
            write!(f, " [{}]", self.detail)?;
        }
        Ok(())
    }
}

/// Markers of a crash report in common runtimes. Narrower than the stderr module's list:
/// words like `FATAL` also appear in ordinary logs, and here they would raise findings.
pub const CRASH_TEXT: &[&str] = &[
    "panicked at",
    "Traceback (most recent call last)",
    "Uncaught",
    "UnhandledPromiseRejection",
    "Segmentation fault",
    "SIGSEGV",
    "AddressSanitizer",
    "Exception in thread",
    "fatal error:",
    "stack overflow",
];

/// The first crash-report line in `text`, normalized: digits become `N`, hex addresses
/// `0xN`, so the same panic at another id or address has the same fingerprint.
pub fn fingerprint(text: &str) -> Option<String> {
    let line = text
        .lines()
        .find(|l| CRASH_TEXT.iter().any(|m| l.contains(m)))?;
    Some(normalize(line.trim()))
}

/// Digits and hex runs collapsed, cut to 160 characters.
pub fn normalize(line: &str) -> String {
    let mut out = String::new();
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        if c.is_ascii_digit() {
            if c == '0' && chars.peek() == Some(&'x') {
                chars.next();
                while chars.peek().is_some_and(char::is_ascii_hexdigit) {
                    chars.next();
                }
                out.push_str("0xN");
                continue;
            }
            while chars.peek().is_some_and(char::is_ascii_digit) {
                chars.next();
            }
            out.push('N');
        } else {
            out.push(c);
        }
        if out.len() >= 160 {
            break;
        }
    }
    out
}

use crate::transport::rss_kib;

/// What an oracle saw.
#[derive(Debug)]
pub(super) struct Observed {
    pub oracle: Oracle,
    pub method: String,
    pub detail: String,
    pub finding: Finding,
    /// The request left unanswered (no-response and hang).
    pub unanswered: Option<RequestId>,
}

impl Observed {
    /// Whether the process has to be replaced.
    pub fn fatal(&self) -> bool {
        matches!(self.oracle, Oracle::Crash | Oracle::Hang)
    }

    /// The signature that makes two sightings one finding.
    pub fn signature(&self) -> Signature {
        Signature {
            oracle: self.oracle.clone(),
            method: self.method.clone(),
            detail: self.detail.clone(),
        }
    }
}

/// What the oracles judge by: the run's revision and limits, and the endpoint (HTTP only).
#[derive(Clone, Copy, Debug)]
pub(super) struct Judge<'a> {
    pub revision: Revision,
    /// How long a response may take.
    pub timeout: Duration,
    pub memory_limit_mib: u64,
    pub endpoint: Option<&'a reqwest::Url>,
}

impl Judge<'_> {
    /// A well-formed request got no response while the server still answers `ping`.
    pub fn no_response(&self, method: &str, id: RequestId) -> Observed {
        let f = Finding::new(
            &rules::SESSION_TIMEOUT,
            self.revision,
            format!(
                "`{method}` (id {id}) got no response within {}, though the server still answers ping",
                humantime::format_duration(self.timeout)
            ),
        );
        Observed {
            oracle: Oracle::NoResponse,
            method: method.to_owned(),
            detail: String::new(),
            finding: f,
            unanswered: Some(id),
        }
    }

    /// Neither a request nor a `ping` got a response: the server is wedged.
    pub fn hang(&self, p: &Proc, method: &str, unanswered: Option<RequestId>) -> Observed {
        let after = humantime::format_duration(self.timeout);
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

    /// The server is gone: its process ended, or over HTTP, an exchange got no HTTP
    /// response at all (the connection was dropped or refused) or the session was lost.
    /// `why` is the transport's error, over HTTP.
    pub async fn lost(&self, p: &mut Proc, method: &str, why: Option<String>) -> Observed {
        let Some(url) = self.endpoint else {
            return self.crash(p, method).await;
        };
        let how = if endpoint_up(url, Duration::ZERO).await {
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

    /// The process ended: how, and its last words on stderr as the signature.
    async fn crash(&self, p: &mut Proc, method: &str) -> Observed {
        let exit = p.session.wait_exit(Duration::from_millis(500)).await;
        // The last words on stderr may still be in the pipe.
        tokio::time::sleep(Duration::from_millis(20)).await;
        let how = exit
            .map(|e| e.to_string())
            .unwrap_or_else(|| "closed its output".into());
        let fp = fingerprint(&p.stderr.tail_text())
            .or_else(|| p.stderr.last_lines(1).first().map(|l| normalize(l)));
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
    pub fn violations(&self, p: &mut Proc, method: &str) -> Vec<Observed> {
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
                    normalize(f.pointer.as_deref().unwrap_or(""))
                ),
                finding: f,
                unanswered: None,
            })
            .collect()
    }

    /// A crash report on stderr since the last look, while the server kept running.
    pub fn stderr_text(&self, p: &mut Proc, method: &str) -> Option<Observed> {
        let total = p.stderr.total_bytes();
        if total == p.stderr_checked {
            return None;
        }
        let new = (total - p.stderr_checked) as usize;
        p.stderr_checked = total;
        let tail = p.stderr.tail_text();
        let from = tail.len().saturating_sub(new);
        let fresh = &tail[tail.floor_char_boundary(from)..];
        let fp = fingerprint(fresh)?;
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

    /// Resident memory grown past the limit over the first sample (at most every 500 ms,
    /// once per process).
    pub fn memory(&self, p: &mut Proc, method: &str) -> Option<Observed> {
        if p.rss_reported || p.rss_sampled.elapsed() < Duration::from_millis(500) {
            return None;
        }
        p.rss_sampled = Instant::now();
        let rss = rss_kib(p.pid?)?;
        let Some(base) = p.rss_base else {
            p.rss_base = Some(rss);
            return None;
        };
        let limit = self.memory_limit_mib * 1024;
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
                self.memory_limit_mib
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
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fingerprints_ignore_numbers_and_addresses() {
        let a = "log\nthread 'main' panicked at src/server.rs:395:21:\nboom";
        let b = "thread 'main' panicked at src/server.rs:401:9:";
        assert_eq!(fingerprint(a), fingerprint(b));
        assert_eq!(
            fingerprint(a).unwrap(),
            "thread 'main' panicked at src/server.rs:N:N:"
        );
        assert_eq!(normalize("at 0x7ffd1234 id 42"), "at 0xN id N");
        assert_eq!(fingerprint("all is well\nFATAL: just a log word"), None);
    }

    #[test]
    fn reads_own_rss() {
        let kib = rss_kib(std::process::id()).expect("Linux /proc");
        assert!(kib > 100, "{kib}");
    }
}
