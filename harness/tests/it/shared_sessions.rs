//! Shared sessions (issues 18 and 28): scenarios that only read run on a session kept per
//! worker, over stdio and over HTTP, and nothing a report says about verdicts may depend on
//! it. The whole suite runs with
//! and without `--isolate` against the reference fixture and the defect-free misbehaving
//! fixture, and the shared scenarios (with the donors, whose servers they take over, and
//! those that end a session) against every defect that one of them must catch, at
//! 2025-11-25 and at 2026-07-28 (the stateless revision, where sharing has no handshake);
//! the verdict maps (and exit codes) must be identical. (A scenario that does not share
//! runs on the same fresh-server path in both modes, and suite_mutation.rs runs the whole
//! suite against every defect in the default, shared mode.) A shared scenario's window holds only its own
//! exchange: the handshake is in the transcript of the scenario that opened the session.

use std::collections::BTreeSet;

use mcpcheck::outcome::ToolPolicy;
use mcpcheck::protocol::Revision;
use mcpcheck::scenario::{builtin, share};

use crate::support::suite::defect_table;
use crate::support::*;

/// Short hangs; the servers mostly wait, so more jobs than cores.
fn fast() -> Vec<&'static str> {
    whole_suite_args("4")
}

/// Defect runs side by side. A run is mostly waiting (on the fixture's hangs and "nothing
/// arrives" windows: about 0.35 s of CPU in 1.1 s), so four at a time still leave the
/// cores to the rest of the suite.
const DEFECTS_AT_ONCE: usize = 4;

/// The revisions compared: the newest handshake revision and the stateless one.
const REVISIONS: [Revision; 2] = [Revision::V2025_11_25, Revision::V2026_07_28];

/// The built-in scenarios that share a session at `revision` under the default policy,
/// and those whose fresh server may become a shared session (donors).
fn shared_scenarios(revision: Revision) -> BTreeSet<String> {
    let policy = ToolPolicy::Readonly;
    builtin::scenarios()
        .expect("the built-in suite parses")
        .into_iter()
        .filter(|s| s.revisions.contains(&revision))
        .filter(|s| {
            share::needs_fresh(s, revision, policy, false).is_none()
                || share::donates(s, revision, policy, false)
        })
        .map(|s| s.id)
        .collect()
}

/// How a comparison reaches the server: a command over stdio, or `--serve` over HTTP.
enum Target {
    Stdio(Vec<String>),
    Serve(String),
}

impl Target {
    fn stdio(server: &[&str]) -> Self {
        Target::Stdio(server.iter().map(|s| s.to_string()).collect())
    }

    fn run(&self, args: &[&str]) -> (i32, serde_json::Value, String) {
        match self {
            Target::Stdio(server) => {
                let server: Vec<&str> = server.iter().map(String::as_str).collect();
                run_json(args, &server)
            }
            Target::Serve(serve) => json_report("run", &[args, &["--serve", serve]].concat(), &[]),
        }
    }
}

