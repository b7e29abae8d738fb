//! A mutation that knows JSON's shape, for the text targets.
//!
//! libFuzzer's own mutations change bytes: most of them break the text, and the ones that keep
//! it whole reach a new value of one field at a time, slowly. [`mutate`] changes one value, key
//! or member of an input and keeps every other byte, so a mutant usually still parses and
//! reaches the reader's and the filters' checks with a combination they have not met: a number
//! where a string was, a string spelt with an escape, a member deleted, repeated, or copied in
//! from elsewhere in the input, a boundary number in a field that holds counts.
//!
//! The JSON fuzz targets (`nova_scenario`, `cluster_json`, `request_json`, `config_json`,
//! `spread`, `replica`, `json_query`) draw half of their mutations from here and half from
//! libFuzzer's byte mutations, which keep exploring malformed text ([`mutate_half`]). The scan
//! works on text that is only roughly JSON (bare words, missing commas): what it needs is
//! balanced brackets and closed strings, and an input without them gets `None`.

use placewise::rng::SplitMix64;

/// Values a mutated position may take: boundaries of the integer and float types the readers
/// use, numbers in several spellings, strings that look like numbers, literals or Python
/// values, text with escapes and characters outside ASCII, and small containers.
const VALUES: &[&str] = &[
    "null",
    "true",
    "false",
    "0",
    "-0",
    "1",
    "-1",
    "2",
    "3",
    "7",
    "16",
    "0.5",
    "-0.5",
    "1.5",
    "2.5",
    "0.1",
    "1e308",
    "-1e308",
    "1e309",
    "1e-320",
    "100.0",
    "1E+2",
    "255",
    "256",
    "65536",
    "2147483648",
    "4294967295",
    "4294967296",
    "9007199254740993",
    "9223372036854775807",
    "9223372036854775808",
    "-9223372036854775809",
    "18446744073709551616",
    r#""""#,
    r#""a""#,
    r#""0""#,
    r#""1""#,
    r#""-1""#,
    r#""1.5""#,
    r#""1e3""#,
    r#""nan""#,
    r#""inf""#,
    r#""-inf""#,
    r#""Infinity""#,
    r#""True""#,
    r#""true""#,
    r#""None""#,
    r#""null""#,
    r#"" 1""#,
    r#""0x10""#,
    r#""1_000""#,
    r#""\u00e9""#,
    r#""\u2028""#,
    r#""\ud83d\ude00""#,
    r#""\u0000""#,
    r#""'""#,
    r#""\\""#,
    r#""\"""#,
    r#""a b""#,
    r#""<in> a""#,
    r#""<or> a <or> b""#,
    r#""s== a""#,
    r#"">= 1""#,
    r#""= 1""#,
    r#""x86_64""#,
    r#""10.0.0.1""#,
    r#""::1""#,
    r#""2026-11-27T00:00:00Z""#,
    "[]",
    "[null]",
    "[1, 2]",
    r#"["a"]"#,
    "[[]]",
    "{}",
    r#"{"a": 1}"#,
    r#"{"": null}"#,
];

/// The longest piece of the input copied to another place in one mutation, so that a mutant
/// does not double a large input.
const MAX_COPY: usize = 4096;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Number,
    String,
    /// A bare word that is no number: `true`, `null`, or garbage the scan tolerates.
    Word,
    Container,
}

#[derive(Debug, Clone, Copy)]
struct Span {
    start: usize,
    end: usize,
    kind: Kind,
}

/// Where an input's pieces are.
#[derive(Debug, Default)]
struct Shape {
    /// Every value, containers included.
    values: Vec<Span>,
    /// Every object key, quotes included.
    keys: Vec<Span>,
    /// Every object member (key to the end of its value) and array element.
    members: Vec<(usize, usize)>,
    /// The position just after each `{`, where a member may be inserted.
    objects: Vec<usize>,
}

/// An open container while scanning: where it opened, and where its current member started.
struct Frame {
    open: usize,
    object: bool,
    member: Option<usize>,
}

/// The end (one past the closing quote) of the string that opens at `start`.
fn string_end(text: &[u8], start: usize) -> Option<usize> {
    let mut j = start + 1;
    while j < text.len() {
        match text[j] {
            b'\\' => j += 2,
            b'"' => return Some(j + 1),
            _ => j += 1,
        }
    }
    None
}

