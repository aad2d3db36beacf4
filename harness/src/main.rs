//! The `mcpcheck` binary: arguments in, exit code out. Everything else is in the library
//! (`mcpcheck::cli` parses and dispatches; see README's "Layout").

fn main() -> std::process::ExitCode {
    mcpcheck::cli::main()
}
