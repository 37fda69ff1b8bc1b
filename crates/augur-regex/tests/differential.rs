//! augur-regex against the regex crate (`regex::bytes::Regex`): random
//! patterns of the supported grammar over random haystacks, every match
//! test, leftmost-first match and iteration compared (half the haystacks
//! random bytes, half strings the pattern matches among them), on the JIT, on C
//! (one pattern in four) and on augur's interpreter (a few haystacks of
//! each pattern). `AUGUR_REGEX_CASES` sets the number of patterns,
//! `AUGUR_REGEX_SEED` the first seed, and `AUGUR_REGEX_VERBOSE` prints each
//! pattern before it is staged.

use augur::exec::{Backend, CompileOptions};
use augur::{Builder, Interpreter, Value};
use augur_regex::{Error, Matcher, Options, Regex, Staged};
use augur_rng::Rng;
use regex_syntax::hir::{Class, Hir, HirKind};

fn env(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(default)
}

/// A random pattern over a small alphabet (so that random haystacks
/// match), with every construct of the grammar.
fn pattern(r: &mut Rng, depth: u32) -> String {
    let atom = |r: &mut Rng| -> String {
        r.pick(&[
            "a", "b", "c", "A", "☃", ".", "[ab]", "[^a]", "[a-c]", "[^\\n]", "\\n", "x", "é",
            "(?:)", "\\d", "[☃é]", "[^☃]", "\\x{FF}",
        ])
        .to_string()
    };
    if depth == 0 || r.chance(30) {
        return atom(r);
    }
    let sub = |r: &mut Rng| pattern(r, depth - 1);
    match r.below(11) {
        0..=2 => format!("{}{}", sub(r), sub(r)),
        3 => format!("{}|{}", sub(r), sub(r)),
        4 => format!("(?:{})*", sub(r)),
        5 => format!("(?:{})+", sub(r)),
        6 => format!("(?:{})?", sub(r)),
        7 => {
            let lazy = if r.chance(50) { "?" } else { "" };
            let (m, n) = (r.below(3), r.below(3));
            format!("(?:{}){{{m},{}}}{lazy}", sub(r), m + n)
        }
        8 => format!("(?:{})*?", sub(r)),
        9 => format!("({})", sub(r)),
        _ => {
            let anchor = r.pick(&["^", "$", "\\A", "\\z"]);
            if r.chance(50) {
                format!("{anchor}{}", sub(r))
            } else {
                format!("{}{anchor}", sub(r))
            }
        }
    }
}

fn haystack(r: &mut Rng) -> Vec<u8> {
    let n = r.below(24) as usize;
    let mut h = Vec::new();
    while h.len() < n {
        match r.below(12) {
            0 => h.extend("☃".as_bytes()),
            1 => h.extend("é".as_bytes()),
            2 => h.push(0xFF),
            3 => h.push(b'\n'),
            4 => h.push(b'A'),
            5 => h.push(b'7'),
            6 => h.push(0xE2), // a lone lead byte
            7 => h.push(b'x'),
            k => h.push(b"abc"[(k % 3) as usize]),
        }
    }
    h
}

/// Bytes `hir` matches (anchors aside), chosen at random with repetitions
/// often as long as they may be: matches of the longest length and
/// repeats at their bounds are where off-by-one errors in skipping show.
fn sample(r: &mut Rng, hir: &Hir, out: &mut Vec<u8>) {
    match hir.kind() {
        HirKind::Empty | HirKind::Look(_) => {}
        HirKind::Literal(lit) => out.extend(lit.0.iter()),
        HirKind::Class(Class::Bytes(c)) => {
            if let Some(&range) = c
                .ranges()
                .get(r.below(c.ranges().len().max(1) as u64) as usize)
            {
                let span = u64::from(range.end() - range.start()) + 1;
                out.push(range.start() + r.below(span) as u8);
            }
        }
        HirKind::Class(Class::Unicode(c)) => {
            if let Some(&range) = c
                .ranges()
                .get(r.below(c.ranges().len().max(1) as u64) as usize)
            {
                let span = u64::from(range.end() as u32 - range.start() as u32) + 1;
                let code = range.start() as u32 + r.below(span.min(64)) as u32;
                let ch = char::from_u32(code).unwrap_or(range.start());
                out.extend(ch.to_string().as_bytes());
            }
        }
        HirKind::Repetition(rep) => {
            let most = rep.max.unwrap_or(rep.min + 3).min(rep.min + 6);
            let n = if r.chance(50) {
                most
            } else {
                rep.min + r.below(u64::from(most - rep.min) + 1) as u32
            };
            for _ in 0..n {
                sample(r, &rep.sub, out);
            }
        }
        HirKind::Capture(c) => sample(r, &c.sub, out),
        HirKind::Concat(hs) => hs.iter().for_each(|h| sample(r, h, out)),
        HirKind::Alternation(hs) => {
            let k = r.below(hs.len() as u64) as usize;
            sample(r, &hs[k], out)
        }
    }
}

