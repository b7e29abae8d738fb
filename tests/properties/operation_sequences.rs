//! Random operation sequences against a plain model of the cluster (issue 14).
//!
//! Each case builds a small cluster, then runs a sequence of events (some valid, some not) and
//! scheduling calls. A plain model (hosts in a `BTreeMap`, instances with their amounts) follows
//! every accepted event. After each step:
//!
//! - the snapshot's `used` of every host and kind equals the model's (amounts are small
//!   integers, so float sums are exact);
//! - a refused event leaves the snapshot (spec and generation) and the model unchanged;
//! - a placement never puts more on a host than the model has free, never uses a host the model
//!   says is unschedulable, and two calls with the same seed give the same answer.
//!
//! Cases: `PLACEWISE_SEQUENCE_CASES` (default 64, which CI runs). The long run is
//! `PLACEWISE_SEQUENCE_CASES=100000 cargo test --release --test properties operation_sequences`.

use placewise::error::EventError;
use placewise::request::Request;
use placewise::schedule::Scheduler;
use placewise::snapshot::{Cluster, ClusterEvent, HostSpec, InstanceSpec, ResourceSpec, StateChange};
use proptest::prelude::*;
use std::collections::BTreeMap;

const KINDS: [&str; 3] = ["vcpus", "memory_mb", "gpu"];

#[derive(Debug, Clone)]
struct ModelHost {
    limit: [f64; 3],
    unlisted: [f64; 3],
    instances: BTreeMap<String, [f64; 3]>,
    schedulable: bool,
}

impl ModelHost {
    fn used(&self, k: usize) -> f64 {
        self.unlisted[k] + self.instances.values().map(|a| a[k]).sum::<f64>()
    }

    fn free(&self, k: usize) -> f64 {
        self.limit[k] - self.used(k)
    }
}

#[derive(Debug, Clone)]
enum Op {
    AddHost {
        name: u8,
        capacity: [u8; 3],
        ratio: u8,
    },
    RemoveHost {
        name: u8,
    },
    Place {
        name: u8,
        id: u8,
        amounts: [u8; 3],
    },
    Unplace {
        name: u8,
        id: u8,
    },
    Cordon {
        name: u8,
        cordoned: bool,
    },
    /// Always refused: a negative amount, or a sum that is not finite.
    Hostile {
        name: u8,
        infinite: bool,
    },
    Schedule {
        count: u8,
        amounts: [u8; 3],
        seed: u64,
    },
}

fn op() -> impl Strategy<Value = Op> {
    let amounts = || prop::array::uniform3(0u8..6);
    prop_oneof![
        2 => (0u8..8, prop::array::uniform3(0u8..32), 1u8..4)
            .prop_map(|(name, capacity, ratio)| Op::AddHost { name, capacity, ratio }),
        1 => (0u8..8).prop_map(|name| Op::RemoveHost { name }),
        3 => (0u8..8, 0u8..6, amounts()).prop_map(|(name, id, amounts)| Op::Place { name, id, amounts }),
        2 => (0u8..8, 0u8..6).prop_map(|(name, id)| Op::Unplace { name, id }),
        1 => (0u8..8, any::<bool>()).prop_map(|(name, cordoned)| Op::Cordon { name, cordoned }),
        1 => (0u8..8, any::<bool>()).prop_map(|(name, infinite)| Op::Hostile { name, infinite }),
        3 => (0u8..6, amounts(), any::<u64>()).prop_map(|(count, amounts, seed)| Op::Schedule { count, amounts, seed }),
    ]
}

fn host_name(n: u8) -> String {
    format!("h{n}")
}

fn instance(id: &str, amounts: [u8; 3]) -> InstanceSpec {
    let mut spec = InstanceSpec::new(id);
    for (k, &a) in amounts.iter().enumerate() {
        if a > 0 {
            spec = spec.resource(KINDS[k], f64::from(a));
        }
    }
    spec
}

