//! Tokenisation for search: split names and text into words, lowercase, drop stop words, stem
//! lightly. The same function runs on tool text (at build) and on queries, so the stemmer only has
//! to be consistent, not linguistically right. Pure; must not allocate more than the tokens.

/// Words that carry no meaning for tool retrieval: articles, pronouns, auxiliaries, politeness
/// and request phrasing ("can you please help me ..."), and the debris of addresses and
/// abbreviations in queries and descriptions (`example.com`, `e.g.`, `don't`). Adding a word makes
/// it invisible to search.
const STOP_WORDS: &[&str] = &[
    "a", "about", "all", "also", "am", "an", "and", "any", "are", "as", "at", "be", "been", "but",
    "by", "can", "com", "could", "do", "does", "don", "e", "each", "eg", "etc", "example", "for",
    "from", "g", "give", "has", "have", "help", "how", "i", "ie", "if", "in", "into", "is", "it",
    "its", "just", "let", "like", "me", "more", "most", "my", "need", "of", "on", "one", "or",
    "org", "our", "please", "s", "should", "so", "some", "such", "t", "than", "that", "the",
    "their", "them", "then", "there", "these", "they", "this", "those", "to", "too", "tool", "up",
    "us", "very", "via", "want", "was", "we", "were", "which", "will", "with", "would", "www",
    "yet", "you", "your",
];

/// Shortest stem the suffix rules may leave. Raising it stems fewer short words ("used" stays).
const MIN_STEM: usize = 3;

/// Calls `emit` with each token of `text`, in order: the words of `for_each_word`, lowercased,
/// stop words dropped, stemmed (`token_of`).
pub fn for_each_token(text: &str, mut emit: impl FnMut(&str)) {
    let (mut lower, mut out) = (String::with_capacity(16), String::with_capacity(16));
    for_each_word(text, |w| {
        if token_of(w, &mut lower, &mut out) {
            emit(&out);
        }
    });
}

/// Calls `emit` with each word of `text` as the slice of `text` it occupies (case kept), in order.
/// The token of a word depends on that slice alone (`token_of`), which lets the index build cache
/// it per distinct slice.
///
/// Splitting: any character that is not a letter or digit separates words (`_ - . / :` and
/// spaces); inside a word, a lower→upper change (`camelCase`) and the last capital of an acronym
/// run (`HTTPClient` → `http client`) start a new word, and an acronym's plural `s` is dropped
/// (`PRs` → `PR`, `URLs` → `URL`); letters and digits split (`utf8` → `utf 8`
/// is not done: digits stay attached, so `v2` and `s3` survive); a run of CJK characters, which
/// marks no word boundaries, gives its overlapping character pairs (`for_each_cjk_part`). ASCII
/// text (nearly all tool text) takes a byte loop; other text the same rules over `char`s.
pub fn for_each_word<'t>(text: &'t str, mut emit: impl FnMut(&'t str)) {
    for_each_word_keyed(text, |w, _| emit(w));
}

/// Byte classes for the ASCII loop of `for_each_word_keyed` (one table lookup instead of range
/// tests per byte).
const ALNUM: u8 = 1;
const UPPER: u8 = 2;
const LOWER: u8 = 4;
const DIGIT: u8 = 8;
const CLASS: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut c = 0;
    while c < 256 {
        let b = c as u8;
        t[c] = if b.is_ascii_uppercase() {
            ALNUM | UPPER
        } else if b.is_ascii_lowercase() {
            ALNUM | LOWER
        } else if b.is_ascii_digit() {
            ALNUM | DIGIT
        } else {
            0
        };
        c += 1;
    }
    t
};

