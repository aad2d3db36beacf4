//! The stdio transport: mcpcheck spawns the server and talks over its stdin and stdout
//! (spec: `basic/transports#stdio`).

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use nix::sys::signal::Signal;
use tokio::io::AsyncReadExt;
use tokio::process::{ChildStdin, Command};
use tokio::sync::{mpsc, watch};

use super::framing::DEFAULT_MAX_FRAME;
use super::{
    BoxFuture, ExitInfo, Inbound, ShutdownReport, ShutdownStage, SlowLine, StderrLog, Transport,
    TransportError, lines, reaper,
};

/// How to start a server process.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ServerCommand {
    /// The program to run (looked up on `PATH`).
    pub program: String,
    /// Its arguments.
    pub args: Vec<String>,
    /// Environment variables to set for it.
    pub env: BTreeMap<String, String>,
    /// Its working directory; `None`: mcpcheck's own.
    pub cwd: Option<PathBuf>,
}

impl ServerCommand {
    /// Splits a shell-like command line (`python3 server.py --flag "two words"`) into
    /// program and arguments. Quotes group words; no other shell syntax is interpreted.
    pub fn parse(line: &str) -> Result<Self, TransportError> {
        let words = shell_words(line);
        Self::from_argv(words)
    }

    /// A command from its words; fails when there are none.
    pub fn from_argv(argv: Vec<String>) -> Result<Self, TransportError> {
        let mut it = argv.into_iter();
        let program = it
            .next()
            .filter(|p| !p.is_empty())
            .ok_or(TransportError::EmptyCommand)?;
        Ok(ServerCommand {
            program,
            args: it.collect(),
            env: BTreeMap::new(),
            cwd: None,
        })
    }

    /// Starts the command in its own process group (registered with the reaper, so it is
    /// taken down with mcpcheck), stdout and stderr piped, stdin as given; returns the child
    /// and its process group id. The one spawn of the stdio transport and of background
    /// servers.
    pub(crate) fn spawn_group(
        &self,
        stdin: Stdio,
    ) -> Result<(tokio::process::Child, i32), TransportError> {
        let mut cmd = Command::new(&self.program);
        cmd.args(&self.args)
            .envs(&self.env)
            .stdin(stdin)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0)
            .kill_on_drop(true);
        if let Some(cwd) = &self.cwd {
            cmd.current_dir(cwd);
        }
        // Not mcpcheck's own tool environment (uvx): the server's `python` is the user's.
        if !self.env.contains_key("PATH")
            && let Some(path) = super::child_path::for_children()
        {
            cmd.env("PATH", path);
        }
        reaper::set_parent_death_signal(&mut cmd);
        let spawn_error = |source| TransportError::Spawn {
            command: self.display(),
            source,
        };
        let child = cmd.spawn().map_err(spawn_error)?;
        let pgid = child.id().map(|p| p as i32).ok_or_else(|| {
            spawn_error(std::io::Error::other(
                "the process exited before it could be tracked",
            ))
        })?;
        reaper::register(pgid);
        Ok((child, pgid))
    }

    /// The command line as a user would type it.
    pub fn display(&self) -> String {
        join_words(std::iter::once(&self.program).chain(&self.args))
    }
}

