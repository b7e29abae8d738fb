//! Property tests for the service scheduler.
//!
//! - **Expressions.** Random trees of the product grammar are rendered with random quoting,
//!   spacing and redundant parentheses; the parser must accept them, evaluate like a plain model
//!   evaluator on random label sets, and `Display` must round-trip. Arbitrary text (random
//!   Unicode, and strings over the grammar's own characters) must never panic the parser, and
//!   whatever parses must round-trip too.
//! - **Ranking, against a model.** Random hosts with random instances (same service or not,
//!   live or in delayed shutdown) and a host label filter; a batch of new replicas is placed.
//!   A naive model recomputes the four counts of every eligible host for every instance, drops
//!   hosts at the `ceil(replicas / eligible)` cap and takes the smallest `(counts, host id)`:
//!   the library must pick the same hosts in the same order, so the lexicographic order is
//!   always respected. With a caller weigher (a fixed score per host), the same model with the
//!   highest score breaking ties before the lowest id: weighers never outrank a count.
//! - **Foundation tiers.** The four levels as weigher tiers of a foundation `Scheduler`
//!   ([`ranking_tiers`]) place a burst exactly like the same model without filters.
//! - **Rebalance.** Random per-host counts of one service: the plan has exactly the minimal
//!   number of moves (each host's surplus over its even-share target, the larger targets going
//!   to the fullest hosts) and leaves counts that differ by at most one.

use placewise::service::{
    ranking_tiers, Decision, IngressAllocation, MatchExpr, ServiceOutcome, ServiceRequest, ServiceScheduler,
    ServiceSpec, Site,
};
use placewise::snapshot::InstanceSpec;
use placewise::{weigher_fn, Cluster, Cx, HostId, HostSpec, Request, Scheduler};
use proptest::prelude::*;
use std::collections::BTreeMap;

