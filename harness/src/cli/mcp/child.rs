//! Running one `mcpcheck run` as a child process for `run_checks`.
//!
//! The check runs in a process of its own, not in the MCP server's: a hostile server under
//! test (floods, hangs, huge frames) then costs that process, never the MCP session. The
//! child gets its own process group, no stdin, and no stdout (ours carries only JSON-RPC);
//! its stderr is kept, bounded, for the error message. It ends one of three ways: it exits;
//! the deadline passes; or the caller cancels. In the last two the group gets SIGTERM (on
//! which `mcpcheck run` stops every server it started) and, after a grace, SIGKILL. A
//! guard kills the group on every other way out too (the future dropped when the session
//! ends), and the kernel kills the child if this process dies (parent-death signal).

use std::ffi::OsString;
use std::future::Future;
use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use anyhow::Context;
use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use tokio::io::AsyncReadExt;

/// How long a group gets between SIGTERM and SIGKILL.
const GRACE: Duration = Duration::from_secs(3);
/// The most of the child's stderr kept (its end, where the error is).
const STDERR_KEPT: usize = 8 * 1024;

/// How a child run ended.
#[derive(Debug)]
pub enum Ended {
    /// It exited with this code (`None`: by a signal); its stderr's end.
    Exited {
        /// The exit code.
        code: Option<i32>,
        /// The end of its stderr.
        stderr: String,
    },
    /// The deadline passed; the group was stopped.
    TimedOut,
    /// The caller cancelled; the group was stopped.
    Cancelled,
}

/// Kills a process group when dropped, unless disarmed.
struct GroupGuard(Option<Pid>);

impl GroupGuard {
    fn signal(&self, signal: Signal) {
        if let Some(pgid) = self.0 {
            // ESRCH (the group is gone) is the good case.
            let _ = killpg(pgid, signal);
        }
    }
}

impl Drop for GroupGuard {
    fn drop(&mut self) {
        self.signal(Signal::SIGKILL);
    }
}

/// Runs `program args` until it exits, `limit` passes or `cancelled` resolves.
pub async fn run(
    program: &Path,
    args: &[OsString],
    env: &[(&str, &str)],
    limit: Duration,
    cancelled: impl Future<Output = ()>,
) -> anyhow::Result<Ended> {
    let mut cmd = tokio::process::Command::new(program);
    cmd.args(args)
        .envs(env.iter().copied())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .process_group(0)
        .kill_on_drop(true);
    crate::transport::reaper::set_parent_death_signal(&mut cmd);
    let mut child = cmd
        .spawn()
        .with_context(|| format!("starting {}", program.display()))?;
    let pgid = child
        .id()
        .and_then(|id| i32::try_from(id).ok())
        .map(Pid::from_raw);
    let group = GroupGuard(pgid);
    let stderr = child.stderr.take();
    let read_stderr = async move {
        let mut kept = Vec::new();
        if let Some(mut err) = stderr {
            let mut buf = [0u8; 4096];
            while let Ok(n) = err.read(&mut buf).await {
                if n == 0 {
                    break;
                }
                kept.extend_from_slice(&buf[..n]);
                if kept.len() > 2 * STDERR_KEPT {
                    kept.drain(..kept.len() - STDERR_KEPT);
                }
            }
        }
        let from = kept.len().saturating_sub(STDERR_KEPT);
        String::from_utf8_lossy(&kept[from..]).into_owned()
    };
    let waited = async {
        let (status, stderr) = tokio::join!(child.wait(), read_stderr);
        (status, stderr)
    };
    tokio::pin!(waited);
    let stop = tokio::select! {
        (status, stderr) = &mut waited => {
            let status = status.context("waiting for the mcpcheck run")?;
            // The run has exited; anything it left in its group goes too.
            drop(group);
            return Ok(Ended::Exited { code: status.code(), stderr });
        }
        () = tokio::time::sleep(limit) => Ended::TimedOut,
        () = cancelled => Ended::Cancelled,
    };
    group.signal(Signal::SIGTERM);
    let _ = tokio::time::timeout(GRACE, &mut waited).await;
    drop(group);
    Ok(stop)
}
