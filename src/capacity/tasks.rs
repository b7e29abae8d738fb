//! How many more tasks a spread service takes before a preference branch runs out: [`tasks`].

use crate::schedule::DEFAULT_MAX_COUNT;
use crate::snapshot::Cluster;
use crate::spread::shadow::Shadow;
use crate::spread::{BranchReport, SpreadError, SpreadOutcome, SpreadRequest, SpreadScheduler, SpreadScratch};

/// One branch of the spread tree, with what it can still take.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct BranchCapacity {
    /// The branch's value at each level, outermost first (empty for the root).
    pub path: Vec<String>,
    /// Nodes beneath that pass the filters.
    pub eligible_nodes: u32,
    /// The service's tasks beneath before the batch.
    pub existing: u64,
    /// More tasks its eligible nodes take: what it placed in a batch as large as the whole
    /// service can take.
    pub capacity: u32,
}

/// How [`tasks`] found the largest batch before a branch runs out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum TaskMethod {
    /// One engine run of `limit` tasks gives every leaf's capacity; the batch sizes are then
    /// tried on counts alone, with the engine's own split rules (SwarmKit's top-up split in the
    /// compatible modes, the level's allocation in the balanced mode) and a leaf placing
    /// `min(asked, room left, tasks left)`. Used when the scheduler has no user filter, the
    /// request no hard or soft spread constraint, the service does not reach `limit`, and, in a
    /// compatible mode, every level is a plain `spread`.
    Arithmetic,
    /// Bisection over batch sizes, each one engine call (`tasks_by_bisection`): the other
    /// cases, where a node's room may depend on other nodes (a user filter, a spread
    /// constraint), a leaf's room is not known (the service reaches `limit`), or a compatible
    /// mode's pack or weighted level breaks ties by eligible nodes counted only up to the
    /// batch size.
    Bisection,
}

/// The answer of [`tasks`].
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct TaskCapacity {
    /// More tasks one batch of the service places in all (up to the limit).
    pub total: u32,
    /// Whether `total` reached the limit.
    pub capped: bool,
    /// The largest batch that places every task with no branch running out: no branch with an
    /// eligible node is asked for more tasks than it can place.
    pub until_branch_full: u32,
    /// The branches that run out in a batch of `until_branch_full + 1` tasks (empty when the
    /// service fills up before any branch runs out).
    pub first_full: Vec<Vec<String>>,
    /// Every branch, parents before children, in value order.
    pub branches: Vec<BranchCapacity>,
    /// How `until_branch_full` and `first_full` were found.
    pub method: TaskMethod,
}

/// How many more tasks of `request`'s service `scheduler` places on `cluster` (the request's
/// task count is ignored): in all, up to `limit` (at most the engine's largest batch,
/// [`DEFAULT_MAX_COUNT`]); per branch of the preference tree; and how large a batch can be
/// before a branch runs out, naming that branch.
///
/// A branch runs out in a batch when it has an eligible node and is asked for more tasks than
/// it places; the batch then leans on the other branches and the spread is lost. The answer is
/// what the engine does: one engine call of `limit` tasks gives the total and every branch's
/// capacity, then the batch sizes are bisected on counts alone with the engine's split rules
/// ([`TaskMethod::Arithmetic`]), or, where counts alone do not decide a batch, with one engine
/// call per size ([`TaskMethod::Bisection`], the same answer as `tasks_by_bisection`). Both
/// assume that a branch that runs out in a batch also runs out in every larger one (a property
/// test checks this against asking every batch size in turn) and probe the same sizes.
///
/// Computes in one engine call of at most `limit` tasks, O(nodes + tasks × levels) (see the
/// [spread engine's cost](crate::spread#cost)), plus O(log total) batches on counts, each
/// O(branches × passes + tasks × siblings); with [`TaskMethod::Bisection`], O(log total)
/// engine calls instead, with one reused [`SpreadScratch`].
///
/// # Errors
///
/// As [`SpreadScheduler::schedule`]: a request the engine refuses.
pub fn tasks(
    scheduler: &SpreadScheduler,
    cluster: &Cluster,
    request: &SpreadRequest,
    limit: u32,
) -> Result<TaskCapacity, SpreadError> {
    count(scheduler, cluster, request, limit, true)
}

/// [`tasks`] with one engine call per batch size tried (always [`TaskMethod::Bisection`]): the
/// reference the arithmetic is tested against. Computes in O(log total) engine calls of at
/// most `limit` tasks.
///
/// # Errors
///
/// As [`SpreadScheduler::schedule`]: a request the engine refuses.
#[cfg(feature = "reference")]
pub fn tasks_by_bisection(
    scheduler: &SpreadScheduler,
    cluster: &Cluster,
    request: &SpreadRequest,
    limit: u32,
) -> Result<TaskCapacity, SpreadError> {
    count(scheduler, cluster, request, limit, false)
}