#[derive(Debug, Clone)]
enum M {
    And(Box<M>, Box<M>),
    Or(Box<M>, Box<M>),
    Not(Box<M>),
    Eq(&'static str, &'static str),
    Re(&'static str, &'static str),
    Has(&'static str),
    Empty,
}

const KEYS: [&str; 3] = ["a", "b", "system/type"];
const VALUES: [&str; 7] = ["x", "edge", "y z", "and", "q\"t", "back\\slash", ""];
const PATTERNS: [&str; 5] = ["^e", "d", "x$", "[a-c]+", "\\s"];

fn model() -> impl Strategy<Value = M> {
    let leaf = prop_oneof![
        (0..3usize, 0..7usize).prop_map(|(k, v)| M::Eq(KEYS[k], VALUES[v])),
        (0..3usize, 0..5usize).prop_map(|(k, p)| M::Re(KEYS[k], PATTERNS[p])),
        (0..3usize).prop_map(|k| M::Has(KEYS[k])),
        Just(M::Empty),
    ];
    leaf.prop_recursive(4, 24, 2, |inner| {
        prop_oneof![
            (inner.clone(), inner.clone()).prop_map(|(a, b)| M::And(Box::new(a), Box::new(b))),
            (inner.clone(), inner.clone()).prop_map(|(a, b)| M::Or(Box::new(a), Box::new(b))),
            inner.prop_map(|a| M::Not(Box::new(a))),
        ]
    })
}

fn eval(m: &M, labels: &BTreeMap<String, String>) -> bool {
    match m {
        M::And(a, b) => eval(a, labels) && eval(b, labels),
        M::Or(a, b) => eval(a, labels) || eval(b, labels),
        M::Not(a) => !eval(a, labels),
        M::Eq(k, v) => labels.get(*k).is_some_and(|x| x == v),
        M::Re(k, p) => labels.get(*k).is_some_and(|x| regex::Regex::new(p).unwrap().is_match(x)),
        M::Has(k) => labels.contains_key(*k),
        M::Empty => labels.is_empty(),
    }
}

/// Renders a value with the quoting style `style` picks among those that can hold it.
fn quote(v: &str, style: u8) -> String {
    let word = !v.is_empty()
        && v.chars().all(|c| c.is_ascii_alphanumeric() || "._/-".contains(c))
        && !["and", "or", "not"].contains(&v);
    match style % 3 {
        0 if word => v.to_owned(),
        1 if !v.contains('\'') => format!("'{v}'"),
        _ => format!("\"{}\"", v.replace('\\', "\\\\").replace('"', "\\\"")),
    }
}

/// Fully parenthesised rendering with varied spacing and quoting.
fn render(m: &M, salt: &mut u64) -> String {
    *salt = salt.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
    let style = (*salt >> 33) as u8;
    let sp = if style & 4 == 0 { " " } else { "  " };
    match m {
        M::And(a, b) => format!("({}{sp}and{sp}{})", render(a, salt), render(b, salt)),
        M::Or(a, b) => format!("({} or {})", render(a, salt), render(b, salt)),
        M::Not(a) => {
            if style & 8 == 0 {
                format!("not({})", render(a, salt))
            } else {
                format!("not {}", render(a, salt))
            }
        }
        M::Eq(k, v) => format!("{k}{sp}={sp}{}", quote(v, style)),
        M::Re(k, p) => format!("{k} ~ {}", quote(p, style | 1)),
        M::Has(k) => (*k).to_owned(),
        M::Empty => "{}".into(),
    }
}

fn label_sets() -> impl Strategy<Value = BTreeMap<String, String>> {
    proptest::collection::btree_map(
        (0..3usize).prop_map(|k| KEYS[k].to_owned()),
        (0..7usize).prop_map(|v| VALUES[v].to_owned()),
        0..3,
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn parser_matches_the_model_and_round_trips(m in model(), salt in any::<u64>(), sets in proptest::collection::vec(label_sets(), 4)) {
        let mut s = salt;
        let text = render(&m, &mut s);
        let parsed: MatchExpr = text.parse().map_err(|e| TestCaseError::fail(format!("{text}: {e}")))?;
        let printed = parsed.to_string();
        let again: MatchExpr = printed.parse().map_err(|e| TestCaseError::fail(format!("{printed}: {e}")))?;
        prop_assert_eq!(&again, &parsed, "{} -> {}", text, printed);
        prop_assert_eq!(again.to_string(), printed);
        for labels in &sets {
            prop_assert_eq!(parsed.matches_map(labels), eval(&m, labels), "{} on {:?}", text, labels);
        }
    }

    #[test]
    fn parser_never_panics_on_any_text(text in any::<String>()) {
        if let Ok(e) = text.parse::<MatchExpr>() {
            prop_assert_eq!(e.to_string().parse::<MatchExpr>().unwrap(), e);
        }
    }

    #[test]
    fn parser_never_panics_on_grammar_soup(text in "[ab =~(){}'\"\\\\notandr/.^$*-]{0,40}") {
        match text.parse::<MatchExpr>() {
            Ok(e) => prop_assert_eq!(e.to_string().parse::<MatchExpr>().unwrap(), e),
            Err(err) => prop_assert!(err.position <= text.len()),
        }
    }
}

/// One host: a label flag and instances `(kind, terminating)`; kind 0 = the service itself
/// (filled in as `a/s/<i>` later), 1–2 = other services, 3 = no group.
#[derive(Debug, Clone)]
struct GenHost {
    ok: bool,
    instances: Vec<(u8, bool)>,
}

fn hosts() -> impl Strategy<Value = Vec<GenHost>> {
    proptest::collection::vec(
        (prop::bool::weighted(0.8), proptest::collection::vec((0u8..4, any::<bool>()), 0..5))
            .prop_map(|(ok, instances)| GenHost { ok, instances }),
        1..9,
    )
}

/// Builds the cluster; the service's live instances get ids `a/s/0..k`. Returns `k`.
fn build(hosts: &[GenHost]) -> (Cluster, u32) {
    let mut b = Cluster::builder();
    let mut k = 0;
    for (h, g) in hosts.iter().enumerate() {
        let mut spec = HostSpec::new(format!("h{h}"));
        if g.ok {
            spec = spec.label("ok", "yes");
        }
        for (j, &(kind, term)) in g.instances.iter().enumerate() {
            let inst = match (kind, term) {
                (0, false) => {
                    k += 1;
                    InstanceSpec::new(format!("a/s/{}", k - 1)).group("a/s")
                }
                (0, true) => InstanceSpec::new(format!("old-{h}-{j}")).group("a/s"),
                (1, _) => InstanceSpec::new(format!("o1-{h}-{j}")).group("a/o1"),
                (2, _) => InstanceSpec::new(format!("o2-{h}-{j}")).group("b/o2"),
                _ => InstanceSpec::new(format!("loose-{h}-{j}")),
            };
            spec = spec.instance(inst.terminating(term));
        }
        b = b.host(spec);
    }
    (b.build().unwrap(), k)
}

/// The naive model of a batch of `replicas` new replicas of `a/s` (`k` live ones already
/// placed) on the `ok` hosts: it recomputes the four counts of every eligible host for every
/// instance, drops hosts at the `ceil(replicas / eligible)` cap and takes the smallest
/// `(counts, highest score, host id)`. `(instance, host)` pairs, `-` for unschedulable.
fn lexicographic_model(hs: &[GenHost], k: u32, replicas: u32, score: &[u8]) -> Vec<(String, String)> {
    // Keys of hosts with live same-service instances on non-`ok` hosts: those instances leave
    // (their host fails the filter) and are placed again first (lowest index first), so the
    // model replays the same pending list.
    let mut counts: Vec<[u32; 4]> = hs
        .iter()
        .map(|g| {
            let mut c = [0u32; 4];
            for &(kind, term) in &g.instances {
                let same = kind == 0;
                c[match (same, term) {
                    (true, false) => 0,
                    (true, true) => 1,
                    (false, false) => 2,
                    (false, true) => 3,
                }] += 1;
            }
            c
        })
        .collect();
    let mut pending = Vec::new();
    let mut idx = 0u32;
    for (h, g) in hs.iter().enumerate() {
        for &(kind, term) in &g.instances {
            if kind == 0 && !term {
                if !g.ok {
                    counts[h][0] -= 1;
                    pending.push(idx);
                }
                idx += 1;
            }
        }
    }
    pending.sort_unstable();
    pending.extend(k..replicas);
    let eligible: Vec<usize> = (0..hs.len()).filter(|&h| hs[h].ok).collect();
    let cap = replicas.div_ceil((eligible.len() as u32).max(1));
    let mut want = Vec::new();
    for i in pending {
        let best = eligible
            .iter()
            .copied()
            .filter(|&h| counts[h][0] < cap)
            .min_by_key(|&h| (counts[h], std::cmp::Reverse(score[h]), h));
        match best {
            Some(h) => {
                counts[h][0] += 1;
                want.push((format!("a/s/{i}"), format!("h{h}")));
            }
            None => want.push((format!("a/s/{i}"), "-".into())),
        }
    }
    want
}

/// The outcome's placements and moves as `(instance, host)`, then its unschedulable instances
/// with host `-`.
fn placements(out: &ServiceOutcome) -> Vec<(String, String)> {
    let mut got: Vec<(String, String)> = out
        .decisions
        .iter()
        .filter_map(|d| match d {
            Decision::Placed { instance, host, .. } | Decision::Moved { instance, to: host, .. } => {
                Some((instance.clone(), host.clone()))
            }
            _ => None,
        })
        .collect();
    got.extend(out.unschedulable.iter().map(|u| (u.instance.clone(), "-".to_string())));
    got
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(150))]

