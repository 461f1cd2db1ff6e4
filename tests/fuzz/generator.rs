//! Python sources with tool-result dicts, built from fuzzer choices.

use arbitrary::Arbitrary;

const MAX_DEPTH: usize = 5;
const NAMES: [&str; 6] = ["summary", "frames", "errors", "stats", "payload", "x"];
const EXTRAS: [&str; 8] = ["frames", "errors", "elapsed", "meta", "status ", "Content", "toolUseId2", "json"];

#[derive(Arbitrary, Debug)]
pub struct Program {
    pub crlf: bool,
    pub indent: Indent,
    pub header_comment: bool,
    pub functions: Vec<Function>,
}

#[derive(Arbitrary, Debug, Clone, Copy)]
pub enum Indent {
    Spaces(u8),
    Tab,
}

#[derive(Arbitrary, Debug)]
pub struct Function {
    pub nested_block: bool,
    pub statements: Vec<Statement>,
}

#[derive(Arbitrary, Debug)]
pub enum Statement {
    Return(Dict),
    Assign(u8, Dict),
    CallArg(Dict),
    ListOf(Vec<Dict>),
    Comment(u8),
    Blank,
}

#[derive(Arbitrary, Debug)]
pub struct Dict {
    pub multiline: bool,
    pub trailing_comma: bool,
    pub parens: bool,
    pub entries: Vec<Entry>,
}

#[derive(Arbitrary, Debug)]
pub enum Entry {
    Status(Key, Value),
    Content(Key, Content),
    ToolUseId(Key),
    Extra(Key, u8, Value),
    Spread(u8),
    OwnLineComment(u8),
    TrailingComment(Box<Entry>, u8),
}

#[derive(Arbitrary, Debug)]
pub struct Key {
    pub quote: Quote,
    pub prefix: Prefix,
    pub escape: Option<u8>,
    pub concat: Option<(u8, Quote)>,
    pub parens: bool,
    pub multiline_concat: bool,
}

#[derive(Arbitrary, Debug, Clone, Copy)]
pub enum Quote {
    Double,
    Single,
    TripleDouble,
    TripleSingle,
}

#[derive(Arbitrary, Debug, Clone, Copy)]
pub enum Prefix {
    None,
    LowerR,
    UpperR,
    LowerU,
    UpperU,
    F,
    B,
}

#[derive(Arbitrary, Debug)]
pub enum Content {
    List(bool, Vec<Block>),
    Name(u8),
    Call(u8),
    Tuple(Vec<Block>),
}

#[derive(Arbitrary, Debug)]
pub enum Block {
    Text(Value),
    TextFString(u8),
    Json(bool, Vec<Entry>),
    JsonName(u8),
    Starred(u8),
    Result(Box<Dict>),
    Other(Value),
}

#[derive(Arbitrary, Debug)]
pub enum Value {
    Name(u8),
    Str(u8),
    Num(u16),
    Call(u8, Vec<Value>),
    Dict(Box<Dict>),
    Lambda(u8),
    Conditional(Box<Value>, Box<Value>),
}

struct Out {
    nl: &'static str,
    unit: String,
}

fn pick<'a>(list: &[&'a str], i: u8) -> &'a str {
    list[usize::from(i) % list.len()]
}

impl Quote {
    fn text(self) -> &'static str {
        match self {
            Quote::Double => "\"",
            Quote::Single => "'",
            Quote::TripleDouble => "\"\"\"",
            Quote::TripleSingle => "'''",
        }
    }
}

impl Prefix {
    fn text(self) -> &'static str {
        match self {
            Prefix::None => "",
            Prefix::LowerR => "r",
            Prefix::UpperR => "R",
            Prefix::LowerU => "u",
            Prefix::UpperU => "U",
            Prefix::F => "f",
            Prefix::B => "b",
        }
    }
}

fn escape_char(c: char, how: u8) -> String {
    match how % 4 {
        0 => format!("\\x{:02x}", c as u32),
        1 => format!("\\u{:04x}", c as u32),
        2 => format!("\\{:03o}", c as u32),
        _ => format!("\\U{:08x}", c as u32),
    }
}

impl Key {
    fn literal(&self, word: &str, prefix: Prefix, quote: Quote, escape: Option<u8>) -> String {
        let mut body = String::new();
        for (i, c) in word.chars().enumerate() {
            match escape {
                Some(e) if usize::from(e >> 2) % word.len().max(1) == i => body.push_str(&escape_char(c, e)),
                _ => body.push(c),
            }
        }
        format!("{}{q}{body}{q}", prefix.text(), q = quote.text())
    }