/// A haystack of matches of `hir` among random bytes, some right after a
/// near miss (a match with one byte dropped or changed): a skip that
/// looks for a literal must not pass over the real one just after a false
/// one.
fn seeded_haystack(r: &mut Rng, hir: &Hir) -> Vec<u8> {
    let mut h = Vec::new();
    for _ in 0..1 + r.below(3) {
        h.extend(haystack(r).into_iter().take(r.below(6) as usize));
        if r.chance(50) {
            let mut miss = Vec::new();
            sample(r, hir, &mut miss);
            if !miss.is_empty() {
                let k = r.below(miss.len() as u64) as usize;
                if r.chance(50) {
                    miss.remove(k);
                } else {
                    miss[k] = r.pick(b"abcx\n");
                }
            }
            h.extend(miss);
        }
        sample(r, hir, &mut h);
    }
    h.extend(haystack(r).into_iter().take(r.below(6) as usize));
    h
}

/// What the regex crate reports on `hay`: the match test, the first match
/// and every match.
type Report = (bool, Option<(usize, usize)>, Vec<(usize, usize)>);

fn expected(re: &regex::bytes::Regex, hay: &[u8]) -> Report {
    let span = |m: regex::bytes::Match| (m.start(), m.end());
    (
        re.is_match(hay),
        re.find(hay).map(span),
        re.find_iter(hay).map(span).collect(),
    )
}

fn ours(m: &Matcher, hay: &[u8]) -> Report {
    (m.is_match(hay), m.find(hay), m.find_iter(hay).collect())
}

/// The first match by the interpreter, which checks every memory access.
fn interpreted(s: &Staged, hay: &[u8]) -> (bool, Option<(usize, usize)>) {
    let mut it = Interpreter::new();
    let h = it.memory_mut().alloc_slice(hay);
    let n = Value::I64(hay.len() as i64);
    let any = s
        .is_match
        .interpret_in(&mut it, &[h, n, Value::I64(0)])
        .expect("is_match interprets");
    let end = s
        .find
        .interpret_in(&mut it, &[h, n, Value::I64(0)])
        .expect("find interprets");
    let found = match end {
        Value::I64(e) if e >= 0 => {
            let start = s
                .rfind
                .interpret_in(&mut it, &[h, n, Value::I64(0), Value::I64(e)])
                .expect("rfind interprets");
            match start {
                Value::I64(st) => Some((st as usize, e as usize)),
                other => panic!("rfind gave {other:?}"),
            }
        }
        Value::I64(_) => None,
        other => panic!("find gave {other:?}"),
    };
    (any == Value::I64(1), found)
}

fn options(r: &mut Rng) -> Options {
    Options {
        unicode: !r.chance(20),
        case_insensitive: r.chance(20),
        dot_matches_new_line: r.chance(20),
    }
}

/// The pattern's syntax tree, as augur-regex reads it.
fn parse(p: &str, o: &Options) -> Hir {
    regex_syntax::ParserBuilder::new()
        .unicode(o.unicode)
        .case_insensitive(o.case_insensitive)
        .dot_matches_new_line(o.dot_matches_new_line)
        .utf8(false)
        .build()
        .parse(p)
        .expect("a pattern augur-regex parsed")
}

