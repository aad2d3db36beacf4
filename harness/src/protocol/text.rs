//! Cutting server text down for a report: one way, everywhere.
//!
//! Whatever a server sends may be megabytes long or cut inside a UTF-8 sequence; every
//! message, finding and transcript view shortens it here, on a char boundary, and says how
//! long the original was, so a reader can tell a short value from a cut one.

/// `text` cut to at most `max` bytes (on a char boundary), with the original length noted
/// when anything was cut: `abc… (1234 bytes)`.
pub fn clip(text: &str, max: usize) -> String {
    if text.len() <= max {
        text.to_owned()
    } else {
        format!(
            "{}… ({} bytes)",
            &text[..text.floor_char_boundary(max)],
            text.len()
        )
    }
}

/// [`clip`], for bytes that may not be UTF-8 (decoded lossily first).
pub fn clip_bytes(bytes: &[u8], max: usize) -> String {
    let text = String::from_utf8_lossy(bytes);
    if text.len() <= max {
        text.into_owned()
    } else {
        format!(
            "{}… ({} bytes)",
            &text[..text.floor_char_boundary(max)],
            bytes.len()
        )
    }
}

/// `text` as a Rust-style quoted string (escapes visible), cut like [`clip`].
pub fn quote(text: &str, max: usize) -> String {
    if text.len() <= max {
        format!("{text:?}")
    } else {
        format!(
            "{:?}… ({} bytes)",
            &text[..text.floor_char_boundary(max)],
            text.len()
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_text_is_kept_whole() {
        assert_eq!(clip("abc", 3), "abc");
        assert_eq!(quote("a\"b", 10), "\"a\\\"b\"");
    }

    #[test]
    fn long_text_is_cut_on_a_char_boundary_and_says_its_length() {
        // "é" is two bytes: a cut at 2 would split it.
        assert_eq!(clip("aéb", 2), "a… (4 bytes)");
        assert_eq!(quote("aéb", 2), "\"a\"… (4 bytes)");
        assert_eq!(clip_bytes(b"ab\xffcd", 2), "ab… (5 bytes)");
    }
}
