//! `mcpcheck run --serve CMD`: mcpcheck starts the HTTP server under test itself, the way
//! SDK CI jobs do (start, poll until it answers, test, stop), with nothing left behind.
//!
//! `{port}` in the command is replaced by the port of `--url`, or by a free loopback port
//! (the URL is then `http://127.0.0.1:PORT/mcp`). The run starts once the endpoint answers
//! an HTTP request, within `--startup-timeout`; the whole process group is stopped when
//! the run ends (SIGTERM, `--kill-wait`, SIGKILL), and by the reaper if mcpcheck is
//! interrupted.

use std::time::{Duration, Instant};

use super::{RunArgs, UsageError};
use crate::transport::background::{self, Background};
use crate::transport::http::HttpOptions;
use crate::transport::stdio::ServerCommand;

/// The placeholder replaced by the port in the `--serve` command.
pub const PORT: &str = "{port}";

/// The server mcpcheck started, running until [`Served::stop`] (or drop, which kills it).
#[derive(Debug)]
pub struct Served {
    process: Background,
    grace: Duration,
}

impl Served {
    /// Stops the server's process group; says on stderr if it had to be killed.
    pub async fn stop(self) {
        let command = self.process.command().to_owned();
        let stopped = self.process.stop(self.grace).await;
        if !stopped.terminated {
            match stopped.exit {
                Some(exit) => eprintln!("--serve: `{command}` had already ended ({exit})"),
                None => eprintln!("--serve: `{command}` needed SIGKILL"),
            }
        }
    }
}

/// Starts `--serve` (if given), waits until it answers, and points `args` at it.
pub async fn start(args: &mut RunArgs) -> anyhow::Result<Option<Served>> {
    let Some(line) = args.serve.clone() else {
        return Ok(None);
    };
    let mut command = super::resolve::server_command(
        Some(&line),
        &[],
        &args.target.stdio.env,
        args.target.stdio.cwd.as_deref(),
        "--serve is empty",
    )?;
    let url = endpoint(args.target.http.url.as_deref(), command_has_port(&command))?;
    let port = url.port_or_known_default().unwrap_or(80);
    port_is_free(&url, port)?;
    replace_port(&mut command, port);
    let mut options =
        HttpOptions::new(url.as_str()).map_err(|e| UsageError(format!("--serve: {e}")))?;
    if let Some(file) = args.target.http.cacert.as_deref() {
        options.ca_pem = Some(super::resolve::read_cacert(file)?);
    }
    let process = Background::spawn(&command)?;
    let grace = args.limits.kill_wait;
    ready(&process, &options, args.protocol.startup_timeout).await?;
    args.target.http.url = Some(url.to_string());
    Ok(Some(Served { process, grace }))
}

fn command_has_port(command: &ServerCommand) -> bool {
    std::iter::once(&command.program)
        .chain(&command.args)
        .any(|w| w.contains(PORT))
}

fn replace_port(command: &mut ServerCommand, port: u16) {
    let port = port.to_string();
    command.program = command.program.replace(PORT, &port);
    for a in &mut command.args {
        *a = a.replace(PORT, &port);
    }
}

/// The endpoint: `--url` as given, or a free loopback port's `/mcp`.
fn endpoint(url: Option<&str>, has_placeholder: bool) -> Result<reqwest::Url, UsageError> {
    match url {
        Some(url) => reqwest::Url::parse(url).map_err(|e| UsageError(format!("--url {url}: {e}"))),
        None if has_placeholder => {
            let port = std::net::TcpListener::bind("127.0.0.1:0")
                .and_then(|l| l.local_addr())
                .map_err(|e| UsageError(format!("--serve: no free loopback port: {e}")))?
                .port();
            reqwest::Url::parse(&format!("http://127.0.0.1:{port}/mcp"))
                .map_err(|e| UsageError(format!("--serve: {e}")))
        }
        None => Err(UsageError(format!(
            "--serve: the command has no {PORT} and no --url says where it listens; \
             write e.g. `--serve \"node server.js --port {PORT}\"`, or give --url"
        ))),
    }
}

/// A port another process already listens on would make mcpcheck test that process.
fn port_is_free(url: &reqwest::Url, port: u16) -> Result<(), UsageError> {
    let host = url.host_str().unwrap_or("127.0.0.1");
    let host = host.trim_start_matches('[').trim_end_matches(']');
    let host = if host.eq_ignore_ascii_case("localhost") {
        "127.0.0.1"
    } else {
        host
    };
    match std::net::TcpListener::bind((host, port)) {
        Ok(_) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::AddrInUse => Err(UsageError(format!(
            "--serve: port {port} on {host} is already taken by another process; stop it, \
             or leave out --url so that mcpcheck picks a free port for {PORT}"
        ))),
        // Not ours to judge (e.g. an address this machine lacks): the server will say.
        Err(_) => Ok(()),
    }
}

/// Polls the endpoint until it answers an HTTP request; fails with the server's output if
/// it exits first or stays silent past `within`.
async fn ready(
    process: &Background,
    options: &HttpOptions,
    within: Duration,
) -> anyhow::Result<()> {
    let started = Instant::now();
    loop {
        if let Some(exit) = process.exited() {
            return Err(failed(
                process,
                &format!("exited ({exit}) before {} answered", options.url),
            ));
        }
        let last = match background::answers(options).await {
            Ok(_) => return Ok(()),
            Err(e) => e,
        };
        if started.elapsed() >= within {
            return Err(failed(
                process,
                &format!(
                    "{} did not answer an HTTP request within {} (--startup-timeout); last \
                     attempt: {last}",
                    options.url,
                    humantime::format_duration(within)
                ),
            ));
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// A server that does not come up is a setup problem (exit 2), not a usage mistake.
fn failed(process: &Background, what: &str) -> anyhow::Error {
    let lines = process.output().last_lines(20);
    let output = if lines.is_empty() {
        "  (it wrote nothing on stdout or stderr)".to_owned()
    } else {
        lines
            .iter()
            .map(|l| format!("  | {l}"))
            .collect::<Vec<_>>()
            .join("\n")
    };
    anyhow::anyhow!(
        "--serve `{}` {what}; its output:\n{output}",
        process.command()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_port_placeholder_is_replaced_in_every_word() {
        let mut c = ServerCommand::parse("srv --bind 127.0.0.1:{port} --name x{port}").unwrap();
        assert!(command_has_port(&c));
        replace_port(&mut c, 8123);
        assert_eq!(c.args, ["--bind", "127.0.0.1:8123", "--name", "x8123"]);
    }

    #[test]
    fn without_placeholder_or_url_the_endpoint_is_unknown() {
        let e = endpoint(None, false).unwrap_err();
        assert!(e.0.contains("{port}"), "{e}");
        let u = endpoint(None, true).unwrap();
        assert_eq!(u.host_str(), Some("127.0.0.1"));
        assert_eq!(u.path(), "/mcp");
        let u = endpoint(Some("http://localhost:9/x"), false).unwrap();
        assert_eq!(u.port(), Some(9));
    }

    #[test]
    fn a_taken_port_is_named() {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        let url = reqwest::Url::parse(&format!("http://127.0.0.1:{port}/mcp")).unwrap();
        let e = port_is_free(&url, port).unwrap_err();
        assert!(e.0.contains("already taken"), "{e}");
        drop(l);
        assert!(port_is_free(&url, port).is_ok());
    }
}