/// Compares both modes at `revision`, on the shared scenarios only, against every defect
/// that one of them must catch (but those named by `prefixes` or in `left_out`), with the
/// server `target` gives for a defect: how many defects were compared, and what differed.
fn each_defect(
    revision: Revision,
    prefixes: [&str; 3],
    left_out: &[&str],
    target: impl Fn(&str) -> Target + Sync,
) -> (usize, Vec<String>) {
    let shared = shared_scenarios(revision);
    assert!(
        shared.len() >= 30,
        "only {} scenarios share a session at {revision}: {shared:?}",
        shared.len()
    );
    let only: Vec<&str> = shared
        .iter()
        .flat_map(|id| ["--include", id.as_str()])
        .collect();
    let defects: Vec<String> =
        defect_table(|d| !prefixes.iter().any(|p| d.starts_with(p)) && !left_out.contains(&d))
            .into_iter()
            .filter(|(_, fails)| !fails.is_disjoint(&shared))
            .map(|(d, _)| d)
            .collect();
    assert!(defects.len() >= 20, "few defects to compare: {defects:?}");
    // DEFECTS_AT_ONCE defects at a time: the runs mostly wait on the fixture.
    let groups: Vec<Vec<&String>> = (0..DEFECTS_AT_ONCE)
        .map(|k| defects.iter().skip(k).step_by(DEFECTS_AT_ONCE).collect())
        .collect();
    let mut problems = Vec::new();
    std::thread::scope(|scope| {
        let workers: Vec<_> = groups
            .iter()
            .map(|group| {
                let (only, target) = (&only, &target);
                scope.spawn(move || {
                    group
                        .iter()
                        .filter_map(|defect| {
                            let what = format!("--defect {defect}");
                            both_modes(&target(defect), revision, only, &what)
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        for w in workers {
            problems.extend(w.join().expect("a comparison thread panicked"));
        }
    });
    (defects.len(), problems)
}

fn both_modes(server: &Target, revision: Revision, only: &[&str], what: &str) -> Option<String> {
    let args = [
        &fast()[..],
        &["--protocol-version", revision.as_str()],
        only,
    ]
    .concat();
    let over = match server {
        Target::Stdio(_) => "",
        Target::Serve(_) => " over HTTP",
    };
    let what = format!("{what}{over} at {revision}");
    let (shared_code, shared, shared_text) = server.run(&args);
    let isolated_args = [&args[..], &["--isolate"]].concat();
    let (isolated_code, isolated, isolated_text) = server.run(&isolated_args);
    let (a, b) = (verdicts(&shared), verdicts(&isolated));
    assert!(!a.is_empty(), "{what}: no scenario ran\n{shared_text}");
    if a == b && shared_code == isolated_code {
        return None;
    }
    let differ: Vec<_> = a
        .iter()
        .filter(|(id, v)| b.get(*id) != Some(*v))
        .map(|(id, v)| format!("{id}: shared {v}, isolated {:?}", b.get(id)))
        .collect();
    Some(format!(
        "{what}: exit {shared_code} shared, {isolated_code} isolated; {differ:?}\n--- shared\n{}\n--- isolated\n{}",
        tail(&shared_text),
        tail(&isolated_text)
    ))
}

fn tail(text: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(15)..].join("\n")
}

#[test]
fn verdicts_are_the_same_with_and_without_isolate() {
    let mut problems = Vec::new();
    problems.extend(both_modes(
        &Target::stdio(&[&reference()]),
        Revision::V2025_11_25,
        &[],
        "the reference",
    ));
    let started = std::time::Instant::now();
    let fixture = misbehaving();
    let mut compared = 0;
    for revision in REVISIONS {
        problems.extend(both_modes(
            &Target::stdio(&[&fixture]),
            revision,
            &[],
            "the defect-free fixture",
        ));
        // A `lossy-*` defect fails whichever scenarios lose an answer: not comparable.
        let (runs, found) = each_defect(revision, ["http-", "auth-", "lossy-"], &[], |defect| {
            Target::stdio(&[&fixture, "--defect", defect])
        });
        compared += runs;
        problems.extend(found);
    }
    eprintln!(
        "{compared} defect runs compared in both modes in {:?}",
        started.elapsed()
    );
    assert!(problems.is_empty(), "{}", problems.join("\n\n"));
}

/// The fixture's defects that end its process.
const ENDS_THE_PROCESS: [&str; 6] = [
    "crash-mid-session",
    "panic-on-tools-list",
    "exit-on-initialized",
    "exit-on-cancelled",
    "exit-on-parse-error",
    "huge-input",
];

/// The same comparison over Streamable HTTP (`--serve`), where sessions are shared as over
/// stdio: the reference and the defect-free fixture, and every defect one of the shared
/// scenarios must catch (HTTP defects included; stdio-only ones, and those that end the
/// server's process, left out), at both eras.
#[test]
fn verdicts_over_http_are_the_same_with_and_without_isolate() {
    let http = |server: &str, defect: Option<&str>| {
        let defect = defect.map(|d| format!(" --defect {d}")).unwrap_or_default();
        format!("{server} --transport http --bind 127.0.0.1:{{port}}{defect}")
    };
    let mut problems = Vec::new();
    let reference = http(&reference(), None);
    problems.extend(both_modes(
        &Target::Serve(reference),
        Revision::V2025_11_25,
        &[],
        "the reference",
    ));
    let fixture = misbehaving();
    let mut compared = 0;
    for revision in REVISIONS {
        let clean = http(&fixture, None);
        problems.extend(both_modes(
            &Target::Serve(clean),
            revision,
            &[],
            "the defect-free fixture",
        ));
        // Over HTTP one server process serves every session: a defect that ends the process
        // fails whichever scenarios run after it, in either mode (not comparable). So does
        // `stale-ping-id` (each ping answered with the previous ping's id): over HTTP no
        // barrier ping goes first, so a scenario with one ping sees it only on a session
        // that pinged before, which a shared one may have.
        let left_out = [&ENDS_THE_PROCESS[..], &["stale-ping-id"]].concat();
        let prefixes = ["stdio-", "auth-", "lossy-"];
        let (runs, found) = each_defect(revision, prefixes, &left_out, |defect| {
            Target::Serve(http(&fixture, Some(defect)))
        });
        compared += runs;
        problems.extend(found);
    }
    eprintln!("{compared} defect runs compared over HTTP in both modes");
    assert!(problems.is_empty(), "{}", problems.join("\n\n"));
}

/// A shared scenario's transcript starts where it starts: with `--jobs 1` the scenario that
/// opened the session has the handshake (`server/discover` at 2026-07-28), the others none,
/// yet each has its requests.
#[test]
fn a_shared_scenarios_transcript_is_its_own_window() {
    let legs = [
        (reference(), Revision::V2025_11_25, "initialize"),
        (misbehaving(), Revision::V2026_07_28, "server/discover"),
    ];
    for (server, revision, handshake) in legs {
        let include = [
            "--protocol-version",
            revision.as_str(),
            "--jobs",
            "1",
            "--include",
            "prompts/list-result",
            "--include",
            "resources/list-result",
            "--include",
            "tools/list-result",
        ];
        let (code, report, text) = run_json(&include, &[&server]);
        assert_eq!(code, 0, "{text}");
        let scenarios = report["scenarios"].as_array().expect("scenarios");
        assert_eq!(scenarios.len(), 3, "{text}");
        // They share the protocol sweep's session: its one handshake is in the sweep's
        // window, none in theirs.
        let handshakes: Vec<usize> = scenarios.iter().map(|s| sent(s, handshake)).collect();
        assert_eq!(handshakes, [0, 0, 0], "{revision}: {report:#}");
        assert_eq!(sent(&report, handshake), 1, "{revision}: {report:#}");
        assert!(report["shutdown"].is_null(), "{revision}: {report:#}");
        for (s, method) in scenarios
            .iter()
            .zip(["prompts/list", "resources/list", "tools/list"])
        {
            assert_eq!(s["verdict"], "pass", "{revision}: {s:#}");
            assert!(sent(s, method) >= 1, "{method} not in its window: {s:#}");
        }
        // With --isolate every scenario has its own handshake.
        let isolated = [&include[..], &["--isolate"]].concat();
        let (_, report, text) = run_json(&isolated, &[&server]);
        let handshakes: Vec<usize> = report["scenarios"]
            .as_array()
            .expect("scenarios")
            .iter()
            .map(|s| sent(s, handshake))
            .collect();
        assert_eq!(handshakes, [1, 1, 1], "{revision}: {text}");
    }
}

/// How many messages of `method` a scenario's transcript shows sent.
fn sent(s: &serde_json::Value, method: &str) -> usize {
    s["transcript"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|e| e["direction"] == "sent")
        .filter(|e| {
            e["text"]
                .as_str()
                .unwrap_or("")
                .contains(&format!("\"{method}\""))
        })
        .count()
}

/// A scenario that needs a server only to be first on it hands the server over, and a
/// scenario judging the whole session is judged on the shutdown of the session it shared.
/// With `--jobs 2` (two shared sessions): `lifecycle/ping-before-initialize` pings before
/// any handshake and leaves its server to the shared scenarios, next to the protocol
/// sweep's session; `stdio/stdout-only-messages` hands its session back and gets that
/// session's shutdown when it comes. Counted in server starts: the sweep's and the
/// donor's (five with `--isolate`; three if the donor's server were not handed over).
#[test]
fn a_donors_server_serves_the_shared_scenarios_and_a_rule_is_judged_on_the_shutdown() {
    let dir = tempfile_path("donor-starts");
    std::fs::create_dir_all(&dir).unwrap();
    let ids = [
        "lifecycle/ping-before-initialize",
        "prompts/list-result",
        "tools/list-result",
        "stdio/stdout-only-messages",
    ];
    let include: Vec<&str> = ids.iter().flat_map(|id| ["--include", id]).collect();
    // Two jobs, so two shared sessions: the sweep's and the donor's (without the
    // donation a third server would start).
    for (mode, expected) in [(&[][..], 2), (&["--isolate"][..], 5)] {
        let starts = dir.join(format!("starts{}", mode.len()));
        let server = format!(
            "sh -c 'echo start >> {}; exec {}'",
            starts.display(),
            reference()
        );
        let head = [
            "--protocol-version",
            "2025-11-25",
            "--jobs",
            "2",
            "--server",
            &server,
        ];
        let args = [&head[..], &include, mode].concat();
        let (code, report, text) = json_report("run", &args, &[]);
        assert_eq!(code, 0, "{text}");
        let count = std::fs::read_to_string(&starts)
            .unwrap_or_default()
            .lines()
            .count();
        assert_eq!(count, expected, "server starts {mode:?}: {text}");
        if !mode.is_empty() {
            continue;
        }
        let scenarios = report["scenarios"].as_array().expect("scenarios");
        let by_id = |id: &str| {
            scenarios
                .iter()
                .find(|s| s["id"] == id)
                .unwrap_or_else(|| panic!("{id} not in {report:#}"))
        };
        assert_eq!(sent(by_id(ids[0]), "initialize"), 0, "{report:#}");
        // At most one handshake on the donated server (none begun by its donor), in the
        // window of whichever shared scenario took it first; the sweep's session had its
        // own in the sweep's window.
        let handshakes: usize = ids[1..]
            .iter()
            .map(|id| sent(by_id(id), "initialize"))
            .sum();
        assert!(handshakes <= 1, "{report:#}");
        // The whole-session rule's scenario saw its session's shutdown: in its own window
        // when no one wanted the session after it, else when the session it handed back
        // ended.
        let rule = by_id(ids[3]);
        let events: Vec<&str> = rule["transcript"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|e| e["text"].as_str())
            .collect();
        assert!(
            events.iter().any(|e| e.starts_with("shutdown: StdinClosed")
                || (e.starts_with("the session this scenario shared ended")
                    && e.contains("shutdown: StdinClosed"))),
            "{rule:#}"
        );
    }
}

/// A server that breaks a rule on every frame (`"jsonrpc": "1.0"` throughout) is judged
/// like its clean twin (issue 27.4): the rule is one it broke answering the handshake
/// already, so its sessions are still handed on, the sweep's `tools/list` still decides
/// scenarios, and the gate still knows its read-only tools. Same verdicts, about as many
/// server starts (each one costs seconds on a Python server), and only the run's exit code
/// and protocol findings tell the two apart. Before, every scenario started its own server.
#[test]
fn a_rule_broken_on_every_frame_costs_no_extra_servers_and_changes_no_verdict() {
    let dir = tempfile_path("every-frame");
    std::fs::create_dir_all(&dir).unwrap();
    for revision in REVISIONS {
        let run = |defect: &[&str]| {
            let starts = dir.join(format!("starts-{revision}-{}", defect.len()));
            let server = format!(
                "sh -c 'echo start >> {}; exec {} {}'",
                starts.display(),
                misbehaving(),
                defect.join(" ")
            );
            let args = [
                &fast()[..],
                &["--protocol-version", revision.as_str(), "--server", &server],
            ]
            .concat();
            let (code, report, text) = json_report("run", &args, &[]);
            let count = std::fs::read_to_string(&starts)
                .unwrap_or_default()
                .lines()
                .count();
            (code, verdicts(&report), count, text)
        };
        let (clean_code, clean, clean_starts, clean_text) = run(&[]);
        let (code, broken, starts, text) = run(&["--defect", "wrong-jsonrpc"]);
        assert_eq!(clean_code, 0, "{revision}: {clean_text}");
        assert_eq!(code, 1, "{revision}: {text}");
        assert!(text.contains("jsonrpc.version"), "{revision}: {text}");
        let differ: Vec<String> = clean
            .iter()
            .filter(|(id, v)| broken.get(*id) != Some(*v))
            .map(|(id, v)| format!("{id}: clean {v}, every frame {:?}", broken.get(id)))
            .collect();
        assert!(differ.is_empty(), "{revision}: {differ:#?}\n{text}");
        assert!(
            starts <= clean_starts + 3,
            "{revision}: {starts} server starts against {clean_starts} for the clean twin\n{text}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}