    fn render(&self, word: &str, out: &Out, indent: &str) -> String {
        let text = match self.concat {
            Some((at, second)) if word.len() > 1 => {
                let at = 1 + usize::from(at) % (word.len() - 1);
                let sep = if self.multiline_concat && self.parens { format!("{}{indent}{}", out.nl, out.unit) } else { " ".into() };
                format!(
                    "{}{sep}{}",
                    self.literal(&word[..at], self.prefix, self.quote, self.escape),
                    self.literal(&word[at..], Prefix::None, second, None)
                )
            }
            _ => self.literal(word, self.prefix, self.quote, self.escape),
        };
        if self.parens { format!("({text})") } else { text }
    }
}

impl Value {
    fn render(&self, out: &Out, indent: &str, depth: usize) -> String {
        if depth > MAX_DEPTH {
            return "None".into();
        }
        match self {
            Value::Name(i) => pick(&NAMES, *i).into(),
            Value::Str(i) => pick(&["\"success\"", "'error'", "\"a # not a comment\"", "'''multi\nline'''", "r'\\d'", "\"{\""], *i).into(),
            Value::Num(n) => n.to_string(),
            Value::Call(f, args) => {
                let args: Vec<String> = args.iter().take(3).map(|a| a.render(out, indent, depth + 1)).collect();
                format!("{}({})", pick(&["len", "dict", "str", "obj.method"], *f), args.join(", "))
            }
            Value::Dict(d) => d.render(out, indent, depth + 1),
            Value::Lambda(i) => format!("lambda: {}", pick(&NAMES, *i)),
            Value::Conditional(a, b) => {
                format!("{} if ok else {}", a.render(out, indent, depth + 1), b.render(out, indent, depth + 1))
            }
        }
    }
}

impl Block {
    fn render(&self, out: &Out, indent: &str, depth: usize) -> String {
        if depth > MAX_DEPTH {
            return "None".into();
        }
        match self {
            Block::Text(v) => format!("{{\"text\": {}}}", v.render(out, indent, depth + 1)),
            Block::TextFString(i) => format!("{{\"text\": f\"{{{}}}\"}}", pick(&NAMES, *i)),
            Block::Json(multiline, entries) => {
                let inner = Dict { multiline: *multiline, trailing_comma: true, parens: false, entries: Vec::new() };
                let body = inner.render_entries(entries, out, indent, depth + 1);
                format!("{{\"json\": {body}}}")
            }
            Block::JsonName(i) => format!("{{\"json\": {}}}", pick(&NAMES, *i)),
            Block::Starred(i) => format!("*{}", pick(&NAMES, *i)),
            Block::Result(d) => d.render(out, indent, depth + 1),
            Block::Other(v) => v.render(out, indent, depth + 1),
        }
    }
}

impl Content {
    fn render(&self, out: &Out, indent: &str, depth: usize) -> String {
        let inner = format!("{indent}{}", out.unit);
        let seq = |blocks: &Vec<Block>, multiline: bool, open: &str, close: &str| {
            let parts: Vec<String> = blocks.iter().take(4).map(|b| b.render(out, &inner, depth + 1)).collect();
            if multiline && !parts.is_empty() {
                let mut s = format!("{open}{}", out.nl);
                for p in &parts {
                    s.push_str(&format!("{inner}{p},{}", out.nl));
                }
                s.push_str(&format!("{indent}{close}"));
                s
            } else {
                let tail = if close == ")" && parts.len() == 1 { "," } else { "" };
                format!("{open}{}{tail}{close}", parts.join(", "))
            }
        };
        match self {
            Content::List(multiline, blocks) => seq(blocks, *multiline, "[", "]"),
            Content::Tuple(blocks) => seq(blocks, false, "(", ")"),
            Content::Name(i) => pick(&["blocks", "content", "self.content"], *i).into(),
            Content::Call(i) => format!("{}(summary)", pick(&["make_blocks", "list", "build.content"], *i)),
        }
    }
}

