//! The rule shared by the removed capacity filters (RamFilter, CoreFilter, DiskFilter and their
//! Aggregate variants, reference §12.2–12.4): an instance must fit what is left under the
//! allocation ratio, and may not be larger than the host itself.
//!
//! The host's total is the resource's `capacity − reserved` and its use is `used` plus the
//! earlier picks of the request; the ratio is the host's own or, for the Aggregate variants, the
//! smallest parsable aggregate value.

use super::common::{flavor, flavor_or_resource, py_float, AggregateNumbers};
use crate::filter::{Reason, Rejections, Verdict};
use crate::id::{HostId, ResourceId};
use crate::request::Cx;
use crate::snapshot::CHUNK;

/// Reason: not enough left under the allocation ratio.
pub(super) const INSUFFICIENT: u32 = 0;
/// Reason: the instance is larger than the host (no over-commit against itself).
pub(super) const TOO_BIG: u32 = 1;

/// Python's `not a >= b`: true when a NaN is involved.
fn not_ge(a: f64, b: f64) -> bool {
    !matches!(a.partial_cmp(&b), Some(std::cmp::Ordering::Greater | std::cmp::Ordering::Equal))
}

/// Which resource a capacity filter checks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    /// `memory_mb`, in MiB.
    Ram,
    /// `vcpus`.
    Core,
    /// `disk_gb`, compared in MiB.
    Disk,
}

impl Kind {
    fn resource(self) -> ResourceId {
        match self {
            Kind::Ram => ResourceId::MEMORY_MB,
            Kind::Core => ResourceId::VCPUS,
            Kind::Disk => ResourceId::DISK_GB,
        }
    }

    /// The aggregate metadata key of the Aggregate variant.
    pub(super) fn ratio_key(self) -> &'static str {
        match self {
            Kind::Ram => "ram_allocation_ratio",
            Kind::Core => "cpu_allocation_ratio",
            Kind::Disk => "disk_allocation_ratio",
        }
    }

    /// Snapshot unit to compared unit (disk is kept in GiB and compared in MiB; × 1024 is exact).
    fn scale(self) -> f64 {
        match self {
            Kind::Disk => 1024.0,
            _ => 1.0,
        }
    }

    /// What one instance asks for: the flavor's `memory_mb`, `vcpus`, or
    /// `(root_gb + ephemeral_gb) · 1024 + swap` (swap counts here, though consumption leaves it
    /// out); without a flavor, the request's `memory_mb`, `vcpus` or `disk_gb · 1024`.
    pub(super) fn want(self, cx: &Cx<'_>) -> f64 {
        match self {
            Kind::Ram => flavor_or_resource(cx, |f| f.memory_mb, "memory_mb"),
            Kind::Core => flavor_or_resource(cx, |f| f.vcpus, "vcpus"),
            Kind::Disk => match flavor(cx) {
                Some(f) => (f.root_gb + f.ephemeral_gb) * 1024.0 + f.swap,
                None => cx.request().resources.get("disk_gb").copied().unwrap_or(0.0) * 1024.0,
            },
        }
    }

    /// The verdict for a host with `physical` capacity and `used` (snapshot units) under `ratio`.
    pub(super) fn verdict(self, want: f64, physical: f64, used: f64, ratio: f64) -> Verdict {
        let s = self.scale();
        let total = physical * s;
        match self {
            Kind::Core => {
                // Fail-safe for drivers that report no CPU count.
                if total == 0.0 {
                    return Verdict::Pass;
                }
                let limit = total * ratio;
                if limit > 0.0 && want > total {
                    return Verdict::reject(TOO_BIG);
                }
                if limit - used < want {
                    Verdict::reject(INSUFFICIENT)
                } else {
                    Verdict::Pass
                }
            }
            Kind::Ram | Kind::Disk => {
                if not_ge(total, want) {
                    return Verdict::reject(TOO_BIG);
                }
                let limit = total * ratio;
                if limit - used * s >= want {
                    Verdict::Pass
                } else {
                    Verdict::reject(INSUFFICIENT)
                }
            }
        }
    }

    /// The verdict for `host`, with `ratio` or the host's own ratio.
    pub(super) fn check_host(self, cx: &Cx<'_>, host: HostId, want: f64, ratio: Option<f64>) -> Verdict {
        let kind = self.resource();
        let r = cx.host(host).resource(kind);
        let used = r.used + cx.overlay().used(host, kind);
        self.verdict(want, r.physical(), used, ratio.unwrap_or(r.allocation_ratio))
    }

    /// The chunk check: lanes in `slow` (and lanes with earlier picks) go through `slow_check`,
    /// the others are judged from the dense columns with the host's own ratio. The two paths give
    /// the same verdicts: the dense free amount is `(capacity − reserved) × ratio − used`,
    /// computed with the same operations.
    pub(super) fn check_chunk(
        self,
        cx: &Cx<'_>,
        chunk: usize,
        mask: u64,
        slow: u64,
        rejected: &mut Rejections,
        slow_check: impl Fn(HostId) -> Verdict,
    ) -> u64 {
        let want = self.want(cx);
        let hot = cx.cluster().hot_chunk(chunk);
        let r = self.resource().index();
        let (free, physical) = (&hot.free[r], &hot.physical[r]);
        let mut slow = (slow | cx.overlay().touched_mask(chunk)) & mask;
        let s = self.scale();
        let (mut fits, mut too_big) = (0u64, 0u64);
        for lane in 0..CHUNK {
            let (p, f) = (physical[lane] * s, free[lane] * s);
            let bit = 1u64 << lane;
            match self {
                Kind::Core => {
                    if p == 0.0 {
                        fits |= bit;
                    } else if p < 1.0 {
                        // A tiny ratio could make the limit underflow to 0: take the exact path.
                        slow |= bit & mask;
                    } else if want > p {
                        too_big |= bit;
                    } else if f >= want || f.is_nan() || want.is_nan() {
                        fits |= bit;
                    }
                }
                Kind::Ram | Kind::Disk => {
                    if not_ge(p, want) {
                        too_big |= bit;
                    } else if f >= want {
                        fits |= bit;
                    }
                }
            }
        }
        let fast = mask & !slow;
        let pass = fast & fits;
        rejected.check_lanes(chunk, fast & too_big, |_| Verdict::reject(TOO_BIG));
        rejected.check_lanes(chunk, fast & !fits & !too_big, |_| Verdict::reject(INSUFFICIENT));
        pass | rejected.check_lanes(chunk, slow, slow_check)
    }

    /// Text for a reason.
    pub(super) fn describe(self, reason: Reason) -> String {
        let (insufficient, too_big) = match self {
            Kind::Ram => ("insufficient RAM", "flavor RAM exceeds the host's RAM"),
            Kind::Core => ("insufficient vCPUs", "flavor vCPUs exceed the host's vCPUs"),
            Kind::Disk => ("insufficient disk", "flavor disk exceeds the host's disk"),
        };
        if reason.0 == TOO_BIG { too_big } else { insufficient }.into()
    }
}

