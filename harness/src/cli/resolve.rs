//! Raw arguments -> resolved configuration, with every user mistake reported clearly.

use std::time::Duration;

use super::flags::{HttpFlags, HttpTransportArg};
use super::{RunArgs, UsageError};
use crate::protocol::Revision;
use crate::runner::sweep::ProbeConfig;
use crate::schema::SearchPath;
use crate::session::SessionConfig;
use crate::transport::http::HttpOptions;
use crate::transport::stdio::{ServerCommand, ShutdownWaits, StdioOptions};
use crate::transport::target::Target;

/// Loads scenarios: the given files and directories, or the built-in suite; then filters
/// them by id globs. Every file problem is reported, with its location.
pub fn scenarios(
    paths: &[std::path::PathBuf],
    builtin: bool,
    include: &[String],
    exclude: &[String],
) -> Result<Vec<crate::scenario::Scenario>, UsageError> {
    use crate::scenario::parse;
    let mut all = Vec::new();
    let mut errors = Vec::new();
    if paths.is_empty() || builtin {
        match crate::scenario::builtin::scenarios() {
            Ok(s) => all.extend(s),
            Err(es) => errors.extend(es.into_iter().map(|e| e.to_string())),
        }
    }
    for p in paths {
        if p.is_dir() {
            let (ok, errs) = parse::parse_dir(p);
            all.extend(ok);
            errors.extend(errs.into_iter().map(|e| e.to_string()));
        } else if p.is_file() {
            match parse::parse_file(p) {
                Ok(s) => all.push(s),
                Err(e) => errors.push(e.to_string()),
            }
        } else {
            errors.push(format!(
                "error: {}: no such scenario file or directory",
                p.display()
            ));
        }
    }
    if !errors.is_empty() {
        return Err(UsageError(errors.join("\n")));
    }
    let globs = |pats: &[String], flag: &str| -> Result<Option<globset::GlobSet>, UsageError> {
        if pats.is_empty() {
            return Ok(None);
        }
        let mut b = globset::GlobSetBuilder::new();
        for p in pats {
            b.add(globset::Glob::new(p).map_err(|e| UsageError(format!("--{flag} {p:?}: {e}")))?);
        }
        b.build()
            .map(Some)
            .map_err(|e| UsageError(format!("--{flag}: {e}")))
    };
    let inc = globs(include, "include")?;
    let exc = globs(exclude, "exclude")?;
    all.retain(|s| {
        inc.as_ref().is_none_or(|g| g.is_match(&s.id))
            && !exc.as_ref().is_some_and(|g| g.is_match(&s.id))
    });
    let mut seen = std::collections::HashSet::new();
    for s in &all {
        if !seen.insert(s.id.clone()) {
            return Err(UsageError(format!(
                "scenario id `{}` is used twice (the second in {})",
                s.id, s.source
            )));
        }
    }
    Ok(all)
}

/// Resolves `mcpcheck run` arguments at `revision` (each leg of the run has one).
pub fn run(args: &RunArgs, revision: Revision) -> Result<(ProbeConfig, SearchPath), UsageError> {
    if args.target.http.url.is_some() {
        return run_http(args, revision);
    }
    let server = server_command(
        args.target.stdio.server.as_deref(),
        &args.target.command,
        &args.target.stdio.env,
        args.target.stdio.cwd.as_deref(),
        "no server to check: give --server \"CMD ARGS\", put the command after --, e.g. `mcpcheck run -- python3 server.py`, or give --url",
    )?;
    let (timeout, session) = session_config(args, revision)?;
    let stdio = StdioOptions {
        max_frame: args.limits.max_frame_size,
        shutdown: ShutdownWaits {
            after_close: args.limits.shutdown_wait,
            after_term: args.limits.kill_wait,
        },
        write_timeout: timeout,
    };
    Ok((
        ProbeConfig {
            target: Target::Stdio {
                server,
                options: stdio,
            },
            session,
        },
        SearchPath::standard(args.protocol.schema_dir.as_deref()),
    ))
}

