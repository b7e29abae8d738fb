//! SimpleCIDRAffinityFilter: hosts on the network of a given address.

use super::common::{hint, Hint};
use crate::error::ScheduleError;
use crate::filter::{Filter, Reason, Rejections, Verdict};
use crate::id::HostId;
use crate::nova::pyvalue::parse_py_int;
use crate::nova::request::VmSpec;
use crate::request::{Cx, Prepared};
use serde_json::Value;
use std::net::IpAddr;

/// Reason: the host's address is outside the network.
const OUTSIDE: u32 = 0;
/// Reason: the host could not be judged (the request fails).
const ERROR: u32 = 1;

/// Nova's `SimpleCIDRAffinityFilter`: with a `build_near_host_ip` hint, a host passes iff its
/// `host_ip` attribute lies in the network given by that address and the `cidr` hint (default
/// `/24`), the two joined as one string and read as netaddr reads a network: `/prefix` (Python
/// `int()` digits), or a netmask or hostmask (`/255.255.0.0`, `/0.0.255.255`); IPv4 or IPv6, and
/// an address of the other version is never inside. Without the hint every host passes.
///
/// An invalid address or prefix, or a host without a valid `host_ip`, fails the request (Nova
/// raises). Runs once per request, not on rebuilds. Reason: `not in network <address><cidr>`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SimpleCIDRAffinityFilter;

/// The requested network, or why there is none.
#[derive(Debug, Clone, PartialEq)]
enum Wanted {
    /// No `build_near_host_ip` hint.
    Anywhere,
    /// The network.
    Net { text: String, net: Network },
    /// The hints do not make a network.
    Invalid(String),
}

/// An address with a prefix length.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Network {
    addr: IpAddr,
    prefix: u32,
}

impl Network {
    fn contains(&self, ip: IpAddr) -> bool {
        let (a, b, width) = match (self.addr, ip) {
            (IpAddr::V4(a), IpAddr::V4(b)) => (u128::from(u32::from(a)), u128::from(u32::from(b)), 32),
            (IpAddr::V6(a), IpAddr::V6(b)) => (u128::from(a), u128::from(b), 128),
            _ => return false,
        };
        let shift = width - self.prefix;
        // A prefix of 0 shifts everything out.
        a.checked_shr(shift).unwrap_or(0) == b.checked_shr(shift).unwrap_or(0)
    }

    /// netaddr's `IPNetwork(text)`: IPv4 first, then IPv6.
    fn parse(text: &str) -> Option<Network> {
        let (addr, mask) = match text.split_once('/') {
            Some((a, m)) => (a, Some(m)),
            None => (text, None),
        };
        let addr: IpAddr = addr.parse().ok()?;
        let width: u32 = if addr.is_ipv4() { 32 } else { 128 };
        let prefix = match mask {
            None => width,
            Some(m) => match parse_py_int(m) {
                Some(p) => u32::try_from(p).ok().filter(|p| *p <= width)?,
                None => mask_prefix(m, addr.is_ipv4())?,
            },
        };
        Some(Network { addr, prefix })
    }
}

/// The prefix length of a netmask (`255.255.255.0`) or hostmask (`0.0.0.255`) of the same IP
/// version; a netmask reading wins, as in netaddr.
fn mask_prefix(mask: &str, v4: bool) -> Option<u32> {
    let (value, width) = match mask.parse::<IpAddr>().ok()? {
        IpAddr::V4(m) if v4 => (u128::from(u32::from(m)), 32),
        IpAddr::V6(m) if !v4 => (u128::from(m), 128),
        _ => return None,
    };
    let all = if width == 128 { u128::MAX } else { (1u128 << width) - 1 };
    let inverted = value ^ all;
    // A netmask is ones then zeros: its inverse plus one is a power of two.
    if inverted.checked_add(1).is_none_or(|x| x.is_power_of_two()) {
        return Some(width - inverted.count_ones());
    }
    if value.checked_add(1).is_none_or(|x| x.is_power_of_two()) {
        return Some(width - value.count_ones());
    }
    None
}