impl Entry {
    fn render(&self, out: &Out, indent: &str, depth: usize) -> (String, Option<String>) {
        match self {
            Entry::Status(k, v) => (format!("{}: {}", k.render("status", out, indent), v.render(out, indent, depth)), None),
            Entry::Content(k, c) => (format!("{}: {}", k.render("content", out, indent), c.render(out, indent, depth)), None),
            Entry::ToolUseId(k) => (format!("{}: tool_use_id", k.render("toolUseId", out, indent)), None),
            Entry::Extra(k, w, v) => (format!("{}: {}", k.render(pick(&EXTRAS, *w), out, indent), v.render(out, indent, depth)), None),
            Entry::Spread(i) => (format!("**{}", pick(&NAMES, *i)), None),
            Entry::OwnLineComment(i) => (String::new(), Some(pick(&["# note", "#", "# \"status\": 1", "# }"], *i).into())),
            Entry::TrailingComment(e, i) => {
                let (text, _) = e.render(out, indent, depth + 1);
                (text, Some(pick(&["# why", "#x", "# ,"], *i).into()))
            }
        }
    }
}

impl Dict {
    fn render_entries(&self, entries: &[Entry], out: &Out, indent: &str, depth: usize) -> String {
        if depth > MAX_DEPTH {
            return "{}".into();
        }
        let inner = format!("{indent}{}", out.unit);
        let rendered: Vec<(String, Option<String>)> = entries.iter().take(8).map(|e| e.render(out, &inner, depth + 1)).collect();
        let multiline = self.multiline || rendered.iter().any(|(_, c)| c.is_some());
        if !multiline {
            let parts: Vec<&str> = rendered.iter().map(|(t, _)| t.as_str()).filter(|t| !t.is_empty()).collect();
            let comma = if self.trailing_comma && !parts.is_empty() { "," } else { "" };
            return format!("{{{}{comma}}}", parts.join(", "));
        }
        let mut s = format!("{{{}", out.nl);
        let n = rendered.len();
        for (i, (text, comment)) in rendered.iter().enumerate() {
            match (text.is_empty(), comment) {
                (true, Some(c)) => s.push_str(&format!("{inner}{c}{}", out.nl)),
                (true, None) => {}
                (false, c) => {
                    let comma = if i + 1 < n || self.trailing_comma { "," } else { "" };
                    let c = c.as_ref().map(|c| format!("  {c}")).unwrap_or_default();
                    s.push_str(&format!("{inner}{text}{comma}{c}{}", out.nl));
                }
            }
        }
        s.push_str(&format!("{indent}}}"));
        s
    }

    fn render(&self, out: &Out, indent: &str, depth: usize) -> String {
        let body = self.render_entries(&self.entries, out, indent, depth);
        if self.parens { format!("({body})") } else { body }
    }
}

impl Program {
    pub fn render(&self) -> String {
        let nl = if self.crlf { "\r\n" } else { "\n" };
        let unit = match self.indent {
            Indent::Spaces(n) => " ".repeat(1 + usize::from(n) % 8),
            Indent::Tab => "\t".into(),
        };
        let out = Out { nl, unit };
        let mut s = String::new();
        if self.header_comment {
            s.push_str(&format!("# generated{nl}import json{nl}{nl}"));
        }
        for (f, function) in self.functions.iter().take(4).enumerate() {
            s.push_str(&format!("def tool_{f}(summary, frames):{nl}"));
            let mut indent = out.unit.clone();
            if function.nested_block {
                s.push_str(&format!("{indent}if summary:{nl}"));
                indent.push_str(&out.unit);
            }
            if function.statements.is_empty() {
                s.push_str(&format!("{indent}pass{nl}"));
            }
            for st in function.statements.iter().take(6) {
                let line = match st {
                    Statement::Return(d) => format!("return {}", d.render(&out, &indent, 0)),
                    Statement::Assign(i, d) => format!("{} = {}", pick(&NAMES, *i), d.render(&out, &indent, 0)),
                    Statement::CallArg(d) => format!("emit({})", d.render(&out, &indent, 0)),
                    Statement::ListOf(ds) => {
                        let parts: Vec<String> = ds.iter().take(3).map(|d| d.render(&out, &indent, 0)).collect();
                        format!("results = [{}]", parts.join(", "))
                    }
                    Statement::Comment(i) => pick(&["# status content", "# TODO", "#"], *i).into(),
                    Statement::Blank => String::new(),
                };
                if line.is_empty() {
                    s.push_str(nl);
                } else {
                    s.push_str(&format!("{indent}{line}{nl}"));
                }
            }
            s.push_str(nl);
        }
        s
    }
}
