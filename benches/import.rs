//! Importing a cluster from a real system's objects, beside building the same cluster from
//! placewise's own JSON, in the same run so the ratio shows (the issue asks for at most 2×):
//!
//! - `import/longhorn_list` on 10,000 Longhorn nodes with 4 disks each (the `replica` bench's
//!   cluster, `support::storage_cluster(10_000, 42)`, written as Longhorn's objects by
//!   `replica::import::write`, nodes only, in one compact JSON `List`): the importer's JSON
//!   entry, `replica::import::read_json` (parsed without the members it never reads, then
//!   read);
//! - `import/longhorn_value`: the general path on the same text, `Document::from_json` (every
//!   member kept) then `replica::import::read`;
//! - `import/longhorn_read`: `read` alone, on the parsed document;
//! - `import/own_json`: the same cluster from its own snapshot JSON (`Cluster::from_json`, as
//!   `Cluster::to_json` writes it).
//!
//! Run with `cargo bench --bench import`.
#![allow(missing_docs)] // criterion_group! generates undocumented items

use criterion::{criterion_group, criterion_main, Criterion};
use placewise::import::Document;
use placewise::replica::import;
use placewise::replica::ReplicaSettings;
use placewise::snapshot::Cluster;
use std::hint::black_box;
use std::time::Duration;

#[path = "../tests/support/mod.rs"]
mod support;

/// The nodes of `cluster` as one Longhorn `List`, compact JSON.
fn longhorn_list(cluster: &Cluster) -> String {
    let mut all = import::write(cluster, &ReplicaSettings::default(), &[]);
    if let Some(items) = all.get_mut("items").and_then(|i| i.as_array_mut()) {
        items.retain(|o| o.get("kind").and_then(|k| k.as_str()) == Some("Node"));
    }
    serde_json::to_string(&all).unwrap()
}

fn importing(c: &mut Criterion) {
    let mut group = c.benchmark_group("import");
    group.sample_size(10).measurement_time(Duration::from_secs(10));
    let cluster = support::storage_cluster(10_000, 42);
    let longhorn = longhorn_list(&cluster);
    let own = cluster.to_json();
    // Both texts describe the same cluster: checked before measuring.
    let doc = Document::from_json("nodes.json", &longhorn).unwrap();
    let read = import::read(std::slice::from_ref(&doc)).unwrap();
    let built = Cluster::from_json(&own).unwrap();
    assert_eq!(read.cluster.len(), 10_000);
    assert_eq!(read.cluster.len(), built.len());
    assert!(read.warnings.is_empty(), "{:?}", read.warnings.first());
    let disks = |c: &Cluster| c.hosts().map(|(_, h)| h.disks.len()).sum::<usize>();
    assert_eq!(disks(&read.cluster), 40_000);
    assert_eq!(disks(&read.cluster), disks(&built));
    eprintln!("import: Longhorn text {} bytes, own JSON {} bytes", longhorn.len(), own.len());
    group
        .bench_function("longhorn_list", |b| b.iter(|| import::read_json("nodes.json", black_box(&longhorn)).unwrap()));
    group.bench_function("longhorn_value", |b| {
        b.iter(|| {
            let doc = Document::from_json("nodes.json", black_box(&longhorn)).unwrap();
            import::read(std::slice::from_ref(&doc)).unwrap()
        })
    });
    group.bench_function("longhorn_read", |b| b.iter(|| import::read(std::slice::from_ref(black_box(&doc))).unwrap()));
    group.bench_function("own_json", |b| b.iter(|| Cluster::from_json(black_box(&own)).unwrap()));
    group.finish();
}

criterion_group!(benches, importing);
criterion_main!(benches);
