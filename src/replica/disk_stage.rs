//! Disk stage: the pre-filter (Longhorn's disk `Schedulable` condition), per-disk eligibility
//! and space check, and disk anti-affinity over a tier's candidates.
//!
//! Everything about a disk that does not depend on the replica being placed (pre-filter,
//! eligibility, the space check against status values) is computed once per call in
//! [`DiskPrep`]; only hosts holding a replica of the volume are re-evaluated per replica
//! ([`dynamic_host`]), because in-cycle accounting and disk anti-affinity can change them.

use super::choice::{Agg, Candidate};
use super::hooks::{DiskCx, Hooks};
use super::reasons::{DiskNote, FailureReason};
use super::settings::ReplicaSettings;
use super::space::{is_schedulable_to_disk, percent_of, DiskSpace, SpaceFailure};
use super::volume::{tags_match, DataEngine, Replica};
use super::{Ctx, LonghornVersion};
use crate::id::{DiskId, HostId};
use crate::snapshot::{Disk, DiskType, Host, HotDisk};

/// 16 TiB: from this size a v1 volume's disk filesystem is checked.
pub(crate) const HUGE_VOLUME: i64 = 16 << 40;

/// One disk's replica-independent state for this call. It does not depend on the volume's size
/// (below [`HUGE_VOLUME`]): the space check's verdict lives in the host's candidates, and its
/// note is made when read ([`DiskPrep::note_for`]), so a size change re-prepares only the hosts
/// of disks whose verdict it changes.
#[derive(Debug, Clone, Copy)]
pub(crate) struct DiskPrep {
    /// Why it is not a candidate with status values (pre-filter or eligibility), if so; when
    /// `space_note`, the note unless the space check fails.
    pub(crate) note: Option<DiskNote>,
    /// Passed the pre-filter and eligibility (the space check may still fail).
    pub(crate) eligible: bool,
    /// The space check for the call's volume decides the note: its failure when it fails,
    /// else `note`.
    pub(crate) space_note: bool,
}

impl DiskPrep {
    fn fixed(note: DiskNote) -> Self {
        DiskPrep { note: Some(note), eligible: false, space_note: false }
    }

    /// The note of `disk` (the disk this was prepared from, in the hot form it was prepared
    /// with) for `cx`'s volume: why it is not a candidate with status values, if so.
    pub(crate) fn note_for(&self, cx: &Ctx<'_>, disk: &HotDisk) -> Option<DiskNote> {
        if !self.space_note {
            return self.note;
        }
        let space = DiskSpace::of_hot(disk);
        match Limits::new(cx.settings, space).check(cx.volume.size, cx.volume.actual_size, space) {
            Err(f) => Some(DiskNote::Space(f)),
            Ok(()) => self.note,
        }
    }
}

/// One host's disk-stage summary with status values.
#[derive(Debug, Clone, Copy)]
pub(crate) struct HostDisks {
    /// Reason bits from the pre-filter and eligibility (and `disks are unavailable` when no disk
    /// passes the pre-filter).
    pub(crate) nonspace_bits: u16,
    /// `nonspace_bits` plus `insufficient storage` when a space check failed.
    pub(crate) static_bits: u16,
    /// The caller's disk filters (by position) that rejected one of its disks.
    pub(crate) caller: u64,
}

/// Step 5's pre-filter (including Longhorn's disk `Schedulable` condition: `Ready` and the space
/// check with size 0 and actual 0): volume-independent, kept in [`DiskBase::pre`].
fn prefilter(disk: &HotDisk, space: DiskSpace, lim: Limits) -> Option<DiskNote> {
    if !disk.allow_scheduling || disk.eviction_requested {
        return Some(DiskNote::Unavailable);
    }
    schedulable_condition(disk.schedulable, disk.ready, || lim.check(0, 0, space)).err()
}