/// Words back into one line that [`ServerCommand::parse`] splits into the same words: a
/// word that is empty or holds white space, a quote or a backslash is single-quoted.
pub fn join_words<'a>(words: impl IntoIterator<Item = &'a String>) -> String {
    words
        .into_iter()
        .map(|w| {
            if w.is_empty()
                || w.contains(|c: char| c.is_whitespace() || matches!(c, '"' | '\'' | '\\'))
            {
                format!("'{}'", w.replace('\'', "'\\''"))
            } else {
                w.clone()
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// Minimal POSIX-like word splitting: whitespace separates, single quotes are literal,
/// double quotes allow `\"` and `\\`, a backslash outside quotes escapes the next char.
fn shell_words(line: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut cur = String::new();
    let mut in_word = false;
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            '\'' => {
                in_word = true;
                for c in chars.by_ref() {
                    if c == '\'' {
                        break;
                    }
                    cur.push(c);
                }
            }
            '"' => {
                in_word = true;
                while let Some(c) = chars.next() {
                    match c {
                        '"' => break,
                        '\\' => match chars.next() {
                            Some(n @ ('"' | '\\' | '$' | '`')) => cur.push(n),
                            Some(n) => {
                                cur.push('\\');
                                cur.push(n);
                            }
                            None => cur.push('\\'),
                        },
                        c => cur.push(c),
                    }
                }
            }
            '\\' => {
                in_word = true;
                if let Some(n) = chars.next() {
                    cur.push(n);
                }
            }
            c if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut cur));
                    in_word = false;
                }
            }
            c => {
                in_word = true;
                cur.push(c);
            }
        }
    }
    if in_word {
        words.push(cur);
    }
    words
}

/// Waits of the stdio shutdown sequence: close stdin, wait; SIGTERM, wait; SIGKILL.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ShutdownWaits {
    /// Wait after closing stdin, before SIGTERM.
    pub after_close: Duration,
    /// Wait after SIGTERM, before SIGKILL.
    pub after_term: Duration,
}

impl Default for ShutdownWaits {
    fn default() -> Self {
        ShutdownWaits {
            after_close: Duration::from_secs(5),
            after_term: Duration::from_secs(2),
        }
    }
}

/// Options for the stdio transport.
#[derive(Clone, Debug)]
pub struct StdioOptions {
    /// Longest line accepted, in bytes.
    pub max_frame: usize,
    /// The waits of the shutdown sequence.
    pub shutdown: ShutdownWaits,
    /// How long one write may block before the server is judged not to read its input.
    pub write_timeout: Duration,
}

impl Default for StdioOptions {
    fn default() -> Self {
        StdioOptions {
            max_frame: DEFAULT_MAX_FRAME,
            shutdown: ShutdownWaits::default(),
            write_timeout: Duration::from_secs(10),
        }
    }
}

/// A running server process.
#[derive(Debug)]
pub struct StdioTransport {
    command: ServerCommand,
    pgid: i32,
    stdin: Option<ChildStdin>,
    inbound: mpsc::Receiver<Inbound>,
    exit: watch::Receiver<Option<ExitInfo>>,
    stderr: StderrLog,
    options: StdioOptions,
    shut_down: bool,
    partial: SharedPartial,
    slowest: Arc<Mutex<Option<SlowLine>>>,
}

/// Inbound items buffered between the reader and the session; bounded so a server that
/// floods stdout is slowed by its own pipe rather than growing mcpcheck's memory.
const INBOUND_CAPACITY: usize = 4096;

/// The latest unterminated line (length, first bytes), shared with the stdout reader.
type SharedPartial = Arc<Mutex<Option<(u64, Vec<u8>)>>>;

/// Bytes of an unterminated line kept as evidence.
const PARTIAL_QUOTE: usize = 512;

