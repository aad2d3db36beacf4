//! `mcpcheck completions SHELL` and `mcpcheck man` are generated from the clap definitions.

use crate::support::*;

#[test]
fn completion_scripts_name_the_subcommands() {
    for (shell, marker) in [
        ("bash", "complete -F"),
        ("zsh", "#compdef mcpcheck"),
        ("fish", "complete -c mcpcheck"),
    ] {
        let out = mcpcheck().args(["completions", shell]).output().unwrap();
        assert!(out.status.success(), "{shell}: {}", describe(&out));
        let text = String::from_utf8(out.stdout).unwrap();
        assert!(text.contains(marker), "{shell}: {text}");
        for sub in ["run", "list", "schemas", "completions"] {
            assert!(text.contains(sub), "{shell}: no {sub}");
        }
        assert!(
            text.contains("expected-failures"),
            "{shell}: run's flags are completed"
        );
    }
}

#[test]
fn the_man_page_is_roff_with_the_subcommands() {
    let out = mcpcheck().arg("man").output().unwrap();
    assert!(out.status.success(), "{}", describe(&out));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.starts_with(".ie") || text.contains(".TH mcpcheck"),
        "{text}"
    );
    assert!(text.contains("completions"));
    assert!(text.contains("schemas"));
}

#[test]
fn an_unknown_shell_is_a_usage_error() {
    let out = mcpcheck().args(["completions", "tcsh"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
}
