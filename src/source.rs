//! Reading source files: bytes to text, with the byte-order mark set aside so
//! that positions match Python's and can be put back on write.

use std::path::Path;

const BOM: &str = "\u{feff}";

/// A Python source file's text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceText {
    /// The text after any byte-order mark.
    pub text: String,
    /// Whether the file started with a UTF-8 byte-order mark.
    pub bom: bool,
}

impl SourceText {
    /// Decodes file contents. Only UTF-8 is accepted for now; the error says
    /// where decoding failed.
    pub fn decode(bytes: Vec<u8>) -> Result<Self, String> {
        let mut text = String::from_utf8(bytes).map_err(|e| {
            let at = e.utf8_error().valid_up_to();
            format!("not valid UTF-8 (first bad byte at offset {at}); toolshape reads UTF-8 sources")
        })?;
        let bom = text.starts_with(BOM);
        if bom {
            text.drain(..BOM.len());
        }
        Ok(SourceText { text, bom })
    }

    /// Reads and decodes a file.
    pub fn read(path: &Path) -> Result<Self, String> {
        let bytes = std::fs::read(path).map_err(|e| e.to_string())?;
        Self::decode(bytes)
    }

    /// The bytes to write back for `text` (the BOM restored).
    pub fn encode(&self, text: &str) -> Vec<u8> {
        let mut out = Vec::with_capacity(text.len() + 3);
        if self.bom {
            out.extend_from_slice(BOM.as_bytes());
        }
        out.extend_from_slice(text.as_bytes());
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bom_is_set_aside_and_restored() {
        let src = SourceText::decode(b"\xef\xbb\xbfx = 1\n".to_vec()).unwrap();
        assert_eq!(src.text, "x = 1\n");
        assert_eq!(src.encode("y\n"), b"\xef\xbb\xbfy\n");
    }

    #[test]
    fn invalid_utf8_names_the_offset() {
        let err = SourceText::decode(b"ab\xffc".to_vec()).unwrap_err();
        assert!(err.contains("offset 2"), "{err}");
    }
}