fn start() -> (Cluster, BTreeMap<String, ModelHost>) {
    let mut builder = Cluster::builder();
    let mut model = BTreeMap::new();
    for n in 0..3u8 {
        let cap = f64::from(8 * (n + 1));
        builder = builder.host(
            HostSpec::new(host_name(n))
                .resource("vcpus", ResourceSpec::new(cap).allocation_ratio(2.0))
                .resource("memory_mb", ResourceSpec::new(cap * 4.0).used(2.0))
                .resource("gpu", ResourceSpec::new(f64::from(n))),
        );
        let host = ModelHost {
            limit: [cap * 2.0, cap * 4.0, f64::from(n)],
            unlisted: [0.0, 2.0, 0.0],
            instances: BTreeMap::new(),
            schedulable: true,
        };
        model.insert(host_name(n), host);
    }
    (builder.build().expect("the starting cluster is valid"), model)
}

/// The event for `op`, and how the model changes if the event is accepted (`None`: it must be
/// refused).
fn event(op: &Op, model: &BTreeMap<String, ModelHost>) -> Option<(ClusterEvent, Option<BTreeMap<String, ModelHost>>)> {
    let mut next = model.clone();
    let e = match *op {
        Op::AddHost { name, capacity, ratio } => {
            let name = host_name(name);
            let mut spec = HostSpec::new(&name);
            let mut host =
                ModelHost { limit: [0.0; 3], unlisted: [0.0; 3], instances: BTreeMap::new(), schedulable: true };
            for (k, &c) in capacity.iter().enumerate() {
                let ratio = f64::from(ratio);
                spec = spec.resource(KINDS[k], ResourceSpec::new(f64::from(c)).allocation_ratio(ratio));
                host.limit[k] = f64::from(c) * ratio;
            }
            let exists = next.insert(name, host).is_some();
            (ClusterEvent::HostAdded { host: spec }, (!exists).then_some(next))
        }
        Op::RemoveHost { name } => {
            let name = host_name(name);
            let known = next.remove(&name).is_some();
            (ClusterEvent::HostRemoved { host: name }, known.then_some(next))
        }
        Op::Place { name, id, amounts } => {
            let (name, id) = (host_name(name), format!("i{id}"));
            // Instance ids are unique across the cluster.
            let taken = next.values().any(|h| h.instances.contains_key(&id));
            let accepted = match next.get_mut(&name) {
                Some(h) if !taken => {
                    h.instances.insert(id.clone(), amounts.map(f64::from));
                    true
                }
                _ => false,
            };
            (ClusterEvent::InstancePlaced { host: name, instance: instance(&id, amounts) }, accepted.then_some(next))
        }
        Op::Unplace { name, id } => {
            let (name, id) = (host_name(name), format!("i{id}"));
            let accepted = next.get_mut(&name).is_some_and(|h| h.instances.remove(&id).is_some());
            (ClusterEvent::InstanceRemoved { host: name, instance: id }, accepted.then_some(next))
        }
        Op::Cordon { name, cordoned } => {
            let name = host_name(name);
            let accepted = match next.get_mut(&name) {
                Some(h) => {
                    h.schedulable = !cordoned;
                    true
                }
                None => false,
            };
            let change = StateChange::default().cordoned(cordoned);
            (ClusterEvent::HostStateChanged { host: name, change }, accepted.then_some(next))
        }
        Op::Hostile { name, infinite } => {
            let amount = if infinite { f64::MAX } else { -1.0 };
            // Two instances of MAX on one host: the second makes `used` infinite.
            let spec = InstanceSpec::new("hostile").resource("vcpus", amount);
            let host = host_name(name);
            if infinite {
                if let Some(h) = model.get(&host) {
                    if !h.instances.contains_key("hostile") {
                        let twin = HostSpec::new(&host)
                            .resource("vcpus", ResourceSpec::new(1.0))
                            .instance(InstanceSpec::new("a").resource("vcpus", f64::MAX))
                            .instance(InstanceSpec::new("b").resource("vcpus", f64::MAX));
                        return Some((ClusterEvent::HostUpdated { host: twin }, None));
                    }
                }
            }
            (ClusterEvent::InstancePlaced { host, instance: spec }, None)
        }
        Op::Schedule { .. } => return None,
    };
    Some(e)
}

