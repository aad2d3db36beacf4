//! The `PATH` a server (or client) that mcpcheck starts inherits.
//!
//! Run as `uvx mcpcheck`, mcpcheck lives in a throwaway tool environment that uv puts first
//! on `PATH`, so `mcpcheck run -- python server.py` would start that environment's
//! interpreter, which lacks the server's dependencies. The directory that holds mcpcheck
//! is therefore left out of the child's `PATH` when it is a Python virtual environment
//! other than the one the user activated (`VIRTUAL_ENV`, which `uv run` and
//! `source .venv/bin/activate` set): the server then finds the `python` the user would.

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// The `PATH` for children, when it differs from mcpcheck's own; computed once.
pub fn for_children() -> Option<&'static OsStr> {
    static PATH: OnceLock<Option<OsString>> = OnceLock::new();
    PATH.get_or_init(|| {
        let exe = std::env::current_exe().ok()?;
        let path = std::env::var_os("PATH")?;
        let activated = std::env::var_os("VIRTUAL_ENV").map(PathBuf::from);
        without_own_venv(&path, &exe, activated.as_deref(), &|dir| {
            dir.join("pyvenv.cfg").is_file()
        })
    })
    .as_deref()
}

/// `path` without the directory of `exe` when that directory is the `bin` of a virtual
/// environment (`is_venv` of its parent) other than `activated`; `None` when nothing
/// changes. Directories are compared after resolving links where they exist.
fn without_own_venv(
    path: &OsStr,
    exe: &Path,
    activated: Option<&Path>,
    is_venv: &dyn Fn(&Path) -> bool,
) -> Option<OsString> {
    let real = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
    let bin = real(exe.parent()?);
    let venv = bin.parent()?;
    if !is_venv(venv) || activated.is_some_and(|a| real(a) == venv) {
        return None;
    }
    let entries: Vec<PathBuf> = std::env::split_paths(path).collect();
    let kept: Vec<&PathBuf> = entries.iter().filter(|e| real(e) != bin).collect();
    if kept.len() == entries.len() {
        return None;
    }
    std::env::join_paths(kept).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn venvs(dir: &Path) -> bool {
        dir.ends_with("tool-env") || dir.ends_with("project/.venv")
    }

    fn check(path: &str, exe: &str, activated: Option<&str>) -> Option<String> {
        without_own_venv(
            OsStr::new(path),
            Path::new(exe),
            activated.map(Path::new),
            &venvs,
        )
        .map(|p| p.to_string_lossy().into_owned())
    }

    #[test]
    fn uvx_tool_environment_is_left_out() {
        // uvx: the tool environment first, the user's (activated or not) after it.
        let path = "/cache/tool-env/bin:/home/u/project/.venv/bin:/usr/bin";
        let exe = "/cache/tool-env/bin/mcpcheck";
        let expect = Some("/home/u/project/.venv/bin:/usr/bin".to_owned());
        assert_eq!(check(path, exe, None), expect);
        assert_eq!(check(path, exe, Some("/home/u/project/.venv")), expect);
    }

    #[test]
    fn the_activated_environment_stays() {
        // `uv run mcpcheck`, or mcpcheck installed into the activated project venv.
        let path = "/home/u/project/.venv/bin:/usr/bin";
        let exe = "/home/u/project/.venv/bin/mcpcheck";
        assert_eq!(check(path, exe, Some("/home/u/project/.venv")), None);
    }

    #[test]
    fn a_binary_outside_a_venv_changes_nothing() {
        assert_eq!(
            check("/usr/local/bin:/usr/bin", "/usr/local/bin/mcpcheck", None),
            None
        );
        // A venv whose bin is not on PATH: nothing to leave out.
        assert_eq!(
            check("/usr/bin", "/cache/tool-env/bin/mcpcheck", None),
            None
        );
    }
}
