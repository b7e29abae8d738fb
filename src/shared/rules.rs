//! The commit rules, written once: every store ([`SharedCluster`](super::SharedCluster), a
//! database adapter) judges a plan's claims with [`judge_plan`] against its current state and
//! then only records the verdicts.

use super::claim::{Claim, CommitMode, Plan, Validation};
use super::error::SharedError;
use super::outcome::{Conflict, ConflictReason};
use crate::schedule::Scheduler;
use crate::snapshot::{Cluster, ClusterEvent};

/// What a store knows of a claim before the rules run, from records the rules cannot see.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Prior {
    /// An earlier attempt of this same commit landed the claim (its outcome was lost on the
    /// way back): it counts as landed and is not applied again.
    Landed,
    /// The claim cannot land, for a reason the store found (say, its instance id is already
    /// claimed by another plan).
    Conflict(ConflictReason),
}

/// The verdicts of the commit rules on one plan, made by [`judge_plan`].
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Verdicts {
    /// The state with every claim of `landed` applied (the current state when none lands).
    pub next: Cluster,
    /// The claims that land now, in plan order: their position and their `InstancePlaced`
    /// event.
    pub landed: Vec<(usize, ClusterEvent)>,
    /// The claims an earlier attempt landed ([`Prior::Landed`]), in plan order.
    pub already: Vec<usize>,
    /// The claims that do not land, in plan order.
    pub conflicts: Vec<Conflict>,
    /// How many claims were planned on a generation older than their host's.
    pub stale_reads: u32,
}

/// Judges `plan` against `current`, the store's current state, claim by claim, with the plan's
/// earlier landed claims counted (the [module docs](super#commit-rules) give the four rules);
/// with [`CommitMode::Gang`] one conflict turns every landing claim into
/// [`ConflictReason::GangAborted`]. `prior` tells what the store already knows of claim `i`
/// (`None` for most claims). The plan's lineage is the store's to check.
///
/// Computes in O(claims × (filters + hosts / 64)).
///
/// # Errors
///
/// [`SharedError::Schedule`] when `scheduler` cannot judge the plan's request.
pub fn judge_plan(
    current: &Cluster,
    scheduler: &Scheduler,
    plan: &Plan,
    prior: &dyn Fn(usize, &Claim) -> Option<Prior>,
) -> Result<Verdicts, SharedError> {
    let mut working = current.clone();
    let mut landed: Vec<(usize, ClusterEvent)> = Vec::with_capacity(plan.claims.len());
    let mut already = Vec::new();
    let mut conflicts = Vec::new();
    let mut stale_reads = 0u32;
    for (i, claim) in plan.claims.iter().enumerate() {
        let conflict = |reason| Conflict { claim: i, host: claim.host_name.clone(), reason };
        match prior(i, claim) {
            Some(Prior::Landed) => {
                already.push(i);
                continue;
            }
            Some(Prior::Conflict(reason)) => {
                conflicts.push(conflict(reason));
                continue;
            }
            None => {}
        }
        let Some(host) = current.host(claim.host).filter(|h| *h.name == *claim.host_name) else {
            conflicts.push(conflict(ConflictReason::HostGone));
            continue;
        };
        if host.generation != claim.generation {
            stale_reads += 1;
            if plan.validation == Validation::Generation {
                let reason = ConflictReason::Stale { planned: claim.generation, current: host.generation };
                conflicts.push(conflict(reason));
                continue;
            }
        }
        let verdict = scheduler.check_host(&working, &plan.request, claim.host).map_err(SharedError::Schedule)?;
        if !verdict.passed {
            conflicts.push(conflict(ConflictReason::NoFit { filter: verdict.filter, reason: verdict.reason }));
            continue;
        }
        let event = ClusterEvent::InstancePlaced { host: claim.host_name.clone(), instance: claim.instance.clone() };
        let next = match working.apply(&event) {
            Ok(next) => next,
            Err(e) => {
                conflicts.push(conflict(ConflictReason::Rejected(e)));
                continue;
            }
        };
        if let Some(resource) = over_committed(&next, claim) {
            conflicts.push(conflict(ConflictReason::OverCommit { resource }));
            continue;
        }
        working = next;
        landed.push((i, event));
    }
    if plan.mode == CommitMode::Gang && !conflicts.is_empty() && !landed.is_empty() {
        for (i, _) in landed.drain(..) {
            let host = plan.claims[i].host_name.clone();
            conflicts.push(Conflict { claim: i, host, reason: ConflictReason::GangAborted });
        }
        conflicts.sort_by_key(|c| c.claim);
        working = current.clone();
    }
    Ok(Verdicts { next: working, landed, already, conflicts, stale_reads })
}

/// The first resource `claim`'s instance uses that has less than zero free on its host in
/// `next`, the state with the claim applied.
fn over_committed(next: &Cluster, claim: &Claim) -> Option<String> {
    let host = next.host(claim.host)?;
    claim
        .instance
        .resources
        .iter()
        .filter(|(_, &amount)| amount > 0.0)
        .find(|(kind, _)| next.resource_kinds().get(kind).is_none_or(|r| host.resource(r).free() < 0.0))
        .map(|(kind, _)| kind.clone())
}
