//! Disk stage: the pre-filter (Longhorn's disk `Schedulable` condition), per-disk eligibility
//! and space check, and disk anti-affinity over a tier's candidates.
//!
//! Everything about a disk that does not depend on the replica being placed (pre-filter,
//! eligibility, the space check against status values) is computed once per call in
//! [`DiskPrep`]; only hosts holding a replica of the volume are re-evaluated per replica
//! ([`dynamic_host`]), because in-cycle accounting and disk anti-affinity can change them.
//!
//! The commonest disk (allowed, schedulable, of the volume's type, untagged or tags not asked
//! for, with room) is found a static candidate straight off its hot form ([`Shortcut`], worked
//! out once per call in [`DiskRules`]), building no note; every other disk takes the general
//! path, and a property test checks that both leave the same state.

use super::choice::{ins_high, ins_low, Agg, Candidate, HostSet};
use super::hooks::{DiskCx, ReplicaHooks};
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
    note: Note,
    /// Passed the pre-filter and eligibility (the space check may still fail).
    pub(crate) eligible: bool,
    /// The space check for the call's volume decides the note: its failure when it fails,
    /// else `note`.
    space_note: bool,
}

/// A [`DiskNote`] as a [`DiskPrep`] keeps it: without the numbers of a space failure, which
/// [`DiskPrep::note_for`] works out again from the disk (6 bytes a disk instead of 48).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Note {
    None,
    Unavailable,
    NotReady,
    /// [`DiskNote::Pressure`]: the size-0 space check's failure.
    Pressure,
    ReportedUnschedulable,
    WrongType,
    IncompatibleSize,
    Tags,
    /// [`DiskNote::Space`]: the volume's space check's failure.
    Space,
    AntiAffinity,
    Caller(u16),
}

impl Note {
    fn of(note: DiskNote) -> Self {
        match note {
            DiskNote::Unavailable => Note::Unavailable,
            DiskNote::NotReady => Note::NotReady,
            DiskNote::Pressure(_) => Note::Pressure,
            DiskNote::ReportedUnschedulable => Note::ReportedUnschedulable,
            DiskNote::WrongType => Note::WrongType,
            DiskNote::IncompatibleSize => Note::IncompatibleSize,
            DiskNote::Tags => Note::Tags,
            DiskNote::Space(_) => Note::Space,
            DiskNote::AntiAffinity => Note::AntiAffinity,
            DiskNote::Caller(k) => Note::Caller(k),
        }
    }

    /// The note in full for `disk` with `space` and limits `lim` (a space failure's numbers
    /// worked out again).
    fn expand(self, cx: &Ctx<'_>, space: DiskSpace, lim: Limits) -> Option<DiskNote> {
        Some(match self {
            Note::None => return None,
            Note::Unavailable => DiskNote::Unavailable,
            Note::NotReady => DiskNote::NotReady,
            Note::Pressure => DiskNote::Pressure(lim.check(0, 0, space).err()?),
            Note::ReportedUnschedulable => DiskNote::ReportedUnschedulable,
            Note::WrongType => DiskNote::WrongType,
            Note::IncompatibleSize => DiskNote::IncompatibleSize,
            Note::Tags => DiskNote::Tags,
            Note::Space => DiskNote::Space(lim.check(cx.volume.size, cx.volume.actual_size, space).err()?),
            Note::AntiAffinity => DiskNote::AntiAffinity,
            Note::Caller(k) => DiskNote::Caller(k),
        })
    }
}

/// The state of a disk that passed the pre-filter and eligibility.
const ELIGIBLE: DiskPrep = DiskPrep { note: Note::None, eligible: true, space_note: true };

impl DiskPrep {
    fn fixed(note: DiskNote) -> Self {
        DiskPrep { note: Note::of(note), eligible: false, space_note: false }
    }

    /// The note of `disk` (the disk this was prepared from, in the hot form it was prepared
    /// with) for `cx`'s volume: why it is not a candidate with status values, if so.
    pub(crate) fn note_for(&self, cx: &Ctx<'_>, disk: &HotDisk) -> Option<DiskNote> {
        if !self.space_note && self.note == Note::None {
            return None;
        }
        let space = DiskSpace::of_hot(disk);
        let lim = Limits::new(cx.settings, space);
        if self.space_note {
            if let Err(f) = lim.check(cx.volume.size, cx.volume.actual_size, space) {
                return Some(DiskNote::Space(f));
            }
        }
        self.note.expand(cx, space, lim)
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
    /// The [`HotDisk::flags`] the verdict reads (the type, and the tags unless empty selectors
    /// are allowed), and their values in a disk it accepts; `want` is `u8::MAX` (outside every
    /// mask) when the volume is not the plain kind, so no disk matches.
    mask: u8,
    want: u8,
}

impl QuickFit {
    pub(crate) fn of(cx: &Ctx<'_>) -> Self {
        let volume = cx.volume;
        let v1 = volume.data_engine == DataEngine::V1;
        let plain = cx.disk_selector.is_empty()
            && (!cx.has_backing_image || cx.image_disk_selector.is_empty())
            && !(v1 && volume.size >= HUGE_VOLUME);
        let tags = if cx.settings.allow_empty_disk_selector_volume { 0 } else { HotDisk::TAGGED };
        let want = if !plain {
            u8::MAX
        } else if v1 {
            0
        } else {
            HotDisk::BLOCK
        };
        QuickFit { mask: HotDisk::BLOCK | tags, want }
    }

