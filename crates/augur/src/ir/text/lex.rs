//! Tokens of the text form: names, numbers, C strings, punctuation; `//`
//! comments and white space between them (whose place `-5` needs).

use super::ParseError;

#[derive(Clone, Debug, PartialEq)]
pub(super) enum Tok {
    Ident(String),
    Num(String),
    Str(String),
    Punct(&'static str),
}

/// A token, its place, and whether white space comes right before it.
pub(super) struct Token {
    pub(super) tok: Tok,
    pub(super) line: usize,
    pub(super) col: usize,
    pub(super) spaced: bool,
}

const PUNCTS: [&str; 35] = [
    "...", ".", "<<", ">>", "<=", ">=", "==", "!=", "&&", "||", "->", "(", ")", "{", "}", "[", "]",
    ";", ",", ":", "?", "=", "+", "-", "*", "/", "%", "&", "|", "^", "<", ">", "!", "~", "@",
];

pub(super) fn lex(text: &str) -> Result<Vec<Token>, ParseError> {
    let mut out = Vec::new();
    for (l, line) in text.lines().enumerate() {
        let bytes = line.as_bytes();
        let mut i = 0;
        let mut spaced = true;
        while i < bytes.len() {
            let at = |message: String| ParseError {
                line: l + 1,
                col: i + 1,
                message,
            };
            let c = bytes[i] as char;
            if c.is_whitespace() {
                i += 1;
                spaced = true;
                continue;
            }
            if line[i..].starts_with("//") {
                break;
            }
            let start = i;
            let tok = if c.is_ascii_alphabetic() || c == '_' {
                while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_') {
                    i += 1;
                }
                Tok::Ident(line[start..i].to_string())
            } else if c.is_ascii_digit() {
                i += 1;
                while i < bytes.len() {
                    let b = bytes[i];
                    let exp_sign = (b == b'-' || b == b'+') && matches!(bytes[i - 1], b'e' | b'E');
                    if b.is_ascii_alphanumeric() || b == b'.' || exp_sign {
                        i += 1;
                    } else {
                        break;
                    }
                }
                Tok::Num(line[start..i].to_string())
            } else if c == '"' {
                let (s, len) =
                    string(&line[i..]).ok_or_else(|| at("unterminated string".into()))?;
                i += len;
                Tok::Str(s)
            } else if c == '#' {
                i += 1;
                Tok::Punct("#")
            } else {
                let p = PUNCTS
                    .iter()
                    .find(|p| line[i..].starts_with(**p))
                    .ok_or_else(|| at(format!("unexpected `{c}`")))?;
                i += p.len();
                Tok::Punct(p)
            };
            out.push(Token {
                tok,
                line: l + 1,
                col: start + 1,
                spaced,
            });
            spaced = false;
        }
    }
    Ok(out)
}

/// A C string literal at the start of `s`: its bytes (as a `String`: the
/// IR's strings are text) and its length in `s`.
fn string(s: &str) -> Option<(String, usize)> {
    let b = s.as_bytes();
    let mut out = Vec::new();
    let mut i = 1;
    while i < b.len() {
        match b[i] {
            b'"' => return Some((String::from_utf8(out).ok()?, i + 1)),
            b'\\' => {
                let e = *b.get(i + 1)?;
                i += 2;
                out.push(match e {
                    b'n' => b'\n',
                    b't' => b'\t',
                    b'r' => b'\r',
                    b'0'..=b'7' => {
                        let digits = &s[i - 1..(i + 2).min(s.len())];
                        i += 2;
                        u8::from_str_radix(digits, 8).ok()?
                    }
                    other => other,
                });
            }
            c => {
                out.push(c);
                i += 1;
            }
        }
    }
    None
}
