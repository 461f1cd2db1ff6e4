//! Python 2 syntax that tree-sitter-python accepts but Python 3 does not
//! (`docs/rules.md`, "Legacy Python 2 files"): a `print` or `exec`
//! statement, a backtick expression, an octal literal written `0755`, a `ur`
//! string prefix, the `<>` operator. A file holding any is not Python 3:
//! nothing is reported from it and no fix touches it.

use tree_sitter::Node;

/// The bytes without which a text holds none of the forms (a quick look
/// before a parse).
pub fn may_hold(src: &[u8]) -> bool {
    let has = |needle: &[u8]| memchr::memmem::find(src, needle).is_some();
    let pair =
        |first: &[u8], second: &dyn Fn(u8) -> bool| src.windows(2).any(|w| first.contains(&w[0]) && second(w[1]));
    memchr::memchr(b'`', src).is_some()
        || has(b"<>")
        || has(b"print")
        || has(b"exec")
        || pair(b"uU", &|b| b == b'r' || b == b'R')
        || pair(b"0", &|b| b.is_ascii_digit())
        || pair(b"0123456789", &|b| b == b'l' || b == b'L')
}

/// The first node of `root` (of `src`) that is Python 2 syntax, if any.
pub fn first_legacy_node<'t>(root: Node<'t>, src: &str) -> Option<Node<'t>> {
    let mut found = None;
    super::for_each_node(root, |node| {
        if found.is_none() && is_legacy(node, src) {
            found = Some(node);
        }
    });
    found
}

/// Whether `node` itself is Python 2 syntax.
fn is_legacy(node: Node<'_>, src: &str) -> bool {
    let text = || &src[node.byte_range()];
    match node.kind() {
        "print_statement" | "exec_statement" => true,
        "<>" => true,
        "integer" => {
            let t = text();
            let digits = t.trim_end_matches(['l', 'L']);
            // `0755` (and `0L`, `10L`): Python 3 writes `0o755`.
            (digits.len() > 1
                && digits.starts_with('0')
                && digits.bytes().all(|b| b.is_ascii_digit())
                && digits.bytes().any(|b| b != b'0'))
                || (digits.len() < t.len() && digits.bytes().all(|b| b.is_ascii_digit()))
        }
        // tree-sitter reads a backtick expression as a string.
        "string_start" if text().starts_with('`') => true,
        "string_start" => {
            let prefix = text().trim_end_matches(['"', '\'']).to_ascii_lowercase();
            prefix.contains('u') && prefix.contains('r')
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::syntax::parse;

    fn legacy(src: &str) -> Option<(usize, String)> {
        let tree = parse(src);
        first_legacy_node(tree.root_node(), src).map(|n| (n.start_position().row + 1, n.kind().to_owned()))
    }

    #[test]
    fn every_form_is_found() {
        for (src, line) in [
            ("print x\n", 1),
            ("def f():\n    print 'a', 'b'\n", 2),
            ("exec code\n", 1),
            ("x = `1`\n", 1),
            ("if 1 <> 2:\n    pass\n", 1),
            ("m = 0755\n", 1),
            ("n = 10L\n", 1),
            ("s = ur'x'\n", 1),
        ] {
            assert!(may_hold(src.as_bytes()), "{src:?}");
            assert_eq!(legacy(src).map(|l| l.0), Some(line), "{src:?}: {}", parse(src).root_node().to_sexp());
        }
    }

    #[test]
    fn python_3_is_not_legacy() {
        for src in [
            "print(x)\n",
            "print('a', end='')\n",
            "exec(code)\n",
            "z = 00\nm = 0o755\nf = 0.5\ne = 1e10\nj = 0j\n",
            "s = rb'x'\nt = Rb'x'\nu = u'x'\n",
            "x = a < b > c\n",
            "s = '`<>`'\n# print x\n",
            "x = print\ny = exec\n",
        ] {
            assert_eq!(legacy(src), None, "{src:?}: {}", parse(src).root_node().to_sexp());
        }
    }
}
