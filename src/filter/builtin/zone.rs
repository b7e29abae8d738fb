//! Availability zone: from the `zone` topology level, or from aggregate metadata as the filter
//! scheduler's removed AvailabilityZoneFilter reads it.

use crate::filter::{Filter, Reason, Rejections, Verdict};
use crate::id::HostId;
use crate::request::Cx;

/// Where a host's zone comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Mode {
    /// The `zone` topology level.
    Topology,
    /// The `availability_zone` metadata of the host's aggregates, else the default zone.
    Aggregates { default_zone: String },
}

/// Passes every host when the request names no zone; otherwise only hosts in that zone.
///
/// - **Topology mode** (the default, [`AvailabilityZoneFilter`](const@AvailabilityZoneFilter) used as a value): a host's zone
///   is its `zone` topology level. Name `availability_zone`; reason `not in zone <zone>`.
/// - **Aggregate mode** ([`from_aggregates`](AvailabilityZoneFilter::from_aggregates)): Nova's
///   removed `AvailabilityZoneFilter` (last in 27.x Antelope, reference §12.5). A host's zones are
///   the comma-split, stripped `availability_zone` values of all its aggregates; a host none of
///   whose aggregates sets the key is in `default_availability_zone` (`nova` unless set). An empty
///   requested zone passes everywhere. Name `AvailabilityZoneFilter`; reason
///   `not in availability zone <zone>`.
///
/// Both modes run once per request.
///
/// ```
/// use placewise::AvailabilityZoneFilter;
/// use placewise::Filter;
///
/// let topology = AvailabilityZoneFilter;
/// let nova = AvailabilityZoneFilter::from_aggregates("nova");
/// assert_eq!(topology.name(), "availability_zone");
/// assert_eq!(nova.name(), "AvailabilityZoneFilter");
/// assert_eq!(nova.default_zone(), Some("nova"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AvailabilityZoneFilter {
    mode: Mode,
}

/// The topology-mode filter, so that `AvailabilityZoneFilter` still reads as a value (as it did
/// when the filter was a unit struct).
#[allow(non_upper_case_globals)]
pub const AvailabilityZoneFilter: AvailabilityZoneFilter = AvailabilityZoneFilter { mode: Mode::Topology };

impl Default for AvailabilityZoneFilter {
    /// Topology mode.
    fn default() -> Self {
        AvailabilityZoneFilter
    }
}

impl AvailabilityZoneFilter {
    /// Topology mode: a host's zone is its `zone` topology level.
    pub fn topology() -> Self {
        AvailabilityZoneFilter
    }

    /// Aggregate mode, as the filter scheduler's AvailabilityZoneFilter: hosts outside every
    /// zoned aggregate are in `default_zone` (Nova's `[DEFAULT] default_availability_zone`,
    /// `nova` by default).
    pub fn from_aggregates(default_zone: impl Into<String>) -> Self {
        AvailabilityZoneFilter { mode: Mode::Aggregates { default_zone: default_zone.into() } }
    }

    /// Sets the default zone, switching to aggregate mode.
    pub fn default_availability_zone(self, zone: impl Into<String>) -> Self {
        AvailabilityZoneFilter::from_aggregates(zone)
    }

    /// The default zone in aggregate mode; `None` in topology mode.
    pub fn default_zone(&self) -> Option<&str> {
        match &self.mode {
            Mode::Topology => None,
            Mode::Aggregates { default_zone } => Some(default_zone),
        }
    }

    /// Aggregate mode: whether `host` is in `wanted`.
    fn in_aggregate_zone(cx: &Cx<'_>, host: HostId, wanted: &str, default_zone: &str) -> bool {
        let cluster = cx.cluster();
        let h = cx.host(host);
        let mut zoned = false;
        for zone in cluster.metadata_values(h, "availability_zone") {
            if zone == wanted {
                return true;
            }
            zoned = true;
        }
        !zoned && wanted == default_zone
    }
}

impl Filter for AvailabilityZoneFilter {
    fn name(&self) -> &str {
        match self.mode {
            Mode::Topology => "availability_zone",
            Mode::Aggregates { .. } => "AvailabilityZoneFilter",
        }
    }

