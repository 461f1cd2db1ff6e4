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
        text_of(&bytes)?;
        // SAFETY: `text_of` has just validated these bytes as UTF-8.
        let mut text = unsafe { String::from_utf8_unchecked(bytes) };
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

/// The text of file contents, borrowed: validated as UTF-8 (with SIMD: most
/// of a large tree's bytes pass through here) and without a BOM.
pub fn text_of(bytes: &[u8]) -> Result<&str, String> {
    match simdutf8::basic::from_utf8(bytes) {
        Ok(text) => Ok(text.strip_prefix(BOM).unwrap_or(text)),
        Err(_) => {
            let at = simdutf8::compat::from_utf8(bytes).err().map_or(0, |e| e.valid_up_to());
            Err(format!("not valid UTF-8 (first bad byte at offset {at}); toolshape reads UTF-8 sources"))
        }
    }
}

/// Reads a whole file into `buffer` with plain `read` calls (no size query
/// or seek per file: those add up over tens of thousands of files) and
/// returns how many bytes it holds. The buffer stays initialized at its full
/// length between calls, so bytes are zeroed only when it grows.
fn read_all(path: &Path, buffer: &mut Vec<u8>) -> std::io::Result<usize> {
    use std::io::Read;
    let mut file = std::fs::File::open(path)?;
    let mut filled = 0;
    loop {
        if buffer.len() - filled < 16 << 10 {
            let grown = (buffer.len() * 2).max(64 << 10);
            buffer.resize(grown, 0);
        }
        match file.read(&mut buffer[filled..]) {
            Ok(0) => return Ok(filled),
            Ok(n) => filled += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
}

/// Runs `f` on the text of the file at `path`, read into a buffer this
/// thread reuses (no allocation per file on the hot path).
pub fn with_text<T>(path: &Path, f: impl FnOnce(&str) -> T) -> Result<T, String> {
    with_bytes(path, |bytes| text_of(bytes).map(f))?
}

/// Runs `f` on the contents of the file at `path`, read into a buffer this
/// thread reuses.
pub fn with_bytes<T>(path: &Path, f: impl FnOnce(&[u8]) -> T) -> Result<T, String> {
    thread_local! {
        static BUFFER: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
    }
    BUFFER.with(|buffer| {
        let mut buffer = buffer.borrow_mut();
        let len = read_all(path, &mut buffer).map_err(|e| e.to_string())?;
        let result = f(&buffer[..len]);
        if buffer.len() > 16 << 20 {
            // Do not keep a huge file's buffer alive for the rest of the run.
            *buffer = Vec::new();
        }
        Ok(result)
    })
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
