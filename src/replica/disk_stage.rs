//! Disk stage: the pre-filter (Longhorn's disk `Schedulable` condition), per-disk eligibility
//! and space check for one node, and disk anti-affinity over a tier's candidates.

use super::choice::Candidate;
use super::node_stage::tags_match;
use super::reasons::{DiskNote, FailureReason, Reasons};
use super::space::{is_schedulable_to_disk, DiskSpace};
use super::volume::DataEngine;
use super::{Ctx, LonghornVersion};
use crate::id::{DiskId, HostId};
use crate::snapshot::{Disk, DiskType};

const TIB: i64 = 1 << 40;

/// Longhorn's disk `Schedulable` condition: the space check with size 0 and actual 0, plus
/// `Ready`.
pub(crate) fn disk_condition(cx: &Ctx<'_>, disk: &Disk) -> Result<(), DiskNote> {
    if !disk.ready {
        return Err(DiskNote::NotReady);
    }
    let s = cx.settings;
    is_schedulable_to_disk(
        0,
        0,
        DiskSpace::of(disk),
        s.storage_minimal_available_percentage,
        s.storage_over_provisioning_percentage,
    )
    .map_err(DiskNote::Pressure)
}

/// Step 10 for one node: appends its eligible disks to `out` and the failure keys to `reasons`.
pub(crate) fn node_disks(
    cx: &Ctx<'_>,
    host: HostId,
    replica_hosts: &[Option<HostId>],
    out: &mut Vec<Candidate>,
    reasons: &mut Reasons,
    notes: &mut Option<Vec<(HostId, DiskId, DiskNote)>>,
) {
    let h = cx.cluster.host(host).expect("candidate exists");
    let mut note = |d: usize, n| {
        if let Some(v) = notes.as_mut() {
            v.push((host, DiskId::from_index(d), n));
        }
    };
    let mut any = false;
    let volume = cx.volume;
    for (i, disk) in h.disks.iter().enumerate() {
        // Pre-filter (step 5).
        if !disk.allow_scheduling || disk.eviction_requested {
            note(i, DiskNote::Unavailable);
            continue;
        }
        if let Err(n) = disk_condition(cx, disk) {
            note(i, n);
            continue;
        }
        any = true;
        // Eligibility (step 10).
        let wanted = if volume.data_engine == DataEngine::V1 { DiskType::Filesystem } else { DiskType::Block };
        if disk.disk_type != wanted {
            if cx.version == LonghornVersion::Head {
                reasons.insert(FailureReason::DisksUnavailable);
            }
            note(i, DiskNote::WrongType);
            continue;
        }
        if volume.data_engine == DataEngine::V1 {
            let fs = &*disk.fs_type;
            let too_big =
                (fs.starts_with("ext") && volume.size >= 16 * TIB) || (fs == "xfs" && volume.size == i64::MAX);
            if too_big {
                reasons.insert(FailureReason::IncompatibleVolumeSize);
                note(i, DiskNote::IncompatibleSize);
                continue;
            }
        }
        let allow_empty = cx.settings.allow_empty_disk_selector_volume;
        let has = |s| disk.tags.binary_search(&s).is_ok();
        let tags_ok = tags_match(has, disk.tags.len(), &cx.disk_selector, allow_empty)
            && (!cx.has_backing_image || tags_match(has, disk.tags.len(), &cx.image_disk_selector, allow_empty));
        if !tags_ok {
            reasons.insert(FailureReason::TagsNotFulfilled);
            note(i, DiskNote::Tags);
            continue;
        }
        // In-cycle accounting: replicas placed in this cycle are not in `scheduled` yet.
        let mut space = DiskSpace::of(disk);
        for (r, rh) in cx.replicas.iter().zip(replica_hosts) {
            if r.counted || *rh != Some(host) {
                continue;
            }
            if cx.version == LonghornVersion::V1_10 || *r.disk_id == *disk.name {
                space.scheduled = space.scheduled.saturating_add(volume.size);
            }
        }
        let s = cx.settings;
        if let Err(f) = is_schedulable_to_disk(
            volume.size,
            volume.actual_size,
            space,
            s.storage_minimal_available_percentage,
            s.storage_over_provisioning_percentage,
        ) {
            reasons.insert(FailureReason::InsufficientStorage);
            note(i, DiskNote::Space(f));
            continue;
        }
        out.push(Candidate { host, disk: DiskId::from_index(i), space: DiskSpace::of(disk) });
    }
    if !any {
        reasons.insert(FailureReason::DisksUnavailable);
    }
}

/// Step 11: keeps the candidates holding no replica of the volume if there are any; otherwise
/// all of them (soft) or none (hard). Failed replicas count only when potentially reusable;
/// deleted ones count.
pub(crate) fn anti_affinity(
    cx: &Ctx<'_>,
    cands: &mut Vec<Candidate>,
    replica_hosts: &[Option<HostId>],
    disk_soft: bool,
    notes: &mut Option<Vec<(HostId, DiskId, DiskNote)>>,
) {
    let holds = |c: &Candidate| {
        let name = &cx.cluster.host(c.host).expect("candidate exists").disks[c.disk.index()].name;
        cx.replicas.iter().zip(replica_hosts).any(|(r, rh)| {
            *rh == Some(c.host)
                && !r.disk_id.is_empty()
                && *r.disk_id == **name
                && (!r.is_failed() || r.is_potentially_reusable())
        })
    };
    let any_free = cands.iter().any(|c| !holds(c));
    if any_free || !disk_soft {
        cands.retain(|c| {
            let keep = !holds(c);
            if !keep {
                if let Some(v) = notes.as_mut() {
                    v.push((c.host, c.disk, DiskNote::AntiAffinity));
                }
            }
            keep
        });
    }
}
