//! `mcpcheck run`: the arguments resolved into a plan, the plan's revision matrix run
//! with its sinks attached, the legs finished against the baseline, the end told.

use std::process::ExitCode;

use super::plan::RunPlan;
use super::{RunArgs, config, finish, tell};

/// Runs `mcpcheck run` with `args` (`matches` tells flags given from defaults, for the
/// config file).
pub async fn run(mut args: RunArgs, matches: &clap::ArgMatches) -> anyhow::Result<ExitCode> {
    if let Some(path) = config::locate(args.config.as_deref()) {
        let config = config::Config::load(&path)?;
        let base = path.parent().unwrap_or(std::path::Path::new(""));
        config::apply(&config, base, &mut args, matches)?;
    }
    // --serve: the server runs for exactly as long as the checks do.
    let served = super::serve::start(&mut args).await?;
    let outcome = checks(args).await;
    if let Some(served) = served {
        served.stop().await;
    }
    outcome
}

/// The run itself, once the server is known: a leg per revision, then the reports of the
/// whole matrix and the exit code over every leg.
async fn checks(args: RunArgs) -> anyhow::Result<ExitCode> {
    let (plan, opened) = RunPlan::resolve(args).await?;
    let told = plan
        .matrix
        .run(&plan.sinks.shared, plan.sinks.terminal.as_ref(), opened)
        .await?;
    let done = finish::finish(
        told.ends,
        &plan.reports,
        plan.schema_dir.as_deref(),
        &plan.secrets,
    )?;
    tell::tell(&plan, &done, &told.emitters)
}
