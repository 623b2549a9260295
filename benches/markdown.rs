//! Markdown export and import (DESIGN.md §4) on lists of 10 / 1,000 / 10,000
//! tasks.

mod common;

use std::hint::black_box;

use common::{SIZES, list};
use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use goalkeeper::todo::{from_markdown, to_markdown};

fn bench_markdown(c: &mut Criterion) {
    let mut group = c.benchmark_group("markdown");
    for n in SIZES {
        let list = list(n);
        let text = to_markdown(&list);
        assert_eq!(from_markdown(&text).as_ref(), Ok(&list), "round-trips");
        group.bench_with_input(BenchmarkId::new("export", n), &list, |b, list| {
            b.iter(|| to_markdown(black_box(list)))
        });
        group.bench_with_input(BenchmarkId::new("import", n), &text, |b, text| {
            b.iter(|| from_markdown(black_box(text)).expect("imports"))
        });
    }
    group.finish();
}

criterion_group!(benches, bench_markdown);
criterion_main!(benches);
