//! AggregateInstanceExtraSpecsFilter: flavor extra specs against aggregate metadata.

use super::classes::{ClassKey, ClassMemo, KeyPart};
use super::common::{flavor, judge_chunk, judge_host, metadata_values, sets_key, SpecChecks, SPEC_ERROR};
use crate::error::ScheduleError;
use crate::filter::{Filter, Reason, Rejections, Verdict};
use crate::id::HostId;
use crate::nova::extra_specs::{ExtraSpecError, Requirement};
use crate::request::{Cx, Prepared};

/// The scope this filter reads.
const SCOPE: &str = "aggregate_instance_extra_specs";

/// Reason offset: no aggregate of the host sets the key (`reason = 2·spec + MISSING`).
const MISSING: u32 = 0;
/// Reason offset: no value of the key satisfies the requirement.
const MISMATCH: u32 = 1;
/// Reason: the host could not be judged (the request fails).
const ERROR: u32 = SPEC_ERROR;

/// Nova's `AggregateInstanceExtraSpecsFilter` (reference §5.3): flavor extra specs must be met by
/// the host's aggregate metadata, read "by host" (per key, the union of the comma-split, stripped
/// values of all the host's aggregates).
///
/// - A flavor without extra specs passes every host.
/// - A key is split at its first `:`; a key in another scope than
///   `aggregate_instance_extra_specs` is skipped, a key in that scope loses the prefix (the rest
///   may hold more colons), and an **unscoped** key is checked too.
/// - A host none of whose aggregates sets the key fails; otherwise one of the key's values must
///   satisfy the requirement ([`Requirement`]).
///
/// Specs are checked in the flavor's order ([`ExtraSpecs`](crate::nova::request::ExtraSpecs)); the first
/// that fails rejects the host, and the specs after it are not evaluated. When a requirement
/// cannot be evaluated against one of the values (a non-number under a numeric operator, a bare
/// `<or>`), the request fails, even if another value matches: Nova's outcome would depend on set
/// iteration order (the reference's recommended rule). Runs once per request, not on rebuilds.
/// Reasons: `no aggregate sets <key>`, `extra spec <key> does not match aggregate metadata`.
///
/// **Host classes.** The verdict reads the host's aggregate set alone, so the filter judges each
/// distinct set ([`Cluster::aggregate_class`](crate::snapshot::Cluster::aggregate_class)) once per request
/// and reuses the verdict for every host that belongs to the same aggregates.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct AggregateInstanceExtraSpecsFilter;

/// One spec this filter checks.
#[derive(Debug, Clone)]
struct Check {
    /// The spec key as given.
    key: String,
    /// The metadata key.
    metadata_key: String,
    requirement: Requirement,
}

/// The specs of the request, with the verdicts judged so far per aggregate class.
#[derive(Debug, Clone, Default)]
struct Checks {
    checks: Vec<Check>,
    memo: ClassMemo,
}

impl Checks {
    fn new(cx: &Cx<'_>) -> Checks {
        let Some(f) = flavor(cx) else { return Checks::default() };
        let checks = f
            .extra_specs
            .iter()
            .filter_map(|(key, req)| {
                let metadata_key = match key.split_once(':') {
                    Some((scope, rest)) if scope == SCOPE => rest,
                    Some(_) => return None,
                    None => key,
                };
                Some(Check {
                    key: key.to_owned(),
                    metadata_key: metadata_key.to_owned(),
                    requirement: Requirement::parse(req),
                })
            })
            .collect();
        // The verdict reads the host's aggregates alone.
        Checks { checks, memo: ClassMemo::new(Some(ClassKey::new(vec![KeyPart::Aggregates]))) }
    }
}