fn reference(p: &str, o: &Options) -> Option<regex::bytes::Regex> {
    regex::bytes::RegexBuilder::new(p)
        .unicode(o.unicode)
        .case_insensitive(o.case_insensitive)
        .dot_matches_new_line(o.dot_matches_new_line)
        .build()
        .ok()
}

#[test]
fn random_patterns_match_as_the_regex_crate_does() {
    let cases = env(
        "AUGUR_REGEX_CASES",
        if cfg!(debug_assertions) { 40 } else { 300 },
    );
    let seed = env("AUGUR_REGEX_SEED", 1);
    let jit = CompileOptions::default().with_backend(Backend::Jit);
    let (mut compared, mut skipped) = (0, 0);
    for case in seed..seed + cases {
        let mut r = Rng(case);
        let opts = options(&mut r);
        let p = pattern(&mut r, 4);
        let Some(want) = reference(&p, &opts) else {
            // A pattern the regex crate refuses (`\x{FF}` where UTF-8 is
            // required): ours must refuse it or agree with nothing to
            // compare, so it is only counted.
            skipped += 1;
            continue;
        };
        if std::env::var("AUGUR_REGEX_VERBOSE").is_ok() {
            eprintln!("case {case}: {p:?} {opts:?}");
        }
        let re = Regex::with(&p, &opts).unwrap_or_else(|e| panic!("case {case} {p:?}: {e}"));
        let staged = re
            .stage(&Builder::new())
            .unwrap_or_else(|e| panic!("case {case} {p:?} {opts:?}: {e}"));
        let mut backends = vec![("JIT", staged.compile(&jit).expect("JIT"))];
        if case % 4 == 0 {
            backends.push(("C", staged.compile(&CompileOptions::default()).expect("C")));
        }
        let hir = parse(&p, &opts);
        for h in 0..30 {
            let hay = if h % 2 == 0 {
                haystack(&mut r)
            } else {
                seeded_haystack(&mut r, &hir)
            };
            let exp = expected(&want, &hay);
            for (name, m) in &backends {
                assert_eq!(
                    ours(m, &hay),
                    exp,
                    "case {case}: {name} on {p:?} {opts:?} over {:?}",
                    String::from_utf8_lossy(&hay)
                );
            }
            if h < 3 {
                assert_eq!(
                    interpreted(&staged, &hay),
                    (exp.0, exp.1),
                    "case {case}: interpreter on {p:?} {opts:?} over {hay:?}"
                );
            }
            compared += 1;
        }
    }
    assert!(
        compared > 0 && skipped < cases / 4,
        "{compared} compared, {skipped} skipped"
    );
}

#[test]
fn unsupported_syntax_is_named() {
    for (p, what) in [
        (r"\bword\b", "word boundaries"),
        (r"(?m)^line$", "line anchors"),
        (r"\B", "word boundaries"),
    ] {
        match Regex::new(p) {
            Err(Error::Unsupported { what: w }) => assert!(w.contains(what), "{p}: {w}"),
            other => panic!("{p}: {:?}", other.map(|r| r.pattern().to_string())),
        }
    }
    match Regex::new("a(b") {
        Err(e @ Error::Syntax(_)) => assert!(e.to_string().contains("unclosed group"), "{e}"),
        other => panic!("{:?}", other.map(|r| r.pattern().to_string())),
    }
}