/// `for_each_word`, also passing each word of up to 8 bytes packed into an integer
/// (`key = key << 8 | byte`, unique because a word holds no zero byte; meaningless for longer
/// words), computed in the same pass, for the index build's word cache.
///
/// A hyphenated compound made mostly of stop words (`to-do`, `up-to-date`, `how-to`) is one
/// word, hyphens and all (`token_of` drops them): cut apart, `to-do` would leave nothing and
/// `up-to-date` only `date`. Compounds of other words (`sign-in`, `end-to-end`) are cut as before.
pub fn for_each_word_keyed<'t>(text: &'t str, mut emit: impl FnMut(&'t str, u64)) {
    // Most text (every tool name) has no hyphen, hence no compound.
    if !text.as_bytes().contains(&b'-') {
        return cut_words(text, emit);
    }
    let mut group: Option<Compound> = None;
    cut_words(text, |w, key| {
        let start = w.as_ptr() as usize - text.as_ptr() as usize;
        let part = Compound {
            start,
            end: start + w.len(),
            key,
            parts: 1,
        };
        match &mut group {
            Some(g) if part.start == g.end + 1 && text.as_bytes()[g.end] == b'-' => {
                g.end = part.end;
                g.parts += 1;
            }
            _ => {
                if let Some(g) = group.replace(part) {
                    g.emit(text, &mut emit);
                }
            }
        }
    });
    if let Some(g) = group {
        g.emit(text, &mut emit);
    }
}

/// Words joined by single hyphens, as `for_each_word_keyed` reads them: where they lie in the
/// text, the first one's key and how many there are.
struct Compound {
    start: usize,
    end: usize,
    key: u64,
    parts: usize,
}

impl Compound {
    fn emit<'t>(&self, text: &'t str, emit: &mut impl FnMut(&'t str, u64)) {
        let w = &text[self.start..self.end];
        if self.parts == 1 {
            emit(w, self.key);
            return;
        }
        // Rare: the parts are cut again, which gives the same words (the compound starts and
        // ends where words do), to count its stop words.
        let (mut stop, mut alphabetic) = (0, true);
        cut_words(w, |p, _| {
            stop += usize::from(stop_part(p));
            alphabetic &= p.bytes().all(|b| b.is_ascii_alphabetic());
        });
        if alphabetic && stop * 2 > self.parts && self.stands_alone(text) {
            emit(w, w.bytes().fold(0u64, |k, b| k << 8 | b as u64));
        } else {
            cut_words(w, &mut *emit);
        }
    }

    /// Whether no letter or digit touches the compound (`fooBar-to-do` holds `Bar-to-do`, which
    /// is no compound).
    fn stands_alone(&self, text: &str) -> bool {
        let alnum = |c: Option<char>| c.is_some_and(char::is_alphanumeric);
        !alnum(text[..self.start].chars().next_back()) && !alnum(text[self.end..].chars().next())
    }
}

/// Whether one part of a hyphenated compound is a stop word (ASCII, any case).
fn stop_part(part: &str) -> bool {
    let mut buf = [0u8; 8];
    if part.len() > buf.len() {
        return false;
    }
    for (b, c) in buf.iter_mut().zip(part.bytes()) {
        *b = c.to_ascii_lowercase();
    }
    std::str::from_utf8(&buf[..part.len()]).is_ok_and(is_stop_word)
}

