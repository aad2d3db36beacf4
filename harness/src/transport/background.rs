//! A server process mcpcheck starts and leaves running beside the run (`--serve`): an HTTP
//! server that the transports then reach by URL.
//!
//! It is spawned like a stdio server (its own process group, registered with the
//! [`reaper`], tied to mcpcheck's life by the parent-death signal) so that it can never
//! outlive the run; its stdout and stderr are drained into one log, quoted when it fails to
//! start.

use std::process::Stdio;
use std::time::{Duration, Instant};

use nix::sys::signal::Signal;
use tokio::io::AsyncReadExt;
use tokio::sync::watch;

use super::stdio::ServerCommand;
use super::{ExitInfo, StderrLog, TransportError, reaper};

/// A running background server.
#[derive(Debug)]
pub struct Background {
    command: String,
    pgid: i32,
    exit: watch::Receiver<Option<ExitInfo>>,
    output: StderrLog,
}

/// How a background server ended when it was stopped.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Stopped {
    /// Whether SIGTERM was enough (false: it needed SIGKILL, or had exited before).
    pub terminated: bool,
    /// How it ended, when known.
    pub exit: Option<ExitInfo>,
}

impl Background {
    /// Starts `command` in its own process group, stdin closed, stdout and stderr drained.
    pub fn spawn(command: &ServerCommand) -> Result<Self, TransportError> {
        let (mut child, pgid) = command.spawn_group(Stdio::null())?;
        let output = StderrLog::new(Instant::now());
        if let Some(out) = child.stdout.take() {
            tokio::spawn(drain(out, output.clone()));
        }
        if let Some(err) = child.stderr.take() {
            tokio::spawn(drain(err, output.clone()));
        }
        let (exit_tx, exit) = watch::channel(None);
        tokio::spawn(async move {
            let info = match child.wait().await {
                Ok(status) => super::stdio::exit_info(status),
                Err(_) => ExitInfo::Code(-1),
            };
            // Helpers the server left in its group go with it.
            reaper::signal_group(pgid, Signal::SIGKILL);
            reaper::unregister(pgid);
            let _ = exit_tx.send(Some(info));
        });
        Ok(Background {
            command: command.display(),
            pgid,
            exit,
            output,
        })
    }

    /// The command line, as a user would type it.
    pub fn command(&self) -> &str {
        &self.command
    }

    /// How the process ended, if it has.
    pub fn exited(&self) -> Option<ExitInfo> {
        self.exit.borrow().clone()
    }

    /// A watch that turns `Some` when the process ends.
    pub fn exit_watch(&self) -> watch::Receiver<Option<ExitInfo>> {
        self.exit.clone()
    }

    /// Everything it wrote on stdout and stderr (bounded).
    pub fn output(&self) -> &StderrLog {
        &self.output
    }

    /// SIGTERM to the whole group, `grace` to exit, then SIGKILL; waits for the reaping.
    pub async fn stop(mut self, grace: Duration) -> Stopped {
        if let Some(exit) = self.exited() {
            return Stopped {
                terminated: false,
                exit: Some(exit),
            };
        }
        reaper::signal_group(self.pgid, Signal::SIGTERM);
        if let Some(exit) = self.wait(grace).await {
            return Stopped {
                terminated: true,
                exit: Some(exit),
            };
        }
        reaper::signal_group(self.pgid, Signal::SIGKILL);
        Stopped {
            terminated: false,
            exit: self.wait(Duration::from_secs(5)).await,
        }
    }

    async fn wait(&mut self, within: Duration) -> Option<ExitInfo> {
        match tokio::time::timeout(within, self.exit.wait_for(Option::is_some)).await {
            Ok(Ok(v)) => v.clone(),
            _ => None,
        }
    }
}

impl Drop for Background {
    fn drop(&mut self) {
        // Only while the process lives: once reaped, its group id may belong to someone else.
        if self.exit.borrow().is_none() {
            reaper::signal_group(self.pgid, Signal::SIGKILL);
        }
    }
}

async fn drain(mut pipe: impl AsyncReadExt + Unpin, log: StderrLog) {
    let mut buf = vec![0u8; 16 * 1024];
    while let Ok(n) = pipe.read(&mut buf).await {
        if n == 0 {
            break;
        }
        log.append(&buf[..n]);
    }
}

/// One plain `GET` of the endpoint (with `options`' headers and CA): the HTTP status if the
/// server answered at all, else why not. Any status counts: an MCP endpoint may well refuse
/// a bare GET (405, 400), which still says it is listening.
pub async fn answers(options: &super::http::HttpOptions) -> Result<u16, String> {
    super::install_crypto_provider();
    let mut builder = reqwest::Client::builder()
        .timeout(Duration::from_secs(2))
        .redirect(reqwest::redirect::Policy::none())
        .no_proxy();
    if let Some(pem) = &options.ca_pem {
        let certs =
            reqwest::Certificate::from_pem_bundle(pem).map_err(|e| super::http::error_chain(&e))?;
        builder = builder.tls_certs_merge(certs);
    }
    let client = builder.build().map_err(|e| super::http::error_chain(&e))?;
    let mut request = client
        .get(options.url.clone())
        .header(reqwest::header::ACCEPT, "text/event-stream");
    for (name, value) in &options.headers {
        request = request.header(name, value);
    }
    // Only the status line is needed; the body (an SSE stream, maybe) is dropped unread.
    match request.send().await {
        Ok(response) => Ok(response.status().as_u16()),
        Err(e) => Err(super::http::error_chain(&e)),
    }
}
