//! What a spread call returns: the assignments, the unplaced count, the core's explanation
//! (with SwarmKit's failure message) and the decision tree, branch by branch.

use super::request::SpreadMode;
use crate::explain::Explanation;
use crate::id::HostId;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

/// One placed task.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct SpreadSelection {
    /// Index of the task in the batch, in placement order.
    pub task: u32,
    /// The node.
    pub host: HostId,
    /// Its name (the node id).
    pub host_name: String,
    /// The branch it went to: the node's value at each level of the tree, outermost first.
    pub branch: Arc<[String]>,
}

/// Why a branch received no task.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum BranchNote {
    /// No node beneath passed the filters.
    NoEligibleNode,
    /// It already held its share (or more) of the service's tasks, so it was not asked.
    AtOrAboveShare,
    /// It was asked, but its eligible nodes could take nothing more (resources, ports, max
    /// replicas, a hard spread limit).
    NoCapacity,
    /// It was asked after the batch's tasks had all been placed elsewhere.
    BatchExhausted,
}

impl fmt::Display for BranchNote {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            BranchNote::NoEligibleNode => "no eligible node",
            BranchNote::AtOrAboveShare => "at or above its share",
            BranchNote::NoCapacity => "no capacity left on its eligible nodes",
            BranchNote::BatchExhausted => "the batch was already placed",
        })
    }
}

/// One branch of the decision tree after the batch.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct BranchReport {
    /// The descriptor of the level this branch belongs to (`None` for the root).
    pub descriptor: Option<String>,
    /// The branch's value (`""` for nodes missing the label).
    pub value: String,
    /// Nodes beneath.
    pub nodes: u32,
    /// Nodes beneath that passed the filters when the tree was built.
    pub eligible_nodes: u32,
    /// The service's tasks beneath before the batch, as counted by the mode.
    pub existing: u64,
    /// Tasks the branch was asked for, summed over the passes.
    pub asked: u32,
    /// Tasks of the batch placed beneath.
    pub placed: u32,
    /// The branch's share of its parent's tasks on a weighted level.
    pub share: Option<f64>,
    /// Why it got none, when it got none.
    pub note: Option<BranchNote>,
    /// Its branches, in value order.
    pub children: Vec<BranchReport>,
}

impl BranchReport {
    fn write(&self, f: &mut fmt::Formatter<'_>, prefix: &str, last: bool, root: bool) -> fmt::Result {
        if root {
            f.write_str("(all)")?;
        } else {
            write!(f, "{prefix}{}", if last { "└─ " } else { "├─ " })?;
            write!(f, "{}={:?}", self.descriptor.as_deref().unwrap_or(""), self.value)?;
        }
        write!(f, ": existing {}, asked {}, placed {}", self.existing, self.asked, self.placed)?;
        if let Some(s) = self.share {
            write!(f, ", share {:.1}%", s * 100.0)?;
        }
        if let Some(n) = self.note {
            write!(f, " ({n})")?;
        }
        writeln!(f)?;
        let inner = if root { String::new() } else { format!("{prefix}{}", if last { "   " } else { "│  " }) };
        for (i, c) in self.children.iter().enumerate() {
            c.write(f, &inner, i + 1 == self.children.len(), false)?;
        }
        Ok(())
    }
}

impl fmt::Display for BranchReport {
    /// The tree, one branch a line.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.write(f, "", true, true)
    }
}

/// Something a call placed as SwarmKit does although the request most likely meant otherwise;
/// a [strict](super::SpreadRequest::strict_descriptors) request is refused with the matching
/// [`SpreadError`](super::SpreadError) instead.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[non_exhaustive]
pub enum SpreadWarning {
    /// A preference over a label key no node carries: every node sits in the one branch of
    /// nodes without it, so the level spreads nothing (SwarmKit ignores such a key; a misspelt
    /// key such as `node.labels.rackk` looks like this).
    LabelNotCarried {
        /// The preference's descriptor, as the outcome's levels spell it.
        descriptor: String,
    },
}

impl fmt::Display for SpreadWarning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SpreadWarning::LabelNotCarried { descriptor } => write!(
                f,
                "preference `{descriptor}` names a label no node carries: every node is in one branch (SwarmKit ignores it)"
            ),
        }
    }
}

/// The result of placing one batch.
///
/// What every engine's outcome carries, the core's [`Explanation`], says how many nodes each
/// filter rejected (in its own words), SwarmKit's `no suitable node (…)` as its
/// [`message`](Explanation::message) when tasks are left, and every node's verdict when the
/// request asks for them ([`SpreadRequest::explain`](super::SpreadRequest::explain)); the
/// decision tree and its levels are this engine's own.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct SpreadOutcome {
    /// Tasks asked for.
    pub requested: u32,
    /// The placed tasks, in placement order.
    pub selections: Vec<SpreadSelection>,
    /// Tasks left unplaced.
    pub unplaced: u32,
    /// Why, in the core's terms: with tasks left (or verdicts asked for), every node judged
    /// over the final state and counted under its first failing filter, in that filter's own
    /// words, highest first (ties in pipeline order), the nodes that pass as
    /// [`available`](Explanation::available) and, when asked, every node's verdict; with every
    /// task placed and no verdict asked, no rejection and the nodes that passed when the tree
    /// was built. SwarmKit's failure text is the [`message`](Explanation::message). The
    /// [`instance`](Explanation::instance) is the first task left unplaced, else the last one
    /// placed. No score breakdown ([`top`](Explanation::top) stays empty): the engine keeps the
    /// weighers' sum only.
    pub explanation: Explanation,
    /// The mode that ran.
    pub mode: SpreadMode,
    /// The descriptors of the tree's levels, outermost first.
    pub levels: Vec<String>,
    /// Descriptors of preferences that added no level (SwarmKit's silent skip).
    pub skipped: Vec<String>,
    /// What the request asked that SwarmKit ignores and the call placed as SwarmKit does (a
    /// preference over a label no node carries); a
    /// [strict](super::SpreadRequest::strict_descriptors) request is refused with an error
    /// instead.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<SpreadWarning>,
    /// The decision tree, branch by branch.
    pub tree: BranchReport,
}

impl SpreadOutcome {
    /// SwarmKit's task status error when tasks are left, `no suitable node (…)`: per-filter
    /// counts in SwarmKit's wording ([`Explanation::message`]); `None` when every task was
    /// placed.
    pub fn message(&self) -> Option<&str> {
        self.explanation.message.as_deref()
    }

    /// Whether every task found a node.
    pub fn is_complete(&self) -> bool {
        self.unplaced == 0
    }

    /// New tasks per node name (nodes with none left out).
    pub fn per_host(&self) -> BTreeMap<&str, u32> {
        let mut m = BTreeMap::new();
        for a in &self.selections {
            *m.entry(a.host_name.as_str()).or_insert(0) += 1;
        }
        m
    }
}

impl fmt::Display for SpreadOutcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "placed {}/{}", self.selections.len(), self.requested)?;
        for (i, (h, n)) in self.per_host().iter().enumerate() {
            write!(f, "{}{h}:{n}", if i == 0 { ": " } else { ", " })?;
        }
        if let Some(m) = self.message() {
            write!(f, " ({m})")?;
        }
        Ok(())
    }
}
