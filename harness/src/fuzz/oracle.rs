//! Oracles: how the fuzzer decides a server misbehaved, and the signature that makes two
//! sightings of one defect the same finding.

use serde::Serialize;

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
    pub oracle: Oracle,
    pub method: String,
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

/// Resident memory of a process in KiB, from `/proc/PID/status` (Linux only).
pub fn rss_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
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