fn count(
    scheduler: &SpreadScheduler,
    cluster: &Cluster,
    request: &SpreadRequest,
    limit: u32,
    arithmetic: bool,
) -> Result<TaskCapacity, SpreadError> {
    let limit = limit.min(DEFAULT_MAX_COUNT);
    let mut scratch = SpreadScratch::new();
    let mut run = |n: u32| {
        let mut r = request.clone();
        r.tasks = n;
        scheduler.schedule_with(&mut scratch, cluster, &r)
    };
    let all = run(limit)?;
    let total = all.selections.len() as u32;
    let mut branches = Vec::new();
    collect(&all.tree, &mut Vec::new(), &mut branches);
    let shadow = if arithmetic && total < limit { Shadow::new(scheduler, cluster, request, &all)? } else { None };
    let (until_branch_full, first_full, method) = match shadow {
        Some(mut shadow) => {
            let (lo, full) = bisect(total, |n| {
                shadow.run(n);
                Ok::<_, SpreadError>((!shadow.holds()).then(|| shadow.run_out()))
            })?;
            (lo, full, TaskMethod::Arithmetic)
        }
        None => {
            let (lo, full) = bisect(total, |n| {
                let out = run(n)?;
                Ok((!spread_holds(&out)).then(|| {
                    let mut full = Vec::new();
                    run_out(&out.tree, &mut Vec::new(), &mut full);
                    full
                }))
            })?;
            (lo, full, TaskMethod::Bisection)
        }
    };
    Ok(TaskCapacity { total, capped: total >= limit, until_branch_full, first_full, branches, method })
}

/// The largest batch size up to `total` that holds, by bisection: `probe(n)` is `None` when a
/// batch of `n` holds, else the branches that run out in it. Returns the size and the branches
/// that run out in the smallest failing size probed (empty when `total` holds).
fn bisect<E>(
    total: u32,
    mut probe: impl FnMut(u32) -> Result<Option<Vec<Vec<String>>>, E>,
) -> Result<(u32, Vec<Vec<String>>), E> {
    // `lo` tasks place with no branch running out; `hi` tasks make one run out.
    let Some(mut full) = probe(total)? else { return Ok((total, Vec::new())) };
    let (mut lo, mut hi) = (0u32, total);
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        match probe(mid)? {
            None => lo = mid,
            Some(f) => {
                hi = mid;
                full = f;
            }
        }
    }
    Ok((lo, full))
}

/// Whether a batch placed every task and no branch ran out.
fn spread_holds(out: &SpreadOutcome) -> bool {
    let mut full = Vec::new();
    out.is_complete() && {
        run_out(&out.tree, &mut Vec::new(), &mut full);
        full.is_empty()
    }
}

/// The paths of the branches below `b` (at `path`) that have an eligible node and placed fewer
/// than they were asked for, deepest last.
fn run_out(b: &BranchReport, path: &mut Vec<String>, out: &mut Vec<Vec<String>>) {
    for c in &b.children {
        path.push(c.value.clone());
        if c.eligible_nodes > 0 && c.asked > c.placed {
            out.push(path.clone());
        }
        run_out(c, path, out);
        path.pop();
    }
}

fn collect(b: &BranchReport, path: &mut Vec<String>, out: &mut Vec<BranchCapacity>) {
    out.push(BranchCapacity {
        path: path.clone(),
        eligible_nodes: b.eligible_nodes,
        existing: b.existing,
        capacity: b.placed,
    });
    for c in &b.children {
        path.push(c.value.clone());
        collect(c, path, out);
        path.pop();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::snapshot::HostSpec;
    use crate::spread::{Preference, SpreadMode};

    #[test]
    fn the_smaller_zone_runs_out_first() {
        let mut b = Cluster::builder();
        for (name, az) in [("a1", "a"), ("a2", "a"), ("b1", "b")] {
            b = b.host(HostSpec::new(name).label("az", az).vcpus(4.0).memory_mb(4096.0));
        }
        let cluster = b.build().unwrap();
        let request = SpreadRequest::new("web", 1)
            .preference(Preference::spread("node.labels.az"))
            .resource("vcpus", 1.0)
            .mode(SpreadMode::Balanced);
        let cap = tasks(&SpreadScheduler::new(), &cluster, &request, 1000).unwrap();
        assert_eq!(cap.total, 12);
        // Even spread: a batch of 9 is 5 + 4; one of 10 asks b for a fifth task.
        assert_eq!(cap.until_branch_full, 9);
        assert_eq!(cap.first_full, vec![vec!["b".to_owned()]]);
        assert_eq!(cap.method, TaskMethod::Arithmetic);
        let reference = tasks_by_bisection(&SpreadScheduler::new(), &cluster, &request, 1000).unwrap();
        assert_eq!((reference.until_branch_full, &reference.first_full), (9, &cap.first_full));
        let caps: Vec<(Vec<String>, u32)> = cap.branches.iter().map(|b| (b.path.clone(), b.capacity)).collect();
        assert_eq!(caps[0].1, 12);
        assert!(caps.contains(&(vec!["a".into()], 8)) && caps.contains(&(vec!["b".into()], 4)));
    }
}
