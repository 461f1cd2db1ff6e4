//! Reading source files: bytes to text, with the byte-order mark set aside so
//! that positions match Python's and can be put back on write. UTF-8 is the
//! default; a PEP 263 coding cookie naming a single-byte, ASCII-compatible
//! encoding (latin-1, cp1252, koi8-r...) is honoured, and such a file is
//! written back in its encoding, every byte outside the edits unchanged.

use std::borrow::Cow;
use std::path::Path;

use encoding_rs::Encoding;

use crate::semantic::project::SharedText;

const BOM: &str = "\u{feff}";

/// A Python source file's text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceText {
    /// The text after any byte-order mark.
    pub text: String,
    /// Whether the file started with a UTF-8 byte-order mark.
    pub bom: bool,
    /// The encoding a coding cookie declares, when it is not UTF-8.
    pub encoding: Option<&'static Encoding>,
}

impl SourceText {
    /// Decodes file contents; the error says why they cannot be read.
    pub fn decode(bytes: Vec<u8>) -> Result<Self, String> {
        reject_nul(&bytes)?;
        if let Some(encoding) = declared_encoding(&bytes)? {
            let text = decode_single_byte(encoding, &bytes)?;
            return Ok(SourceText { text, bom: false, encoding: Some(encoding) });
        }
        text_of(&bytes)?;
        // SAFETY: `text_of` has just validated these bytes as UTF-8.
        let mut text = unsafe { String::from_utf8_unchecked(bytes) };
        let bom = text.starts_with(BOM);
        if bom {
            text.drain(..BOM.len());
        }
        Ok(SourceText { text, bom, encoding: None })
    }

    /// Reads and decodes a file.
    pub fn read(path: &Path) -> Result<Self, String> {
        let bytes = std::fs::read(path).map_err(|e| e.to_string())?;
        Self::decode(bytes)
    }

    /// The bytes to write back for `text`: the BOM restored, or the
    /// declared encoding applied.
    pub fn encode(&self, text: &str) -> Result<Vec<u8>, String> {
        if let Some(encoding) = self.encoding {
            let (bytes, _, unmappable) = encoding.encode(text);
            if unmappable {
                return Err(format!("the fixed text cannot be written in {}; not written", encoding.name()));
            }
            return Ok(bytes.into_owned());
        }
        let mut out = Vec::with_capacity(text.len() + 3);
        if self.bom {
            out.extend_from_slice(BOM.as_bytes());
        }
        out.extend_from_slice(text.as_bytes());
        Ok(out)
    }
}

/// The text of file contents: validated as UTF-8 (with SIMD: most of a large
/// tree's bytes pass through here) and borrowed, without a BOM; or decoded
/// from the single-byte encoding a coding cookie declares.
pub fn text_of(bytes: &[u8]) -> Result<Cow<'_, str>, String> {
    reject_nul(bytes)?;
    if let Some(encoding) = declared_encoding(bytes)? {
        return decode_single_byte(encoding, bytes).map(Cow::Owned);
    }
    match simdutf8::basic::from_utf8(bytes) {
        Ok(text) => Ok(Cow::Borrowed(text.strip_prefix(BOM).unwrap_or(text))),
        Err(_) => {
            let at = simdutf8::compat::from_utf8(bytes).err().map_or(0, |e| e.valid_up_to());
            Err(format!("not valid UTF-8 (first bad byte at offset {at}) and no coding cookie names another encoding"))
        }
    }
}

/// Python refuses source with a NUL byte ("source code cannot contain null
/// bytes"), and so does toolshape: such a file is reported, never edited.
fn reject_nul(bytes: &[u8]) -> Result<(), String> {
    match memchr::memchr(0, bytes) {
        Some(at) => Err(format!("contains a NUL byte (offset {at}), which Python source cannot; skipped")),
        None => Ok(()),
    }
}

fn decode_single_byte(encoding: &'static Encoding, bytes: &[u8]) -> Result<String, String> {
    encoding
        .decode_without_bom_handling_and_without_replacement(bytes)
        .map(Cow::into_owned)
        .ok_or_else(|| format!("not valid {}", encoding.name()))
}

