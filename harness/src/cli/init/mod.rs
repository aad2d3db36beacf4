//! `mcpcheck init`: in a server's repository, a commented mcpcheck.toml whose server
//! command is guessed from the repository's manifest ([`detect`]), and a GitHub workflow
//! that runs mcpcheck on that server ([`workflow`]). It asks for the command only on a
//! terminal, and overwrites nothing without `--force`.

pub mod detect;
pub mod workflow;

use std::io::{BufRead, IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use clap::Args;

use super::{UsageError, config, out};
use crate::transport::stdio::ServerCommand;
use detect::{Guess, Manifests};

/// The flags of `mcpcheck init`.
#[derive(Debug, Args)]
pub struct InitArgs {
    /// Where to write the settings, relative to the repository (the current directory).
    #[arg(value_name = "FILE", default_value = "mcpcheck.toml")]
    pub path: PathBuf,
    /// The server's stdio start command, instead of the guess (split like a shell would).
    #[arg(long, value_name = "COMMAND")]
    pub command: Option<String>,
    /// Where to write the GitHub workflow, relative to the repository.
    #[arg(
        long,
        value_name = "FILE",
        default_value = ".github/workflows/mcpcheck.yml"
    )]
    pub workflow: PathBuf,
    /// Write only the settings file.
    #[arg(long)]
    pub no_workflow: bool,
    /// Overwrite files that exist.
    #[arg(long)]
    pub force: bool,
}

/// The line of the starter file that names the server; replaced by the chosen command.
const STARTER_COMMAND: &str = "command = [\"python3\", \"server.py\"]\n";

/// Runs `mcpcheck init`.
pub fn execute(args: InitArgs) -> anyhow::Result<ExitCode> {
    // The repository is where init runs (where the workflow's job starts), wherever the
    // settings file goes inside it.
    let repo = PathBuf::from(".");
    let workflow_path = (!args.no_workflow).then(|| repo.join(&args.workflow));
    refuse_to_overwrite(&args.path, workflow_path.as_deref(), args.force)?;

    let guess = detect::detect(&Manifests::read(&repo));
    let chosen = choose(args.command.as_deref(), guess.as_ref())?;
    let config_text = settings(&chosen);
    write(&args.path, &config_text)?;
    out(&format!(
        "wrote {}: server `{}` ({})\n",
        args.path.display(),
        workflow::shell_join(&chosen.command),
        chosen.source
    ));
    if let Some(path) = workflow_path {
        // The workflow's --config is relative to the repository, where the job runs.
        let config_in_repo = args.path.strip_prefix(&repo).unwrap_or(&args.path);
        let text = workflow::render(
            chosen.stack.as_ref(),
            &chosen.command,
            &config_in_repo.display().to_string(),
        );
        write(&path, &text)?;
        out(&format!("wrote {}\n", path.display()));
    }
    out("next: `mcpcheck run` checks the server with these settings\n");
    Ok(ExitCode::SUCCESS)
}

/// Fails, naming every file in the way, before anything is written.
fn refuse_to_overwrite(config: &Path, workflow: Option<&Path>, force: bool) -> anyhow::Result<()> {
    if force {
        return Ok(());
    }
    let existing: Vec<String> = std::iter::once(config)
        .chain(workflow)
        .filter(|p| p.exists())
        .map(|p| p.display().to_string())
        .collect();
    if existing.is_empty() {
        return Ok(());
    }
    Err(UsageError(format!(
        "{} already exist{}; pass --force to overwrite",
        existing.join(" and "),
        if existing.len() == 1 { "s" } else { "" }
    ))
    .into())
}

/// The command the files name, the stack behind it, and where it came from.
struct Chosen {
    command: Vec<String>,
    stack: Option<detect::Stack>,
    source: String,
}

/// `--command` first; then, on a terminal, the user's answer (empty keeps the guess);
/// otherwise the guess, or the starter's placeholder with a note to edit it.
fn choose(given: Option<&str>, guess: Option<&Guess>) -> anyhow::Result<Chosen> {
    let stack = guess.map(|g| g.stack.clone());
    if let Some(line) = given {
        return Ok(Chosen {
            command: words(line)?,
            stack,
            source: "from --command".into(),
        });
    }
    if std::io::stdin().is_terminal()
        && let Some(line) = ask(guess)?
    {
        return Ok(Chosen {
            command: words(&line)?,
            stack,
            source: "as answered".into(),
        });
    }
    Ok(match guess {
        Some(g) => Chosen {
            command: g.command.clone(),
            stack,
            source: format!("guessed from {}", g.source),
        },
        None => Chosen {
            command: vec!["python3".into(), "server.py".into()],
            stack: None,
            source: "a placeholder: no package.json, pyproject.toml or Cargo.toml named a \
                     start command; edit [server] command"
                .into(),
        },
    })
}

/// Asks for the command on the terminal; `None` keeps the guess (an empty answer).
fn ask(guess: Option<&Guess>) -> anyhow::Result<Option<String>> {
    let shown = guess
        .map(|g| format!(" [{}]", workflow::shell_join(&g.command)))
        .unwrap_or_default();
    let mut err = std::io::stderr();
    write!(
        err,
        "The command that starts your MCP server over stdio{shown}: "
    )?;
    err.flush()?;
    let mut line = String::new();
    std::io::stdin()
        .lock()
        .read_line(&mut line)
        .context("reading the answer")?;
    let line = line.trim();
    Ok((!line.is_empty()).then(|| line.to_owned()))
}

fn words(line: &str) -> anyhow::Result<Vec<String>> {
    let c = ServerCommand::parse(line)
        .map_err(|e| UsageError(format!("the server command {line:?}: {e}")))?;
    Ok(std::iter::once(c.program).chain(c.args).collect())
}

/// The starter settings with the chosen command in place of the placeholder.
fn settings(chosen: &Chosen) -> String {
    let quoted: Vec<String> = chosen
        .command
        .iter()
        .map(|w| serde_json::Value::from(w.as_str()).to_string())
        .collect();
    let line = format!(
        "# {}.\ncommand = [{}]\n",
        chosen.source.trim_end_matches('.'),
        quoted.join(", ")
    );
    config::STARTER.replacen(STARTER_COMMAND, &line, 1)
}

fn write(path: &Path, text: &str) -> anyhow::Result<()> {
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent)
            .with_context(|| format!("creating {}", parent.display()))?;
    }
    std::fs::write(path, text).with_context(|| format!("writing {}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_starter_still_names_the_placeholder_the_guess_replaces() {
        assert!(config::STARTER.contains(STARTER_COMMAND));
    }

    #[test]
    fn the_settings_parse_and_hold_the_chosen_command() {
        let chosen = Chosen {
            command: vec!["node".into(), "build/my \"index\".js".into()],
            stack: None,
            source: "guessed from package.json \"bin\"".into(),
        };
        let text = settings(&chosen);
        let c = config::Config::parse(&text, "init").unwrap();
        assert!(
            matches!(c.server.command, Some(config::CommandLine::Words(ref w)) if w == &chosen.command),
            "{text}"
        );
        assert!(text.contains("# guessed from package.json \"bin\".\n"));
    }
}
