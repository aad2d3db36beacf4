#!/usr/bin/env node
// Assembles the npm packages of mcpcheck from the templates beside this file, with the
// version of harness/Cargo.toml stamped in, ready for `npm pack` or `npm publish`:
//
//   node dist/npm/build.js main --out DIR
//       DIR/mcpcheck: the launcher package (dist/npm/mcpcheck), its optionalDependencies
//       pinned to the same version.
//   node dist/npm/build.js platform --binary PATH [--platform linux-x64 | --target TRIPLE] --out DIR
//       DIR/cli-<platform>: @mcpcheck/cli-<platform> around the given binary, with `os` and
//       `cpu` set so npm installs it only there. --platform defaults to this machine's.
//
// Used by .ci/steps/packages (from the checkout, the debug binary) and by the release
// workflow (the release archives' binaries). Node >= 18, no dependencies.
"use strict";

const fs = require("node:fs");
const path = require("node:path");
const { execFileSync } = require("node:child_process");

const here = __dirname;
const root = path.resolve(here, "..", "..");

// npm's platform key -> the Rust target of the release binary it carries and the words for
// its description. Linux binaries are static musl builds, so one package serves glibc and
// musl systems alike (no `libc` field). Keep in step with bin/mcpcheck.js and release.yml.
const PLATFORMS = {
  "linux-x64": { target: "x86_64-unknown-linux-musl", os: "linux", cpu: "x64", label: "Linux x64" },
  "linux-arm64": { target: "aarch64-unknown-linux-musl", os: "linux", cpu: "arm64", label: "Linux arm64" },
  "darwin-x64": { target: "x86_64-apple-darwin", os: "darwin", cpu: "x64", label: "macOS x64" },
  "darwin-arm64": { target: "aarch64-apple-darwin", os: "darwin", cpu: "arm64", label: "macOS arm64" },
};

function die(message) {
  process.stderr.write(`dist/npm/build.js: ${message}\n`);
  process.exit(1);
}

function parseArgs(argv) {
  const [command, ...rest] = argv;
  const opts = {};
  for (let i = 0; i < rest.length; i += 2) {
    const flag = rest[i];
    if (!flag.startsWith("--") || rest[i + 1] === undefined) {
      die(`expected --flag value pairs, got ${JSON.stringify(rest.slice(i))}`);
    }
    opts[flag.slice(2)] = rest[i + 1];
  }
  return { command, opts };
}

// The [package] version of the crate, the one version every package carries. A line-based
// read: the manifest's `version = "..."` is the first one at the start of a line.
function crateVersion() {
  const manifest = fs.readFileSync(path.join(root, "harness", "Cargo.toml"), "utf8");
  const m = manifest.match(/^version\s*=\s*"([^"]+)"/m);
  if (!m) die("no version in harness/Cargo.toml");
  return m[1];
}

function writeJson(file, value) {
  fs.writeFileSync(file, JSON.stringify(value, null, 2) + "\n");
}

function freshDir(dir) {
  fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(dir, { recursive: true });
  return dir;
}

function buildMain(out, version) {
  const dest = freshDir(path.join(out, "mcpcheck"));
  const src = path.join(here, "mcpcheck");
  const pkg = JSON.parse(fs.readFileSync(path.join(src, "package.json"), "utf8"));
  pkg.version = version;
  // The launcher's table and the template's dependencies must name the same packages, or a
  // platform would install a binary the launcher never looks for.
  const expected = Object.keys(PLATFORMS).map((p) => `@mcpcheck/cli-${p}`).sort();
  const listed = Object.keys(pkg.optionalDependencies).sort();
  if (JSON.stringify(expected) !== JSON.stringify(listed)) {
    die(`optionalDependencies ${listed} differ from the platforms ${expected}`);
  }
  const launcher = fs.readFileSync(path.join(src, "bin", "mcpcheck.js"), "utf8");
  for (const name of expected) {
    if (!launcher.includes(`"${name}"`)) die(`bin/mcpcheck.js does not know ${name}`);
  }
  // Exact versions: the launcher and the binary come from the same release.
  for (const name of listed) pkg.optionalDependencies[name] = version;
  writeJson(path.join(dest, "package.json"), pkg);
  fs.mkdirSync(path.join(dest, "bin"));
  fs.copyFileSync(path.join(src, "bin", "mcpcheck.js"), path.join(dest, "bin", "mcpcheck.js"));
  fs.chmodSync(path.join(dest, "bin", "mcpcheck.js"), 0o755);
  fs.copyFileSync(path.join(src, "README.md"), path.join(dest, "README.md"));
  return dest;
}

