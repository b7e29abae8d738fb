//! The two space conditions (`IsSchedulableToDisk`) and the disk-pressure formulas.

use std::fmt;

/// The disk numbers the space check reads, as Longhorn's signed 64-bit bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct DiskSpace {
    /// `storageMaximum`.
    pub maximum: i64,
    /// `storageAvailable`.
    pub available: i64,
    /// `storageReserved`.
    pub reserved: i64,
    /// `storageScheduled`, plus the in-cycle adjustment when scheduling.
    pub scheduled: i64,
}

impl DiskSpace {
    /// The four numbers.
    pub fn new(maximum: i64, available: i64, reserved: i64, scheduled: i64) -> Self {
        DiskSpace { maximum, available, reserved, scheduled }
    }

    /// From a snapshot disk (values above `i64::MAX` saturate).
    pub fn of(disk: &crate::snapshot::Disk) -> Self {
        DiskSpace::of_hot(&crate::snapshot::HotDisk::of(disk))
    }

    /// From a disk's hot form (values above `i64::MAX` saturate).
    pub fn of_hot(disk: &crate::snapshot::HotDisk) -> Self {
        let c = |v: u64| i64::try_from(v).unwrap_or(i64::MAX);
        DiskSpace::new(c(disk.maximum), c(disk.available), c(disk.reserved), c(disk.scheduled))
    }
}

/// Why a disk failed the space check. `Display` gives Longhorn's logged detail text verbatim.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum SpaceFailure {
    /// `storageMaximum ≤ 0`.
    MaximumNotPositive,
    /// `storageAvailable ≤ 0`.
    AvailableNotPositive,
    /// `available − actual ≤ minimal`.
    ActualSpace {
        /// `available − actual`.
        current: i64,
        /// `trunc(max × min% / 100)`.
        minimal: i64,
        /// The minimal-available percentage.
        percentage: i64,
    },
    /// `size + scheduled > limit`.
    SchedulingSpace {
        /// `size + scheduled`.
        total: i64,
        /// `trunc((max − reserved) × over% / 100)`.
        limit: i64,
        /// The over-provisioning percentage.
        percentage: i64,
    },
}

impl fmt::Display for SpaceFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            SpaceFailure::MaximumNotPositive => f.write_str("Storage Max must be greater than 0"),
            SpaceFailure::AvailableNotPositive => f.write_str("Storage Available must be greater than 0"),
            SpaceFailure::ActualSpace { current, minimal, percentage } => write!(
                f,
                "Actual space usage condition failed: CurrentAvailable = {current} (StorageAvailable - Required) is \
                 less than or equal to MinimalAvailable = {minimal} ({percentage}% of Storage Max)."
            ),
            SpaceFailure::SchedulingSpace { total, limit, percentage } => write!(
                f,
                "Scheduling space condition failed: ScheduledTotal = {total} (Size + StorageScheduled) is greater \
                 than ProvisionedLimit = {limit} ({percentage}% of StorageMax - StorageReserved). "
            ),
        }
    }
}

/// `float64(a) × float64(pct) / 100`, truncated toward zero, as Longhorn computes it.
#[inline]
pub fn percent_of(a: i64, pct: i64) -> i64 {
    // While |a × pct| < 2^53 the float product is exact, and the correctly rounded quotient
    // q + f (f ∈ {0, 0.01, …, 0.99}, |q| < 2^47) cannot round across an integer (half an ulp
    // there is at most 2^-7 < 0.01), so integer division truncates to the same value.
    const EXACT: i64 = 1 << 53;
    match a.checked_mul(pct) {
        Some(x) if x > -EXACT && x < EXACT => x / 100,
        _ => (a as f64 * pct as f64 / 100.0) as i64,
    }
}