fn wanted(cx: &Cx<'_>) -> Wanted {
    let vm = VmSpec::of(cx);
    let near = hint(vm, "build_near_host_ip");
    if !near.is_truthy() {
        return Wanted::Anywhere;
    }
    let as_text = |h: Hint<'_>| match h {
        Hint::Str(s) => Some(s.to_owned()),
        _ => None,
    };
    let Some(addr) = as_text(near) else {
        return Wanted::Invalid("the build_near_host_ip hint is not a single address".into());
    };
    let cidr = match hint(vm, "cidr") {
        Hint::Absent => "/24".to_owned(),
        other => match as_text(other) {
            Some(c) => c,
            None => return Wanted::Invalid("the cidr hint is not a single string".into()),
        },
    };
    let text = format!("{addr}{cidr}");
    match Network::parse(&text) {
        Some(net) => Wanted::Net { text, net },
        None => Wanted::Invalid(format!("`{text}` (build_near_host_ip and cidr) is not a network")),
    }
}

impl SimpleCIDRAffinityFilter {
    fn judge(&self, cx: &Cx<'_>, w: &Wanted, host: HostId) -> Result<Verdict, ScheduleError> {
        let error = |message: String| ScheduleError::filter(self.name(), message);
        match w {
            Wanted::Anywhere => Ok(Verdict::Pass),
            Wanted::Invalid(why) => Err(error(why.clone())),
            Wanted::Net { net, .. } => {
                let h = cx.host(host);
                let ip = match h.attribute("host_ip") {
                    Some(Value::String(s)) => s.parse::<IpAddr>().map_err(|_| s.clone()),
                    Some(other) => Err(other.to_string()),
                    None => Err("none".to_owned()),
                };
                match ip {
                    Ok(ip) => Ok(if net.contains(ip) { Verdict::Pass } else { Verdict::reject(OUTSIDE) }),
                    Err(bad) => Err(error(format!("host `{}` has no valid host_ip ({bad})", h.name))),
                }
            }
        }
    }
}

impl Filter for SimpleCIDRAffinityFilter {
    fn name(&self) -> &str {
        "SimpleCIDRAffinityFilter"
    }

    fn prepare(&self, cx: &Cx<'_>) -> Result<Prepared, ScheduleError> {
        Ok(Some(Box::new(wanted(cx))))
    }

    fn check(&self, cx: &Cx<'_>, host: HostId) -> Verdict {
        let verdict = match cx.state::<Wanted>() {
            Some(w) => self.judge(cx, w, host),
            None => self.judge(cx, &wanted(cx), host),
        };
        verdict.unwrap_or(Verdict::reject(ERROR))
    }

    fn check_chunk(&self, cx: &Cx<'_>, chunk: usize, mask: u64, rejected: &mut Rejections) -> u64 {
        let mut owned = None;
        let w = cx.state_or::<Wanted>(&mut owned, || wanted(cx));
        if *w == Wanted::Anywhere {
            return mask;
        }
        rejected.try_lanes(chunk, mask, Reason(ERROR), |h| self.judge(cx, w, h))
    }

