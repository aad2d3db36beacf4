//! Cutting server text down for a report: one way, everywhere.
//!
//! Whatever a server sends may be megabytes long or cut inside a UTF-8 sequence; every
//! message, finding and transcript view shortens it here, on a char boundary. [`clip`] says
//! how long the original was, so a reader can tell a short value from a cut one;
//! [`clip_marked`] is the same cut with another [`Mark`], for the places whose wording
//! differs. (YAML escaping of reproducers, `fuzz/repro.rs`, is a quoting of its own.)

use std::borrow::Cow;

/// How a cut is marked after the part kept.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mark {
    /// `abc… (1234 bytes)`: the original length ([`clip`], [`quote`]).
    Length,
    /// `abc… (1234 bytes in all)`: the original length (the HTML report's frames).
    LengthInAll,
    /// `abc… (1231 more bytes not kept)`: the length left out (transcript entries).
    LeftOut,
    /// `abc…`: no length (a short description inside a sentence).
    Ellipsis,
    /// `abc...`: no length, in ASCII (the authorization checks' excerpts).
    Dots,
}

impl Mark {
    /// What follows a cut that kept `kept` of `total` bytes.
    fn after(self, kept: usize, total: usize) -> String {
        match self {
            Mark::Length => format!("… ({total} bytes)"),
            Mark::LengthInAll => format!("… ({total} bytes in all)"),
            Mark::LeftOut => format!("… ({} more bytes not kept)", total - kept),
            Mark::Ellipsis => "…".to_owned(),
            Mark::Dots => "...".to_owned(),
        }
    }
}

/// The start of `text` kept when it is longer than `max` bytes (cut on a char boundary at
/// or below `max`); `None` when it fits.
fn kept(text: &str, max: usize) -> Option<&str> {
    (text.len() > max).then(|| &text[..text.floor_char_boundary(max)])
}

/// [`clip_marked`] where the original was `total` bytes long (more or less than `text`
/// when `text` is a lossy decoding).
fn clip_counted(text: Cow<'_, str>, max: usize, total: usize, mark: Mark) -> String {
    match kept(&text, max) {
        None => text.into_owned(),
        Some(head) => format!("{head}{}", mark.after(head.len(), total)),
    }
}

/// `text` cut to at most `max` bytes (on a char boundary), the cut marked as `mark` says
/// (an owned `text` that fits is returned as it is, not copied).
pub fn clip_marked<'a>(text: impl Into<Cow<'a, str>>, max: usize, mark: Mark) -> String {
    let text = text.into();
    let total = text.len();
    clip_counted(text, max, total, mark)
}

/// `text` cut to at most `max` bytes (on a char boundary), with the original length noted
/// when anything was cut: `abc… (1234 bytes)`.
pub fn clip(text: &str, max: usize) -> String {
    clip_marked(text, max, Mark::Length)
}

/// [`clip`], for bytes that may not be UTF-8 (decoded lossily first; the length noted is
/// that of the bytes).
pub fn clip_bytes(bytes: &[u8], max: usize) -> String {
    clip_counted(
        String::from_utf8_lossy(bytes),
        max,
        bytes.len(),
        Mark::Length,
    )
}

/// `text` as a Rust-style quoted string (escapes visible), cut like [`clip`].
pub fn quote(text: &str, max: usize) -> String {
    match kept(text, max) {
        None => format!("{text:?}"),
        Some(head) => format!("{head:?}{}", Mark::Length.after(head.len(), text.len())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_text_is_kept_whole() {
        assert_eq!(clip("abc", 3), "abc");
        assert_eq!(quote("a\"b", 10), "\"a\\\"b\"");
        assert_eq!(clip_marked("abc", 3, Mark::Dots), "abc");
    }

    #[test]
    fn long_text_is_cut_on_a_char_boundary_and_says_its_length() {
        // "é" is two bytes: a cut at 2 would split it.
        assert_eq!(clip("aéb", 2), "a… (4 bytes)");
        assert_eq!(quote("aéb", 2), "\"a\"… (4 bytes)");
        assert_eq!(clip_bytes(b"ab\xffcd", 2), "ab… (5 bytes)");
    }

    #[test]
    fn each_mark_reads_as_its_place_needs() {
        let text = "abcdef";
        let cut = |mark| clip_marked(text, 4, mark);
        assert_eq!(cut(Mark::Length), "abcd… (6 bytes)");
        assert_eq!(cut(Mark::LengthInAll), "abcd… (6 bytes in all)");
        assert_eq!(cut(Mark::LeftOut), "abcd… (2 more bytes not kept)");
        assert_eq!(cut(Mark::Ellipsis), "abcd…");
        assert_eq!(cut(Mark::Dots), "abcd...");
    }
}
