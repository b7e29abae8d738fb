//! AllHostsFilter: passes everything.

use crate::filter::{Filter, Rejections, Verdict};
use crate::id::HostId;
use crate::request::Cx;

/// Nova's `AllHostsFilter`: every host passes. Runs once per request.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct AllHostsFilter;

impl Filter for AllHostsFilter {
    fn name(&self) -> &str {
        "AllHostsFilter"
    }

    #[inline]
    fn check(&self, _cx: &Cx<'_>, _host: HostId) -> Verdict {
        Verdict::Pass
    }

    fn check_chunk(&self, _cx: &Cx<'_>, _chunk: usize, mask: u64, _rejected: &mut Rejections) -> u64 {
        mask
    }

    fn once_per_request(&self) -> bool {
        true
    }

    fn host_local(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::nova::filters::common::testkit::{names, run};
    use crate::request::Request;
    use crate::snapshot::Cluster;
    use crate::snapshot::{HostSpec, HostState};

    #[test]
    fn passes_every_host() {
        let c = Cluster::builder()
            .host(HostSpec::new("a"))
            .host(HostSpec::new("b").state(HostState { up: false, ..HostState::default() }))
            .build()
            .unwrap();
        assert_eq!(run(&AllHostsFilter, &c, &Request::new(1)).unwrap(), names(&["a", "b"]));
        assert!(AllHostsFilter.once_per_request());
        assert!(!crate::nova::runs_on_rebuild(AllHostsFilter.name()));
    }
}