    /// Whether the volume is the plain kind this verdict decides for.
    fn plain(&self) -> bool {
        self.want != u8::MAX
    }

    /// Whether [`volume_fit`] certainly accepts `disk` (`false`: ask it).
    #[inline]
    pub(crate) fn accepts(&self, disk: &HotDisk) -> bool {
        disk.flags() & self.mask == self.want
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

    /// Whether [`Limits::check`] passes, without its failure's numbers.
    #[inline(always)]
    pub(crate) fn fits(&self, size: i64, actual: i64, space: DiskSpace) -> bool {
        fits(self.minimal, self.limit, size, actual, space)
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

/// What the disk stage reads of a call for every disk, worked out once per call (or per
/// re-prepared host): the [`QuickFit`], whether there is a caller disk filter to ask, and the
/// [`Shortcut`] when it applies.
#[derive(Debug, Clone, Copy)]
pub(crate) struct DiskRules {
    quick: QuickFit,
    /// No caller disk filter: an accepted disk that passed the pre-filter is eligible.
    short: bool,
    shortcut: Option<Shortcut>,
}

impl DiskRules {
    pub(crate) fn of(cx: &Ctx<'_>) -> Self {
        let quick = QuickFit::of(cx);
        let short = cx.hooks.is_none_or(|h| h.disk_filters.is_empty());
        DiskRules { quick, short, shortcut: if short { Shortcut::of(cx, quick) } else { None } }
    }
}

impl DiskRules {
    /// [`prepare_host`] for a host whose every disk the shortcut takes as a static candidate (a
    /// call with no kept base, [`Ctx::disk_detail`] unset and the shortcut's conditions met):
    /// appends `disks.len()` eligible states to `prep` and the candidates to `cands`, and
    /// returns their summary. `None`, with `prep` and `cands` as they were, when the host has
    /// no disk or the shortcut does not take one of them: [`prepare_host`] then decides.
    #[inline(always)]
    pub(crate) fn all_candidates(
        &self,
        id: HostId,
        disks: &[HotDisk],
        prep: &mut Vec<DiskPrep>,
        cands: &mut Vec<Candidate>,
    ) -> Option<Agg> {
        let sc = self.shortcut.as_ref().filter(|_| !disks.is_empty())?;
        let agg = sc.all_candidates(id, disks, |c| cands.push(c))?;
        prep.extend(std::iter::repeat_n(ELIGIBLE, disks.len()));
        Some(agg)
    }

    /// Host `id` added to the set `set()` returns, as [`HostSet::push`] adds the summary
    /// [`DiskRules::all_candidates`] returns, when that returns one; its candidates' usable
    /// total returned. `None`, without calling `set`, otherwise. Nothing is written but the
    /// set: the disks' values go straight into its disk summary, with no summary of the host's
    /// own in between.
    #[inline(always)]
    pub(crate) fn add_all_candidates<'s>(
        &self,
        id: HostId,
        disks: &[HotDisk],
        set: impl FnOnce() -> &'s mut HostSet,
    ) -> Option<i128> {
        let sc = self.shortcut.as_ref().filter(|_| !disks.is_empty())?;
        if !sc.takes_all(disks) {
            return None;
        }
        let set = set();
        let (sum, mus, _) = fold(id, disks, &mut set.disks.min, &mut set.disks.max, |_| ());
        set.disks.n += disks.len() as u32;
        set.disks.sum += sum;
        set.push_host(id, sum, mus);
        Some(sum)
    }
}

/// The summary [`prepare_host`] gives a host with at least one disk, all of them candidates.
pub(crate) const ALL_CANDIDATES: HostDisks = HostDisks { nonspace_bits: 0, static_bits: 0, caller: 0 };

/// What [`prepare_host`] has found so far about one host's disks.
#[derive(Debug, Clone, Copy, Default)]
struct HostAcc {
    /// Some disk passed the pre-filter.
    any: bool,
    nonspace: u16,
    space_bits: u16,
    caller: u64,
}

/// A disk that passed the pre-filter and eligibility (`space`: its numbers): an eligible state,
/// and a candidate when the space check for the volume passes (`fits`).
#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn push_eligible(
    id: HostId,
    i: usize,
    space: DiskSpace,
    fits: bool,
    acc: &mut HostAcc,
    prep: &mut Vec<DiskPrep>,
    cands: &mut Vec<Candidate>,
    agg: &mut Agg,
) {
    prep.push(ELIGIBLE);
    if fits {
        let c = Candidate::new(id, DiskId::from_index(i), space);
        agg.push(&c);
        cands.push(c);
    } else {
        acc.space_bits |= FailureReason::InsufficientStorage.bit();
    }
}

/// Prepares one host's disks for the volume (`disks` in hot form with `base` their kept
/// volume-independent state, or `None` to compute it on the way; `full`, the host, only when
/// [`Ctx::disk_detail`] is set; `rules`, [`DiskRules::of`] `cx`): appends one [`DiskPrep`] per
/// disk to `prep` and the static candidates (status values, no replica of the volume
/// considered) to `cands`, summarised in `agg`.
///
/// The commonest disk (passes the pre-filter, [`QuickFit`] accepts it, no caller disk filter)
/// takes a short path that builds no note; every other disk takes the general one
/// (`FAST` false: every disk takes the general path, which gives the same result, as a
/// property test checks).
#[allow(clippy::too_many_arguments)]
pub(crate) fn prepare_host<const FAST: bool>(
    cx: &Ctx<'_>,
    rules: &DiskRules,
    id: HostId,
    disks: &[HotDisk],
    base: Option<&[DiskBase]>,
    full: Option<&Host>,
    prep: &mut Vec<DiskPrep>,
    cands: &mut Vec<Candidate>,
    agg: &mut Agg,
) -> HostDisks {
    let mut acc = HostAcc::default();
    let (size, actual) = (cx.volume.size, cx.volume.actual_size);
    let quick = rules.quick;
    let short = FAST && rules.short;
    let shortcut = if FAST && base.is_none() { rules.shortcut } else { None };
    // Summarised locally and stored once.
    let mut sum = *agg;
    if let Some(sc) = shortcut {
        // The leading disks the shortcut takes (commonly all of them): candidates first, then
        // their states in one go.
        let mut lead = 0;
        while let Some(space) = disks.get(lead).and_then(|d| sc.candidate(d)) {
            let c = Candidate::new(id, DiskId::from_index(lead), space);
            sum.push(&c);
            cands.push(c);
            lead += 1;
        }
        acc.any |= lead > 0;
        prep.extend(std::iter::repeat_n(ELIGIBLE, lead));
        for (i, disk) in disks.iter().enumerate().skip(lead) {
            match sc.candidate(disk) {
                Some(space) => {
                    acc.any = true;
                    push_eligible(id, i, space, true, &mut acc, prep, cands, &mut sum);
                }
                None => {
                    let b = DiskBase::new(cx.settings, disk);
                    general_disk(cx, id, i, disk, b, &quick, full, &mut acc, prep, cands, &mut sum);
                }
            }
        }
    } else {
        for (i, disk) in disks.iter().enumerate() {
            let kept = base.and_then(|kept| kept.get(i)).filter(|b| short && b.pre.is_none() && quick.accepts(disk));
            if let Some(b) = kept {
                acc.any = true;
                let fits = b.lim.fits(size, actual, b.space);
                push_eligible(id, i, b.space, fits, &mut acc, prep, cands, &mut sum);
                continue;
            }
            let b = match base {
                Some(kept) => kept.get(i).copied().unwrap_or_else(|| DiskBase::new(cx.settings, disk)),
                None => DiskBase::new(cx.settings, disk),
            };
            general_disk(cx, id, i, disk, b, &quick, full, &mut acc, prep, cands, &mut sum);
        }
    }
    *agg = sum;
    if !acc.any {
        acc.nonspace |= FailureReason::DisksUnavailable.bit();
    }
    HostDisks { nonspace_bits: acc.nonspace, static_bits: acc.nonspace | acc.space_bits, caller: acc.caller }
}

/// [`percent_of`] by one percentage, with the bound below which it is one integer product and
/// division.
#[derive(Debug, Clone, Copy)]
struct Percent {
    pct: i64,
    /// `(2^53 − 1) / pct` (every value when `pct` is 0): for `|a|` up to it `a × pct` is exact
    /// and below 2^53 in magnitude, where [`percent_of`] divides the integer product.
    bound: u64,
}

impl Percent {
    fn new(pct: i64) -> Self {
        let bound = match pct {
            0 => u64::MAX,
            p => ((1u64 << 53) - 1) / p.unsigned_abs(),
        };
        Percent { pct, bound }
    }

