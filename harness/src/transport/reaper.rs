//! Makes sure no server process outlives mcpcheck.
//!
//! Each server runs in its own process group, registered here while it lives. When
//! mcpcheck is interrupted (Ctrl-C, SIGTERM, SIGHUP) the handler kills every registered
//! group before exiting. If mcpcheck is killed outright (SIGKILL), the kernel still
//! delivers SIGKILL to each direct child through `PR_SET_PDEATHSIG`.

use std::collections::BTreeSet;
use std::sync::Mutex;

use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;

static GROUPS: Mutex<BTreeSet<i32>> = Mutex::new(BTreeSet::new());

fn groups() -> std::sync::MutexGuard<'static, BTreeSet<i32>> {
    GROUPS.lock().unwrap_or_else(|e| e.into_inner())
}

/// Records a live process group (the server's pid, as it leads its own group).
pub fn register(pgid: i32) {
    groups().insert(pgid);
}

/// Forgets a process group once it has been fully reaped.
pub fn unregister(pgid: i32) {
    groups().remove(&pgid);
}

/// Sends `signal` to every process in the group; a group that is already gone is fine.
pub fn signal_group(pgid: i32, signal: Signal) {
    let _ = killpg(Pid::from_raw(pgid), signal);
}

/// Kills every registered group. Used on the way out of an interrupted run.
pub fn kill_all() {
    let live: Vec<i32> = groups().iter().copied().collect();
    for pgid in live {
        signal_group(pgid, Signal::SIGKILL);
    }
}

/// Installs handlers that kill all server groups, then exit with the conventional
/// 128 + signal code, on SIGINT, SIGTERM and SIGHUP. Call once, inside the runtime.
pub fn install_signal_handlers() -> std::io::Result<()> {
    use tokio::signal::unix::{SignalKind, signal};
    let kinds = [
        (SignalKind::interrupt(), 130),
        (SignalKind::terminate(), 143),
        (SignalKind::hangup(), 129),
    ];
    for (kind, code) in kinds {
        let mut stream = signal(kind)?;
        tokio::spawn(async move {
            if stream.recv().await.is_some() {
                kill_all();
                eprintln!("mcpcheck: interrupted; stopped all server processes");
                std::process::exit(code);
            }
        });
    }
    Ok(())
}

/// Asks the kernel to SIGKILL the calling process when its parent thread dies.
/// Runs in the forked child just before `exec`.
#[allow(unsafe_code)]
pub(crate) fn set_parent_death_signal(cmd: &mut tokio::process::Command) {
    // SAFETY: prctl is async-signal-safe and touches no memory of the parent; this is the
    // documented way to tie a child's lifetime to its parent on Linux.
    unsafe {
        cmd.pre_exec(|| {
            #[cfg(target_os = "linux")]
            nix::sys::prctl::set_pdeathsig(Signal::SIGKILL).map_err(std::io::Error::from)?;
            Ok(())
        });
    }
}
