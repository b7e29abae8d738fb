//! TrustedFilter: the host's attested trust level must be the one the flavor asks for.

use super::common::flavor;
use crate::filter::{Filter, Reason, Verdict};
use crate::id::HostId;
use crate::nova::pyvalue::{py_str, PyValue};
use crate::request::Cx;
use serde_json::Value;

/// The extra spec naming the wanted trust level.
const TRUST_SPEC: &str = "trust:trusted_host";

/// Nova's removed `TrustedFilter` (last in 16.x Pike, reference §12.7): with a non-empty
/// `trust:trusted_host` flavor extra spec (such as `trusted`), a host passes iff its attested
/// trust level, the host attribute `trust_level`, equals it exactly; a host without that
/// attribute has level `unknown`. Without the spec every host passes. Runs once per request, not
/// on rebuilds. Reason: `trust level is not <level>`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TrustedFilter;

fn wanted<'a>(cx: &Cx<'a>) -> Option<&'a str> {
    flavor(cx)?.extra_specs.get(TRUST_SPEC).filter(|t| !t.is_empty())
}

impl Filter for TrustedFilter {
    fn name(&self) -> &str {
        "TrustedFilter"
    }

    fn check(&self, cx: &Cx<'_>, host: HostId) -> Verdict {
        let Some(trust) = wanted(cx) else { return Verdict::Pass };
        let pass = match cx.host(host).attribute("trust_level") {
            None | Some(Value::Null) => trust == "unknown",
            Some(Value::String(level)) => trust == level,
            Some(other) => trust == py_str(&PyValue::from(other)),
        };
        pass.into()
    }

    fn describe(&self, cx: &Cx<'_>, _reason: Reason) -> String {
        format!("trust level is not {}", wanted(cx).unwrap_or(""))
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
    use crate::nova::filters::common::testkit::{flavor_request, names, reason, run};
    use crate::nova::request::NovaRequest;
    use crate::snapshot::Cluster;
    use crate::snapshot::HostSpec;
    use serde_json::json;

    fn request(trust: Option<&str>) -> NovaRequest {
        let mut r = flavor_request(1, 0.0, 0.0, 0.0, 0.0, 0.0);
        if let Some(t) = trust {
            r.vm.flavor.as_mut().unwrap().extra_specs.insert(TRUST_SPEC, t);
        }
        r
    }

    #[test]
    fn attested_level_must_match() {
        let c = Cluster::builder()
            .host(HostSpec::new("good").attribute("trust_level", json!("trusted")))
            .host(HostSpec::new("bad").attribute("trust_level", json!("untrusted")))
            .host(HostSpec::new("unreported"))
            .build()
            .unwrap();
        assert_eq!(run(&TrustedFilter, &c, &request(Some("trusted"))).unwrap(), names(&["good"]));
        assert_eq!(run(&TrustedFilter, &c, &request(Some("untrusted"))).unwrap(), names(&["bad"]));
        assert_eq!(run(&TrustedFilter, &c, &request(Some("unknown"))).unwrap(), names(&["unreported"]));
        assert_eq!(run(&TrustedFilter, &c, &request(Some("Trusted"))).unwrap(), Vec::<String>::new());
        assert_eq!(run(&TrustedFilter, &c, &request(Some(""))).unwrap().len(), 3);
        assert_eq!(run(&TrustedFilter, &c, &request(None)).unwrap().len(), 3);
        assert_eq!(reason(&TrustedFilter, &c, &request(Some("trusted")), "bad"), "trust level is not trusted");
        assert!(TrustedFilter.once_per_request() && !crate::nova::runs_on_rebuild(TrustedFilter.name()));
    }
}