/// The words of `for_each_word_keyed` before hyphenated compounds are joined.
fn cut_words<'t>(text: &'t str, mut emit: impl FnMut(&'t str, u64)) {
    if text.is_ascii() {
        let b = text.as_bytes();
        let mut i = 0;
        while i < b.len() {
            if CLASS[b[i] as usize] == 0 {
                i += 1;
                continue;
            }
            // A word starts at `i`; its first character never splits it.
            let start = i;
            let mut prev = CLASS[b[i] as usize];
            let mut key = b[i] as u64;
            let mut plural = false;
            i += 1;
            while let Some(&c) = b.get(i) {
                let class = CLASS[c as usize];
                if class == 0 {
                    break;
                }
                // `PRs`, `URLs`: an acronym's plural `s` ends the word and is dropped.
                if c == b's'
                    && prev & UPPER != 0
                    && i >= start + 2
                    && CLASS[b[i - 2] as usize] & UPPER != 0
                    && b.get(i + 1).is_none_or(|&n| CLASS[n as usize] & LOWER == 0)
                {
                    plural = true;
                    break;
                }
                if class & UPPER != 0
                    && (prev & (LOWER | DIGIT) != 0
                        || (prev & UPPER != 0
                            && b.get(i + 1)
                                .is_some_and(|&n| CLASS[n as usize] & LOWER != 0)
                            && !(b[i + 1] == b's'
                                && b.get(i + 2).is_none_or(|&n| CLASS[n as usize] & LOWER == 0))))
                {
                    break;
                }
                key = key << 8 | c as u64;
                prev = class;
                i += 1;
            }
            emit(&text[start..i], key);
            i += usize::from(plural);
        }
        return;
    }
    let mut emit_one = |w: &'t str| emit(w, w.bytes().fold(0u64, |k, b| k << 8 | b as u64));
    let mut emit = |w: &'t str| for_each_cjk_part(w, &mut emit_one);
    let mut start: Option<usize> = None;
    let (mut prev, mut prev2) = (' ', ' ');
    let mut chars = text.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        if c == 's'
            && prev.is_uppercase()
            && prev2.is_uppercase()
            && let Some(s) = start
            && !chars.peek().is_some_and(|&(_, n)| n.is_lowercase())
        {
            emit(&text[s..i]);
            start = None;
            (prev2, prev) = (prev, c);
            continue;
        }
        prev2 = prev;
        if !c.is_alphanumeric() {
            if let Some(s) = start.take() {
                emit(&text[s..i]);
            }
            prev = c;
            continue;
        }
        match start {
            Some(s) if c.is_uppercase() => {
                let mut ahead = chars.clone().map(|(_, n)| n);
                let (next, after) = (ahead.next(), ahead.next());
                // An acronym's plural `s` (`PRs`) keeps the acronym whole.
                let plural = next == Some('s') && !after.is_some_and(char::is_lowercase);
                let next_lower = next.is_some_and(char::is_lowercase) && !plural;
                if prev.is_lowercase()
                    || prev.is_ascii_digit()
                    || (prev.is_uppercase() && next_lower)
                {
                    emit(&text[s..i]);
                    start = Some(i);
                }
            }
            Some(_) => {}
            None => start = Some(i),
        }
        prev = c;
    }
    if let Some(s) = start {
        emit(&text[s..]);
    }
}

/// Whether `c` is written without spaces between words: Han (Chinese, Japanese kanji),
/// Hiragana, Katakana and Hangul. Such text is searched by overlapping pairs of characters.
fn is_cjk(c: char) -> bool {
    matches!(c,
        '\u{3040}'..='\u{30ff}'
        | '\u{3400}'..='\u{4dbf}'
        | '\u{4e00}'..='\u{9fff}'
        | '\u{ac00}'..='\u{d7af}'
        | '\u{f900}'..='\u{faff}'
        | '\u{20000}'..='\u{2ffff}')
}

/// Emits `word` whole, or, where it holds CJK characters (`is_cjk`), each run of them as its
/// overlapping character pairs (a lone character as itself; "创建问题" → 创建 建问 问题: the usual
/// bigram split, since such text marks no word boundaries) and each other run whole.
fn for_each_cjk_part<'t>(word: &'t str, emit: &mut impl FnMut(&'t str)) {
    if !word.chars().any(is_cjk) {
        emit(word);
        return;
    }
    let mut chars = word.char_indices().peekable();
    while let Some(&(start, c)) = chars.peek() {
        let cjk = is_cjk(c);
        let mut run = Vec::new();
        while let Some(&(i, c)) = chars.peek() {
            if is_cjk(c) != cjk {
                break;
            }
            run.push(i);
            chars.next();
        }
        let end = chars.peek().map_or(word.len(), |&(i, _)| i);
        if !cjk || run.len() == 1 {
            emit(&word[start..end]);
            continue;
        }
        for pair in 0..run.len() - 1 {
            let to = run.get(pair + 2).copied().unwrap_or(end);
            emit(&word[run[pair]..to]);
        }
    }
}

