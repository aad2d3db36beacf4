//! What the property tests (the cargo-fuzz targets' stable twins) share.

use std::fmt;

/// A byte stream split into reads, under a frame limit. `Debug` prints a reproducer to
/// paste into a `mod regressions` test.
#[derive(Clone)]
pub struct Case {
    pub max_frame: usize,
    pub chunks: Vec<Vec<u8>>,
}

impl fmt::Debug for Case {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "\nlet max_frame = {};\nlet chunks: Vec<Vec<u8>> = vec![",
            self.max_frame
        )?;
        for chunk in &self.chunks {
            let text: String = chunk
                .iter()
                .flat_map(|&b| std::ascii::escape_default(b))
                .map(char::from)
                .collect();
            writeln!(f, "    b\"{text}\".to_vec(),")?;
        }
        write!(f, "];")
    }
}

/// The twins' proptest configuration: `cases` per run, and failures persisted beside the
/// test's source (`tests/it/NAME.proptest-regressions`). proptest's default would look for
/// the nearest `main.rs` up the tree, find `tests/it/main.rs`, and use
/// `tests/proptest-regressions/NAME.txt` instead.
pub fn config(cases: u32) -> proptest::test_runner::Config {
    proptest::test_runner::Config {
        cases,
        failure_persistence: Some(Box::new(
            proptest::test_runner::FileFailurePersistence::WithSource("proptest-regressions"),
        )),
        ..proptest::test_runner::Config::default()
    }
}
