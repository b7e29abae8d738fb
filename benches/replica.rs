//! Replica scheduling: 3 replicas of a new volume on 1k and 10k nodes with 4 disks each.

#![allow(missing_docs)] // criterion_group! generates undocumented items
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use placewise::replica::{ReplicaScheduler, ReplicaSettings, Volume};
use placewise::rng::SplitMix64;
use placewise::{Cluster, DiskSpec, HostSpec};

const G: i64 = 1 << 30;

fn cluster(nodes: usize, seed: u64) -> Cluster {
    let mut rng = SplitMix64::new(seed);
    let mut b = Cluster::builder();
    for n in 0..nodes {
        let mut h = HostSpec::new(format!("n{n}")).zone(format!("z{}", n % 3));
        for d in 0..4 {
            let avail = 300 + rng.below(700) as i64;
            h = h.disk(DiskSpec::new(format!("d{d}"), 1000 * G, avail * G).scheduled(rng.below(500) as i64 * G));
        }
        b = b.host(h);
    }
    b.build().unwrap()
}

fn bench(c: &mut Criterion) {
    let scheduler = ReplicaScheduler::new(ReplicaSettings::default()).unwrap();
    let volume = Volume::new("vol", 10 * G, 3);
    let mut group = c.benchmark_group("replica_volume_3");
    for nodes in [1_000, 10_000] {
        let cl = cluster(nodes, 42);
        group.bench_with_input(BenchmarkId::from_parameter(nodes), &cl, |b, cl| {
            b.iter(|| scheduler.schedule_volume(cl, &volume, &[], 0))
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