    fn describe(&self, cx: &Cx<'_>, reason: Reason) -> String {
        match (reason.0, wanted(cx)) {
            (OUTSIDE, Wanted::Net { text, .. }) => format!("not in network {text}"),
            _ => "host address cannot be checked".into(),
        }
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
    use crate::nova::filters::common::testkit::{names, reason, run, vm_request};
    use crate::nova::request::NovaRequest;
    use crate::nova::request::VmSpec;
    use crate::request::Request;
    use crate::snapshot::Cluster;
    use crate::snapshot::HostSpec;
    use serde_json::json;

    fn request(near: Option<Value>, cidr: Option<Value>) -> NovaRequest {
        let mut vm = VmSpec::default();
        if let Some(n) = near {
            vm.hints.insert("build_near_host_ip".into(), n);
        }
        if let Some(c) = cidr {
            vm.hints.insert("cidr".into(), c);
        }
        vm_request(1, vm)
    }

    fn cluster() -> Cluster {
        Cluster::builder()
            .host(HostSpec::new("a").attribute("host_ip", json!("10.0.0.7")))
            .host(HostSpec::new("b").attribute("host_ip", json!("10.0.1.7")))
            .host(HostSpec::new("c").attribute("host_ip", json!("10.1.0.7")))
            .host(HostSpec::new("v6").attribute("host_ip", json!("fd00::7")))
            .build()
            .unwrap()
    }

    #[test]
    fn network_of_the_hinted_address() {
        let c = cluster();
        let f = SimpleCIDRAffinityFilter;
        assert_eq!(run(&f, &c, &request(Some(json!("10.0.0.1")), None)).unwrap(), names(&["a"]));
        assert_eq!(run(&f, &c, &request(Some(json!(["10.0.0.1"])), Some(json!("/16")))).unwrap(), names(&["a", "b"]));
        assert_eq!(run(&f, &c, &request(Some(json!("10.0.0.1")), Some(json!("/8")))).unwrap(), names(&["a", "b", "c"]));
        assert_eq!(
            run(&f, &c, &request(Some(json!("10.0.0.1")), Some(json!("/255.255.0.0")))).unwrap(),
            names(&["a", "b"])
        );
        assert_eq!(
            run(&f, &c, &request(Some(json!("10.0.0.1")), Some(json!("/0.0.255.255")))).unwrap(),
            names(&["a", "b"])
        );
        assert_eq!(run(&f, &c, &request(Some(json!("10.0.0.1")), Some(json!("/ 1_6")))).unwrap(), names(&["a", "b"]));
        assert_eq!(run(&f, &c, &request(Some(json!("10.0.0.1")), Some(json!("/0")))).unwrap(), names(&["a", "b", "c"]));
        assert_eq!(run(&f, &c, &request(Some(json!("10.0.0.7")), Some(json!("")))).unwrap(), names(&["a"]));
        // The two hints are joined as text: `10.0.0.` and `7` make the address 10.0.0.7.
        assert_eq!(run(&f, &c, &request(Some(json!("10.0.0.")), Some(json!("7")))).unwrap(), names(&["a"]));
        assert_eq!(run(&f, &c, &request(Some(json!("fd00::1")), Some(json!("/64")))).unwrap(), names(&["v6"]));
        assert_eq!(reason(&f, &c, &request(Some(json!("10.0.0.1")), None), "b"), "not in network 10.0.0.1/24");
        assert_eq!(run(&f, &c, &request(None, Some(json!("/8")))).unwrap().len(), 4);
        assert_eq!(run(&f, &c, &request(Some(json!("")), None)).unwrap().len(), 4);
        assert!(f.once_per_request() && !crate::nova::runs_on_rebuild(f.name()) && f.host_local());
    }

    #[test]
    fn invalid_input_fails_the_request() {
        let c = cluster();
        let f = SimpleCIDRAffinityFilter;
        for (near, cidr) in [
            (json!("10.0.0.1"), json!("/33")),
            (json!("10.0.0.1"), json!("/2x")),
            (json!("10.0.0.1"), json!("/")),
            (json!("10.0.0.1"), json!("/255.0.255.0")),
            (json!("10.0.0"), json!("/24")),
            (json!("010.0.0.1"), json!("/24")),
            (json!(["10.0.0.1", "10.0.0.2"]), json!("/24")),
            (json!("10.0.0.1"), json!(["/8", "/16"])),
        ] {
            let err = run(&f, &c, &request(Some(near.clone()), Some(cidr.clone()))).unwrap_err();
            assert!(err.to_string().contains("SimpleCIDRAffinityFilter"), "{near} {cidr}: {err}");
        }
        let bad_host = Cluster::builder().host(HostSpec::new("x").attribute("host_ip", json!("nope"))).build().unwrap();
        let err = run(&f, &bad_host, &request(Some(json!("10.0.0.1")), None)).unwrap_err();
        assert!(err.to_string().contains("host `x` has no valid host_ip"), "{err}");
        let no_ip = Cluster::builder().host(HostSpec::new("y")).build().unwrap();
        assert!(run(&f, &no_ip, &request(Some(json!("10.0.0.1")), None)).is_err());
        // Without the hint nothing is parsed.
        assert_eq!(run(&f, &no_ip, &Request::new(1)).unwrap(), names(&["y"]));
    }

    #[test]
    fn masks() {
        assert_eq!(mask_prefix("255.255.255.0", true), Some(24));
        assert_eq!(mask_prefix("0.0.0.255", true), Some(24));
        assert_eq!(mask_prefix("0.0.0.0", true), Some(0));
        assert_eq!(mask_prefix("255.255.255.255", true), Some(32));
        assert_eq!(mask_prefix("255.0.255.0", true), None);
        assert_eq!(mask_prefix("ffff:ffff::", false), Some(32));
        assert_eq!(mask_prefix("255.255.0.0", false), None);
    }
}