    /// Exactly [`percent_of`]`(a, pct)`.
    #[inline(always)]
    fn of(&self, a: i64) -> i64 {
        if a.unsigned_abs() <= self.bound {
            a * self.pct / 100
        } else {
            percent_of(a, self.pct)
        }
    }
}

/// The disk stage's verdict on the commonest disk read straight off its hot form, for a call
/// with no caller disk filter, a volume [`QuickFit`] decides, and a size and actual size of at
/// least 0: a disk that is allowed, not evicting, reported schedulable (or not reported and
/// ready), accepted by [`QuickFit`] and that passes the volume's space check is a static
/// candidate. (With sizes of at least 0, that space check passing implies the pre-filter's
/// check with size 0.) Any other disk goes through the general path.
#[derive(Debug, Clone, Copy)]
struct Shortcut {
    /// The [`HotDisk::flags`] a candidate's must match, and their values: open, and
    /// [`QuickFit::accepts`] it.
    mask: u8,
    want: u8,
    size: i64,
    actual: i64,
    minimal: Percent,
    over: Percent,
    /// The smaller of the two percentages' integer bounds, capped below 2^63: a `maximum` up
    /// to it has both percentages, of it and of anything less, exact in integers.
    exact: u64,
}

impl Shortcut {
    fn of(cx: &Ctx<'_>, quick: QuickFit) -> Option<Self> {
        let (size, actual) = (cx.volume.size, cx.volume.actual_size);
        let s = cx.settings;
        let (min_pct, over_pct) = (s.storage_minimal_available_percentage, s.storage_over_provisioning_percentage);
        let (minimal, over) = (Percent::new(min_pct), Percent::new(over_pct));
        (quick.plain() && size >= 0 && actual >= 0 && min_pct >= 0 && over_pct >= 0).then(|| Shortcut {
            mask: quick.mask | HotDisk::OPEN,
            want: quick.want | HotDisk::OPEN,
            size,
            actual,
            minimal,
            over,
            exact: minimal.bound.min(over.bound).min(i64::MAX as u64),
        })
    }

