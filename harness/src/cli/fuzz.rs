//! `mcpcheck fuzz`: its arguments, their resolution, and the summary it prints.

use std::fmt::Write as _;
use std::path::PathBuf;
use std::time::Duration;

use clap::{ArgGroup, Args};

use super::UsageError;
use super::flags::{Format, ProtocolFlags, TargetFlags, duration};
use crate::fuzz::{FuzzConfig, FuzzReport, Limits};
use crate::outcome::ToolPolicy;
use crate::schema::SearchPath;
use crate::session::SessionConfig;
use crate::transport::stdio::{ShutdownWaits, StdioOptions};
use crate::transport::target::Target;

/// The arguments of `mcpcheck fuzz`.
#[derive(Debug, Args)]
#[command(group(ArgGroup::new("http_target").args(["url"])))]
pub struct FuzzArgs {
    /// The server: a command (stdio) or an endpoint (`--url`; over HTTP each server
    /// "process" is a new MCP session).
    #[command(flatten)]
    pub target: TargetFlags,
    /// The revision, the start-up allowance and the schemas.
    #[command(flatten)]
    pub protocol: ProtocolFlags,
    /// How long the campaign runs, its seed, and where reproducers go.
    #[command(flatten)]
    pub campaign: CampaignArgs,
    /// Which tools may be called: none, readonly (annotated readOnlyHint) or all.
    #[arg(long, value_enum, default_value_t = ToolPolicy::Readonly)]
    pub call_tools: ToolPolicy,
    /// Also call tools annotated destructiveHint (with --call-tools all).
    #[arg(long)]
    pub allow_destructive: bool,
    /// How long to wait for each response before the liveness probe.
    #[arg(long, value_name = "DURATION", default_value = "2s", value_parser = duration)]
    pub timeout: Duration,
    /// Wall time to spend minimizing each finding (0s: do not minimize).
    #[arg(long, value_name = "DURATION", default_value = "30s", value_parser = duration)]
    pub minimize_time: Duration,
    /// Resident memory growth of the server that is a finding, in MiB.
    #[arg(long, value_name = "MIB", default_value_t = 512)]
    pub memory_limit: u64,
    /// Output format on stdout (or in --output).
    #[arg(long, value_enum, default_value_t = Format::Human)]
    pub format: Format,
    /// Write the JSON report to this file (the human summary still prints).
    #[arg(long, short, value_name = "FILE")]
    pub output: Option<PathBuf>,
}

/// One fuzzing campaign: when it stops, what it sends, where its reproducers go.
#[derive(Debug, Args)]
pub struct CampaignArgs {
    /// Stop after this long (e.g. 60s, 5m). Default 60s unless --iterations is given.
    #[arg(long, value_name = "DURATION", value_parser = duration)]
    pub duration: Option<Duration>,
    /// Stop after this many cases (sequences of 1 to 6 messages).
    #[arg(long, value_name = "N")]
    pub iterations: Option<u64>,
    /// Seed of the random generator: the same seed sends the same inputs. Default: from the clock (printed).
    #[arg(long, value_name = "S")]
    pub seed: Option<u64>,
    /// Directory for reproducer scenario files.
    #[arg(long, value_name = "DIR", default_value = "mcpcheck-fuzz")]
    pub out: PathBuf,
    /// Print the cases that would be sent (after the handshake and the tools/prompts/resources
    /// lists, which are sent), without sending them.
    #[arg(long)]
    pub dry_run: bool,
}

/// Resolves `mcpcheck fuzz` arguments.
pub fn resolve(args: &FuzzArgs) -> Result<(FuzzConfig, SearchPath), UsageError> {
    let timeout = args.timeout;
    if timeout.is_zero() {
        return Err(UsageError("--timeout must be greater than zero".into()));
    }
    let revision = args.protocol.single("fuzz")?;
    let target = match &args.target.http.url {
        Some(_) => super::resolve::http_target(
            &args.target.http,
            crate::transport::framing::DEFAULT_MAX_FRAME,
            revision,
            timeout,
        )?,
        None => Target::Stdio {
            server: super::resolve::server_command(
                args.target.stdio.server.as_deref(),
                &args.target.command,
                &args.target.stdio.env,
                args.target.stdio.cwd.as_deref(),
                "no server to fuzz: give --server \"CMD ARGS\", --url URL, or put the command after --",
            )?,
            options: StdioOptions {
                shutdown: ShutdownWaits {
                    after_close: Duration::from_secs(1),
                    after_term: Duration::from_secs(1),
                },
                write_timeout: timeout.max(Duration::from_secs(5)),
                ..StdioOptions::default()
            },
        },
    };
    if args.allow_destructive && args.call_tools != ToolPolicy::All {
        return Err(UsageError(
            "--allow-destructive only makes sense with --call-tools all".into(),
        ));
    }
    let limits = Limits {
        duration: match (args.campaign.duration, args.campaign.iterations) {
            (Some(d), _) => Some(d),
            (None, None) => Some(Duration::from_secs(60)),
            (None, Some(_)) => None,
        },
        iterations: args.campaign.iterations,
    };
    let seed = args.campaign.seed.unwrap_or_else(|| {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(0)
    });
    let config = FuzzConfig {
        target,
        session: SessionConfig {
            revision,
            timeout,
            startup_timeout: args.protocol.startup_timeout,
            calls: crate::outcome::CallGrant {
                allow_destructive: args.allow_destructive,
                ..crate::outcome::CallGrant::of(args.call_tools)
            },
            ..SessionConfig::default()
        },
        limits,
        seed,
        out_dir: Some(args.campaign.out.clone()),
        dry_run: args.campaign.dry_run,
        tools: args.call_tools,
        allow_destructive: args.allow_destructive,
        memory_limit_mib: args.memory_limit,
        minimize_time: args.minimize_time,
        cases_per_process: 500,
    };
    Ok((
        config,
        SearchPath::standard(args.protocol.schema_dir.as_deref()),
    ))
}

