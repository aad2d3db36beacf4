//! `--partition K/N`: the partitions of a suite together hold each scenario exactly once,
//! `list` shows what a partition runs, and `run` runs just that.

use std::collections::BTreeMap;

use crate::support::suite;
use crate::support::*;

/// The scenario ids `mcpcheck list --format json ARGS` lists, in its order.
fn listed(args: &[&str]) -> Vec<String> {
    suite::listed_with(args).into_iter().map(|s| s.id).collect()
}

#[test]
fn list_partitions_cover_the_suite_exactly_once() {
    let all = listed(&[]);
    assert!(all.len() > 50, "the built-in suite: {}", all.len());
    let mut seen: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for k in 1..=3 {
        let part = format!("{k}/3");
        let ids = listed(&["--partition", &part]);
        assert!(!ids.is_empty(), "{part} is empty");
        for id in ids {
            seen.entry(id).or_default().push(part.clone());
        }
    }
    let twice: Vec<_> = seen.iter().filter(|(_, p)| p.len() > 1).collect();
    assert!(twice.is_empty(), "listed in two partitions: {twice:?}");
    let union: Vec<&String> = seen.keys().collect();
    let mut sorted = all.clone();
    sorted.sort();
    assert_eq!(union, sorted.iter().collect::<Vec<_>>());
    // Stable: the same partition lists the same ids every time.
    assert_eq!(
        listed(&["--partition", "2/3"]),
        listed(&["--partition", "2/3"])
    );
}

#[test]
fn run_honours_the_partition() {
    let all = listed(&["--partition", "1/1"]);
    let mut ran = Vec::new();
    for k in 1..=3 {
        let part = format!("{k}/3");
        let (code, report, text) = run_json(&["--partition", &part], &[&reference()]);
        assert_eq!(code, 0, "{part}: {text}");
        let ids: Vec<String> = report["scenarios"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["id"].as_str().unwrap().to_owned())
            .collect();
        assert_eq!(ids, listed(&["--partition", &part]), "{part}");
        ran.extend(ids);
    }
    ran.sort();
    let mut all = all;
    all.sort();
    assert_eq!(
        ran, all,
        "each scenario ran exactly once across 1/3, 2/3, 3/3"
    );
}

#[test]
fn a_bad_partition_is_a_usage_error() {
    for bad in ["0/3", "4/3", "x"] {
        let out = mcpcheck()
            .args(["list", "--partition", bad])
            .output()
            .unwrap();
        let text = describe(&out);
        assert_eq!(out.status.code(), Some(2), "{bad}: {text}");
        assert!(text.contains("expected K/N"), "{bad}: {text}");
    }
}