fn cases() -> u32 {
    std::env::var("PLACEWISE_SEQUENCE_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(64)
}

fn check_model(cluster: &Cluster, model: &BTreeMap<String, ModelHost>) -> Result<(), TestCaseError> {
    prop_assert_eq!(cluster.len(), model.len());
    for (name, m) in model {
        let id = cluster.host_id(name).ok_or_else(|| TestCaseError::fail(format!("{name} missing")))?;
        let host = cluster.host(id).ok_or_else(|| TestCaseError::fail(format!("{name} has no record")))?;
        for (k, kind) in KINDS.iter().enumerate() {
            let used = cluster.resource_kinds().get(kind).map_or(0.0, |r| host.resource(r).used);
            prop_assert_eq!(used, m.used(k), "{} {}", name, kind);
        }
        prop_assert_eq!(cluster.is_schedulable(id), m.schedulable, "{}", name);
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases()))]

    #[test]
    fn operation_sequences_keep_the_model_and_the_invariants(ops in prop::collection::vec(op(), 1..24)) {
        let (mut cluster, mut model) = start();
        let scheduler = Scheduler::builder()
            .filter(placewise::filter::builtin::ComputeFilter)
            .filter(placewise::filter::builtin::ResourceFilter::new())
            .weigher(placewise::weigh::builtin::FreeResourceWeigher::ram(), 1.0)
            .host_subset_size(2)
            .build()
            .unwrap();
        let mut serial = 0u32;
        for op in &ops {
            if let Op::Schedule { count, amounts, seed } = *op {
                let mut request = Request::new(u32::from(count)).seed(seed);
                for (k, &a) in amounts.iter().enumerate() {
                    request = request.resource(KINDS[k], f64::from(a));
                }
                let placement = scheduler.schedule(&cluster, &request).unwrap();
                let again = scheduler.schedule(&cluster, &request).unwrap();
                prop_assert_eq!(&placement.selections, &again.selections, "same seed, different answer");
                prop_assert!(placement.selections.len() <= usize::from(count));
                let mut taken: BTreeMap<String, u32> = BTreeMap::new();
                for s in &placement.selections {
                    *taken.entry(s.host_name.clone()).or_default() += 1;
                }
                for (name, n) in taken {
                    let m = &model[&name];
                    prop_assert!(m.schedulable, "{name} is cordoned in the model");
                    for (k, &a) in amounts.iter().enumerate() {
                        let want = f64::from(a) * f64::from(n);
                        prop_assert!(a == 0 || want <= m.free(k), "{name} over-committed on {}: {want} > {}", KINDS[k], m.free(k));
                    }
                    // Record the picks so the next steps see them.
                    for _ in 0..n {
                        serial += 1;
                        let id = format!("p{serial}");
                        let e = ClusterEvent::InstancePlaced { host: name.clone(), instance: instance(&id, amounts) };
                        cluster = cluster.apply(&e).unwrap();
                        model.get_mut(&name).unwrap().instances.insert(id, amounts.map(f64::from));
                    }
                }
                check_model(&cluster, &model)?;
                continue;
            }
            let Some((event, expected)) = event(op, &model) else { continue };
            let before = (cluster.to_spec(), cluster.generation());
            match (cluster.apply(&event), expected) {
                (Ok(next), Some(next_model)) => {
                    prop_assert_eq!(next.generation(), before.1 + 1);
                    cluster = next;
                    model = next_model;
                }
                (Err(e), None) => {
                    if let Op::Hostile { .. } = op {
                        prop_assert!(matches!(e, EventError::Invalid(_) | EventError::UnknownHost { .. }), "{e:?}");
                    }
                    prop_assert_eq!(&cluster.to_spec(), &before.0, "a refused event changed the snapshot");
                    prop_assert_eq!(cluster.generation(), before.1);
                }
                (Ok(_), None) => return Err(TestCaseError::fail(format!("{event:?} was accepted but must be refused"))),
                (Err(e), Some(_)) => return Err(TestCaseError::fail(format!("{event:?} was refused: {e}"))),
            }
            check_model(&cluster, &model)?;
        }
    }
}
