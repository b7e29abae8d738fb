//! Host label selector.

use crate::filter::{Filter, Reason, Verdict};
use crate::id::HostId;
use crate::request::Cx;

/// Passes every host when the request has no selector; otherwise hosts whose labels match it
/// (see [`LabelExpr`](crate::LabelExpr) for the grammar). Reason: ``labels do not match `<expr>` ``.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LabelSelectorFilter;

impl Filter for LabelSelectorFilter {
    fn name(&self) -> &str {
        "labels"
    }

    #[inline]
    fn check(&self, cx: &Cx<'_>, host: HostId) -> Verdict {
        match &cx.compiled().selector {
            None => Verdict::Pass,
            Some(sel) => sel.matches(&cx.host(host).labels, cx.cluster().symbols()).into(),
        }
    }

    fn describe(&self, cx: &Cx<'_>, _reason: Reason) -> String {
        match &cx.request().selector {
            Some(sel) => format!("labels do not match `{sel}`"),
            None => "labels do not match".into(),
        }
    }

    fn once_per_request(&self) -> bool {
        true
    }
}