/// The encoding a PEP 263 coding cookie declares, when it is not UTF-8: on
/// the first line, or on the second when the first is blank or a comment.
/// An encoding toolshape cannot edit byte for byte is an error.
pub fn declared_encoding(bytes: &[u8]) -> Result<Option<&'static Encoding>, String> {
    let Some(label) = coding_cookie(bytes) else { return Ok(None) };
    let normalized = label.to_ascii_lowercase().replace('_', "-");
    let normalized = match normalized.as_str() {
        "latin-1" | "iso-latin-1" | "l1" => "latin1",
        "utf8" | "utf-8-sig" => "utf-8",
        other => other,
    };
    let encoding = Encoding::for_label(normalized.as_bytes())
        .ok_or_else(|| format!("unknown encoding {label:?} in the coding cookie"))?;
    if encoding == encoding_rs::UTF_8 {
        return Ok(None);
    }
    if !encoding.is_single_byte() {
        return Err(format!(
            "the coding cookie names {label:?}; toolshape reads UTF-8 and single-byte ASCII-compatible encodings"
        ));
    }
    Ok(Some(encoding))
}

/// The label of a coding cookie in the first two lines, if there is one.
fn coding_cookie(bytes: &[u8]) -> Option<String> {
    let head = &bytes[..bytes.len().min(1024)];
    let head = head.strip_prefix(BOM.as_bytes()).unwrap_or(head);
    let mut lines = head.split(|&b| b == b'\n' || b == b'\r').filter(|l| !l.is_empty()).take(2);
    let mut first = true;
    loop {
        let line = lines.next()?;
        let trimmed = line.trim_ascii_start();
        if let Some(comment) = trimmed.strip_prefix(b"#") {
            if let Some(label) = cookie_label(comment) {
                return Some(label);
            }
        } else if !trimmed.is_empty() || !first {
            return None;
        }
        first = false;
    }
}

/// `coding[:=]<spaces><label>` within a comment.
fn cookie_label(comment: &[u8]) -> Option<String> {
    let at = comment.windows(6).position(|w| w == b"coding")?;
    let rest = comment[at + 6..].strip_prefix(b":").or_else(|| comment[at + 6..].strip_prefix(b"="))?;
    let rest = rest.trim_ascii_start();
    let label: Vec<u8> =
        rest.iter().copied().take_while(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.')).collect();
    (!label.is_empty()).then(|| String::from_utf8(label).expect("ASCII"))
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
            Ok(0) => {
                crate::stats::read(filled);
                return Ok(filled);
            }
            Ok(n) => filled += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
}

/// The texts of files the project passes read, kept so that a later pass
/// does not read a file again (TS005 reads every file of a project with
/// tools, the reads pass the same files after it), up to a budget of
/// bytes: past it, a file is read again rather than held.
#[derive(Debug)]
pub struct TextCache {
    texts: std::sync::RwLock<foldhash::HashMap<std::path::PathBuf, SharedText>>,
    /// Bytes that may still be kept.
    room: std::sync::atomic::AtomicUsize,
}

impl TextCache {
    /// Bytes of text kept at most: a dense tree of Strands packages holds
    /// about 11 MB of Python.
    pub const BUDGET: usize = 64 << 20;
    /// Bytes of the checked files' texts that the first phase of a run
    /// keeps for the project passes ([`TextCache::overlay`]), which read
    /// every file of a project with findings: the dense tree's 11 MB.
    pub const SEEDED: usize = 16 << 20;
    /// Checked files above which the first phase keeps no text: a run over
    /// a whole environment (17k files) has few findings and its passes read
    /// few files again, so keeping would cost time and memory for nothing.
    pub const SEEDED_FILES: usize = 2048;

    pub fn new(budget: usize) -> Self {
        TextCache { texts: Default::default(), room: std::sync::atomic::AtomicUsize::new(budget) }
    }

    /// The text of the file at `path` ([`with_text`]), from the cache when a
    /// pass read it before; `None` when it cannot be read.
    pub fn text(&self, path: &Path) -> Option<SharedText> {
        use std::sync::atomic::Ordering;
        if let Ok(texts) = self.texts.read()
            && let Some(text) = texts.get(path)
        {
            return Some(text.clone());
        }
        let text: SharedText = with_text(path, |t| SharedText::from(t)).ok()?;
        let kept =
            self.room.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |room| room.checked_sub(text.len())).is_ok();
        if kept && let Ok(mut texts) = self.texts.write() {
            texts.insert(path.to_path_buf(), text.clone());
        }
        Some(text)
    }

    /// Makes room for `files` more texts at once (the first phase's, which
    /// would otherwise grow the map, and hash every path again, ten times).
    pub fn reserve(&self, files: usize) {
        if let Ok(mut texts) = self.texts.write() {
            texts.reserve(files);
        }
    }

    /// Puts `text` in place of the file at `path` for the rest of the run,
    /// whatever the budget: the text the first phase read, or the source
    /// read from stdin under that name.
    pub fn overlay(&self, path: &Path, text: SharedText) {
        if let Ok(mut texts) = self.texts.write() {
            texts.insert(path.to_path_buf(), text);
        }
    }
}