fn is_space(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\n' | b'\r')
}

fn is_bare(c: u8) -> bool {
    !is_space(c) && !matches!(c, b'{' | b'}' | b'[' | b']' | b':' | b',' | b'"')
}

/// Scans `text` with an explicit stack (no recursion, so deep nesting is safe). `None` when
/// brackets do not balance or a string is not closed.
fn shape(text: &[u8]) -> Option<Shape> {
    let mut shape = Shape::default();
    let mut stack: Vec<Frame> = Vec::new();
    // A value starting at `at` starts an array element; a value ending at `end` ends a member.
    fn started(stack: &mut [Frame], at: usize) {
        if let Some(top) = stack.last_mut() {
            if !top.object && top.member.is_none() {
                top.member = Some(at);
            }
        }
    }
    fn ended(stack: &mut [Frame], shape: &mut Shape, end: usize) {
        if let Some(start) = stack.last_mut().and_then(|top| top.member.take()) {
            shape.members.push((start, end));
        }
    }
    let mut i = 0;
    while i < text.len() {
        let c = text[i];
        match c {
            b'{' | b'[' => {
                started(&mut stack, i);
                stack.push(Frame { open: i, object: c == b'{', member: None });
                if c == b'{' {
                    shape.objects.push(i + 1);
                }
                i += 1;
            }
            b'}' | b']' => {
                let frame = stack.pop()?;
                if frame.object != (c == b'}') {
                    return None;
                }
                i += 1;
                shape.values.push(Span { start: frame.open, end: i, kind: Kind::Container });
                ended(&mut stack, &mut shape, i);
            }
            b',' => {
                if let Some(top) = stack.last_mut() {
                    top.member = None;
                }
                i += 1;
            }
            b'"' => {
                let end = string_end(text, i)?;
                match stack.last_mut() {
                    Some(top) if top.object && top.member.is_none() => {
                        top.member = Some(i);
                        shape.keys.push(Span { start: i, end, kind: Kind::String });
                    }
                    _ => {
                        started(&mut stack, i);
                        shape.values.push(Span { start: i, end, kind: Kind::String });
                        ended(&mut stack, &mut shape, end);
                    }
                }
                i = end;
            }
            _ if is_bare(c) => {
                let end = i + text[i..].iter().take_while(|&&b| is_bare(b)).count();
                let kind = if c == b'-' || c.is_ascii_digit() { Kind::Number } else { Kind::Word };
                started(&mut stack, i);
                shape.values.push(Span { start: i, end, kind });
                ended(&mut stack, &mut shape, end);
                i = end;
            }
            _ => i += 1,
        }
    }
    (stack.is_empty() && !shape.values.is_empty()).then_some(shape)
}

/// One JSON-aware mutation of `input`, drawn from `seed` (the same seed gives the same mutant):
/// one value replaced (by a boundary value, a variant of itself, or another value of the
/// input), one key replaced, or one member deleted, repeated or inserted. `None` when the input
/// has no JSON shape (unbalanced brackets, an unclosed string, no value).
pub fn mutate(input: &[u8], seed: u64) -> Option<Vec<u8>> {
    let shape = shape(input)?;
    let mut rng = SplitMix64::new(seed);
    // Not every operation applies to every input (no keys, no members): a few draws find one.
    (0..8).find_map(|_| one(input, &shape, &mut rng))
}

/// A libFuzzer custom mutator (the body of `fuzz_mutator!`): an even `seed` takes [`mutate`]'s
/// mutant of `data[..size]`, written into `data`; an odd one, an input without JSON shape, or a
/// mutant longer than `max_size` goes to `fallback`, libFuzzer's own `fuzzer_mutate`, which also
/// reaches the malformed-text paths and uses the dictionary. Returns the new size.
pub fn mutate_half(
    data: &mut [u8],
    size: usize,
    max_size: usize,
    seed: u32,
    fallback: impl FnOnce(&mut [u8], usize, usize) -> usize,
) -> usize {
    if seed % 2 == 0 {
        if let Some(mutant) = data.get(..size).and_then(|input| mutate(input, u64::from(seed))) {
            if mutant.len() <= max_size.min(data.len()) {
                data[..mutant.len()].copy_from_slice(&mutant);
                return mutant.len();
            }
        }
    }
    fallback(data, size, max_size)
}

