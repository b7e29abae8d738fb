//! Devices and GPUs.

use super::fits_named;
use crate::filter::{Filter, Reason, Verdict};
use crate::id::HostId;
use crate::request::Cx;
use crate::service::site::GPU;
use crate::service::{MatchExpr, Site};
use std::sync::Arc;

/// Passes hosts that have the required devices and GPUs.
///
/// - **Devices** are matched by label only and are shared: each required expression must match
///   the labels of at least one device of the host (one device may satisfy several
///   expressions). Device labels are their own namespace, not host labels.
/// - **GPUs** are counted and exclusive: the host's `gpu` resource must have the requested
///   number unallocated.
///
/// Reasons: `insufficient GPUs`, ``no device matches `<expr>` ``.
#[derive(Debug, Clone)]
pub struct DeviceFilter {
    site: Arc<Site>,
    devices: Vec<MatchExpr>,
    gpus: u32,
}

impl DeviceFilter {
    /// Reason: too few free GPUs. A missing device `i` is `Reason(1 + i)`.
    pub const GPUS: Reason = Reason(0);

    /// A filter requiring a device for each of `devices` and `gpus` free GPUs.
    pub fn new(site: Arc<Site>, devices: Vec<MatchExpr>, gpus: u32) -> Self {
        DeviceFilter { site, devices, gpus }
    }
}

impl Filter for DeviceFilter {
    fn name(&self) -> &str {
        "devices"
    }

    fn check(&self, cx: &Cx<'_>, host: HostId) -> Verdict {
        if self.gpus > 0 && !fits_named(cx, host, GPU, f64::from(self.gpus)) {
            return Verdict::Reject(Self::GPUS);
        }
        let present = self.site.devices(host);
        for (i, want) in self.devices.iter().enumerate() {
            if !present.iter().any(|d| want.matches_map(&d.labels)) {
                return Verdict::reject(1 + i as u32);
            }
        }
        Verdict::Pass
    }

    fn describe(&self, _cx: &Cx<'_>, reason: Reason) -> String {
        match reason.0.checked_sub(1).and_then(|i| self.devices.get(i as usize)) {
            Some(e) => format!("no device matches `{e}`"),
            None => "insufficient GPUs".into(),
        }
    }

    fn host_local(&self) -> bool {
        true
    }
}
