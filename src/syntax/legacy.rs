//! Python 2 syntax that tree-sitter-python accepts but Python 3 does not
//! (`docs/rules.md`, "Legacy Python 2 files"): a `print` or `exec`
//! statement, a backtick expression, an octal literal written `0755`, a `ur`
//! string prefix, the `<>` operator. A file holding any is not Python 3:
//! nothing is reported from it and no fix touches it.

use super::tree::KindName;
use tree_sitter::Node;

/// The bytes without which a text holds none of the forms (a quick look
/// before a parse): a backtick outside strings and comments, `<>`, a
/// `print`/`exec` statement start, a `ur` prefix, or a number written
/// `0755` or `10L`, each at a token's start.
pub fn may_hold(src: &[u8]) -> bool {
    thread_local! {
        /// The blanked copy, in memory this thread reuses: most files
        /// that reach it are whole modules, copied once each.
        static CODE: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
    }
    if !bytes_may_hold(src) {
        return false;
    }
    CODE.with(|code| {
        let mut code = code.borrow_mut();
        code_only(src, &mut code);
        let held = code_may_hold(src, &code);
        if code.capacity() > 16 << 20 {
            // A huge file's copy is not kept for the rest of the run.
            *code = Vec::new();
        }
        held
    })
}

/// [`may_hold`]'s look at `src`, given `code`, its bytes with strings and
/// comments blanked ([`code_only`]).
fn code_may_hold(original: &[u8], code: &[u8]) -> bool {
    let src = code;
    let word = |b: u8| b.is_ascii_alphanumeric() || b == b'_' || b >= 0x80;
    let starts_token = |at: usize| at == 0 || !(word(src[at - 1]) || src[at - 1] == b'.');
    let statement = |at: usize, len: usize| {
        let line_start = src[..at].iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
        src[line_start..at].iter().all(|b| matches!(b, b' ' | b'\t'))
            && matches!(original.get(at + len), Some(b' ' | b'\t'))
            && original[at + len..]
                .iter()
                .find(|b| !matches!(b, b' ' | b'\t'))
                .is_some_and(|&b| !b"(=.,):;\n\r".contains(&b))
    };
    let keyword = |k: &[u8]| memchr::memmem::find_iter(src, k).any(|at| statement(at, k.len()));
    let digits = |at: usize| {
        let n = src[at..].iter().take_while(|b| b.is_ascii_digit()).count();
        let octal = src[at] == b'0' && n > 1 && src[at..at + n].iter().any(|&b| b != b'0');
        let long =
            n > 0 && matches!(src.get(at + n), Some(b'l' | b'L')) && !src.get(at + n + 1).is_some_and(|&b| word(b));
        octal || long
    };
    // A number starting a token starts its run of digits: `0755` is found
    // from its `0`, `10L` from its `L`.
    let long_at = |l: usize| {
        let n = src[..l].iter().rev().take_while(|b| b.is_ascii_digit()).count();
        n > 0 && starts_token(l - n) && digits(l - n)
    };
    memchr::memmem::find(src, b"<>").is_some()
        || keyword(b"print")
        || keyword(b"exec")
        || memchr::memchr2_iter(b'r', b'R', original).any(|r| {
            r > 0
                && matches!(original[r - 1], b'u' | b'U')
                && matches!(original.get(r + 1), Some(b'"' | b'\''))
                && starts_token(r - 1)
        })
        || memchr::memchr_iter(b'0', src).any(|at| starts_token(at) && digits(at))
        || memchr::memchr2_iter(b'l', b'L', src).any(long_at)
        || memchr::memchr(b'`', src).is_some()
}

/// The same look at the raw bytes, strings and comments not told apart
/// (so it says yes wherever [`may_hold`]'s look at the code would, and
/// more): most files have none of the bytes, and are passed by without
/// the copy that blanks their strings.
fn bytes_may_hold(src: &[u8]) -> bool {
    let word = |b: u8| b.is_ascii_alphanumeric() || b == b'_' || b >= 0x80;
    // Where code starts a token, the byte before is no name byte and no
    // `.` in the raw bytes too (a string before it ends with a quote).
    let starts_token = |at: usize| at == 0 || !(word(src[at - 1]) || src[at - 1] == b'.');
    // `print x`: the keyword, blanks, then no byte that makes it a name.
    let keyword = |k: &[u8]| {
        memchr::memmem::find_iter(src, k).any(|at| {
            let rest = &src[at + k.len()..];
            matches!(rest.first(), Some(b' ' | b'\t'))
                && rest.iter().find(|b| !matches!(b, b' ' | b'\t')).is_some_and(|&b| !b"(=.,):;\n\r".contains(&b))
        })
    };
    memchr::memchr(b'`', src).is_some()
        || memchr::memmem::find(src, b"<>").is_some()
        || keyword(b"print")
        || keyword(b"exec")
        || memchr::memchr2_iter(b'r', b'R', src)
            .any(|at| at > 0 && matches!(src[at - 1], b'u' | b'U') && matches!(src.get(at + 1), Some(b'"' | b'\'')))
        || memchr::memchr_iter(b'0', src).any(|at| src.get(at + 1).is_some_and(u8::is_ascii_digit) && starts_token(at))
        || memchr::memchr2_iter(b'l', b'L', src)
            .any(|at| at > 0 && src[at - 1].is_ascii_digit() && !src.get(at + 1).is_some_and(|&b| word(b)))
}

/// `src` with the bytes of its comments and string literals blanked
/// (newlines kept), in `out`: what the byte look reads as code.
fn code_only(src: &[u8], out: &mut Vec<u8>) {
    out.clear();
    out.extend_from_slice(src);
    for span in super::literal::quoted_spans(src).0 {
        let (super::literal::Quoted::Comment(r) | super::literal::Quoted::String(r)) = span;
        for b in &mut out[r] {
            if *b != b'\n' {
                *b = b' ';
            }
        }
    }
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
    match node.kind_name() {
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
        first_legacy_node(tree.root_node(), src).map(|n| (n.start_position().row + 1, n.kind_name().to_owned()))
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
            ("s = (UR'x')\n", 1),
            ("n = (1 +\n   7L)\n", 2),
            ("m = [00, 0755]\n", 1),
        ] {
            assert!(may_hold(src.as_bytes()), "{src:?}");
            assert!(bytes_may_hold(src.as_bytes()), "{src:?}");
            assert_eq!(legacy(src).map(|l| l.0), Some(line), "{src:?}: {}", parse(src).root_node().to_sexp());
        }
    }

    #[test]
    fn the_byte_look_passes_python_3_by() {
        for src in [
            "x = '2024-01-05'\nprint(x)\nexec(code)\nprint  (x)\nv = 10.05\ny = h1L\n",
            "def f():\n    \"\"\"Use `tool` here.\"\"\"\n    # `x`\n    return 'a`b'\n",
            "s = fur'x'\nprinted = 1\nprint = 2\n",
            "a = x10L + 1\nb = 1.0L\nc = 10Lx\nd = '0755'\ne = x0755\nf = 0\ng = 00\n",
        ] {
            assert!(!may_hold(src.as_bytes()), "{src:?}");
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
