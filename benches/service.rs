//! Service scheduling: 1,000 instances of 50 services on 2,000 hosts, placed from nothing; the
//! same services reconciled on the result (every instance kept); and every instance of a
//! removed host rescheduled.

#![allow(missing_docs)] // criterion_group! generates undocumented items
use criterion::{criterion_group, criterion_main, Criterion};
use placewise::rng::SplitMix64;
use placewise::service::{
    EdgeHost, IngressAllocation, Scope, ServiceRequest, ServiceScheduler, ServiceSpec, Site, VolumeRequest,
};
use placewise::Cluster;

fn site(hosts: usize, seed: u64) -> Cluster {
    let mut rng = SplitMix64::new(seed);
    let mut b = Cluster::builder();
    for h in 0..hosts {
        let mut e = EdgeHost::new(format!("edge-{h:04}"))
            .memory_mb(8192.0 + 1024.0 * rng.below(8) as f64)
            .cpus(4.0 + rng.below(4) as f64)
            .label("zone", format!("z{}", h % 4))
            .ingress_addresses(rng.below(4) as u32);
        if rng.below(4) == 0 {
            e = e.gpus(1).label("gpu", "yes");
        }
        if rng.below(2) == 0 {
            e = e.volume("data", 50_000.0, &[("type", if h % 3 == 0 { "ssd" } else { "hdd" })]);
        }
        b = b.host(e.build());
    }
    b.build().unwrap()
}

/// 50 services of 20 replicas: a mix of labels, limits, volumes, ingress, GPUs and affinity.
fn services() -> Vec<ServiceSpec> {
    (0..50)
        .map(|i| {
            let mut s = ServiceSpec::replicated(format!("app{}", i / 5), format!("svc{i}"), 20)
                .memory_mb(64.0 + 32.0 * (i % 4) as f64)
                .cpus(0.05);
            match i % 5 {
                0 => s = s.match_host_labels("zone = z1 or zone = z2".parse().unwrap()),
                1 => s = s.volume(VolumeRequest::ephemeral("cache", 500.0).labels("type = ssd".parse().unwrap())),
                2 => s = s.ingress(),
                3 if i % 10 == 3 => s = s.gpus(1).match_host_labels("gpu".parse().unwrap()),
                _ => s = s.preferred_anti_affinity(format!("svc{}", i - 1)),
            }
            s
        })
        .collect()
}

fn bench(c: &mut Criterion) {
    let cluster = site(2_000, 7);
    let site_data = Site::new(&cluster, IngressAllocation::HostPools).unwrap();
    let request = ServiceRequest::new(site_data, services());
    let scheduler = ServiceScheduler::new();
    let placed = scheduler.schedule(&cluster, &request).unwrap();
    assert_eq!(placed.decisions.len() + placed.unschedulable.len(), 1_000);
    let victim = placed
        .cluster
        .hosts()
        .find(|(_, h)| !h.instances.is_empty())
        .map(|(id, _)| placed.cluster.host_name(id).to_owned())
        .unwrap();
    let mut group = c.benchmark_group("service_2000_hosts");
    group.sample_size(10);
    group.bench_function("place_1000_instances_50_services", |b| {
        b.iter(|| scheduler.schedule(&cluster, &request).unwrap())
    });
    group.bench_function("reconcile_1000_kept", |b| b.iter(|| scheduler.schedule(&placed.cluster, &request).unwrap()));
    group.bench_function("reschedule_removed_host", |b| {
        b.iter(|| scheduler.reschedule(&placed.cluster, &request, &victim, Scope::All).unwrap())
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
