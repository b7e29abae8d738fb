//! Host labels: `placement.match-host-labels`.

use crate::error::ScheduleError;
use crate::expr::CompiledExpr;
use crate::filter::{Filter, Reason, Rejections, Verdict};
use crate::id::HostId;
use crate::request::{Cx, Prepared};
use crate::service::MatchExpr;
use std::borrow::Cow;

/// Passes hosts whose labels match the service's host label expression. Reason: ``host labels
/// do not match `<expr>` ``.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostLabelsFilter {
    expr: MatchExpr,
}

impl HostLabelsFilter {
    /// A filter for `expr`.
    pub fn new(expr: MatchExpr) -> Self {
        HostLabelsFilter { expr }
    }

    fn compiled<'a>(&self, cx: &Cx<'a>) -> Cow<'a, CompiledExpr> {
        match cx.state::<CompiledExpr>() {
            Some(c) => Cow::Borrowed(c),
            None => Cow::Owned(self.expr.compile(cx.cluster().symbols())),
        }
    }
}

impl Filter for HostLabelsFilter {
    fn name(&self) -> &str {
        "host labels"
    }

    fn prepare(&self, cx: &Cx<'_>) -> Result<Prepared, ScheduleError> {
        Ok(Some(Box::new(self.expr.compile(cx.cluster().symbols()))))
    }

    fn check(&self, cx: &Cx<'_>, host: HostId) -> Verdict {
        self.compiled(cx).matches(&cx.host(host).labels, cx.cluster().symbols()).into()
    }

    fn check_chunk(&self, cx: &Cx<'_>, chunk: usize, mask: u64, rejected: &mut Rejections) -> u64 {
        let hot = cx.cluster().hot_chunk(chunk);
        let pass = mask & self.compiled(cx).matches_chunk(&hot.labels, hot.live, cx.cluster().symbols());
        rejected.reject_lanes(chunk, mask & !pass, Reason(0));
        pass
    }

    fn describe(&self, _cx: &Cx<'_>, _reason: Reason) -> String {
        format!("host labels do not match `{}`", self.expr)
    }

    fn once_per_request(&self) -> bool {
        true
    }

    fn host_local(&self) -> bool {
        true
    }
}