/// Longhorn's `IsSchedulableToDisk(size, actual, info)`: maximum and available must be positive;
/// `available − actual > trunc(max × min% / 100)` (strict); `size + scheduled ≤ trunc((max −
/// reserved) × over% / 100)`. Computes in O(1).
///
/// ```
/// use placewise::replica::{is_schedulable_to_disk, DiskSpace};
///
/// assert!(is_schedulable_to_disk(0, 0, DiskSpace::new(1000, 251, 0, 0), 25, 100).is_ok());
/// assert!(is_schedulable_to_disk(0, 0, DiskSpace::new(1000, 250, 0, 0), 25, 100).is_err());
/// ```
///
/// # Errors
///
/// The first condition that fails.
pub fn is_schedulable_to_disk(
    size: i64,
    actual: i64,
    disk: DiskSpace,
    minimal_available_pct: i64,
    over_provisioning_pct: i64,
) -> Result<(), SpaceFailure> {
    if disk.maximum <= 0 {
        return Err(SpaceFailure::MaximumNotPositive);
    }
    if disk.available <= 0 {
        return Err(SpaceFailure::AvailableNotPositive);
    }
    let minimal = percent_of(disk.maximum, minimal_available_pct);
    let current = disk.available.saturating_sub(actual);
    if current <= minimal {
        return Err(SpaceFailure::ActualSpace { current, minimal, percentage: minimal_available_pct });
    }
    let limit = percent_of(disk.maximum.saturating_sub(disk.reserved), over_provisioning_pct);
    let total = size.saturating_add(disk.scheduled);
    if total > limit {
        return Err(SpaceFailure::SchedulingSpace { total, limit, percentage: over_provisioning_pct });
    }
    Ok(())
}

/// The percentage of a disk still usable: `(available − reserved) × 100 / max` in integer
/// division, 0 when `available − reserved ≤ 0` or `max ≤ 0`.
pub fn unused_percentage(disk: DiskSpace) -> i64 {
    let usable = disk.available.saturating_sub(disk.reserved);
    if usable <= 0 || disk.maximum <= 0 {
        return 0;
    }
    (usable as i128 * 100 / disk.maximum as i128) as i64
}

/// Whether a disk is under pressure: [`unused_percentage`] `< 100 − pressure%`. Never with
/// `pressure% = 0`… except that Longhorn's callers check `pressure% > 0` themselves; this is the
/// bare formula.
pub fn is_under_pressure(disk: DiskSpace, pressure_pct: i64) -> bool {
    unused_percentage(disk) < 100 - pressure_pct
}

/// The disk-pressure move target condition (besides the space check):
/// `(actual + scheduled + reserved) × 100 / max < pressure%` in integer division.
pub fn is_pressure_move_target(actual: i64, disk: DiskSpace, pressure_pct: i64) -> bool {
    if disk.maximum <= 0 {
        return false;
    }
    let used = actual as i128 + disk.scheduled as i128 + disk.reserved as i128;
    used * 100 / (disk.maximum as i128) < pressure_pct as i128
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::SplitMix64;

    fn float_percent(a: i64, pct: i64) -> i64 {
        (a as f64 * pct as f64 / 100.0) as i64
    }

    #[test]
    fn integer_percent_equals_the_float_formula() {
        let mut rng = SplitMix64::new(7);
        let edges = [0, 1, 99, 100, 101, (1 << 53) / 100, (1 << 53) / 100 + 1, (1 << 47) - 1, 1 << 47, i64::MAX];
        for _ in 0..200_000 {
            let pct = rng.below(1001) as i64;
            let bits = rng.below(64) as u32;
            let a = (rng.next_u64() >> (64 - bits.max(1))) as i64;
            for a in [a, -a, edges[rng.below(edges.len())]] {
                assert_eq!(percent_of(a, pct), float_percent(a, pct), "{a} × {pct}%");
                assert_eq!(percent_of(a, -pct), float_percent(a, -pct), "{a} × -{pct}%");
            }
        }
        // Just below 2^53 the quotient's fraction .99 still truncates down.
        let a = ((1i64 << 53) - 1) / 100 * 100 + 99;
        assert_eq!(percent_of(a, 1), float_percent(a, 1));
    }
}
