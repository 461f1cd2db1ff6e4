//! Project settings read from the nearest `pyproject.toml`: for now the line
//! length (`[tool.ruff]`, then `[tool.black]`), which decides when a rewrite
//! explodes a collection onto several lines.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// Black's and ruff's default.
pub const DEFAULT_LINE_LENGTH: usize = 88;

/// Finds the line length for files, caching one answer per folder.
#[derive(Default)]
pub struct LineLengths {
    cache: Mutex<HashMap<PathBuf, usize>>,
}

impl LineLengths {
    /// The line length that applies to `file`.
    pub fn for_file(&self, file: &Path) -> usize {
        let dir = file.parent().map(Path::to_path_buf).unwrap_or_default();
        let dir = std::fs::canonicalize(if dir.as_os_str().is_empty() { Path::new(".") } else { &dir }).unwrap_or(dir);
        if let Some(&n) = self.cache.lock().expect("cache lock").get(&dir) {
            return n;
        }
        let n = dir.ancestors().find_map(|d| read_pyproject(&d.join("pyproject.toml"))).unwrap_or(DEFAULT_LINE_LENGTH);
        self.cache.lock().expect("cache lock").insert(dir, n);
        n
    }
}

/// The line length a `pyproject.toml` sets, if it exists and sets one.
fn read_pyproject(path: &Path) -> Option<usize> {
    let text = std::fs::read_to_string(path).ok()?;
    line_length_in(&text)
}

/// The line length set in pyproject text: `[tool.ruff]` wins over
/// `[tool.black]`.
pub fn line_length_in(pyproject: &str) -> Option<usize> {
    let value: toml::Table = pyproject.parse().ok()?;
    let tool = value.get("tool")?.as_table()?;
    ["ruff", "black"].iter().find_map(|name| {
        let n = tool.get(*name)?.get("line-length")?.as_integer()?;
        usize::try_from(n).ok().filter(|&n| n > 0)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ruff_wins_over_black() {
        assert_eq!(line_length_in("[tool.black]\nline-length = 100\n[tool.ruff]\nline-length = 120\n"), Some(120));
        assert_eq!(line_length_in("[tool.black]\nline-length = 100\n"), Some(100));
        assert_eq!(line_length_in("[project]\nname = 'x'\n"), None);
    }

    #[test]
    fn nearest_pyproject_applies() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("pyproject.toml"), "[tool.ruff]\nline-length = 60\n").unwrap();
        std::fs::create_dir(dir.path().join("pkg")).unwrap();
        let lengths = LineLengths::default();
        assert_eq!(lengths.for_file(&dir.path().join("pkg/a.py")), 60);
    }
}