/// The disk's `Schedulable` condition as the pre-filter reads it: the reported one when the
/// caller gives it (it can be stale: a disk reported schedulable whose space no longer passes
/// the size-0 check still passes here, and the per-replica space check rejects it), else derived
/// as the node controller sets it, from `ready` and `size0` (the space check with size 0 and
/// actual 0).
pub(crate) fn schedulable_condition(
    reported: Option<bool>,
    ready: bool,
    size0: impl FnOnce() -> Result<(), SpaceFailure>,
) -> Result<(), DiskNote> {
    match reported {
        Some(true) => Ok(()),
        Some(false) => Err(DiskNote::ReportedUnschedulable),
        None if !ready => Err(DiskNote::NotReady),
        None => size0().map_err(DiskNote::Pressure),
    }
}

/// Step 10's eligibility items (2)–(5): disk type for the engine, filesystem size limit, volume
/// and backing-image disk tags. `full` (the disk itself) is read only for what the hot form
/// lacks, which [`Ctx::disk_detail`] announces. `Err((note, reason bits, true))` on the first
/// item that fails.
pub(crate) fn volume_fit(cx: &Ctx<'_>, disk: &HotDisk, full: Option<&Disk>) -> Result<(), (DiskNote, u16, bool)> {
    let volume = cx.volume;
    let wanted = if volume.data_engine == DataEngine::V1 { DiskType::Filesystem } else { DiskType::Block };
    if disk.disk_type != wanted {
        let bits = if cx.version == LonghornVersion::Head { FailureReason::DisksUnavailable.bit() } else { 0 };
        return Err((DiskNote::WrongType, bits, true));
    }
    // Sizes first: the filesystem name is only read for the rare huge volume.
    if volume.data_engine == DataEngine::V1 && volume.size >= HUGE_VOLUME {
        let fs = full.map_or("", |d| &*d.fs_type);
        if fs.starts_with("ext") || (fs == "xfs" && volume.size == i64::MAX) {
            return Err((DiskNote::IncompatibleSize, FailureReason::IncompatibleVolumeSize.bit(), true));
        }
    }
    let allow_empty = cx.settings.allow_empty_disk_selector_volume;
    // Empty selectors read only whether the disk has tags.
    let has = |s| full.is_some_and(|d| d.tags.binary_search(&s).is_ok());
    let tagged = usize::from(disk.tagged);
    let tags_ok = tags_match(has, tagged, &cx.disk_selector, allow_empty)
        && (!cx.has_backing_image || tags_match(has, tagged, &cx.image_disk_selector, allow_empty));
    if !tags_ok {
        return Err((DiskNote::Tags, FailureReason::TagsNotFulfilled.bit(), true));
    }
    Ok(())
}

/// [`volume_fit`]'s verdict for the commonest volume, decided from the hot form alone: no disk
/// selector (nor a backing image's), below [`HUGE_VOLUME`]. Such a volume fits a disk of its
/// engine's type that has no tag, or any such disk when empty selectors are allowed. Only
/// acceptance is decided here; every other disk goes to [`volume_fit`] for its note and bits.
#[derive(Debug, Clone, Copy)]
pub(crate) struct QuickFit {
    /// The disk type that fits; `None` when the volume is not the plain kind.
    wanted: Option<DiskType>,
    allow_empty: bool,
}

impl QuickFit {
    pub(crate) fn of(cx: &Ctx<'_>) -> Self {
        let volume = cx.volume;
        let v1 = volume.data_engine == DataEngine::V1;
        let plain = cx.disk_selector.is_empty()
            && (!cx.has_backing_image || cx.image_disk_selector.is_empty())
            && !(v1 && volume.size >= HUGE_VOLUME);
        let wanted = if v1 { DiskType::Filesystem } else { DiskType::Block };
        QuickFit { wanted: plain.then_some(wanted), allow_empty: cx.settings.allow_empty_disk_selector_volume }
    }

    /// Whether [`volume_fit`] certainly accepts `disk` (`false`: ask it).
    #[inline]
    pub(crate) fn accepts(&self, disk: &HotDisk) -> bool {
        self.wanted == Some(disk.disk_type) && (self.allow_empty || !disk.tagged)
    }
}

