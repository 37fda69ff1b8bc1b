//! The haystack the regex bench searches: English-like words,
//! punctuation and quotes with lines of about twenty words, the same bytes for a
//! size, and a dictionary of made-up words that appear in it now and then
//! (the dictionary pattern's words).

use augur_rng::Rng;

/// Common words, the names the patterns look for and words that end in
/// `ing`.
const WORDS: &[&str] = &[
    "the",
    "of",
    "and",
    "to",
    "in",
    "a",
    "was",
    "he",
    "that",
    "it",
    "his",
    "her",
    "with",
    "as",
    "had",
    "for",
    "she",
    "at",
    "said",
    "on",
    "but",
    "be",
    "not",
    "by",
    "which",
    "you",
    "Sherlock",
    "Holmes",
    "Watson",
    "Irene",
    "Adler",
    "Tom",
    "Sawyer",
    "Huckleberry",
    "Finn",
    "running",
    "morning",
    "evening",
    "something",
    "nothing",
    "thinking",
    "Baker",
    "Street",
    "extraordinary",
    "investigation",
    "circumstances",
    "consideration",
    "sherlock",
    "SHERLOCK",
    "river",
    "house",
    "window",
    "letter",
    "doctor",
    "inspector",
    "quite",
    "exactly",
    "upon",
];

/// Words of the dictionary pattern.
pub const DICTIONARY_WORDS: usize = 300;

/// `n` distinct made-up words of two to four syllables, the same for `n`.
pub fn dictionary(n: usize) -> Vec<String> {
    const ONSETS: &[&str] = &[
        "b", "br", "c", "ch", "d", "f", "g", "gr", "h", "k", "l", "m", "n", "p", "pr", "r", "s",
        "sh", "st", "t", "tr", "v", "w", "z",
    ];
    const VOWELS: &[&str] = &["a", "e", "i", "o", "u", "ai", "ou", "ea"];
    let mut r = Rng(11);
    let mut out: Vec<String> = Vec::with_capacity(n);
    while out.len() < n {
        let syllables = 2 + r.below(3);
        let w: String = (0..syllables)
            .map(|_| format!("{}{}", r.pick(ONSETS), r.pick(VOWELS)))
            .collect();
        if !out.contains(&w) {
            out.push(w);
        }
    }
    out
}

/// About `len` bytes of words and punctuation; one word in 16 is from the
/// dictionary.
pub fn haystack(len: usize) -> Vec<u8> {
    let dict = dictionary(DICTIONARY_WORDS);
    let mut r = Rng(7);
    let mut t = Vec::with_capacity(len + 16);
    while t.len() < len {
        if r.below(16) == 0 {
            t.extend(dict[r.below(dict.len() as u64) as usize].as_bytes());
        } else {
            t.extend(r.pick(WORDS).as_bytes());
        }
        match r.below(40) {
            0 | 1 => t.push(b'\n'),
            2 | 3 => t.push(b','),
            4 | 5 => t.push(b'.'),
            // Quoted speech now and then, as in a novel.
            6 => t.extend(b" \""),
            7 => t.extend(b"?\" "),
            8 => t.extend(b"! '"),
            9 => t.extend(b".' "),
            _ => t.push(b' '),
        }
    }
    t
}

/// The spans of `hay`'s lines, without their `\n`.
pub fn lines(hay: &[u8]) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut start = 0;
    for (i, &b) in hay.iter().enumerate() {
        if b == b'\n' {
            out.push((start, i));
            start = i + 1;
        }
    }
    out.push((start, hay.len()));
    out
}