fn pick<'a, T>(rng: &mut SplitMix64, items: &'a [T]) -> Option<&'a T> {
    (!items.is_empty()).then(|| &items[rng.below(items.len())])
}

fn splice(input: &[u8], start: usize, end: usize, with: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(input.len() - (end - start) + with.len());
    out.extend_from_slice(&input[..start]);
    out.extend_from_slice(with);
    out.extend_from_slice(&input[end..]);
    out
}

/// Another value of the input, or a boundary value.
fn some_value(input: &[u8], shape: &Shape, rng: &mut SplitMix64) -> Vec<u8> {
    match pick(rng, &shape.values) {
        Some(v) if rng.below(2) == 0 && v.end - v.start <= MAX_COPY => input[v.start..v.end].to_vec(),
        _ => VALUES[rng.below(VALUES.len())].as_bytes().to_vec(),
    }
}

fn one(input: &[u8], shape: &Shape, rng: &mut SplitMix64) -> Option<Vec<u8>> {
    match rng.below(7) {
        0 | 1 => {
            let v = pick(rng, &shape.values)?;
            let with = match (rng.below(2), v.kind) {
                (0, Kind::Number) => number_variant(&input[v.start..v.end], rng)?,
                (0, Kind::String) => string_variant(&input[v.start + 1..v.end - 1], input, shape, rng),
                _ => some_value(input, shape, rng),
            };
            Some(splice(input, v.start, v.end, &with))
        }
        2 => {
            let k = *pick(rng, &shape.keys)?;
            let with = match pick(rng, &shape.keys) {
                Some(other) if rng.below(2) == 0 => input[other.start..other.end].to_vec(),
                _ => string_variant(&input[k.start + 1..k.end - 1], input, shape, rng),
            };
            Some(splice(input, k.start, k.end, &with))
        }
        3 => {
            let &(start, end) = pick(rng, &shape.members)?;
            let after = input[end..].iter().position(|&c| !is_space(c)).map(|p| end + p);
            let before = input[..start].iter().rposition(|&c| !is_space(c));
            Some(match (after, before) {
                (Some(comma), _) if input[comma] == b',' => splice(input, start, comma + 1, b""),
                (_, Some(comma)) if input[comma] == b',' => splice(input, comma, end, b""),
                _ => splice(input, start, end, b""),
            })
        }
        4 => {
            let &(start, end) = pick(rng, &shape.members)?;
            if end - start > MAX_COPY {
                return None;
            }
            let mut with = input[start..end].to_vec();
            with.push(b',');
            Some(splice(input, start, start, &with))
        }
        _ => {
            let at = *pick(rng, &shape.objects)?;
            let mut with = match pick(rng, &shape.keys) {
                Some(k) => input[k.start..k.end].to_vec(),
                None => b"\"a\"".to_vec(),
            };
            with.extend_from_slice(b": ");
            with.extend(some_value(input, shape, rng));
            let empty = input[at..].iter().find(|&&c| !is_space(c)) == Some(&b'}');
            if !empty {
                with.push(b',');
            }
            Some(splice(input, at, at, &with))
        }
    }
}

/// A number near `text` or in another spelling: one more or less, negated, doubled, halved,
/// scaled by 1024, with a fraction, with an exponent, quoted. `None` for a bare word that reads
/// as no number.
fn number_variant(text: &[u8], rng: &mut SplitMix64) -> Option<Vec<u8>> {
    let text = std::str::from_utf8(text).ok()?;
    let out = if let Ok(n) = text.parse::<i128>() {
        match rng.below(9) {
            0 => n.checked_add(1)?.to_string(),
            1 => n.checked_sub(1)?.to_string(),
            2 => n.checked_neg()?.to_string(),
            3 => n.checked_mul(2)?.to_string(),
            4 => (n / 2).to_string(),
            5 => n.checked_mul(1024)?.to_string(),
            6 => format!("{n}.5"),
            7 => format!("{n}e0"),
            _ => format!("\"{n}\""),
        }
    } else {
        let x = text.parse::<f64>().ok().filter(|x| x.is_finite())?;
        let y = match rng.below(7) {
            0 => x + 1.0,
            1 => x - 1.0,
            2 => -x,
            3 => x * 2.0,
            4 => x / 2.0,
            5 => x.round(),
            _ => return Some(format!("\"{text}\"").into_bytes()),
        };
        if !y.is_finite() {
            return None;
        }
        // `{:?}` keeps a fraction or an exponent, so the spelling stays a float.
        format!("{y:?}")
    };
    Some(out.into_bytes())
}