    /// Whether `disk`'s flags pass: open ([`HotDisk::OPEN`]) and accepted by the [`QuickFit`].
    #[inline(always)]
    fn open(&self, disk: &HotDisk) -> bool {
        disk.flags() & self.mask == self.want
    }

    /// The numbers of `disk` when it is a static candidate by the rule above; `None` when it is
    /// not, or the rule does not decide.
    #[inline(always)]
    fn candidate(&self, disk: &HotDisk) -> Option<DiskSpace> {
        if !self.open(disk) {
            return None;
        }
        let space = DiskSpace::of_hot(disk);
        let minimal = self.minimal.of(space.maximum);
        let limit = self.over.of(space.maximum.saturating_sub(space.reserved));
        fits(minimal, limit, self.size, self.actual, space).then_some(space)
    }

    /// The candidates of host `id` when [`Shortcut::takes_all`] its `disks`: handed to `sink`,
    /// their summary returned (what [`Candidate::new`] and [`Agg::push`] give, in one loop after
    /// the loop of verdicts). `None`, before any is handed over, otherwise.
    #[inline(always)]
    fn all_candidates(&self, id: HostId, disks: &[HotDisk], sink: impl FnMut(Candidate)) -> Option<Agg> {
        if !self.takes_all(disks) {
            return None;
        }
        let (mut low, mut high) = ([i64::MAX; 2], [i64::MIN; 2]);
        let (sum, mus, mus_pos) = fold(id, disks, &mut low, &mut high, sink);
        Some(Agg { n: disks.len() as u32, mus_pos, sum, min: low, max: high, mus })
    }