/// One disk's volume-independent state: its space, its limits and the pre-filter's verdict.
/// Depends only on the snapshot and the settings.
#[derive(Debug, Clone, Copy)]
pub(crate) struct DiskBase {
    pub(crate) space: DiskSpace,
    pub(crate) lim: Limits,
    /// Why the pre-filter drops it, if it does.
    pub(crate) pre: Option<DiskNote>,
}

impl DiskBase {
    #[inline]
    pub(crate) fn new(settings: &ReplicaSettings, disk: &HotDisk) -> Self {
        let space = DiskSpace::of_hot(disk);
        let lim = Limits::new(settings, space);
        DiskBase { space, lim, pre: prefilter(disk, space, lim) }
    }
}

/// `IsSchedulableToDisk` with the two percentages of one disk computed once (they depend only
/// on `maximum` and `reserved`, not on the size or `scheduled`).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Limits {
    minimal: i64,
    limit: i64,
    min_pct: i64,
    over_pct: i64,
}

impl Limits {
    fn new(s: &ReplicaSettings, space: DiskSpace) -> Self {
        let (min_pct, over_pct) = (s.storage_minimal_available_percentage, s.storage_over_provisioning_percentage);
        Limits {
            minimal: percent_of(space.maximum, min_pct),
            limit: percent_of(space.maximum.saturating_sub(space.reserved), over_pct),
            min_pct,
            over_pct,
        }
    }

    /// The largest size that [`Limits::check`] admits on `space` (the disk the limits were
    /// made from) by the scheduling space, whatever the actual size: when its other conditions
    /// (which do not read the size) pass, it passes exactly for the sizes `≤ room`, so its
    /// verdicts for two sizes `a < b` differ only when `a ≤ room < b`. `i128::MAX` when every
    /// size passes (a limit of `i64::MAX`, which the saturating total never exceeds).
    pub(crate) fn room(&self, space: DiskSpace) -> i128 {
        if self.limit == i64::MAX {
            i128::MAX
        } else {
            // `size.saturating_add(scheduled) > limit` ⇔ `size + scheduled > limit` when the
            // limit is below `i64::MAX`, with the sum exact in i128.
            self.limit as i128 - space.scheduled as i128
        }
    }

    /// Exactly [`is_schedulable_to_disk`] for the disk the limits were made from.
    #[inline]
    pub(crate) fn check(&self, size: i64, actual: i64, space: DiskSpace) -> Result<(), SpaceFailure> {
        if space.maximum <= 0 {
            return Err(SpaceFailure::MaximumNotPositive);
        }
        if space.available <= 0 {
            return Err(SpaceFailure::AvailableNotPositive);
        }
        let current = space.available.saturating_sub(actual);
        if current <= self.minimal {
            return Err(SpaceFailure::ActualSpace { current, minimal: self.minimal, percentage: self.min_pct });
        }
        let total = size.saturating_add(space.scheduled);
        if total > self.limit {
            return Err(SpaceFailure::SchedulingSpace { total, limit: self.limit, percentage: self.over_pct });
        }
        Ok(())
    }
}

fn space_check(cx: &Ctx<'_>, space: DiskSpace) -> Result<(), DiskNote> {
    let s = cx.settings;
    is_schedulable_to_disk(
        cx.volume.size,
        cx.volume.actual_size,
        space,
        s.storage_minimal_available_percentage,
        s.storage_over_provisioning_percentage,
    )
    .map_err(DiskNote::Space)
}

