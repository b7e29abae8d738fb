//! Interleavings of plans, events, commits, releases and expiries against a sequential model
//! of the commit rules: the shared cluster lands exactly the claims the model lands, and ends
//! with the model's per-host use.

use placewise::id::{HostId, ResourceId};
use placewise::shared::{ClaimId, CommitMode, Plan, SharedCluster, Validation};
use placewise::snapshot::StateChange;
use placewise::{
    Cluster, ClusterEvent, ComputeFilter, FreeResourceWeigher, HostSpec, Request, ResourceFilter, Scheduler,
};
use proptest::prelude::*;
use std::collections::BTreeMap;

const HOSTS: usize = 4;
const MEM: f64 = 4096.0;

#[derive(Debug, Clone)]
enum Op {
    Plan { sched: usize, count: u32, mem: u32, expires: Option<u64> },
    Commit { sched: usize, gang: bool, fit: bool },
    Cordon { host: usize, on: bool },
    Metrics { host: usize },
    Release { pick: usize },
    Expire { now: u64 },
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => (0..3usize, 1..4u32, 1..5u32, proptest::option::of(0..10u64))
            .prop_map(|(sched, count, mem, expires)| Op::Plan { sched, count, mem, expires }),
        3 => (0..3usize, any::<bool>(), any::<bool>()).prop_map(|(sched, gang, fit)| Op::Commit { sched, gang, fit }),
        1 => (0..HOSTS, any::<bool>()).prop_map(|(host, on)| Op::Cordon { host, on }),
        1 => (0..HOSTS).prop_map(|host| Op::Metrics { host }),
        1 => any::<usize>().prop_map(|pick| Op::Release { pick }),
        1 => (0..12u64).prop_map(|now| Op::Expire { now }),
    ]
}

/// The model: per host its use, a version bumped by every change, and the cordon flag.
#[derive(Debug, Clone, Default)]
struct ModelHost {
    used: f64,
    version: u64,
    cordoned: bool,
}

struct Pending {
    plan: Plan,
    versions: Vec<u64>,
    mem: f64,
}

struct OpenModelClaim {
    id: ClaimId,
    host: usize,
    mem: f64,
    expires: Option<u64>,
}

fn schedulers() -> Vec<Scheduler> {
    let base = || Scheduler::builder().filter(ComputeFilter).filter(ResourceFilter::new());
    vec![
        base().weigher(FreeResourceWeigher::ram(), -1.0).build().unwrap(),
        base().weigher(FreeResourceWeigher::ram(), 1.0).build().unwrap(),
        base().weigher(FreeResourceWeigher::ram(), 1.0).host_subset_size(2).seed(5).build().unwrap(),
    ]
}

fn run(ops: &[Op]) -> Result<(), TestCaseError> {
    let mut b = Cluster::builder();
    for i in 0..HOSTS {
        b = b.host(HostSpec::new(format!("h{i}")).memory_mb(MEM).vcpus(8.0));
    }
    let shared = SharedCluster::new(b.build().unwrap());
    let scheds = schedulers();
    let mut model = vec![ModelHost::default(); HOSTS];
    let mut pending: Vec<Option<Pending>> = (0..3).map(|_| None).collect();
    let mut open: Vec<OpenModelClaim> = Vec::new();
    let mut next_id = 0;
    for op in ops {
        match *op {
            Op::Plan { sched, count, mem, expires } => {
                let snap = shared.snapshot();
                let mem = f64::from(mem) * 512.0;
                let req = Request::new(count).memory_mb(mem);
                let placement = scheds[sched].schedule(&snap, &req).unwrap();
                let ids: Vec<String> = (0..count)
                    .map(|_| {
                        next_id += 1;
                        format!("vm-{next_id}")
                    })
                    .collect();
                let mut plan = Plan::from_placement(&snap, &req, &placement, &ids).unwrap();
                if let Some(t) = expires {
                    plan = plan.expires_at(t);
                }
                let versions = plan.claims().iter().map(|c| model[c.host.index()].version).collect();
                pending[sched] = Some(Pending { plan, versions, mem });
            }
            Op::Commit { sched, gang, fit } => {
                let Some(p) = pending[sched].take() else { continue };
                let validation = if fit { Validation::Fit } else { Validation::Generation };
                let mode = if gang { CommitMode::Gang } else { CommitMode::Partial };
                let plan = p.plan.clone().mode(mode).validation(validation);
                // The model's verdicts, claim by claim, against its state plus earlier claims.
                let mut working = model.clone();
                let mut lands = Vec::new();
                for (i, c) in plan.claims().iter().enumerate() {
                    let h = c.host.index();
                    let stale = model[h].version != p.versions[i];
                    let fits = !working[h].cordoned && working[h].used + p.mem <= MEM;
                    if (stale && !fit) || !fits {
                        continue;
                    }
                    working[h].used += p.mem;
                    working[h].version += 1;
                    lands.push(i);
                }
                if gang && lands.len() != plan.claims().len() {
                    lands.clear();
                }
                let out = shared.commit(&scheds[sched], &plan).unwrap();
                let landed: Vec<usize> = out.committed.iter().map(|c| c.claim).collect();
                prop_assert_eq!(&landed, &lands, "commit of {:?}", plan.claims());
                for c in &out.committed {
                    let h = c.host.index();
                    model[h].used += p.mem;
                    model[h].version += 1;
                    open.push(OpenModelClaim { id: c.id, host: h, mem: p.mem, expires: plan.expiry() });
                }
            }
            Op::Cordon { host, on } => {
                let change = StateChange::default().cordoned(on);
                shared.publish(ClusterEvent::HostStateChanged { host: format!("h{host}"), change }).unwrap();
                model[host].cordoned = on;
                model[host].version += 1;
            }
            Op::Metrics { host } => {
                let metrics = BTreeMap::from([("load".to_string(), 1.0)]);
                shared.publish(ClusterEvent::MetricsUpdated { host: format!("h{host}"), metrics }).unwrap();
                // Metrics do not make claims on the host stale (ClusterEvent::bumps_generation).
            }
            Op::Release { pick } => {
                if open.is_empty() {
                    continue;
                }
                let c = open.remove(pick % open.len());
                shared.release(c.id).unwrap();
                model[c.host].used -= c.mem;
                model[c.host].version += 1;
            }
            Op::Expire { now } => {
                let mut expected: Vec<ClaimId> = Vec::new();
                open.retain(|c| {
                    let due = c.expires.is_some_and(|t| t <= now);
                    if due {
                        expected.push(c.id);
                        model[c.host].used -= c.mem;
                        model[c.host].version += 1;
                    }
                    !due
                });
                expected.sort();
                prop_assert_eq!(shared.expire(now), expected);
            }
        }
        let snap = shared.snapshot();
        for (i, m) in model.iter().enumerate() {
            let host = snap.host(HostId(i as u32)).unwrap();
            prop_assert_eq!(host.resource(ResourceId::MEMORY_MB).used, m.used, "host h{}", i);
            prop_assert!(host.resource(ResourceId::MEMORY_MB).free() >= 0.0);
        }
    }
    // The log replays to the same state.
    prop_assert_eq!(shared.log().replay().unwrap().to_spec(), shared.snapshot().to_spec());
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn commits_agree_with_the_sequential_model(ops in proptest::collection::vec(op(), 1..40)) {
        run(&ops)?;
    }
}
