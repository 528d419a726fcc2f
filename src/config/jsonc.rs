//! JSONC → JSON: blanks out `//` and `/* */` comments and trailing commas with spaces, byte for
//! byte, so that the line and column of a later JSON error still point into the user's file.
//! Must not change anything inside strings.

/// Returns `text` with comments and trailing commas replaced by spaces (newlines kept). An
/// unterminated block comment is left as is, so the JSON parser reports it where it starts.
pub fn strip(text: &str) -> String {
    let mut out = text.as_bytes().to_vec();
    let b = text.as_bytes();
    let mut i = 0;
    // Index of a comma that may turn out to be trailing (only whitespace and comments seen since).
    let mut pending_comma: Option<usize> = None;
    while i < b.len() {
        match b[i] {
            b'"' => {
                pending_comma = None;
                i += 1;
                while i < b.len() && b[i] != b'"' {
                    if b[i] == b'\\' {
                        i += 1;
                    }
                    i += 1;
                }
                i += 1;
            }
            b'/' if b.get(i + 1) == Some(&b'/') => {
                while i < b.len() && b[i] != b'\n' {
                    out[i] = b' ';
                    i += 1;
                }
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                let Some(end) = find(&b[i + 2..], b"*/") else {
                    return String::from_utf8(out).expect("only ASCII bytes were replaced");
                };
                let stop = i + 2 + end + 2;
                for (j, c) in out.iter_mut().enumerate().take(stop).skip(i) {
                    if b[j] != b'\n' {
                        *c = b' ';
                    }
                }
                i = stop;
            }
            b',' => {
                pending_comma = Some(i);
                i += 1;
            }
            b']' | b'}' => {
                if let Some(c) = pending_comma.take() {
                    out[c] = b' ';
                }
                i += 1;
            }
            c if c.is_ascii_whitespace() => i += 1,
            _ => {
                pending_comma = None;
                i += 1;
            }
        }
    }
    // Every replaced byte was a whole comment (so whole UTF-8 sequences) or an ASCII comma.
    String::from_utf8(out).expect("comments are replaced as whole UTF-8 sequences")
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

#[cfg(test)]
mod tests {
    use super::strip;

    #[test]
    fn cases() {
        let cases = [
            ("{\"a\": 1}", "{\"a\": 1}"),
            ("{\"a\": 1, // note\n}", "{\"a\": 1         \n}"),
            ("{/* x\ny */\"a\": [1,2,],}", "{    \n    \"a\": [1,2 ] }"),
            (
                "{\"u\": \"http://x/*y*/,}\"}",
                "{\"u\": \"http://x/*y*/,}\"}",
            ),
            ("{\"q\": \"a\\\"//b\"}", "{\"q\": \"a\\\"//b\"}"),
            ("{\"é\": 1 /* ünï */}", "{\"é\": 1            }"),
            ("{\"a\": 1 /* open", "{\"a\": 1 /* open"),
            ("[1, /* c */ ]", "[1          ]"),
        ];
        for (input, want) in cases {
            let got = strip(input);
            assert_eq!(got, want, "input {input:?}");
            assert_eq!(got.len(), input.len(), "length changed for {input:?}");
        }
    }
}
