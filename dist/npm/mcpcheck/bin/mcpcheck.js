#!/usr/bin/env node
// The `mcpcheck` command of the npm package: finds the native binary in the platform package
// npm installed (one of the optionalDependencies, picked by their `os`/`cpu` fields) and runs
// it. No dependencies and no install script, so `npx mcpcheck` works with scripts disabled.
"use strict";

const { spawn } = require("node:child_process");
const os = require("node:os");
const path = require("node:path");

// `${process.platform}-${process.arch}` -> the package holding that platform's binary. The
// same list as the release's targets (.github/workflows/release.yml) and dist/npm/build.js.
const PLATFORMS = {
  "linux-x64": "@mcpcheck/cli-linux-x64",
  "linux-arm64": "@mcpcheck/cli-linux-arm64",
  "darwin-x64": "@mcpcheck/cli-darwin-x64",
  "darwin-arm64": "@mcpcheck/cli-darwin-arm64",
};

function fail(lines) {
  process.stderr.write(lines.map((l) => `mcpcheck: ${l}\n`).join(""));
  // 2, as mcpcheck itself uses for "could not run", never 1 (which means a failing server).
  process.exit(2);
}

function findBinary() {
  // An explicit binary wins: a `cargo install`ed one on a platform without a package, or a
  // local build under test.
  if (process.env.MCPCHECK_BINARY) {
    return process.env.MCPCHECK_BINARY;
  }
  const key = `${process.platform}-${process.arch}`;
  const pkg = PLATFORMS[key];
  if (!pkg) {
    const hint =
      process.platform === "win32"
        ? "mcpcheck is Unix-only (it stops a stdio server by its process group): run it under WSL, where the Linux package installs."
        : "build it from source with `cargo install mcpcheck`, then point MCPCHECK_BINARY at it.";
    fail([
      `no prebuilt binary for ${key} (there are: ${Object.keys(PLATFORMS).join(", ")}).`,
      hint,
    ]);
  }
  let dir;
  try {
    // package.json rather than the binary: it resolves the same way for every package
    // manager's layout (nested, hoisted, pnpm's symlinks).
    dir = path.dirname(require.resolve(`${pkg}/package.json`));
  } catch {
    fail([
      `the package ${pkg}, which holds the binary for ${key}, is not installed.`,
      "npm installs it as an optional dependency of mcpcheck; it is missing when optional",
      "dependencies were left out (--omit=optional, --no-optional) or the lockfile was made",
      `on another platform. Install it: npm install ${pkg}@${require("../package.json").version}`,
    ]);
  }
  return path.join(dir, "bin", "mcpcheck");
}

const binary = findBinary();
const child = spawn(binary, process.argv.slice(2), { stdio: "inherit" });

// A signal sent to this launcher alone (a CI runner's SIGTERM, `kill`) reaches mcpcheck too,
// which then stops its servers and exits 128+N. Ctrl-C in a terminal reaches both already;
// mcpcheck exits on the first of its two SIGINTs, so the forwarded one is harmless.
const forwarded = ["SIGINT", "SIGTERM", "SIGHUP"];
const relay = (signal) => {
  if (child.exitCode === null && child.signalCode === null) {
    child.kill(signal);
  }
};
for (const signal of forwarded) {
  process.on(signal, relay);
}

child.on("error", (err) => {
  fail([`could not run ${binary}: ${err.message}`]);
});

child.on("exit", (code, signal) => {
  if (signal) {
    // Killed by a signal: die of the same one, so whoever started npx sees what happened.
    for (const s of forwarded) {
      process.removeListener(s, relay);
    }
    process.kill(process.pid, signal);
    // A signal Node does not die of (it ignores SIGPIPE, say): the shell's convention.
    setTimeout(() => process.exit(128 + (os.constants.signals[signal] || 0)), 100);
    return;
  }
  process.exit(code);
});
