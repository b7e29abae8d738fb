//! Compiling label selectors with patterns: placewise's parser (patterns built without the
//! literal prefilter) beside the `regex` crate's default build of the same pattern, which is
//! how selectors were compiled before, measured in the same run.
//!
//! The two slow patterns come from the `request_json` fuzz corpus: many optional pieces in a
//! row give the prefilter hundreds of literals, and building its Aho-Corasick automaton took
//! 30 to 120 ms. The short one is a typical selector.
//!
//! Run with `cargo bench --bench expr`.
#![allow(missing_docs)] // criterion_group! generates undocumented items

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use placewise::expr::LabelExpr;
use std::hint::black_box;

const PATTERNS: &[(&str, &str)] = &[
    ("typical", "^web-[0-9]+(-canary)?$"),
    (
        "fuzz_a",
        "uu<</<<<<<<<<<<<8<<<z<<<<<<<<<<<<<Y|u?l????????????????????????p?????I????????=?>??????????1??<<<<<<<<<<<<<<<<<<<<<<<<<<<<<<<<<<<<<<<<<<engi=u=uuu0uuuu|444lY5<<<<<<<<<<<<<<<<<<<|<<<<<<<|<<<<<<<<<<<<<<<<<<<<<<<<<<<<<<<<uu|444lY<<<<<<<<<<<<<<t<<<<<<<<",
    ),
    (
        "fuzz_b",
        "uu<<<</<<<<<<<<<8<<<<<<<<<<<<<<<<<Y|u?l????????????????????????p?????I????????=?>??????????1??<<<<<<<<<<<<<<<<<<<<<<<<<<<<<<<<<<<<<<<<<<<<<<<<<<<<<<<|<<<<<<<<<<<<<<<<<<<<<<<<<<<<<<<uuu>=u=puu0uuuu|444lY<<<<<<<<<<<<<<<<<<<<|<<<<<<<<<<<<<<uu|444lY<<<<<<<<<<<<<<t<<<<<<<<",
    ),
];

fn compile(c: &mut Criterion) {
    let mut group = c.benchmark_group("selector_compile");
    for &(name, pattern) in PATTERNS {
        let selector = format!("name ~ '{pattern}'");
        // Both accept the pattern before anything is timed (the unit tests compare matches).
        LabelExpr::parse(&selector).expect("a valid selector");
        regex::Regex::new(pattern).expect("a valid pattern");
        group.bench_with_input(BenchmarkId::new("placewise", name), &selector, |b, s| {
            b.iter(|| LabelExpr::parse(black_box(s)).unwrap())
        });
        group.bench_with_input(BenchmarkId::new("regex_default", name), &pattern, |b, p| {
            b.iter(|| regex::Regex::new(black_box(p)).unwrap())
        });
    }
    group.finish();
}

criterion_group!(benches, compile);
criterion_main!(benches);