impl AggregateInstanceExtraSpecsFilter {
    fn judge(&self, cx: &Cx<'_>, checks: &Checks, host: HostId) -> Result<Verdict, ScheduleError> {
        let cluster = cx.cluster();
        let h = cx.host(host);
        for (i, check) in checks.checks.iter().enumerate() {
            let code = 2 * i as u32;
            if !sets_key(cluster, h, &check.metadata_key) {
                return Ok(Verdict::reject(code + MISSING));
            }
            let mut matched = false;
            for value in metadata_values(cluster, h, &check.metadata_key) {
                match check.requirement.matches(Some(value)) {
                    Ok(m) => matched |= m,
                    Err(e) => return Err(ScheduleError::filter(self.name(), ExtraSpecError::new(&check.key, e))),
                }
            }
            if !matched {
                return Ok(Verdict::reject(code + MISMATCH));
            }
        }
        Ok(Verdict::Pass)
    }
}

impl SpecChecks for Checks {
    fn build(cx: &Cx<'_>) -> Self {
        Checks::new(cx)
    }

    fn is_empty(&self) -> bool {
        self.checks.is_empty()
    }

    fn memo(&self) -> &ClassMemo {
        &self.memo
    }
}

impl Filter for AggregateInstanceExtraSpecsFilter {
    fn name(&self) -> &str {
        "AggregateInstanceExtraSpecsFilter"
    }

    fn prepare(&self, cx: &Cx<'_>) -> Result<Prepared, ScheduleError> {
        Ok(Some(Box::new(Checks::new(cx))))
    }

    fn check(&self, cx: &Cx<'_>, host: HostId) -> Verdict {
        judge_host(cx, host, |c: &Checks, h| self.judge(cx, c, h))
    }

    fn check_chunk(&self, cx: &Cx<'_>, chunk: usize, mask: u64, rejected: &mut Rejections) -> u64 {
        judge_chunk(cx, chunk, mask, rejected, |c: &Checks, h| self.judge(cx, c, h))
    }

    fn describe(&self, cx: &Cx<'_>, reason: Reason) -> String {
        let mut owned = None;
        let checks = cx.state_or::<Checks>(&mut owned, || Checks::new(cx));
        match checks.checks.get((reason.0 / 2) as usize) {
            Some(c) if reason.0 != ERROR && reason.0 % 2 == MISSING => format!("no aggregate sets {}", c.metadata_key),
            Some(c) if reason.0 != ERROR => format!("extra spec {} does not match aggregate metadata", c.key),
            _ => "extra specs cannot be checked".into(),
        }
    }

    fn once_per_request(&self) -> bool {
        true
    }