impl Default for TextCache {
    fn default() -> Self {
        TextCache::new(TextCache::BUDGET)
    }
}

/// Runs `f` on the text of the file at `path`, read into a buffer this
/// thread reuses (no allocation per file on the hot path).
pub fn with_text<T>(path: &Path, f: impl FnOnce(&str) -> T) -> Result<T, String> {
    with_bytes(path, |bytes| text_of(bytes).map(|text| f(&text)))?
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
    fn a_text_cache_reads_a_file_once_within_its_budget() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("m.py");
        std::fs::write(&path, "x = 1\n").unwrap();
        let (kept, over) = (TextCache::new(100), TextCache::new(3));
        assert_eq!(kept.text(&path).as_deref(), Some("x = 1\n"));
        assert_eq!(over.text(&path).as_deref(), Some("x = 1\n"));
        // Changed on disk: the kept text is the one read; past the budget,
        // the file is read again.
        std::fs::write(&path, "x = 2\n").unwrap();
        assert_eq!(kept.text(&path).as_deref(), Some("x = 1\n"));
        assert_eq!(over.text(&path).as_deref(), Some("x = 2\n"));
        assert_eq!(kept.text(&dir.path().join("missing.py")), None);
    }

    #[test]
    fn bom_is_set_aside_and_restored() {
        let src = SourceText::decode(b"\xef\xbb\xbfx = 1\n".to_vec()).unwrap();
        assert_eq!(src.text, "x = 1\n");
        assert_eq!(src.encode("y\n").unwrap(), b"\xef\xbb\xbfy\n");
    }

    #[test]
    fn nul_bytes_are_refused_like_python_does() {
        let err = SourceText::decode(b"x = 1\n# \0\n".to_vec()).unwrap_err();
        assert!(err.contains("NUL byte (offset 8)"), "{err}");
        assert!(text_of(b"\0").is_err());
    }

    #[test]
    fn coding_cookies_follow_pep_263() {
        let latin = b"# -*- coding: latin-1 -*-\nx = '\xe9'\n".to_vec();
        let src = SourceText::decode(latin.clone()).unwrap();
        assert_eq!(src.text, "# -*- coding: latin-1 -*-\nx = '\u{e9}'\n");
        assert_eq!(src.encode(&src.text).unwrap(), latin, "bytes round-trip");
        assert!(
            SourceText::decode(b"#!/usr/bin/env python\n# vim: set fileencoding=koi8-r :\nx = '\xc1'\n".to_vec())
                .is_ok()
        );
        // A cookie on line two counts only after a blank or comment line.
        assert!(SourceText::decode(b"x = 1\n# coding: latin-1\ny = '\xe9'\n".to_vec()).is_err());
        let err = SourceText::decode(b"# coding: shift_jis\nx = 1\n".to_vec()).unwrap_err();
        assert!(err.contains("single-byte"), "{err}");
        assert!(SourceText::decode(b"# coding: utf-8\nx = '\xe9'\n".to_vec()).is_err());
        assert_eq!(declared_encoding(b"# coding=cp1252\n").unwrap().unwrap().name(), "windows-1252");
    }

    #[test]
    fn invalid_utf8_names_the_offset() {
        let err = SourceText::decode(b"ab\xffc".to_vec()).unwrap_err();
        assert!(err.contains("offset 2"), "{err}");
    }
}