    #[test]
    fn ranking_follows_the_lexicographic_model(hs in hosts(), extra in 1u32..6) {
        let (cluster, k) = build(&hs);
        let site = Site::new(&cluster, IngressAllocation::Dhcp).unwrap();
        let replicas = k + extra;
        let spec = ServiceSpec::replicated("a", "s", replicas).match_host_labels("ok = yes".parse().unwrap());
        let out = ServiceScheduler::new().schedule(&cluster, &ServiceRequest::new(site, [spec])).unwrap();
        let want = lexicographic_model(&hs, k, replicas, &vec![0; hs.len()]);
        prop_assert_eq!(placements(&out), want);
    }

    /// A caller weigher (a fixed score per host) only breaks ties between the hosts of the
    /// smallest counts: the same model with the highest score before the lowest id.
    #[test]
    fn caller_weighers_break_only_ties_of_the_lexicographic_model(
        hs in hosts(),
        extra in 1u32..6,
        scores in proptest::collection::vec(0u8..4, 9),
    ) {
        let (cluster, k) = build(&hs);
        let site = Site::new(&cluster, IngressAllocation::Dhcp).unwrap();
        let replicas = k + extra;
        let spec = ServiceSpec::replicated("a", "s", replicas).match_host_labels("ok = yes".parse().unwrap());
        let by_score = scores.clone();
        let weigher = weigher_fn("score", move |_: &Cx<'_>, h: HostId| f64::from(by_score[h.index()]));
        let scheduler = ServiceScheduler::builder().weigher(weigher, 1.5).build().unwrap();
        let out = scheduler.schedule(&cluster, &ServiceRequest::new(site, [spec])).unwrap();
        let want = lexicographic_model(&hs, k, replicas, &scores);
        prop_assert_eq!(placements(&out), want);
    }

    #[test]
    fn foundation_tiers_rank_like_the_model(hs in hosts(), n in 1u32..5) {
        let (cluster, _) = build(&hs);
        let scheduler = ranking_tiers(Scheduler::builder(), "a/s").build().unwrap();
        let placement = scheduler.schedule(&cluster, &Request::new(n).group("a/s")).unwrap();
        let got: Vec<&str> = placement.selections.iter().map(|s| s.host_name.as_str()).collect();
        let mut counts: Vec<[u32; 4]> = hs
            .iter()
            .map(|g| {
                let mut c = [0u32; 4];
                for &(kind, term) in &g.instances {
                    c[match (kind == 0, term) { (true, false) => 0, (true, true) => 1, (false, false) => 2, (false, true) => 3 }] += 1;
                }
                c
            })
            .collect();
        let mut want = Vec::new();
        for _ in 0..n {
            let h = (0..hs.len()).min_by_key(|&h| (counts[h], h)).unwrap();
            counts[h][0] += 1;
            want.push(format!("h{h}"));
        }
        prop_assert_eq!(got, want);
    }

    #[test]
    fn rebalance_plan_is_minimal_and_even(counts in proptest::collection::vec(0usize..7, 1..8)) {
        let mut b = Cluster::builder();
        let mut next = 0;
        for (h, &c) in counts.iter().enumerate() {
            let mut spec = HostSpec::new(format!("h{h}"));
            for _ in 0..c {
                spec = spec.instance(InstanceSpec::new(format!("a/s/{next}")).group("a/s"));
                next += 1;
            }
            b = b.host(spec);
        }
        let cluster = b.build().unwrap();
        let site = Site::new(&cluster, IngressAllocation::Dhcp).unwrap();
        let spec = ServiceSpec::replicated("a", "s", next as u32);
        let plan = ServiceScheduler::new().rebalance_plan(&cluster, &ServiceRequest::new(site, [spec])).unwrap();

        let m = counts.len();
        let (q, r) = (next / m, next % m);
        let mut sorted = counts.clone();
        sorted.sort_unstable_by(|a, b| b.cmp(a));
        let minimal: usize = sorted.iter().enumerate().map(|(i, &c)| c.saturating_sub(if i < r { q + 1 } else { q })).sum();
        prop_assert_eq!(plan.len(), minimal);

        let mut after = counts.clone();
        for mv in &plan {
            let from: usize = mv.from[1..].parse().unwrap();
            let to: usize = mv.to[1..].parse().unwrap();
            after[from] -= 1;
            after[to] += 1;
        }
        prop_assert!(after.iter().max().unwrap() - after.iter().min().unwrap() <= 1, "{:?} -> {:?}", counts, after);
    }
}
