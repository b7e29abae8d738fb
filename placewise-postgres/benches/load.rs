//! How long a scheduler process takes to load the shared state: the newest checkpoint and the
//! log after it, for 10,000 and 100,000 hosts, beside the floor of building the same cluster
//! from JSON already in memory (no database).

#![allow(missing_docs)] // criterion_group! generates undocumented items

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use placewise::snapshot::{Cluster, ClusterSpec, HostSpec, InstanceSpec};
use placewise_postgres::server::TempServer;
use placewise_postgres::PgStore;

fn cluster(hosts: usize) -> Cluster {
    let mut b = Cluster::builder();
    for i in 0..hosts {
        let mut h = HostSpec::new(format!("node-{i:06}"))
            .vcpus(64.0)
            .memory_mb(262_144.0)
            .zone(format!("az{}", i % 3))
            .label("pool", format!("p{}", i % 4));
        for k in 0..2 {
            h = h.instance(InstanceSpec::new(format!("vm-{i}-{k}")).resource("memory_mb", 4096.0));
        }
        b = b.host(h);
    }
    b.build().expect("a valid generated cluster")
}

fn load(c: &mut Criterion) {
    let server = match TempServer::start() {
        Ok(s) => s,
        Err(e) => {
            eprintln!("SKIPPED the load bench: {e}");
            return;
        }
    };
    let mut group = c.benchmark_group("load");
    group.sample_size(10);
    for hosts in [10_000, 100_000] {
        let seeded = cluster(hosts);
        let mut admin = postgres::Client::connect(&server.url(), postgres::NoTls).expect("connect");
        admin
            .batch_execute("DROP TABLE IF EXISTS placewise_schema, placewise_head, placewise_hosts, placewise_claims, placewise_log, placewise_checkpoints")
            .expect("reset");
        PgStore::migrate(&server.url()).expect("migrate");
        PgStore::connect(&server.url()).expect("connect").bootstrap(&seeded).expect("bootstrap");
        group.bench_with_input(BenchmarkId::new("checkpoint_from_postgres", hosts), &hosts, |b, _| {
            b.iter(|| PgStore::connect(&server.url()).expect("load"))
        });
        let json = serde_json::to_string(&seeded.to_spec()).expect("json");
        group.bench_with_input(BenchmarkId::new("floor_json_in_memory", hosts), &hosts, |b, _| {
            b.iter(|| {
                let spec: ClusterSpec = serde_json::from_str(&json).expect("parse");
                Cluster::from_spec(&spec).expect("build")
            })
        });
    }
    group.finish();
}

criterion_group!(benches, load);
criterion_main!(benches);
