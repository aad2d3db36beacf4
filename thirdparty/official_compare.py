#!/usr/bin/env python3
"""Compares the official conformance suite's results with mcpcheck's, per official scenario id.

Reads the official suite's output directory (`conformance server -o DIR`: one
`server-<id>-<timestamp>/checks.json` per scenario) and one or more mcpcheck JSON reports
(`mcpcheck run --format json`, one per revision leg), and prints a Markdown table: each
official id with the official verdict (and its failing check ids), mcpcheck's verdict over the
scenarios that name it (`official:`), and whether the two agree.

Verdicts: official `fail` when a check is FAILURE, `warn` when one is WARNING, `skip` when
every check is SKIPPED, else `pass`. mcpcheck: `fail` when a scenario naming the id failed,
then `warn`, `pass`, `skip` (every one skipped), `-` (no scenario names the id).

A retried official run (`--retried DIR`, the suite run again on single scenarios) replaces
the first run's verdict for the ids it holds; the table marks them "(retried; first: ...)" with
the first run's error messages, so a flake stays visible. `--disagreeing` prints only the ids
where the official suite fails and mcpcheck passes, one per line (what to retry).

Usage: official_compare.py OFFICIAL_OUT_DIR MCPCHECK_JSON... [--extension] [--retried DIR]
       [--disagreeing]
"""

from __future__ import annotations

import json
import re
import sys
from collections import defaultdict
from pathlib import Path

RANK = {"fail": 4, "error": 4, "warn": 3, "pass": 2, "skip": 1}


def official_results(out_dir: Path) -> dict[str, tuple[str, list[str]]]:
    """Official id -> (verdict, its failing or warning checks with their error messages)."""
    results = {}
    for checks in sorted(out_dir.glob("server-*/checks.json")):
        m = re.fullmatch(r"server-(.+)-\d{4}-\d\d-\d\dT[\d-]+Z", checks.parent.name)
        if not m:
            continue
        found = json.loads(checks.read_text())
        statuses = [(c["id"], c["status"]) for c in found]
        bad = [named(c) for c in found if c["status"] == "FAILURE"]
        warned = [named(c) for c in found if c["status"] == "WARNING"]
        if bad:
            verdict = "fail"
        elif warned:
            verdict = "warn"
        elif statuses and all(s == "SKIPPED" for _, s in statuses):
            verdict = "skip"
        else:
            verdict = "pass"
        results[m.group(1)] = (verdict, bad or warned)
    return results


def named(check: dict) -> str:
    """A check's id, with its error message when it has one."""
    message = " ".join(str(check.get("errorMessage") or "").split()).replace("|", "/")
    return f"{check['id']} ({message[:200]})" if message else check["id"]


def mcpcheck_results(reports: list[Path]) -> dict[str, tuple[str, list[str]]]:
    """Official id -> (worst verdict of the mcpcheck scenarios naming it, those scenarios)."""
    named: dict[str, list[tuple[str, str]]] = defaultdict(list)
    for report in reports:
        top = json.loads(report.read_text())
        # A report has a leg per revision (`legs`); reports before the revision matrix were one leg.
        for doc in top.get("legs", [top]):
            for s in doc["scenarios"]:
                for oid in s.get("official") or []:
                    named[oid].append((s["id"] + f" ({doc['revision']})", s["verdict"]))
    out = {}
    for oid, runs in named.items():
        worst = max(runs, key=lambda r: RANK.get(r[1], 0))[1]
        shown = [f"{sid}: {v}" for sid, v in runs if v == worst] if worst != "skip" else []
        out[oid] = (worst, shown or [sid for sid, _ in runs])
    return out


def agreement(official: str, ours: str) -> str:
    if ours == "-":
        return "only official"
    if "skip" in (official, ours):
        return "skip" if official == ours else "one skipped"
    same = (official == "fail") == (ours in ("fail", "error"))
    return "agree" if same else "**disagree**"


def main() -> None:
    argv = sys.argv[1:]
    retried_dir = None
    if "--retried" in argv:
        at = argv.index("--retried")
        retried_dir = Path(argv[at + 1])
        del argv[at : at + 2]
    args = [a for a in argv if not a.startswith("--")]
    if len(args) < 2:
        sys.exit(__doc__)
    official = official_results(Path(args[0]))
    ours = mcpcheck_results([Path(p) for p in args[1:]])
    with_ext = "--extension" in argv
    if "--disagreeing" in argv:
        for oid, (verdict, _) in sorted(official.items()):
            if verdict == "fail" and ours.get(oid, ("-",))[0] in ("pass", "warn"):
                print(oid)
        return
    if retried_dir is not None:
        for oid, (verdict, checks) in official_results(retried_dir).items():
            first, first_checks = official.get(oid, ("-", []))
            note = f"(retried; first: {first}{': ' if first_checks else ''}{', '.join(first_checks)})"
            official[oid] = (verdict, checks + [note])
    print("| official id | official | failing / warning checks | mcpcheck | mcpcheck scenarios | |")
    print("| --- | --- | --- | --- | --- | --- |")
    tally: dict[str, int] = defaultdict(int)
    for oid in sorted(official):
        if oid.startswith("tasks-") and not with_ext:
            continue
        verdict, checks = official[oid]
        mine, scenarios = ours.get(oid, ("-", []))
        agree = agreement(verdict, mine)
        tally[agree] += 1
        print(
            f"| {oid} | {verdict} | {', '.join(checks)} | {mine} | {'<br>'.join(scenarios)} | {agree} |"
        )
    for oid in sorted(set(ours) - set(official)):
        mine, scenarios = ours[oid]
        tally["only mcpcheck"] += 1
        print(f"| {oid} | - | | {mine} | {'<br>'.join(scenarios)} | only mcpcheck |")
    print()
    print("; ".join(f"{k}: {v}" for k, v in sorted(tally.items())))


if __name__ == "__main__":
    main()
