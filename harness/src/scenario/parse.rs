//! Placeholder: the YAML parser lands here.
