//! Label selectors: the request's own, and one fixed by the deployer.

use crate::error::ScheduleError;
use crate::expr::{CompiledExpr, LabelExpr};
use crate::filter::{Filter, Reason, Rejections, Verdict};
use crate::id::HostId;
use crate::request::{Cx, Prepared};
use std::borrow::Cow;

/// The candidates of one chunk matching `expr`, from the chunk's label index.
fn matching(cx: &Cx<'_>, expr: &CompiledExpr, chunk: usize, mask: u64, rejected: &mut Rejections) -> u64 {
    let hot = cx.cluster().hot_chunk(chunk);
    let pass = mask & expr.matches_chunk(&hot.labels, hot.live, cx.cluster().symbols());
    rejected.reject_lanes(chunk, mask & !pass, Reason(0));
    pass
}

/// Passes every host when the request has no selector; otherwise hosts whose labels match it
/// (see [`LabelExpr`] for the grammar). Reason: ``labels do not match `<expr>` ``.
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

    fn check_chunk(&self, cx: &Cx<'_>, chunk: usize, mask: u64, rejected: &mut Rejections) -> u64 {
        match &cx.compiled().selector {
            Some(sel) => matching(cx, sel, chunk, mask, rejected),
            None => mask,
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

    fn host_local(&self) -> bool {
        true
    }
}

/// Passes hosts whose labels match an expression fixed when the scheduler is configured, such as
/// `maintenance != true` or `kind in (general, compute)`: a deployer's rule that every request
/// obeys. Reason: ``labels do not match `<expr>` ``.
///
/// ```
/// use placewise::filter::builtin::LabelFilter;
///
/// let not_in_maintenance = LabelFilter::new("not-in-maintenance", "maintenance != true".parse()?);
/// # let _ = not_in_maintenance;
/// # Ok::<(), placewise::error::ParseError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LabelFilter {
    name: String,
    expr: LabelExpr,
}

impl LabelFilter {
    /// A filter called `name` passing hosts that match `expr`.
    pub fn new(name: impl Into<String>, expr: LabelExpr) -> Self {
        LabelFilter { name: name.into(), expr }
    }

    /// The expression.
    pub fn expr(&self) -> &LabelExpr {
        &self.expr
    }

    /// The expression as prepared for this request (compiled here when called unprepared).
    fn compiled<'a>(&self, cx: &Cx<'a>) -> Cow<'a, CompiledExpr> {
        match cx.state::<CompiledExpr>() {
            Some(expr) => Cow::Borrowed(expr),
            None => Cow::Owned(CompiledExpr::new(&self.expr, cx.cluster().symbols())),
        }
    }
}

impl Filter for LabelFilter {
    fn name(&self) -> &str {
        &self.name
    }

    fn prepare(&self, cx: &Cx<'_>) -> Result<Prepared, ScheduleError> {
        Ok(Some(Box::new(CompiledExpr::new(&self.expr, cx.cluster().symbols()))))
    }

    fn check(&self, cx: &Cx<'_>, host: HostId) -> Verdict {
        self.compiled(cx).matches(&cx.host(host).labels, cx.cluster().symbols()).into()
    }

    fn check_chunk(&self, cx: &Cx<'_>, chunk: usize, mask: u64, rejected: &mut Rejections) -> u64 {
        matching(cx, &self.compiled(cx), chunk, mask, rejected)
    }

    fn describe(&self, _cx: &Cx<'_>, _reason: Reason) -> String {
        format!("labels do not match `{}`", self.expr)
    }

    fn once_per_request(&self) -> bool {
        true
    }

    fn host_local(&self) -> bool {
        true
    }
}