/// Prepares one host's disks for the volume (`disks` in hot form with `base` their kept
/// volume-independent state, or `None` to compute it on the way; `full`, the host, only when
/// [`Ctx::disk_detail`] is set): appends one [`DiskPrep`] per disk to `prep` and the static
/// candidates (status values, no replica of the volume considered) to `cands`, summarised in
/// `agg`.
#[allow(clippy::too_many_arguments)]
pub(crate) fn prepare_host(
    cx: &Ctx<'_>,
    id: HostId,
    disks: &[HotDisk],
    base: Option<&[DiskBase]>,
    full: Option<&Host>,
    prep: &mut Vec<DiskPrep>,
    cands: &mut Vec<Candidate>,
    agg: &mut Agg,
) -> HostDisks {
    let mut any = false;
    let mut nonspace = 0u16;
    let mut space_bits = 0u16;
    let mut caller = 0u64;
    let (size, actual) = (cx.volume.size, cx.volume.actual_size);
    let quick = QuickFit::of(cx);
    for (i, disk) in disks.iter().enumerate() {
        let b = match base {
            Some(kept) => kept.get(i).copied().unwrap_or_else(|| DiskBase::new(cx.settings, disk)),
            None => DiskBase::new(cx.settings, disk),
        };
        let (space, lim) = (b.space, b.lim);
        let fit = match b.pre {
            Some(note) => Err((note, 0, false)),
            None if quick.accepts(disk) => Ok(()),
            None => volume_fit(cx, disk, full.and_then(|h| h.disks.get(i))),
        };
        match fit {
            // v1.10 checks the space before the tags: a disk failing both is short of storage.
            Err((DiskNote::Tags, bits, true)) if cx.version == LonghornVersion::V1_10 => {
                any = true;
                nonspace |= match lim.check(size, actual, space) {
                    Err(_) => FailureReason::InsufficientStorage.bit(),
                    Ok(()) => bits,
                };
                prep.push(DiskPrep { note: Some(DiskNote::Tags), eligible: false, space_note: true });
            }
            Err((note, bits, prefiltered)) => {
                any |= prefiltered;
                nonspace |= bits;
                prep.push(DiskPrep::fixed(note));
            }
            Ok(()) => {
                any = true;
                if let Some(k) = cx.hooks.and_then(|h| caller_disk_reject(cx, h, id, i)) {
                    caller |= 1u64 << k;
                    let note = cx.hooks.map_or(0, |h| h.disk_filter_index(k));
                    prep.push(DiskPrep::fixed(DiskNote::Caller(note)));
                    continue;
                }
                prep.push(DiskPrep { note: None, eligible: true, space_note: true });
                match lim.check(size, actual, space) {
                    Err(_) => space_bits |= FailureReason::InsufficientStorage.bit(),
                    Ok(()) => {
                        let c = Candidate { host: id, disk: DiskId::from_index(i), space };
                        agg.push(&c);
                        cands.push(c);
                    }
                }
            }
        }
    }
    if !any {
        nonspace |= FailureReason::DisksUnavailable.bit();
    }
    HostDisks { nonspace_bits: nonspace, static_bits: nonspace | space_bits, caller }
}

/// The position of the first caller disk filter rejecting disk `i` of host `id`, if any.
pub(crate) fn caller_disk_reject(cx: &Ctx<'_>, hooks: &Hooks, id: HostId, i: usize) -> Option<usize> {
    if hooks.disk_filters.is_empty() {
        return None;
    }
    let dcx = DiskCx::new(cx.cluster, cx.volume, id, DiskId::from_index(i))?;
    hooks.disk_filters.iter().position(|f| !f.check(&dcx))
}

