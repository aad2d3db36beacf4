//! How core types appear on the command line: clap's view of them lives here, at the CLI
//! edge, so the library's types carry no clap derives.

use clap::builder::PossibleValue;

use crate::outcome::{FailOn, ToolPolicy};
use crate::scenario::official::Profile;

impl clap::ValueEnum for ToolPolicy {
    fn value_variants<'a>() -> &'a [Self] {
        &[ToolPolicy::None, ToolPolicy::Readonly, ToolPolicy::All]
    }

    fn to_possible_value(&self) -> Option<PossibleValue> {
        Some(match self {
            ToolPolicy::None => PossibleValue::new("none").help("No `tools/call` at all"),
            ToolPolicy::Readonly => {
                PossibleValue::new("readonly").help("Only tools annotated `readOnlyHint: true`")
            }
            ToolPolicy::All => PossibleValue::new("all")
                .help("Every tool (except `destructiveHint: true` ones, unless allowed)"),
        })
    }
}

impl clap::ValueEnum for FailOn {
    fn value_variants<'a>() -> &'a [Self] {
        &[FailOn::Failure, FailOn::Warning]
    }

    fn to_possible_value(&self) -> Option<PossibleValue> {
        Some(match self {
            FailOn::Failure => PossibleValue::new("failure")
                .help("Only MUST-level findings and failing scenarios fail the run"),
            FailOn::Warning => PossibleValue::new("warning")
                .help("SHOULD-level findings and warning scenarios fail it too"),
        })
    }
}

impl clap::ValueEnum for Profile {
    fn value_variants<'a>() -> &'a [Self] {
        &[Profile::OfficialFixture]
    }

    fn to_possible_value(&self) -> Option<PossibleValue> {
        Some(match self {
            Profile::OfficialFixture => PossibleValue::new("official-fixture").help(
                "Only the scenarios that stand for an official suite scenario (`official:` ids): \
                 what an SDK's CI ran with `@modelcontextprotocol/conformance` against its \
                 fixture server",
            ),
        })
    }
}
