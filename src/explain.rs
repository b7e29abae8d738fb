//! Explanations: why hosts were rejected, and why the winner won.

use serde::{Deserialize, Serialize};
use std::fmt;

/// How many hosts one filter rejected for one reason.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct RejectionCount {
    /// The filter's name.
    pub filter: String,
    /// The reason, such as `insufficient memory`.
    pub reason: String,
    /// Number of hosts.
    pub count: u32,
}

/// One host's verdict.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct HostVerdict {
    /// The host's name.
    pub host: String,
    /// Whether it passed every filter.
    pub passed: bool,
    /// The rejecting filter.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub filter: Option<String>,
    /// The rejection reason: the rejecting filter's first (the one the host is counted under
    /// in [`Explanation::rejections`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Every reason the rejecting filter has against the host, [`reason`](HostVerdict::reason)
    /// first: a host short of memory and vCPUs lists both. Empty for a host that passed, and
    /// where an engine names no filter.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub reasons: Vec<String>,
    /// The instance of the request being placed when the host was rejected.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instance: Option<u32>,
    /// The disk this verdict is about, for an engine that places on a host's disks (replica);
    /// `None` for a verdict on the whole host.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub disk: Option<String>,
}

/// One weigher's contribution to one host's score.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct WeightTerm {
    /// The ranking tier (0 first).
    pub tier: u32,
    /// The weigher's name.
    pub weigher: String,
    /// Raw value.
    pub raw: f64,
    /// Value after normalisation over the candidates.
    pub normalized: f64,
    /// The multiplier.
    pub multiplier: f64,
    /// `normalized × multiplier`, the amount added to the tier's score.
    pub weighted: f64,
}

/// One of the best hosts for the first instance, with its score broken down.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct RankedHost {
    /// The host's name.
    pub host: String,
    /// The disk's name, when the engine ranks disks (replica).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub disk: Option<String>,
    /// Score per tier.
    pub scores: Vec<f64>,
    /// Every weigher's contribution.
    pub terms: Vec<WeightTerm>,
}

impl RankedHost {
    /// A host ranked by keys compared in order, each `(name, raw value, multiplier)` a tier of
    /// its own (not normalised: the engine compares raw values; multiplier −1 where lower is
    /// better), for the engines whose choice is not a weighted sum (replica, spread).
    pub(crate) fn by_keys(host: String, disk: Option<String>, keys: &[(&str, f64, f64)]) -> Self {
        let terms: Vec<WeightTerm> = keys
            .iter()
            .enumerate()
            .map(|(tier, &(name, raw, multiplier))| WeightTerm {
                tier: tier as u32,
                weigher: name.to_owned(),
                raw,
                normalized: raw,
                multiplier,
                weighted: raw * multiplier,
            })
            .collect();
        RankedHost { host, disk, scores: terms.iter().map(|t| t.weighted).collect(), terms }
    }
}

/// Why a request went where it went, or why it could not.
///
/// Displays as `0/12 hosts are available: 7 insufficient memory, 5 not in zone az2`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Explanation {
    /// Hosts in the snapshot.
    pub hosts: u32,
    /// Hosts that passed every filter for instance [`instance`](Explanation::instance).
    pub available: u32,
    /// The instance this explains: the first one that found no host, else the last one placed.
    pub instance: u32,
    /// Every host not available, by filter and reason, most frequent first (each host is counted
    /// once, under the first filter that rejected it).
    pub rejections: Vec<RejectionCount>,
    /// Every host's verdict, in host order, when the request asked for them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub verdicts: Vec<HostVerdict>,
    /// The best hosts for the first instance with their score breakdown, when asked for.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub top: Vec<RankedHost>,
    /// The engine's own words for the outcome where it copies a real system's (Longhorn's
    /// condition message, SwarmKit's `no suitable node (…)`); `None` where it has none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

impl Explanation {
    /// An explanation of a call over `hosts` hosts that rejected none and kept no details.
    pub fn new(hosts: u32) -> Explanation {
        Explanation {
            hosts,
            available: hosts,
            instance: 0,
            rejections: Vec::new(),
            verdicts: Vec::new(),
            top: Vec::new(),
            message: None,
        }
    }
}

impl fmt::Display for Explanation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{} hosts are available", self.available, self.hosts)?;
        for (i, r) in self.rejections.iter().enumerate() {
            f.write_str(if i == 0 { ": " } else { ", " })?;
            write!(f, "{} {}", r.count, r.reason)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_like_the_issue_says() {
        let e = Explanation {
            hosts: 12,
            available: 0,
            instance: 0,
            rejections: vec![
                RejectionCount { filter: "resources".into(), reason: "insufficient memory".into(), count: 7 },
                RejectionCount { filter: "availability_zone".into(), reason: "not in zone az2".into(), count: 5 },
            ],
            verdicts: vec![],
            top: vec![],
            message: None,
        };
        assert_eq!(e.to_string(), "0/12 hosts are available: 7 insufficient memory, 5 not in zone az2");
        let ok = Explanation { available: 12, rejections: vec![], ..e };
        assert_eq!(ok.to_string(), "12/12 hosts are available");
    }
}