impl StdioTransport {
    /// Starts the server in its own process group, with stdout and stderr drained
    /// concurrently from the first moment.
    pub fn spawn(
        command: &ServerCommand,
        options: StdioOptions,
        started: Instant,
    ) -> Result<Self, TransportError> {
        let (mut child, pgid) = command.spawn_group(Stdio::piped())?;

        let stdin = child.stdin.take();
        let stdout = child.stdout.take().expect("stdout is piped");
        let mut stderr_pipe = child.stderr.take().expect("stderr is piped");
        let (tx, inbound) = mpsc::channel(INBOUND_CAPACITY);
        let (exit_tx, exit) = watch::channel(None);
        let stderr = StderrLog::new(started);

        let max_frame = options.max_frame;
        let partial = Arc::new(Mutex::new(None));
        let partial_w = partial.clone();
        let slowest = Arc::new(Mutex::new(None));
        let slowest_w = slowest.clone();
        let mut line = LineClock::default();
        lines::spawn_reader(stdout, max_frame, tx.clone(), move |chunk, decoder| {
            if let Some(slow) = line.feed(chunk) {
                let mut s = slowest_w.lock().unwrap_or_else(|e| e.into_inner());
                if s.is_none_or(|s: SlowLine| slow.took > s.took) {
                    *s = Some(slow);
                }
            }
            let (len, bytes) = decoder.partial();
            let snapshot =
                (len > 0).then(|| (len, bytes[..bytes.len().min(PARTIAL_QUOTE)].to_vec()));
            *partial_w.lock().unwrap_or_else(|e| e.into_inner()) = snapshot;
        });

        let log = stderr.clone();
        tokio::spawn(async move {
            let mut buf = vec![0u8; 64 * 1024];
            loop {
                match stderr_pipe.read(&mut buf).await {
                    Ok(0) | Err(_) => break,
                    Ok(n) => log.append(&buf[..n]),
                }
            }
        });

        tokio::spawn(async move {
            let info = match child.wait().await {
                Ok(status) => exit_info(status),
                Err(_) => ExitInfo::Code(-1),
            };
            // Whatever the server left in its group (helpers, grandchildren) goes with it.
            reaper::signal_group(pgid, Signal::SIGKILL);
            reaper::unregister(pgid);
            let _ = exit_tx.send(Some(info.clone()));
            let _ = tx.send(Inbound::Exited(info)).await;
        });

        Ok(StdioTransport {
            command: command.clone(),
            pgid,
            stdin,
            inbound,
            exit,
            stderr,
            options,
            shut_down: false,
            partial,
            slowest,
        })
    }

    /// The server's process id (also its process group id), for sampling its memory.
    pub fn pid(&self) -> u32 {
        self.pgid as u32
    }

    async fn write(&mut self, bytes: &[u8]) -> Result<(), TransportError> {
        let stdin = self.stdin.as_mut().ok_or_else(|| {
            TransportError::InputClosed(std::io::Error::from(std::io::ErrorKind::BrokenPipe))
        })?;
        lines::write_within(stdin, bytes, self.options.write_timeout).await
    }

    async fn wait_exit(&mut self, within: Duration) -> Option<ExitInfo> {
        let mut exit = self.exit.clone();
        let waited = tokio::time::timeout(within, exit.wait_for(Option::is_some)).await;
        match waited {
            Ok(Ok(v)) => v.clone(),
            _ => None,
        }
    }

    async fn shutdown_inner(&mut self) -> ShutdownReport {
        let start = Instant::now();
        if let Some(exit) = self.exit.borrow().clone() {
            return ShutdownReport {
                stage: ShutdownStage::AlreadyExited,
                exit: Some(exit),
                took: start.elapsed(),
            };
        }
        // 1. Close the server's input and give it time to exit by itself.
        self.stdin.take();
        let waits = self.options.shutdown;
        if let Some(exit) = self.wait_exit(waits.after_close).await {
            return ShutdownReport {
                stage: ShutdownStage::StdinClosed,
                exit: Some(exit),
                took: start.elapsed(),
            };
        }
        // 2. SIGTERM to the whole group.
        reaper::signal_group(self.pgid, Signal::SIGTERM);
        if let Some(exit) = self.wait_exit(waits.after_term).await {
            return ShutdownReport {
                stage: ShutdownStage::Terminated,
                exit: Some(exit),
                took: start.elapsed(),
            };
        }
        // 3. SIGKILL cannot be ignored; the exit arrives as soon as the kernel reaps it.
        reaper::signal_group(self.pgid, Signal::SIGKILL);
        let exit = self.wait_exit(Duration::from_secs(5)).await;
        ShutdownReport {
            stage: ShutdownStage::Killed,
            exit,
            took: start.elapsed(),
        }
    }
}

/// Times lines from their first byte to their newline, across reads.
#[derive(Debug, Default)]
struct LineClock {
    /// When the current line's first byte came, and its length so far.
    open: Option<(Instant, u64)>,
}