/// The token of one word of `for_each_word`: lowercased into `lower`, then, unless it is a stop
/// word (returns false), stemmed into `out`.
pub fn token_of(word: &str, lower: &mut String, out: &mut String) -> bool {
    lower.clear();
    if word.is_ascii() {
        // A compound's hyphens (`to-do`, `for_each_word_keyed`) go: it is one word.
        lower.extend(
            word.bytes()
                .filter(|&b| b != b'-')
                .map(|b| b.to_ascii_lowercase() as char),
        );
    } else {
        word.chars().for_each(|c| lower.extend(c.to_lowercase()));
    }
    if is_stop_word(lower) {
        return false;
    }
    stem_into(lower, out);
    true
}

/// Tokens of `text` as owned strings (for queries and tests; the index uses `for_each_token`).
pub fn tokens(text: &str) -> Vec<String> {
    let mut v = Vec::new();
    for_each_token(text, |t| v.push(t.to_string()));
    v
}

pub fn is_stop_word(w: &str) -> bool {
    STOP_WORDS.binary_search(&w).is_ok()
}

/// Words ending in `s` that are not plurals, and whose singular-looking stem is another word:
/// `news` is not `new`, `series` not `sery`. Sorted.
const NOT_PLURAL: &[&str] = &["news", "series", "species"];

/// Light stemming into `out`, justified by what tool text and queries actually vary on: plurals
/// (`files`, `entries`, `searches`), participles and gerunds (`shared`, `sharing`, `listing`), and
/// a final silent `e` so that `share`/`shared`/`sharing` meet at `shar`. No Porter-style
/// derivational rules (`-ation`, `-ize`): they merge words tools keep apart (`organization` vs
/// `organize`). Plurals go first, then `-ing` (which must leave more than `MIN_STEM` letters:
/// `string`, `thing` stay) or `-ed`, then a final `e`. A doubled final consonant left by
/// `-ing`/`-ed` is undoubled (`running` → `run`, `calling` keeps `ll`).
pub fn stem_into(w: &str, out: &mut String) {
    out.clear();
    if !w.is_ascii() || w.len() <= MIN_STEM || NOT_PLURAL.binary_search(&w).is_ok() {
        out.push_str(w);
        return;
    }
    let long_enough = |s: &&str| s.len() >= MIN_STEM;
    // Plurals first, so that `meetings` and `meeting` meet below.
    let w = if let Some(s) = w.strip_suffix("ies").filter(long_enough) {
        out.push_str(s);
        out.push('y');
        return;
    } else if w.ends_with("sses")
        || ["ches", "shes", "xes", "zes"]
            .iter()
            .any(|x| w.ends_with(x))
    {
        &w[..w.len() - 2]
    } else if w.ends_with("ss") || w.ends_with("us") || w.ends_with("is") {
        w
    } else {
        w.strip_suffix('s').filter(long_enough).unwrap_or(w)
    };
    if let Some(s) = w.strip_suffix("ied").filter(long_enough) {
        out.push_str(s);
        out.push('y');
        return;
    }
    let (base, undouble) = match w
        .strip_suffix("ing")
        .filter(|s| s.len() > MIN_STEM)
        .or_else(|| w.strip_suffix("ed").filter(long_enough))
    {
        Some(s) => (s, true),
        None => (w, false),
    };
    let base = match base.strip_suffix('e') {
        Some(s) if s.len() >= MIN_STEM => s,
        _ => base,
    };
    out.push_str(base);
    let b = out.as_bytes();
    if undouble && b.len() > MIN_STEM {
        let (x, y) = (b[b.len() - 1], b[b.len() - 2]);
        if x == y && !b"lsz".contains(&x) && !b"aeiou".contains(&x) {
            out.pop();
        }
    }
}

#[cfg(test)]
#[path = "tokenize_tests.rs"]
mod tests;