    #[inline]
    fn check(&self, cx: &Cx<'_>, host: HostId) -> Verdict {
        match &self.mode {
            Mode::Topology => match cx.compiled().zone {
                None => Verdict::Pass,
                Some(zone) => {
                    let here = zone.level.map(|l| cx.host(host).domain(l));
                    (!zone.domain.is_none() && here == Some(zone.domain)).into()
                }
            },
            Mode::Aggregates { default_zone } => match cx.request().zone.as_deref() {
                None | Some("") => Verdict::Pass,
                Some(wanted) => Self::in_aggregate_zone(cx, host, wanted, default_zone).into(),
            },
        }
    }

    fn check_chunk(&self, cx: &Cx<'_>, chunk: usize, mask: u64, rejected: &mut Rejections) -> u64 {
        if let Mode::Aggregates { .. } = self.mode {
            return rejected.check_lanes(chunk, mask, |h| self.check(cx, h));
        }
        let Some(zone) = cx.compiled().zone else { return mask };
        let mut pass = 0u64;
        if zone.level.is_some() && !zone.domain.is_none() {
            for (lane, &d) in cx.cluster().hot_chunk(chunk).zone.iter().enumerate() {
                pass |= u64::from(d == zone.domain) << lane;
            }
        }
        pass &= mask;
        rejected.reject_lanes(chunk, mask & !pass, Reason(0));
        pass
    }

    fn describe(&self, cx: &Cx<'_>, _reason: Reason) -> String {
        let zone = cx.request().zone.as_deref().unwrap_or("");
        match self.mode {
            Mode::Topology => format!("not in zone {zone}"),
            Mode::Aggregates { .. } => format!("not in availability zone {zone}"),
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
    use crate::filter::testkit::{names, reason, run};
    use crate::request::Request;
    use crate::snapshot::Cluster;
    use crate::snapshot::{AggregateSpec, HostSpec};

    fn cluster() -> Cluster {
        Cluster::builder()
            .aggregate(AggregateSpec::new("z1").metadata("availability_zone", "z1"))
            .aggregate(AggregateSpec::new("z2").metadata("availability_zone", "z2"))
            .aggregate(AggregateSpec::new("multi").metadata("availability_zone", "z3, z4"))
            .aggregate(AggregateSpec::new("ssd").metadata("ssd", "true"))
            .host(HostSpec::new("in-z1").aggregate("z1"))
            .host(HostSpec::new("zoneless").aggregate("ssd"))
            .host(HostSpec::new("in-z2").aggregate("z2").aggregate("ssd"))
            .host(HostSpec::new("in-z3-z4").aggregate("multi"))
            .build()
            .unwrap()
    }

    #[test]
    fn aggregate_mode_as_run_against_nova() {
        let c = cluster();
        let f = AvailabilityZoneFilter::from_aggregates("nova");
        assert_eq!(run(&f, &c, &Request::new(1).zone("nova")).unwrap(), names(&["zoneless"]));
        assert_eq!(run(&f, &c, &Request::new(1).zone("z2")).unwrap(), names(&["in-z2"]));
        assert_eq!(run(&f, &c, &Request::new(1).zone("z4")).unwrap(), names(&["in-z3-z4"]));
        assert_eq!(run(&f, &c, &Request::new(1)).unwrap().len(), 4);
        assert_eq!(run(&f, &c, &Request::new(1).zone("")).unwrap().len(), 4);
        assert_eq!(reason(&f, &c, &Request::new(1).zone("z2"), "in-z1"), "not in availability zone z2");
        let other_default = f.clone().default_availability_zone("elsewhere");
        assert_eq!(run(&other_default, &c, &Request::new(1).zone("nova")).unwrap(), Vec::<String>::new());
        assert_eq!(run(&other_default, &c, &Request::new(1).zone("elsewhere")).unwrap(), names(&["zoneless"]));
    }

    #[test]
    fn topology_mode_is_the_default() {
        let c = Cluster::builder()
            .host(HostSpec::new("a").zone("az1"))
            .host(HostSpec::new("b").zone("az2"))
            .build()
            .unwrap();
        assert_eq!(AvailabilityZoneFilter::default(), AvailabilityZoneFilter);
        assert_eq!(AvailabilityZoneFilter::topology().default_zone(), None);
        assert_eq!(run(&AvailabilityZoneFilter, &c, &Request::new(1).zone("az2")).unwrap(), names(&["b"]));
        assert_eq!(reason(&AvailabilityZoneFilter, &c, &Request::new(1).zone("az2"), "a"), "not in zone az2");
        let f = AvailabilityZoneFilter::from_aggregates("nova");
        assert!(f.once_per_request() && f.host_local());
    }
}