    /// Whether [`Shortcut::candidate`] takes every one of `disks` and their numbers lie where
    /// the integer arithmetic below is exact (the loop of verdicts, with little state).
    ///
    /// Exact where it answers: `maximum` lies within both [`Percent`]s' integer bounds
    /// ([`Shortcut::exact`], below 2^63), and so do `reserved ≤ maximum` and `maximum −
    /// reserved`; `available` and `scheduled` are below 2^63 (so [`DiskSpace::of_hot`] does not
    /// saturate and `available − reserved` cannot overflow), and the volume's sizes and both
    /// percentages are at least 0 ([`Shortcut::of`]). So both percentages are unsigned
    /// products below 2^53 divided by 100, `available − actual > minimal` is `available >
    /// actual + minimal` (below 2^64), which also makes `available` positive, and `size +
    /// scheduled` (below 2^64) is compared without saturating, as an unsigned sum, with a limit
    /// of at least 0.
    #[inline(always)]
    fn takes_all(&self, disks: &[HotDisk]) -> bool {
        let (size, actual, exact) = (self.size as u64, self.actual as u64, self.exact);
        let (min_pct, over_pct) = (self.minimal.pct as u64, self.over.pct as u64);
        disks.iter().all(|d| {
            let (m, a, r, s) = (d.maximum, d.available, d.reserved, d.scheduled);
            if !(self.open(d) && (a | s) >> 63 == 0 && r <= m && m <= exact) {
                return false;
            }
            m > 0 && a > actual + m * min_pct / 100 && size + s <= (m - r) * over_pct / 100
        })
    }
}

/// The candidates of host `id` on `disks`, every number of which is below 2^63 (as
/// [`Shortcut::takes_all`] checks): each handed to `sink` and its usable space inserted into
/// the two smallest `low` and two largest `high` (with multiplicity); returns their usable
/// total, the largest `available − reserved` and the position of the first disk that has it.
#[inline(always)]
fn fold(
    id: HostId,
    disks: &[HotDisk],
    low: &mut [i64; 2],
    high: &mut [i64; 2],
    mut sink: impl FnMut(Candidate),
) -> (i128, i64, u32) {
    let mut sum = 0u128;
    let (mut mus, mut mus_pos) = (i64::MIN, 0u32);
    for (disk, d) in (0u32..).zip(disks) {
        let (a, r, s) = (d.available as i64, d.reserved as i64, d.scheduled as i64);
        let free = a - r;
        let usable = if free > s { free - s } else { 0 };
        sum += usable as u64 as u128;
        ins_low(low, usable);
        ins_high(high, usable);
        if free > mus {
            mus = free;
            mus_pos = disk;
        }
        sink(Candidate { host: id, disk: DiskId(disk), usable, free });
    }
    // Fewer than 2^32 disks (a chunk counts them in `u32`) of below 2^63 bytes each: the sum is
    // below 2^95.
    (sum as i128, mus, mus_pos)
}

/// Whether a volume of `size` (`actual` of it written) passes the space check on a disk with
/// `space`, whose minimal available space and scheduling limit are `minimal` and `limit`.
#[inline(always)]
fn fits(minimal: i64, limit: i64, size: i64, actual: i64, space: DiskSpace) -> bool {
    space.maximum > 0
        && space.available > 0
        && space.available.saturating_sub(actual) > minimal
        && size.saturating_add(space.scheduled) <= limit
}

/// Disk `i` of host `id` (`disk`, with volume-independent state `b`) through the whole disk
/// stage: pre-filter verdict, eligibility, caller disk filters and the space check.
#[allow(clippy::too_many_arguments)]
#[inline(never)]
fn general_disk(
    cx: &Ctx<'_>,
    id: HostId,
    i: usize,
    disk: &HotDisk,
    b: DiskBase,
    quick: &QuickFit,
    full: Option<&Host>,
    acc: &mut HostAcc,
    prep: &mut Vec<DiskPrep>,
    cands: &mut Vec<Candidate>,
    agg: &mut Agg,
) {
    let (size, actual) = (cx.volume.size, cx.volume.actual_size);
    let (space, lim) = (b.space, b.lim);
    let fit = match b.pre {
        Some(note) => Err((note, 0, false)),
        None if quick.accepts(disk) => Ok(()),
        None => volume_fit(cx, disk, full.and_then(|h| h.disks.get(i))),
    };
    match fit {
        // v1.10 checks the space before the tags: a disk failing both is short of storage.
        Err((DiskNote::Tags, bits, true)) if cx.version == LonghornVersion::V1_10 => {
            acc.any = true;
            acc.nonspace |= match lim.check(size, actual, space) {
                Err(_) => FailureReason::InsufficientStorage.bit(),
                Ok(()) => bits,
            };
            prep.push(DiskPrep { note: Note::Tags, eligible: false, space_note: true });
        }
        Err((note, bits, prefiltered)) => {
            acc.any |= prefiltered;
            acc.nonspace |= bits;
            prep.push(DiskPrep::fixed(note));
        }
        Ok(()) => {
            acc.any = true;
            if let Some(k) = cx.hooks.and_then(|h| caller_disk_reject(cx, h, id, i)) {
                acc.caller |= 1u64 << k;
                let note = cx.hooks.map_or(0, |h| h.disk_filter_index(k));
                prep.push(DiskPrep::fixed(DiskNote::Caller(note)));
                return;
            }
            let fits = lim.check(size, actual, space).is_ok();
            push_eligible(id, i, space, fits, acc, prep, cands, agg);
        }
    }
}

/// The position of the first caller disk filter rejecting disk `i` of host `id`, if any.
pub(crate) fn caller_disk_reject(cx: &Ctx<'_>, hooks: &ReplicaHooks, id: HostId, i: usize) -> Option<usize> {
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
            Ok(()) => out.push(Candidate::new(id, DiskId::from_index(i), status)),
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
    use super::{prepare_host, DiskBase, DiskRules, Limits, ALL_CANDIDATES};
    use crate::id::{DiskId, HostId};
    use crate::replica::choice::{Agg, Candidate, HostSet};
    use crate::replica::{
        disk_filter_fn, Ctx, DataEngine, DiskSpace, LonghornVersion, ReplicaScheduler, ReplicaSettings, Volume,
    };
    use crate::snapshot::{Cluster, DiskSpec, DiskType, HostSpec};
    use proptest::prelude::*;

    const G: i64 = 1 << 30;

    /// A disk: maximum, available, reserved and scheduled (each a number of GiB or an extreme),
    /// flags (allowed, evicting, ready, tagged, block type) and the reported condition.
    type DiskDraw = ([i64; 4], (bool, bool, bool, bool, bool), Option<bool>);

    fn amount() -> impl Strategy<Value = i64> {
        prop_oneof![8 => (0i64..1200).prop_map(|g| g * G), 1 => Just(0), 1 => Just(i64::MAX), 1 => Just(1 << 62)]
    }

    /// Mostly a disk's numbers as percentages of its maximum (so that many fit), sometimes
    /// four independent amounts.
    fn numbers() -> impl Strategy<Value = [i64; 4]> {
        prop_oneof![
            4 => (1i64..1200, 0i64..=100, 0i64..=30, 0i64..=150).prop_map(|(m, a, r, s)| {
                let max = m * G;
                [max, max / 100 * a, max / 100 * r, max / 100 * s]
            }),
            1 => [amount(), amount(), amount(), amount()],
        ]
    }

    fn disk() -> impl Strategy<Value = DiskDraw> {
        (
            numbers(),
            (
                prop::bool::weighted(0.9),
                prop::bool::weighted(0.1),
                prop::bool::weighted(0.9),
                prop::bool::weighted(0.2),
                prop::bool::weighted(0.1),
            ),
            prop::option::weighted(0.2, any::<bool>()),
        )
    }

    fn disk_spec(d: usize, &([max, avail, reserved, scheduled], flags, reported): &DiskDraw) -> DiskSpec {
        let (allowed, evicting, ready, tagged, block) = flags;
        let mut disk = DiskSpec::new(format!("d{d}"), max, avail)
            .reserved(reserved)
            .scheduled(scheduled)
            .allow_scheduling(allowed)
            .eviction_requested(evicting)
            .ready(ready);
        if tagged {
            disk = disk.tag("fast");
        }
        if block {
            disk = disk.disk_type(DiskType::Block);
        }
        if let Some(r) = reported {
            disk = disk.schedulable(r);
        }
        disk
    }

    /// What the whole-host shortcut and the general path leave for host `id` (`disks`, `full`
    /// as [`prepare_host`] takes them), as text: the shortcut's (`None` when it does not take
    /// the host), the general path's, whether the shortcut appended nothing when it did not
    /// take the host (and [`DiskRules::add_all_candidates`], writing nothing else, adds the host
    /// to a set of hosts exactly as [`HostSet::push`] adds the shortcut's summary, and leaves
    /// the set alone when there is none), and whether the general path found every disk a
    /// candidate.
    fn whole_host_and_general(
        cx: &Ctx<'_>,
        rules: &DiskRules,
        id: HostId,
        disks: &[crate::snapshot::HotDisk],
        full: Option<&crate::snapshot::Host>,
    ) -> (Option<String>, String, bool, bool) {
        let (mut prep, mut cands) = (Vec::new(), Vec::new());
        let lean = rules.all_candidates(id, disks, &mut prep, &mut cands);
        // Added straight into a set already holding another host: the same set as pushing the
        // summary, for the same hosts.
        let mut other = Agg::EMPTY;
        for (disk, usable) in [(0, 300 << 30), (1, 5 << 30)] {
            other.push(&Candidate { host: HostId(999), disk: DiskId(disk), usable, free: usable });
        }
        let (mut straight, mut pushed) = (HostSet::leaf(HostId(999), &other), HostSet::leaf(HostId(999), &other));
        let total = rules.add_all_candidates(id, disks, || &mut straight);
        pushed.push(id, &lean.unwrap_or(Agg::EMPTY));
        let untouched = (lean.is_some() || (prep.is_empty() && cands.is_empty()))
            && total == lean.map(|agg| agg.sum)
            && format!("{straight:?}") == format!("{pushed:?}");
        let lean = lean.map(|agg| format!("{ALL_CANDIDATES:?}\n{prep:?}\n{cands:?}\n{agg:?}"));
        let (mut prep, mut cands, mut agg) = (Vec::new(), Vec::new(), Agg::EMPTY);
        let summary = prepare_host::<false>(cx, rules, id, disks, None, full, &mut prep, &mut cands, &mut agg);
        let all = format!("{summary:?}") == format!("{ALL_CANDIDATES:?}") && cands.len() == disks.len();
        (lean, format!("{summary:?}\n{prep:?}\n{cands:?}\n{agg:?}"), untouched, all)
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

        /// The short path for the commonest disk leaves exactly what the general path leaves:
        /// each disk's state, the static candidates, their summary and the reason bits, with
        /// and without kept volume-independent state (whole or cut short), for volumes of both
        /// engines, with and without a disk selector, actual size or caller disk filter, under
        /// random space settings and both versions.
        #[test]
        fn the_short_disk_path_agrees_with_the_general_one(
            hosts in prop::collection::vec(prop::collection::vec(disk(), 0..5), 1..6),
            pcts in (0i64..=100, prop_oneof![Just(100i64), 0i64..400, Just(i64::MAX / 2)]),
            flags in (
                any::<bool>(),
                prop::bool::weighted(0.2),
                prop::bool::weighted(0.2),
                any::<bool>(),
                prop::bool::weighted(0.2),
            ),
            size in prop_oneof![6 => (0i64..600).prop_map(|g| g * G), 2 => amount(), 1 => Just(16i64 << 40), 1 => Just(-1i64)],
            actual in prop_oneof![Just(0i64), amount()],
        ) {
            let (v1_10, v2, selector, allow_empty, filtered) = flags;
            let mut b = Cluster::builder();
            for (i, disks) in hosts.iter().enumerate() {
                let mut h = HostSpec::new(format!("n{i}"));
                for (d, draw) in disks.iter().enumerate() {
                    h = h.disk(disk_spec(d, draw));
                }
                b = b.host(h);
            }
            let cluster = b.build().unwrap();
            let settings = ReplicaSettings {
                storage_minimal_available_percentage: pcts.0,
                storage_over_provisioning_percentage: pcts.1,
                allow_empty_disk_selector_volume: allow_empty,
                ..ReplicaSettings::default()
            };
            let version = if v1_10 { LonghornVersion::V1_10 } else { LonghornVersion::Head };
            let mut builder = ReplicaScheduler::builder(settings.clone());
            if filtered {
                builder = builder.disk_filter(disk_filter_fn("small", |cx| cx.disk().maximum < 600 << 30));
            }
            let scheduler = builder.version(version).build().unwrap();
            let mut volume = Volume::new("vol", size, 3);
            volume.actual_size = actual;
            if v2 {
                volume.data_engine = DataEngine::V2;
            }
            if selector {
                volume.disk_selector = vec!["fast".to_owned()];
            }
            let cx = Ctx::new(&scheduler, &cluster, &volume).unwrap();
            let rules = DiskRules::of(&cx);
            for i in 0..hosts.len() {
                let id = HostId::from_index(i);
                let disks = cluster.hot_disks(id);
                let full = cluster.host(id);
                let kept: Vec<DiskBase> = disks.iter().map(|d| DiskBase::new(&settings, d)).collect();
                for base in [None, Some(&kept[..]), Some(&kept[..kept.len() / 2])] {
                    let run = |fast: bool| {
                        let (mut prep, mut cands, mut agg) = (Vec::new(), Vec::new(), Agg::EMPTY);
                        let summary = if fast {
                            prepare_host::<true>(&cx, &rules, id, disks, base, full, &mut prep, &mut cands, &mut agg)
                        } else {
                            prepare_host::<false>(&cx, &rules, id, disks, base, full, &mut prep, &mut cands, &mut agg)
                        };
                        format!("{summary:?}\n{prep:?}\n{cands:?}\n{agg:?}")
                    };
                    prop_assert_eq!(run(true), run(false));
                }
                if !cx.disk_detail {
                    let (lean, general, untouched, _) = whole_host_and_general(&cx, &rules, id, disks, full);
                    prop_assert!(untouched);
                    if let Some(lean) = lean {
                        prop_assert_eq!(lean, general);
                    }
                }
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 2048, ..ProptestConfig::default() })]

        /// The whole-host shortcut on hosts of disks that mostly pass, with numbers on a coarse
        /// grid (so that the space check's boundaries and ties of usable and free space are
        /// common) and now and then an extreme: whenever it takes a host it leaves what the
        /// general path leaves, and when it does not it appends nothing.
        #[test]
        fn the_whole_host_shortcut_agrees_with_the_general_path_at_the_boundaries(
            disks in prop::collection::vec(
                (
                    prop_oneof![
                        8 => Just(100 * G),
                        4 => Just(200 * G),
                        1 => Just(0i64),
                        1 => Just(i64::MAX),
                        1 => Just(1 << 62),
                    ],
                    (0i64..=4, prop_oneof![3 => Just(0i64), 1 => 0i64..=4], 0i64..=4).prop_map(|(a, r, s)| [a, r, s]),
                    prop::bool::weighted(0.05),
                ),
                1..4,
            ),
            pcts in (prop_oneof![Just(0i64), Just(25), Just(50)], prop_oneof![Just(100i64), Just(200), Just(50)]),
            size in (0i64..=4).prop_map(|k| k * 25 * G),
            actual in prop_oneof![Just(0i64), Just(25 * G)],
        ) {
            let mut h = HostSpec::new("n0");
            for (d, &(max, [a, r, s], evicting)) in disks.iter().enumerate() {
                let quarter = max / 4;
                h = h.disk(
                    DiskSpec::new(format!("d{d}"), max, quarter.saturating_mul(a))
                        .reserved(quarter.saturating_mul(r) / 2)
                        .scheduled(quarter.saturating_mul(s))
                        .eviction_requested(evicting),
                );
            }
            let cluster = Cluster::builder().host(h).build().unwrap();
            let settings = ReplicaSettings {
                storage_minimal_available_percentage: pcts.0,
                storage_over_provisioning_percentage: pcts.1,
                ..ReplicaSettings::default()
            };
            let scheduler = ReplicaScheduler::new(settings).unwrap();
            let mut volume = Volume::new("vol", size, 3);
            volume.actual_size = actual;
            let cx = Ctx::new(&scheduler, &cluster, &volume).unwrap();
            let rules = DiskRules::of(&cx);
            let id = HostId::from_index(0);
            let disks = cluster.hot_disks(id);
            let (lean, general, untouched, all) = whole_host_and_general(&cx, &rules, id, disks, None);
            prop_assert!(untouched);
            match lean {
                Some(lean) => prop_assert_eq!(lean, general),
                // Ordinary numbers (the percentages exact, reserved below maximum): it leaves
                // no host whose every disk is a candidate to the general path.
                None => prop_assert!(
                    !(all && disks.iter().all(|d| d.maximum <= 200 << 30)),
                    "an ordinary host of candidates was not taken"
                ),
            }
        }
    }