/// The patterns of `augur bench regex` (a dictionary of words with shared
/// prefixes and suffixes, and a DFA of 1,025 states) over generated text,
/// every match's span against the regex crate's.
#[test]
fn the_benchmark_patterns_find_the_regex_crates_matches() {
    let words = [
        "the",
        "of",
        "Sherlock",
        "Holmes",
        "Watson",
        "Irene",
        "Adler",
        "Tom",
        "Sawyer",
        "Finn",
        "Huckleberry",
        "running",
        "sherlock",
        "SHERLOCK",
        "extraordinary",
        "river",
        "quite",
        "qrstuvwxyzx",
        "abcdefghijkx",
        "\"Quite so!\"",
        "'upon my word.'",
        "é",
        "☃",
    ];
    // A dictionary of made-up words that share prefixes and suffixes
    // (`bra`, `brai`, `braido`, ...), some of them in the text.
    let syllables = ["b", "br", "d", "sh", "t"]
        .iter()
        .flat_map(|o| ["a", "ai", "o", "ou"].map(|v| format!("{o}{v}")))
        .collect::<Vec<_>>();
    let dictionary: Vec<String> = (0..syllables.len() * 3)
        .map(|k| {
            let (a, b) = (
                &syllables[k % syllables.len()],
                &syllables[(k * 7) % syllables.len()],
            );
            if k % 3 == 0 {
                a.clone()
            } else {
                format!("{a}{b}")
            }
        })
        .collect();
    let mut r = Rng(3);
    let mut hay = Vec::new();
    while hay.len() < 1 << 16 {
        if r.chance(10) {
            hay.extend(dictionary[r.below(dictionary.len() as u64) as usize].as_bytes());
        } else {
            hay.extend(r.pick(&words).as_bytes());
        }
        hay.push(r.pick(b"  \n,\"'?!."));
    }
    let dictionary = dictionary.join("|");
    let jit = CompileOptions::default().with_backend(Backend::Jit);
    for (p, bytes) in [
        (dictionary.as_str(), false),
        ("Sherlock", false),
        ("Sherlock|Holmes|Watson|Irene|Adler", false),
        ("(?i)sherlock", false),
        ("[a-zA-Z]+ing", false),
        ("[A-Za-z]{8,13}", false),
        ("Tom|Sawyer|Huckleberry|Finn", false),
        ("[a-z]+ (Tom|Sawyer|Huckleberry|Finn)", false),
        ("Huck[a-zA-Z]+|Saw[a-zA-Z]+", false),
        (".{0,2}(Tom|Sawyer|Huckleberry|Finn)", false),
        (".{2,4}(Tom|Sawyer|Huckleberry|Finn)", false),
        (r"\s[a-zA-Z]{0,12}ing\s", false),
        (r"([A-Za-z]awyer|[A-Za-z]inn)\s", false),
        (r#"["'][^"']{0,30}[?!.]["']"#, false),
        ("[a-q][^u-z]{9}x", true),
    ] {
        let opts = Options {
            unicode: !bytes,
            ..Options::default()
        };
        let want = reference(p, &opts).expect("the regex crate builds it");
        let staged = Regex::with(p, &opts)
            .and_then(|re| re.stage(&Builder::new()))
            .unwrap_or_else(|e| panic!("{p}: {e}"));
        let m = staged.compile(&jit).expect("JIT");
        let spans: Vec<(usize, usize)> =
            want.find_iter(&hay).map(|m| (m.start(), m.end())).collect();
        assert!(!spans.is_empty(), "{p} matches the text");
        assert_eq!(m.find_iter(&hay).collect::<Vec<_>>(), spans, "{p}");
    }
}

/// The prefilter's jump (a literal every match of a bounded pattern
/// holds, found by `memchr` on one of its bytes or by a pair of them, then
/// compared) on every
/// haystack of up to 7 bytes over the pattern's own bytes: false
/// candidates right before true ones, overlapping occurrences, literals
/// at either end.
#[test]
fn the_literal_jump_misses_no_match_on_any_short_haystack() {
    let jit = CompileOptions::default().with_backend(Backend::Jit);
    let alphabet = b"abx ";
    for p in [
        "[ab]xa",
        "[ab]{1,3}xab",
        "(?:a|b)xxa",
        "[ab ]ax{1,2}",
        r"\sxa\s",
    ] {
        let opts = Options::default();
        let want = reference(p, &opts).expect("the regex crate builds it");
        let m = Regex::with(p, &opts)
            .and_then(|re| re.stage(&Builder::new()))
            .and_then(|s| s.compile(&jit))
            .unwrap_or_else(|e| panic!("{p}: {e}"));
        for len in 0..=7u32 {
            for code in 0..alphabet.len().pow(len) {
                let mut c = code;
                let hay: Vec<u8> = (0..len)
                    .map(|_| {
                        let b = alphabet[c % alphabet.len()];
                        c /= alphabet.len();
                        b
                    })
                    .collect();
                let exp = expected(&want, &hay);
                assert_eq!(
                    ours(&m, &hay),
                    exp,
                    "{p} over {:?}",
                    String::from_utf8_lossy(&hay)
                );
            }
        }
    }
}

/// The literal jump of a literal of two or more bytes, found by the pair of
/// its two rarest bytes ([`augur::bytes::find_pair`], 16 positions at a
/// time), on [`pieces`] up to 100 bytes long: pairs in the blocks of 16,
/// across them and in the tail, false pairs right before true ones.
#[test]
fn the_pair_of_a_literal_misses_no_match_on_random_haystacks() {
    for p in [
        "[ab]xa",
        "xaxb",
        // The pair's bytes are alike: a false candidate one byte before a
        // true one (`xxxab`).
        "xxab",
        "[ab]{1,3}xab",
        r"\sxa\s",
        "b[ab ]{0,5}xbbx",
    ] {
        pieces(p, b"abx  ", "augur_find_pair", 101);
    }
}

/// The prefilter's jump by pairs (one of a few literals in every match of
/// a bounded pattern, found by two adjacent bytes of each, a word of eight
/// bytes at a time) on [`pieces`]. No rare byte lies in every match (that
/// would take `memchr`). A match that starts a byte later cannot end where
/// it ends shows a jump one byte too far (elsewhere the reverse search
/// finds the same start).
#[test]
fn the_pair_jump_misses_no_match_on_random_haystacks() {
    for p in [
        "[ae]{2}(?:jx|kv)",
        "[ae](?:jx|kv)e",
        "(?:qzj|xk)[a-z ]{0,3}",
        "(?:jx|zq)(?:va|ae)",
        "[ae]{1,2}(?:qzjx|kvq|jj)",
    ] {
        pieces(p, b"qzjxkvae ", "memcpy", 49);
    }
}

/// The restart state's skip a word at a time (two or three bytes leave
/// it, and no prefilter applies: the patterns are unbounded) on
/// [`pieces`], with long runs of bytes that keep it.
#[test]
fn the_word_skip_misses_no_match_on_random_haystacks() {
    for p in ["[xz]a+", "(?:x|kq)[ae]*", "[jqv]e*v?", "[xz]a+$"] {
        pieces(p, b"aaaaaeee \nxzjqkv", "memcpy", 49);
    }
}

/// `p` against the regex crate on 4,000 haystacks of up to about `longest`
/// bytes of runs of `alphabet` and of matches (repeats often at their
/// longest), so that what the restart state reads a word (or 16 bytes) at
/// a time shows at every position of a word, across words, in the tail
/// shorter than a word and at either end; on the JIT, on C and on the
/// interpreter (which checks every byte the word loads read). The match
/// test's code must hold `reads` (how it loads words, or the pair search).
fn pieces(p: &str, alphabet: &[u8], reads: &str, longest: u64) {
    let jit = CompileOptions::default().with_backend(Backend::Jit);
    let opts = Options::default();
    let want = reference(p, &opts).expect("the regex crate builds it");
    let staged = Regex::with(p, &opts)
        .and_then(|re| re.stage(&Builder::new()))
        .unwrap_or_else(|e| panic!("{p}: {e}"));
    assert!(
        staged.is_match.c_code().contains(reads),
        "{p} holds {reads}"
    );
    let by_jit = staged.compile(&jit).expect("JIT");
    let by_c = staged.compile(&CompileOptions::default()).expect("C");
    let hir = parse(p, &opts);
    let mut r = Rng(11);
    for case in 0..4000 {
        let n = r.below(longest) as usize;
        let mut hay = Vec::new();
        while hay.len() < n {
            if r.chance(50) {
                sample(&mut r, &hir, &mut hay);
            } else {
                for _ in 0..r.below(12) {
                    hay.push(alphabet[r.below(alphabet.len() as u64) as usize]);
                }
            }
        }
        let exp = expected(&want, &hay);
        let shown = String::from_utf8_lossy(&hay);
        assert_eq!(ours(&by_jit, &hay), exp, "{p} over {shown:?} (JIT)");
        assert_eq!(ours(&by_c, &hay), exp, "{p} over {shown:?} (C)");
        if case % 20 == 0 {
            assert_eq!(
                interpreted(&staged, &hay),
                (exp.0, exp.1),
                "{p} over {shown:?} (interpreter)"
            );
        }
    }
}