/// `mcpcheck run --url`: the endpoint, its headers and its bearer token.
fn run_http(args: &RunArgs, revision: Revision) -> Result<(ProbeConfig, SearchPath), UsageError> {
    let (timeout, session) = session_config(args, revision)?;
    let target = http_target(
        &args.target.http,
        args.limits.max_frame_size,
        session.revision,
        timeout,
    )?;
    let target = super::auth::with_auth_tokens(target, args)?;
    Ok((
        ProbeConfig { target, session },
        SearchPath::standard(args.protocol.schema_dir.as_deref()),
    ))
}

/// `--url` with its headers, bearer token and `--transport`, for a revision. `auto` is
/// resolved to Streamable HTTP here; [`detect`] probes for HTTP+SSE once the run starts.
pub fn http_target(
    args: &HttpFlags,
    max_frame: usize,
    revision: Revision,
    timeout: Duration,
) -> Result<Target, UsageError> {
    let url = args.url.as_deref().unwrap_or_default();
    let mut options = http_options(url, &args.headers, args.bearer_env.as_deref())?;
    options.timeout = timeout;
    options.reached = args.reached.clone();
    if !revision.has_handshake() {
        if args.transport == HttpTransportArg::Sse {
            return Err(UsageError(format!(
                "--transport sse: the HTTP+SSE transport belongs to 2024-11-05; {revision} speaks Streamable HTTP"
            )));
        }
        options.stateless_version = Some(revision.as_str().to_owned());
    }
    options.max_frame = max_frame;
    if let Some(file) = &args.cacert {
        options.ca_pem = Some(read_cacert(file)?);
    }
    Ok(match args.transport {
        HttpTransportArg::Sse => Target::Sse(options),
        _ => Target::Http(options),
    })
}

/// `--transport auto`: follows the spec's backwards-compatibility procedure to pick
/// Streamable HTTP or HTTP+SSE (handshake revisions only).
pub async fn detect(target: Target, transport: HttpTransportArg, revision: Revision) -> Target {
    match &target {
        Target::Http(options)
            if transport == HttpTransportArg::Auto && revision.has_handshake() =>
        {
            if crate::transport::legacy_sse::is_legacy(options).await {
                Target::Sse(options.clone())
            } else {
                target
            }
        }
        _ => target,
    }
}

/// `--cacert FILE`: PEM text holding at least one certificate.
pub fn read_cacert(file: &std::path::Path) -> Result<Vec<u8>, UsageError> {
    let pem =
        std::fs::read(file).map_err(|e| UsageError(format!("--cacert {}: {e}", file.display())))?;
    match reqwest::Certificate::from_pem_bundle(&pem) {
        Ok(certs) if !certs.is_empty() => Ok(pem),
        Ok(_) => Err(UsageError(format!(
            "--cacert {}: no PEM certificate (-----BEGIN CERTIFICATE-----) in the file",
            file.display()
        ))),
        Err(e) => Err(UsageError(format!(
            "--cacert {}: not a PEM certificate file: {}",
            file.display(),
            crate::transport::http::error_chain(&e)
        ))),
    }
}

/// `--url`, `--header` and `--bearer-env` (the token is kept as a secret to redact).
pub fn http_options(
    url: &str,
    headers: &[String],
    bearer_env: Option<&str>,
) -> Result<HttpOptions, UsageError> {
    let mut options = HttpOptions::new(url).map_err(|e| UsageError(format!("--url {e}")))?;
    for h in headers {
        let (name, value) = h
            .split_once(':')
            .ok_or_else(|| UsageError(format!("--header {h:?}: expected \"Name: value\"")))?;
        let name = reqwest::header::HeaderName::from_bytes(name.trim().as_bytes())
            .map_err(|_| UsageError(format!("--header {h:?}: not a valid header name")))?;
        let value = reqwest::header::HeaderValue::from_str(value.trim())
            .map_err(|_| UsageError(format!("--header {h:?}: not a valid header value")))?;
        options.headers.push((name, value));
    }
    if let Some(var) = bearer_env {
        let token = std::env::var(var).map_err(|_| {
            UsageError(format!(
                "--bearer-env {var}: the environment variable is not set (or not UTF-8)"
            ))
        })?;
        let token = token.trim().to_owned();
        if token.is_empty() {
            return Err(UsageError(format!(
                "--bearer-env {var}: the variable is empty"
            )));
        }
        let mut value = reqwest::header::HeaderValue::from_str(&format!("Bearer {token}"))
            .map_err(|_| UsageError(format!("--bearer-env {var}: not a valid header value")))?;
        value.set_sensitive(true);
        options
            .headers
            .push((reqwest::header::AUTHORIZATION, value));
        options.secrets.push(token);
    }
    Ok(options)
}