/// The JSON report.
pub fn to_json(report: &FuzzReport) -> String {
    serde_json::to_string_pretty(report).expect("reports always serialize")
}

/// The human summary.
pub fn render(r: &FuzzReport) -> String {
    let mut out = String::new();
    let covered = |m: &std::collections::BTreeMap<String, u64>| {
        let missing: Vec<&str> = m
            .iter()
            .filter(|(_, n)| **n == 0)
            .map(|(k, _)| k.as_str())
            .collect();
        let mut s = format!("{}/{}", m.len() - missing.len(), m.len());
        if !missing.is_empty() {
            let _ = write!(s, " (never sent: {})", missing.join(", "));
        }
        s
    };
    let _ = writeln!(
        out,
        "\nmcpcheck fuzz: {} ({}), seed {}",
        r.server, r.revision, r.seed
    );
    let _ = writeln!(
        out,
        "  {} cases, {} messages + {} probes in {:.1}s: {:.0} messages/s; {} {}",
        r.counts.cases,
        r.counts.messages,
        r.counts.probes,
        r.duration_ms as f64 / 1000.0,
        r.counts.messages_per_sec,
        r.counts.processes_started,
        match r.transport {
            "stdio" => "server processes",
            _ => "HTTP sessions",
        }
    );
    if r.counts.http_rejected > 0 {
        let _ = writeln!(
            out,
            "  {} requests refused with an HTTP error status (allowed for input a server cannot accept)",
            r.counts.http_rejected
        );
    }
    if let Some(why) = &r.stopped {
        let _ = writeln!(out, "  stopped early: {why}");
    }
    let _ = writeln!(out, "  methods {}", covered(&r.methods));
    let _ = writeln!(out, "  tools   {}", covered(&r.tools));
    if r.counts.slow_tool_calls > 0 || r.counts.skipped > 0 {
        let _ = writeln!(
            out,
            "  {} slow tool calls cancelled (not findings), {} writes skipped",
            r.counts.slow_tool_calls, r.counts.skipped
        );
    }
    if r.findings.is_empty() {
        let _ = writeln!(out, "\nno findings");
        return out;
    }
    let _ = writeln!(out, "\n{} findings:", r.findings.len());
    for (i, f) in r.findings.iter().enumerate() {
        let _ = writeln!(
            out,
            "  {}. [{}] {} (seen {}x)\n     {}",
            i + 1,
            f.finding.severity.as_str(),
            f.signature,
            f.count,
            f.finding.message
        );
        if let Some(e) = &f.finding.evidence {
            for line in e.lines().take(6) {
                let _ = writeln!(out, "     | {line}");
            }
        }
        if let Some(p) = &f.reproducer {
            let state = match (f.reproduced, &f.note) {
                (Some(true), _) => "replay fails the same way",
                (Some(false), _) => "replay did NOT reproduce it",
                (None, Some(note)) => note.as_str(),
                (None, None) => "not checkable by a scenario",
            };
            let _ = writeln!(
                out,
                "     reproducer: {} ({} writes, from {}; {state})",
                p.display(),
                f.writes_after,
                f.writes_before
            );
        }
    }
    out
}

/// `mcpcheck fuzz`: resolve, fuzz, print the summary (and the JSON report); exit 1 on findings.
pub async fn execute(args: FuzzArgs) -> anyhow::Result<std::process::ExitCode> {
    use anyhow::Context;
    let (mut config, search) = resolve(&args)?;
    config.target = super::resolve::detect(
        config.target,
        args.target.http.transport,
        config.session.revision,
    )
    .await;
    let store = std::sync::Arc::new(crate::schema::SchemaStore::new(search));
    let mut log = |line: &str| eprintln!("{line}");
    let report = crate::fuzz::run(&config, store, &mut log).await?;
    let human = render(&report);
    match (args.format, &args.output) {
        (Format::Human, _) => super::out(&human),
        (Format::Json, None) => super::out(&format!("{}\n", to_json(&report))),
        (Format::Json, Some(path)) => {
            std::fs::write(path, to_json(&report))
                .with_context(|| format!("writing {}", path.display()))?;
            super::out(&human);
        }
    }
    Ok(if report.has_findings() {
        std::process::ExitCode::from(super::EXIT_FINDINGS)
    } else {
        std::process::ExitCode::SUCCESS
    })
}