    /// Past the integer bound Longhorn's percentages are rounded float products. Where one
    /// rounds across an integer, so that float and integer arithmetic disagree on a disk, the
    /// whole-host shortcut still leaves what the general path leaves (such a disk is left to
    /// the general path), for the minimal-space and the over-provisioning percentage alike.
    #[test]
    fn the_whole_host_shortcut_agrees_where_a_percentage_is_a_rounded_float() {
        for (min_pct, over_pct) in [(33, 100), (0, 333)] {
            let pct = min_pct.max(over_pct * i64::from(min_pct == 0));
            let integer = |m: i64| (m as i128 * pct as i128 / 100) as i64;
            let start = (1i64 << 53) / pct;
            let m = (start..start + 10_000)
                .find(|&m| crate::replica::space::percent_of(m, pct) != integer(m))
                .expect("a maximum whose percentage rounds across an integer as a float");
            let between = crate::replica::space::percent_of(m, pct).max(integer(m));
            // Passes by the smaller minimal space, or by the larger limit, only.
            let disk =
                if min_pct > 0 { DiskSpec::new("d", m, between) } else { DiskSpec::new("d", m, m).scheduled(between) };
            let cluster = Cluster::builder().host(HostSpec::new("n0").disk(disk)).build().unwrap();
            let settings = ReplicaSettings {
                storage_minimal_available_percentage: min_pct,
                storage_over_provisioning_percentage: over_pct,
                ..ReplicaSettings::default()
            };
            let scheduler = ReplicaScheduler::new(settings).unwrap();
            let volume = Volume::new("vol", 0, 3);
            let cx = Ctx::new(&scheduler, &cluster, &volume).unwrap();
            let rules = DiskRules::of(&cx);
            let id = HostId::from_index(0);
            let (lean, general, untouched, _) = whole_host_and_general(&cx, &rules, id, cluster.hot_disks(id), None);
            assert!(untouched, "{min_pct} {over_pct}");
            if let Some(lean) = lean {
                assert_eq!(lean, general, "{min_pct} {over_pct}");
            }
        }
    }