    fn host_local(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::nova::filters::common::testkit::{flavor_request, names, reason, run};
    use crate::request::Request;
    use crate::snapshot::Cluster;
    use crate::snapshot::{AggregateSpec, HostSpec};

    fn request(specs: &[(&str, &str)]) -> crate::nova::NovaRequest {
        let mut r = flavor_request(1, 0.0, 0.0, 0.0, 0.0, 0.0);
        let f = r.vm.flavor.as_mut().unwrap();
        for (k, v) in specs {
            f.extra_specs.insert(*k, *v);
        }
        r
    }

    fn cluster() -> Cluster {
        Cluster::builder()
            .aggregate(AggregateSpec::new("fast").metadata("ssd", "true").metadata("tier", "gold, silver"))
            .aggregate(AggregateSpec::new("net").metadata("nic:speed", "10").metadata("tier", "bronze"))
            .aggregate(AggregateSpec::new("mixed").metadata("cores", "8").metadata("tier", "lead"))
            .aggregate(AggregateSpec::new("words").metadata("cores", "many"))
            .host(HostSpec::new("fast").aggregate("fast"))
            .host(HostSpec::new("both").aggregate("fast").aggregate("net"))
            .host(HostSpec::new("mixed").aggregate("mixed"))
            .host(HostSpec::new("plain"))
            .build()
            .unwrap()
    }

    #[test]
    fn scoped_and_unscoped_keys() {
        let c = cluster();
        let f = AggregateInstanceExtraSpecsFilter;
        assert_eq!(run(&f, &c, &request(&[("ssd", "true")])).unwrap(), names(&["fast", "both"]));
        assert_eq!(
            run(&f, &c, &request(&[("aggregate_instance_extra_specs:ssd", "true")])).unwrap(),
            names(&["fast", "both"])
        );
        assert_eq!(run(&f, &c, &request(&[("ssd", "True")])).unwrap(), Vec::<String>::new());
        // Values are split on commas; one matching value is enough.
        assert_eq!(run(&f, &c, &request(&[("tier", "silver")])).unwrap(), names(&["fast", "both"]));
        assert_eq!(run(&f, &c, &request(&[("tier", "<or> bronze <or> lead")])).unwrap(), names(&["both", "mixed"]));
        // Only the first colon separates the scope.
        assert_eq!(
            run(&f, &c, &request(&[("aggregate_instance_extra_specs:nic:speed", ">= 10")])).unwrap(),
            names(&["both"])
        );
        // Other scopes are skipped.
        assert_eq!(
            run(&f, &c, &request(&[("capabilities:ssd", "true"), ("trust:trusted_host", "x")])).unwrap().len(),
            4
        );
        assert_eq!(run(&f, &c, &Request::new(1)).unwrap().len(), 4);
        assert_eq!(reason(&f, &c, &request(&[("ssd", "true")]), "plain"), "no aggregate sets ssd");
        assert_eq!(
            reason(&f, &c, &request(&[("tier", "silver")]), "mixed"),
            "extra spec tier does not match aggregate metadata"
        );
        assert!(f.once_per_request() && !crate::nova::runs_on_rebuild(f.name()) && f.host_local());
    }

    #[test]
    fn numeric_operators_on_mixed_values_fail_the_request() {
        let c = Cluster::builder()
            .aggregate(AggregateSpec::new("eight").metadata("cores", "8"))
            .aggregate(AggregateSpec::new("words").metadata("cores", "many"))
            .host(HostSpec::new("eight").aggregate("eight"))
            .host(HostSpec::new("mixed").aggregate("eight").aggregate("words"))
            .build()
            .unwrap();
        let f = AggregateInstanceExtraSpecsFilter;
        let err = run(&f, &c, &request(&[("cores", ">= 4")])).unwrap_err();
        assert!(err.to_string().contains("extra spec cores"), "{err}");
        let only_numbers = Cluster::builder()
            .aggregate(AggregateSpec::new("e").metadata("cores", "8"))
            .host(HostSpec::new("h").aggregate("e"))
            .build()
            .unwrap();
        assert_eq!(run(&f, &only_numbers, &request(&[("cores", ">= 4")])).unwrap(), names(&["h"]));
        assert_eq!(run(&f, &only_numbers, &request(&[("cores", "= 16")])).unwrap(), Vec::<String>::new());
        assert!(run(&f, &only_numbers, &request(&[("cores", "<or>")])).is_err());
        // An earlier failing spec stops before the erroring one.
        assert_eq!(run(&f, &c, &request(&[("a", "x"), ("cores", ">= 4")])).unwrap(), Vec::<String>::new());
    }

    #[test]
    fn specs_are_checked_in_the_flavor_order_not_key_order() {
        let c = Cluster::builder()
            .aggregate(AggregateSpec::new("eight").metadata("cores", "8"))
            .host(HostSpec::new("h").aggregate("eight"))
            .build()
            .unwrap();
        let f = AggregateInstanceExtraSpecsFilter;
        // "zz" is set by no aggregate, so the host fails on it before the bare `<or>` is reached,
        // although "cores" sorts first.
        assert_eq!(run(&f, &c, &request(&[("zz", "x"), ("cores", "<or>")])).unwrap(), Vec::<String>::new());
        assert_eq!(reason(&f, &c, &request(&[("zz", "x"), ("cores", "<or>")]), "h"), "no aggregate sets zz");
        // Given the other way round, the bare `<or>` is evaluated first and fails the request.
        let err = run(&f, &c, &request(&[("cores", "<or>"), ("zz", "x")])).unwrap_err();
        assert!(err.to_string().contains("extra spec cores"), "{err}");
    }
}