/// Flags shared by every transport: frame limit, timeouts, revision.
fn session_config(
    args: &RunArgs,
    revision: Revision,
) -> Result<(Duration, SessionConfig), UsageError> {
    if args.limits.max_frame_size < 1024 {
        return Err(UsageError(format!(
            "--max-frame-size {}: must be at least 1024 bytes",
            args.limits.max_frame_size
        )));
    }
    let timeout = args.timeout;
    if timeout.is_zero() {
        return Err(UsageError("--timeout must be greater than zero".into()));
    }
    let session = SessionConfig {
        revision,
        timeout,
        startup_timeout: args.protocol.startup_timeout,
        pace: args.protocol.pace.clone(),
        ..SessionConfig::default()
    };
    Ok((timeout, session))
}

/// Reads `--tool-args FILE`: a mapping of tool names to argument objects.
pub fn tool_args(
    path: Option<&std::path::Path>,
) -> Result<std::collections::BTreeMap<String, serde_json::Value>, UsageError> {
    let Some(path) = path else {
        return Ok(Default::default());
    };
    let text = std::fs::read_to_string(path)
        .map_err(|e| UsageError(format!("--tool-args {}: {e}", path.display())))?;
    let name = path.display().to_string();
    let value = crate::scenario::parse::to_json_document(&name, &text)
        .map_err(|e| UsageError(format!("--tool-args: {e}")))?;
    let serde_json::Value::Object(map) = value else {
        return Err(UsageError(format!(
            "--tool-args {name}: expected a mapping of tool names to argument objects, e.g. `echo: {{ message: hi }}`"
        )));
    };
    map.into_iter()
        .map(|(tool, args)| match args {
            serde_json::Value::Object(_) => Ok((tool, args)),
            other => Err(UsageError(format!(
                "--tool-args {name}: the arguments of `{tool}` must be a mapping, not {}",
                crate::protocol::jsonrpc::type_name(&other)
            ))),
        })
        .collect()
}

/// The server command of `run`, `snapshot` and `fuzz`: `--server "CMD"` or `-- CMD`, with
/// `--env KEY=VALUE` and `--cwd DIR`. `missing` is the message when neither is given.
pub fn server_command(
    line: Option<&str>,
    argv: &[String],
    env: &[String],
    cwd: Option<&std::path::Path>,
    missing: &str,
) -> Result<ServerCommand, UsageError> {
    let mut server = match (line, argv.is_empty()) {
        (Some(line), true) => {
            ServerCommand::parse(line).map_err(|_| UsageError("--server is empty".into()))?
        }
        (None, false) => ServerCommand::from_argv(argv.to_vec())
            .map_err(|_| UsageError("the server command after -- is empty".into()))?,
        (None, true) => return Err(UsageError(missing.into())),
        (Some(_), false) => {
            return Err(UsageError(
                "give the server either with --server or after --, not both".into(),
            ));
        }
    };
    for kv in env {
        let (k, v) = kv
            .split_once('=')
            .ok_or_else(|| UsageError(format!("--env {kv:?}: expected KEY=VALUE")))?;
        if k.is_empty() {
            return Err(UsageError(format!("--env {kv:?}: the name is empty")));
        }
        server.env.insert(k.to_owned(), v.to_owned());
    }
    if let Some(cwd) = cwd {
        if !cwd.is_dir() {
            return Err(UsageError(format!(
                "--cwd {}: not a directory",
                cwd.display()
            )));
        }
        server.cwd = Some(cwd.to_path_buf());
    }
    Ok(server)
}
