//! TypeAffinityFilter: one flavor per host.

use crate::filter::{Filter, Reason, Rejections, Verdict};
use crate::id::HostId;
use crate::nova::request::VmSpec;
use crate::request::Cx;

/// Nova's removed `TypeAffinityFilter` (last in 16.x Pike, reference §12.8): a host passes iff
/// every instance on it has the request's flavor **id** (the instance label `flavor_id`
/// against [`Flavor::id`](crate::nova::request::Flavor::id)); an empty host passes. Instances without a
/// `flavor_id` label are not counted. Runs for every instance (the request's own instances share
/// its flavor), not on rebuilds. Reason: `runs instances of another flavor`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TypeAffinityFilter;

impl Filter for TypeAffinityFilter {
    fn name(&self) -> &str {
        "TypeAffinityFilter"
    }

    fn check(&self, cx: &Cx<'_>, host: HostId) -> Verdict {
        self.judge(cx, VmSpec::of(cx), host)
    }

    /// Reads the VM part once per chunk, not per host.
    fn check_chunk(&self, cx: &Cx<'_>, chunk: usize, mask: u64, rejected: &mut Rejections) -> u64 {
        let vm = VmSpec::of(cx);
        rejected.check_lanes(chunk, mask, |h| self.judge(cx, vm, h))
    }

    fn describe(&self, _cx: &Cx<'_>, _reason: Reason) -> String {
        "runs instances of another flavor".into()
    }

    fn host_local(&self) -> bool {
        true
    }
}

impl TypeAffinityFilter {
    /// The verdict for `host` under the request's VM part `vm`.
    fn judge(&self, cx: &Cx<'_>, vm: &VmSpec, host: HostId) -> Verdict {
        let cluster = cx.cluster();
        // No instance carries the label: nothing to compare.
        let Some(key) = cluster.symbols().get("flavor_id") else { return Verdict::Pass };
        let wanted = vm.flavor.as_ref().and_then(|f| f.id.as_deref());
        let other = cluster.service_instances(host).any(|i| match i.labels.get(key) {
            Some(id) => Some(cluster.resolve(id)) != wanted,
            None => false,
        });
        (!other).into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::nova::filters::common::testkit::{flavor_request, names, reason, run};
    use crate::snapshot::Cluster;
    use crate::snapshot::{HostSpec, InstanceSpec};

    #[test]
    fn one_flavor_id_per_host() {
        let c = Cluster::builder()
            .host(HostSpec::new("same").instance(InstanceSpec::new("i1").label("flavor_id", "7")))
            .host(
                HostSpec::new("mixed")
                    .instance(InstanceSpec::new("i2").label("flavor_id", "7"))
                    .instance(InstanceSpec::new("i3").label("flavor_id", "8")),
            )
            .host(HostSpec::new("empty"))
            .host(HostSpec::new("unlabelled").instance(InstanceSpec::new("i4")))
            .build()
            .unwrap();
        let mut r = flavor_request(1, 0.0, 0.0, 0.0, 0.0, 0.0);
        r.vm.flavor.as_mut().unwrap().id = Some("7".into());
        assert_eq!(run(&TypeAffinityFilter, &c, &r).unwrap(), names(&["same", "empty", "unlabelled"]));
        assert_eq!(reason(&TypeAffinityFilter, &c, &r, "mixed"), "runs instances of another flavor");
        r.vm.flavor.as_mut().unwrap().id = Some("9".into());
        assert_eq!(run(&TypeAffinityFilter, &c, &r).unwrap(), names(&["empty", "unlabelled"]));
        assert!(!TypeAffinityFilter.once_per_request() && TypeAffinityFilter.host_local());
    }
}