/// A string (quotes included) made from `content` (the text between its quotes): empty, with a
/// character appended or the last one dropped, its first character escaped, in upper or lower
/// case, padded, doubled, unquoted (a number or a literal if it spells one), or joined with
/// another string of the input by a comma, as lists of names are written.
fn string_variant(content: &[u8], input: &[u8], shape: &Shape, rng: &mut SplitMix64) -> Vec<u8> {
    let mut out = Vec::with_capacity(content.len() + 8);
    let quoted = |body: &[u8]| [b"\"".as_slice(), body, b"\""].concat();
    match rng.below(10) {
        0 => out.extend(quoted(b"")),
        1 => out.extend(quoted(&[content, b"x"].concat())),
        2 => match std::str::from_utf8(content) {
            Ok(s) if !s.contains('\\') && !s.is_empty() => {
                let cut = s.char_indices().last().map_or(0, |(i, _)| i);
                out.extend(quoted(&content[..cut]));
            }
            _ => out.extend(quoted(content)),
        },
        3 => match content.first() {
            Some(&c) if c.is_ascii() && c != b'\\' => {
                out.extend(quoted(&[format!("\\u{:04x}", c).as_bytes(), &content[1..]].concat()));
            }
            _ => out.extend(quoted(content)),
        },
        4 => out.extend(quoted(&content.to_ascii_uppercase())),
        5 => out.extend(quoted(&content.to_ascii_lowercase())),
        6 => out.extend(quoted(&[b" ", content, b" "].concat())),
        7 => out.extend(quoted(&[content, content].concat())),
        8 if !content.is_empty() && content.iter().all(|&c| is_bare(c) && c != b'\\') => out.extend_from_slice(content),
        8 => out.extend_from_slice(b"0"),
        _ => {
            let other = pick(rng, &shape.values)
                .filter(|v| v.kind == Kind::String && v.end - v.start <= MAX_COPY)
                .map_or(b"a".as_slice(), |v| &input[v.start + 1..v.end - 1]);
            out.extend(quoted(&[content, b",", other].concat()));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const SCENARIO: &str = r#"{"hosts": [{"host": "h1", "vcpus": 4, "free_ram_mb": 1024.5,
        "stats": {}}, {"host": "h2", "vcpus": 8}], "request": {"num_instances": 2},
        "config": {"enabled_filters": "RamFilter,ComputeFilter", "ratio": 1.5, "on": true}}"#;

    #[test]
    fn the_scan_finds_values_keys_members_and_objects() {
        let s = shape(SCENARIO.as_bytes()).unwrap();
        let text = |sp: &Span| &SCENARIO[sp.start..sp.end];
        let keys: Vec<&str> = s.keys.iter().map(text).collect();
        assert_eq!(keys[..3], [r#""hosts""#, r#""host""#, r#""vcpus""#]);
        assert_eq!(keys.len(), 13);
        assert!(s.values.iter().any(|v| v.kind == Kind::Number && text(v) == "1024.5"));
        assert!(s.values.iter().any(|v| v.kind == Kind::Word && text(v) == "true"));
        assert!(s.values.iter().any(|v| v.kind == Kind::Container && text(v) == "{}"));
        // 13 object members and the two array elements.
        assert_eq!(s.members.len(), 15);
        assert!(s.members.iter().any(|&(a, b)| &SCENARIO[a..b] == r#""num_instances": 2"#));
        assert_eq!(s.objects.len(), 6);
    }

    #[test]
    fn text_without_a_json_shape_is_not_mutated() {
        for bad in ["", "   ", "{", r#"{"a": [1}"#, r#"["open"#, "]", r#"{"a": "\"}"#] {
            assert!(mutate(bad.as_bytes(), 1).is_none(), "{bad:?}");
        }
        // Roughly JSON is enough: a bare word and a missing comma still have a shape.
        assert!(mutate(br#"{"a": yes "b": 1}"#, 1).is_some());
    }

    #[test]
    fn mutants_keep_the_shape_mostly_parse_and_are_reproducible() {
        let mut parsed = 0;
        let mut changed = 0;
        for seed in 0..2_000u64 {
            let mutant = mutate(SCENARIO.as_bytes(), seed).unwrap();
            assert_eq!(mutate(SCENARIO.as_bytes(), seed).unwrap(), mutant, "seed {seed}");
            assert!(shape(&mutant).is_some(), "seed {seed}: {}", String::from_utf8_lossy(&mutant));
            parsed += usize::from(serde_json::from_slice::<serde_json::Value>(&mutant).is_ok());
            changed += usize::from(mutant != SCENARIO.as_bytes());
        }
        // The misses are the spellings serde_json refuses on purpose (1e309, a bare word from
        // an unquoted string) and the few variants equal to their original.
        assert!(parsed > 1_800, "{parsed} of 2000 parse");
        assert!(changed > 1_900, "{changed} of 2000 differ from the input");
    }

    #[test]
    fn every_kind_of_mutation_happens() {
        let mutants: Vec<String> =
            (0..2_000u64).map(|seed| String::from_utf8(mutate(SCENARIO.as_bytes(), seed).unwrap()).unwrap()).collect();
        let any = |f: &dyn Fn(&str) -> bool| mutants.iter().any(|m| f(m));
        // A member deleted, with its comma.
        assert!(any(&|m| m.contains(r#"{"host": "h2"}"#)));
        // A member repeated.
        assert!(any(&|m| m.matches(r#""num_instances": 2"#).count() == 2));
        // A member inserted into the empty object, without a trailing comma.
        assert!(any(&|m| serde_json::from_str::<serde_json::Value>(m)
            .is_ok_and(|v| v["hosts"][0]["stats"].as_object().is_some_and(|o| o.len() == 1))));
        // A number varied, a string escaped, a list of names extended, a boundary value.
        assert!(any(&|m| m.contains(r#""vcpus": 5"#)));
        assert!(any(&|m| m.contains(r#""\u00681""#)));
        assert!(any(&|m| m.contains(r#""RamFilter,ComputeFilter,"#)));
        assert!(any(&|m| m.contains("18446744073709551616")));
        // A key replaced by another key.
        assert!(any(&|m| m.contains(r#""vcpus": "h1""#) || m.contains(r#"{"vcpus": "h1""#)));
    }

    #[test]
    fn mutate_half_takes_even_seeds_and_falls_back_otherwise() {
        let input = br#"{"a": [1, "x"], "b": {}}"#;
        // The fallback marks the buffer so that its use shows.
        let run = |seed: u32, size: usize, max_size: usize| {
            let mut data = vec![b' '; 64];
            data[..input.len()].copy_from_slice(input);
            let mut fell_back = false;
            let len = mutate_half(&mut data, size, max_size, seed, |d: &mut [u8], _, _| {
                fell_back = true;
                d[0] = b'!';
                1
            });
            (fell_back, data[..len].to_vec())
        };
        let n = input.len();
        // Even: `mutate`'s mutant of the input, written in place.
        let (fell_back, out) = run(4, n, 64);
        assert!(!fell_back);
        assert_eq!(Some(out), mutate(input, 4));
        // Odd, no JSON shape (a cut string), or no room: the fallback.
        assert_eq!(run(5, n, 64), (true, b"!".to_vec()));
        assert_eq!(run(4, 9, 64), (true, b"!".to_vec()));
        assert_eq!(run(4, n, 2), (true, b"!".to_vec()));
        // A size beyond the buffer is the fallback's to handle, not a panic here.
        assert_eq!(run(4, 65, 64), (true, b"!".to_vec()));
    }

    #[test]
    fn deep_nesting_is_scanned_without_recursion() {
        let deep = format!("{}1{}", "[".repeat(100_000), "]".repeat(100_000));
        let mutant = mutate(deep.as_bytes(), 7).unwrap();
        assert!(shape(&mutant).is_some());
    }
}