impl LineClock {
    /// Takes in one read; returns the slowest line it completed that spanned reads.
    fn feed(&mut self, chunk: &[u8]) -> Option<SlowLine> {
        let now = Instant::now();
        let mut slowest = None;
        let mut rest = chunk;
        while let Some(at) = rest.iter().position(|b| *b == b'\n') {
            if let Some((start, len)) = self.open.take() {
                let slow = SlowLine {
                    took: now - start,
                    bytes: len + at as u64,
                };
                if slowest.is_none_or(|s: SlowLine| slow.took > s.took) {
                    slowest = Some(slow);
                }
            }
            rest = &rest[at + 1..];
        }
        if !rest.is_empty() {
            self.open.get_or_insert((now, 0)).1 += rest.len() as u64;
        }
        slowest
    }
}

pub(super) fn exit_info(status: std::process::ExitStatus) -> ExitInfo {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(code), _) => ExitInfo::Code(code),
        (None, Some(sig)) => ExitInfo::Signal {
            signal: sig,
            name: Signal::try_from(sig)
                .map(|s| s.as_str().to_owned())
                .unwrap_or_else(|_| format!("signal {sig}")),
        },
        (None, None) => ExitInfo::Code(-1),
    }
}

impl Transport for StdioTransport {
    fn send(&mut self, mut message: Vec<u8>) -> BoxFuture<'_, Result<(), TransportError>> {
        message.push(b'\n');
        Box::pin(async move { self.write(&message).await })
    }

    fn send_raw(&mut self, bytes: Vec<u8>) -> BoxFuture<'_, Result<(), TransportError>> {
        Box::pin(async move { self.write(&bytes).await })
    }

    fn recv(&mut self) -> BoxFuture<'_, Option<Inbound>> {
        Box::pin(self.inbound.recv())
    }

    fn close_input(&mut self) -> BoxFuture<'_, ()> {
        self.stdin.take();
        Box::pin(async {})
    }

    fn shutdown(&mut self) -> BoxFuture<'_, ShutdownReport> {
        Box::pin(async move {
            let report = self.shutdown_inner().await;
            self.shut_down = true;
            report
        })
    }

    fn stderr(&self) -> Option<&StderrLog> {
        Some(&self.stderr)
    }

    fn describe(&self) -> String {
        self.command.display()
    }

    fn pid(&self) -> Option<u32> {
        Some(StdioTransport::pid(self))
    }

    fn slowest_line(&self) -> Option<SlowLine> {
        *self.slowest.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn partial_line(&self) -> Option<(u64, Vec<u8>)> {
        self.partial
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }
}

impl Drop for StdioTransport {
    fn drop(&mut self) {
        // Only while the process lives: once reaped, its group id may belong to someone else.
        if !self.shut_down && self.exit.borrow().is_none() {
            reaper::signal_group(self.pgid, Signal::SIGKILL);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn joined_words_split_back_into_the_same_words() {
        let words: Vec<String> = [
            "python3",
            "my server.py",
            "it's",
            "a\\b",
            "",
            "\"q\"",
            "$HOME",
        ]
        .iter()
        .map(|w| (*w).to_owned())
        .collect();
        assert_eq!(shell_words(&join_words(&words)), words);
    }

    #[test]
    fn splits_like_a_shell() {
        assert_eq!(
            shell_words(r#"python3 server.py --flag "two words" 'a b' x\ y"#),
            vec!["python3", "server.py", "--flag", "two words", "a b", "x y"]
        );
        assert_eq!(shell_words("  "), Vec::<String>::new());
        assert_eq!(shell_words(r#""""#), vec![""]);
    }

    #[test]
    fn display_quotes_what_needs_it() {
        let c = ServerCommand::from_argv(vec!["node".into(), "my server.js".into()]).unwrap();
        assert_eq!(c.display(), "node 'my server.js'");
    }
}