    /// A host of ordinary disks, all candidates: the whole-host shortcut takes it, and leaves
    /// what the general path leaves; a disk it cannot take (reserved above maximum) sends the
    /// host back to the general path with nothing appended.
    #[test]
    fn the_whole_host_shortcut_takes_a_host_of_ordinary_disks() {
        let host = |reserved: i64| {
            HostSpec::new("n0")
                .disk(DiskSpec::new("d0", 1000 * G, 700 * G).scheduled(100 * G))
                .disk(DiskSpec::new("d1", 2000 * G, 1900 * G).reserved(reserved))
                .disk(DiskSpec::new("d2", 1000 * G, 900 * G).scheduled(990 * G))
        };
        let scheduler = ReplicaScheduler::new(ReplicaSettings::default()).unwrap();
        let volume = Volume::new("vol", 10 * G, 3);
        for (reserved, taken) in [(100 * G, true), (2100 * G, false)] {
            let cluster = Cluster::builder().host(host(reserved)).build().unwrap();
            let cx = Ctx::new(&scheduler, &cluster, &volume).unwrap();
            let rules = DiskRules::of(&cx);
            let id = HostId::from_index(0);
            let disks = cluster.hot_disks(id);
            let (lean, general, untouched, all) = whole_host_and_general(&cx, &rules, id, disks, None);
            assert!(untouched);
            assert_eq!(lean.is_some(), taken, "reserved {reserved}");
            assert_eq!(all, taken, "reserved {reserved}");
            if let Some(lean) = lean {
                assert_eq!(lean, general);
            }
        }
    }

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