/// Per-request state of an Aggregate capacity filter: the aggregate ratio of every host that has
/// one (`None` for the others, which use their own ratio).
#[derive(Debug, Clone)]
pub(super) struct AggregateRatios {
    by_host: Vec<Option<f64>>,
    want: f64,
}

impl AggregateRatios {
    /// Reads `kind`'s ratio key of every aggregate, then every host's minimum. Computes in
    /// O(aggregates + hosts) when some aggregate sets the key, else O(aggregates).
    pub(super) fn new(cx: &Cx<'_>, kind: Kind) -> Self {
        let cluster = cx.cluster();
        let numbers = AggregateNumbers::new(cluster, kind.ratio_key(), py_float);
        let mut by_host = Vec::new();
        if numbers.any() {
            by_host = vec![None; cluster.id_bound()];
            for (id, host) in cluster.hosts() {
                by_host[id.index()] = numbers.host_min(host);
            }
        }
        AggregateRatios { by_host, want: kind.want(cx) }
    }

    /// The aggregate ratio of `host`, if it has one.
    pub(super) fn ratio(&self, host: HostId) -> Option<f64> {
        self.by_host.get(host.index()).copied().flatten()
    }

    /// The lanes of `chunk` whose hosts have an aggregate ratio.
    pub(super) fn lanes(&self, chunk: usize) -> u64 {
        let start = chunk * CHUNK;
        let Some(slice) = self.by_host.get(start..) else { return 0 };
        slice.iter().take(CHUNK).enumerate().fold(0, |m, (lane, r)| m | (u64::from(r.is_some()) << lane))
    }

    /// The amount one instance asks for.
    pub(super) fn want(&self) -> f64 {
        self.want
    }
}

/// The aggregate ratio of one host, without prepared state.
pub(super) fn aggregate_ratio(cx: &Cx<'_>, kind: Kind, host: HostId) -> Option<f64> {
    AggregateNumbers::new(cx.cluster(), kind.ratio_key(), py_float).host_min(cx.host(host))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ram_rule() {
        let k = Kind::Ram;
        // total 1024, ratio 1.5, used 1024 − 512: limit 1536 − 512 = 1024 left.
        assert!(k.verdict(1024.0, 1024.0, 512.0, 1.5).is_pass());
        assert_eq!(k.verdict(1025.0, 1024.0, 512.0, 1.5), Verdict::reject(TOO_BIG));
        assert_eq!(k.verdict(1024.0, 1024.0, 513.0, 1.5), Verdict::reject(INSUFFICIENT));
        // Negative free RAM (used above total) is fine as input.
        assert_eq!(k.verdict(1.0, 1024.0, 2048.0, 1.0), Verdict::reject(INSUFFICIENT));
    }

    #[test]
    fn core_rule() {
        let k = Kind::Core;
        assert!(k.verdict(64.0, 0.0, 10.0, 4.0).is_pass(), "no CPU count: fail-safe pass");
        assert_eq!(k.verdict(5.0, 4.0, 0.0, 16.0), Verdict::reject(TOO_BIG));
        assert!(k.verdict(4.0, 4.0, 12.0, 4.0).is_pass());
        assert_eq!(k.verdict(4.0, 4.0, 13.0, 4.0), Verdict::reject(INSUFFICIENT));
    }

    #[test]
    fn disk_rule_counts_in_mib() {
        let k = Kind::Disk;
        // 10 GiB total, 1 GiB used: 9216 MiB left.
        assert!(k.verdict(9216.0, 10.0, 1.0, 1.0).is_pass());
        assert_eq!(k.verdict(9217.0, 10.0, 1.0, 1.0), Verdict::reject(INSUFFICIENT));
        assert_eq!(k.verdict(10241.0, 10.0, 0.0, 2.0), Verdict::reject(TOO_BIG));
    }
}