function buildPlatform(out, version, opts) {
  let key = opts.platform;
  if (opts.target) {
    key = Object.keys(PLATFORMS).find((k) => PLATFORMS[k].target === opts.target);
    if (!key) die(`no npm platform for the target ${opts.target}`);
  }
  key = key || `${process.platform}-${process.arch}`;
  const platform = PLATFORMS[key];
  if (!platform) die(`unknown platform ${key} (known: ${Object.keys(PLATFORMS).join(", ")})`);
  if (!opts.binary) die("platform needs --binary PATH");
  const binary = path.resolve(opts.binary);
  if (!fs.statSync(binary, { throwIfNoEntry: false })?.isFile()) die(`no binary at ${binary}`);

  // On its own platform the binary can answer for itself: a stale build of another version
  // must not be packaged under this one.
  if (key === `${process.platform}-${process.arch}`) {
    const said = execFileSync(binary, ["--version"], { encoding: "utf8" }).trim();
    if (said.split(/\s+/).pop() !== version) {
      die(`${binary} says "${said}", but harness/Cargo.toml is at ${version}`);
    }
  }

  const name = `@mcpcheck/cli-${key}`;
  const dest = freshDir(path.join(out, `cli-${key}`));
  writeJson(path.join(dest, "package.json"), {
    name,
    version,
    description: `The mcpcheck binary for ${platform.label}; installed by the mcpcheck package, which runs it`,
    homepage: "https://github.com/mcpcheck/mcpcheck",
    repository: { type: "git", url: "git+https://github.com/mcpcheck/mcpcheck.git" },
    license: "MIT OR Apache-2.0",
    os: [platform.os],
    cpu: [platform.cpu],
    files: ["bin/mcpcheck"],
    // Yarn's Plug'n'Play must put the binary on disk to execute it.
    preferUnplugged: true,
    // A scoped package is private by default on its first publish.
    publishConfig: { access: "public" },
  });
  fs.writeFileSync(
    path.join(dest, "README.md"),
    `# ${name}\n\nThe \`mcpcheck\` binary for ${platform.label} (Rust target \`${platform.target}\`). ` +
      "Do not install this package directly: install `mcpcheck`, which depends on it and runs it.\n\n" +
      "https://github.com/mcpcheck/mcpcheck\n",
  );
  fs.mkdirSync(path.join(dest, "bin"));
  fs.copyFileSync(binary, path.join(dest, "bin", "mcpcheck"));
  // npm pack keeps the executable bit, and nothing else would set it on install.
  fs.chmodSync(path.join(dest, "bin", "mcpcheck"), 0o755);
  return dest;
}

const { command, opts } = parseArgs(process.argv.slice(2));
if (!opts.out) die("usage: build.js main --out DIR | build.js platform --binary PATH [--platform KEY | --target TRIPLE] --out DIR");
const version = crateVersion();
let dest;
if (command === "main") {
  dest = buildMain(path.resolve(opts.out), version);
} else if (command === "platform") {
  dest = buildPlatform(path.resolve(opts.out), version, opts);
} else {
  die(`unknown command ${JSON.stringify(command)} (main, platform)`);
}
process.stdout.write(`${dest}\n`);