/// Step 10 for a host that holds a replica of the volume: the space check with in-cycle
/// accounting. A replica of the volume on this host adds the volume size to a disk's
/// `scheduled` unless that disk lists it ([`Disk::lists_scheduled`], or [`Replica::counted`]
/// for a replica on that very disk); on HEAD only replicas on the disk itself count, on v1.10
/// every replica on the node does (bug #12653). Appends candidates to `out`; returns the reason
/// bits. `notes` receives `(disk index, note)` pairs.
#[allow(clippy::too_many_arguments)]
pub(crate) fn dynamic_host(
    cx: &Ctx<'_>,
    id: HostId,
    disks: &[HotDisk],
    full: Option<&Host>,
    prep: &[DiskPrep],
    summary: HostDisks,
    replicas: &[Replica],
    replica_at: &[(Option<HostId>, Option<DiskId>)],
    out: &mut Vec<Candidate>,
    mut note: impl FnMut(usize, DiskNote),
) -> u16 {
    let mut bits = summary.nonspace_bits;
    for (i, (disk, dp)) in disks.iter().zip(prep).enumerate() {
        if !dp.eligible {
            if let Some(n) = dp.note_for(cx, disk) {
                note(i, n);
            }
            continue;
        }
        let mut space = DiskSpace::of_hot(disk);
        let status = space;
        let here = Some(DiskId::from_index(i));
        let listed_names = full.and_then(|h| h.disks.get(i)).filter(|d| !d.scheduled_replicas.is_empty());
        for (r, &(rh, rd)) in replicas.iter().zip(replica_at) {
            if rh != Some(id) || (cx.version == LonghornVersion::Head && rd != here) {
                continue;
            }
            let listed = (r.counted && rd == here) || listed_names.is_some_and(|d| d.lists_scheduled(&r.name));
            if !listed {
                space.scheduled = space.scheduled.saturating_add(cx.volume.size);
            }
        }
        match space_check(cx, space) {
            Err(n) => {
                bits |= FailureReason::InsufficientStorage.bit();
                note(i, n);
            }
            Ok(()) => out.push(Candidate { host: id, disk: DiskId::from_index(i), space: status }),
        }
    }
    bits
}

/// Whether a replica of the volume holds candidate `c` for step 11: failed replicas count only
/// if potentially reusable; deleted ones count.
pub(crate) fn holds(c: &Candidate, replicas: &[Replica], replica_at: &[(Option<HostId>, Option<DiskId>)]) -> bool {
    replicas.iter().zip(replica_at).any(|(r, &(rh, rd))| {
        rh == Some(c.host)
            && rd == Some(c.disk)
            && !r.disk_id.is_empty()
            && (!r.is_failed() || r.is_potentially_reusable())
    })
}

#[cfg(test)]
mod tests {
    use super::Limits;
    use crate::replica::{DiskSpace, ReplicaSettings};

    /// Where the other conditions pass, the space check passes exactly for the sizes up to the
    /// room, at the ends of the ranges too (saturating totals, a limit of `i64::MAX`).
    #[test]
    fn the_room_is_the_largest_size_the_check_admits() {
        let values = [0, 1, 2, 99, 100, 1 << 40, i64::MAX / 2, i64::MAX - 1, i64::MAX];
        let sizes = |room: i128| {
            let near = [room.saturating_sub(1), room, room.saturating_add(1)]
                .map(|r| r.clamp(i64::MIN as i128, i64::MAX as i128) as i64);
            [i64::MIN, -1, 0, 1, 1 << 40, i64::MAX - 1, i64::MAX].into_iter().chain(near)
        };
        for (min_pct, over_pct) in [(0, 100), (25, 100), (10, 200), (0, 1000), (50, 0)] {
            let settings = ReplicaSettings {
                storage_minimal_available_percentage: min_pct,
                storage_over_provisioning_percentage: over_pct,
                ..ReplicaSettings::default()
            };
            for &max in &values {
                for &reserved in &[0, 1, max / 2] {
                    for &scheduled in &values {
                        let space = DiskSpace::new(max, max, reserved, scheduled);
                        let lim = Limits::new(&settings, space);
                        let room = lim.room(space);
                        if lim.check(i64::MIN, 0, space).is_err() {
                            // Another condition fails (the smallest size always fits the limit).
                            assert!(sizes(room).all(|s| lim.check(s, 0, space).is_err()));
                            continue;
                        }
                        for s in sizes(room) {
                            assert_eq!(lim.check(s, 0, space).is_ok(), s as i128 <= room, "{space:?} {s} {room}");
                        }
                    }
                }
            }
        }
    }
}
