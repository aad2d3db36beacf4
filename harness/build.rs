//! Embeds the built-in scenario suite (`scenarios/**/*.yaml`) into the binary, so
//! `mcpcheck run` needs no files beside it.
//!
//! The suite lives at the repository's top level, where users find it. `harness/scenarios`
//! is a symlink to it, which `cargo package` follows, so the published crate carries a
//! real copy and `cargo install mcpcheck` embeds the whole suite. Where the symlink is
//! not a directory (a checkout without symlink support) `../scenarios` is read instead.
//! Finding no scenario at all fails the build: a binary without its suite would pass
//! every server.

use std::path::{Path, PathBuf};

fn main() {
    // Read when the script runs, not baked in when it is compiled: a target directory
    // copied from another checkout must still embed this checkout's scenarios.
    let manifest = std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR");
    let manifest = Path::new(&manifest);
    let candidates = [manifest.join("scenarios"), manifest.join("../scenarios")];
    for c in &candidates {
        println!("cargo:rerun-if-changed={}", c.display());
    }
    let Some(root) = candidates.iter().find(|c| c.is_dir()) else {
        panic!(
            "no built-in scenarios: neither {} nor {} is a directory (the crate must carry \
             scenarios/; in the repository, harness/scenarios is a symlink to ../scenarios)",
            candidates[0].display(),
            candidates[1].display()
        );
    };
    let mut files = Vec::new();
    collect(root, &mut files);
    files.sort();
    assert!(
        !files.is_empty(),
        "no built-in scenarios: {} holds no .yaml file",
        root.display()
    );
    let mut out = String::from(
        "/// The built-in scenarios: (path under scenarios/, contents).\npub static BUILTIN: &[(&str, &str)] = &[\n",
    );
    for f in &files {
        println!("cargo:rerun-if-changed={}", f.display());
        let rel = f
            .strip_prefix(root)
            .expect("under the root")
            .to_string_lossy()
            .replace('\\', "/");
        out.push_str(&format!(
            "    ({rel:?}, include_str!({:?})),\n",
            f.canonicalize().expect("file exists")
        ));
    }
    out.push_str("];\n");
    let dest = PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets OUT_DIR"))
        .join("builtin_scenarios.rs");
    std::fs::write(dest, out).expect("writing the embedded suite");
}

fn collect(dir: &Path, out: &mut Vec<PathBuf>) {
    let entries = match std::fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) => panic!("reading the built-in scenarios in {}: {e}", dir.display()),
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            println!("cargo:rerun-if-changed={}", p.display());
            collect(&p, out);
        } else if p.extension().is_some_and(|x| x == "yaml" || x == "yml") {
            out.push(p);
        }
    }
}
