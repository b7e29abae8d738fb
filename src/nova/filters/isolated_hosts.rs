//! IsolatedHostsFilter: isolated images on isolated hosts.

use crate::filter::{Filter, Reason, Rejections, Verdict};
use crate::id::HostId;
use crate::nova::request::VmSpec;
use crate::request::Cx;

/// Reason: an isolated host, and the image is not isolated.
const ISOLATED_HOST: u32 = 0;
/// Reason: an isolated image, and the host is not isolated.
const ISOLATED_IMAGE: u32 = 1;

/// Nova's `IsolatedHostsFilter` (reference §7.3): keeps the images listed in `isolated_images`
/// on the hosts listed in `isolated_hosts`.
///
/// - With no isolated image, a host passes unless `restrict_isolated_hosts_to_isolated_images`
///   is on (the default) and the host is isolated.
/// - Otherwise, with restriction on, a host passes iff the image is isolated exactly when the
///   host is; with restriction off, iff the image is not isolated or the host is.
///
/// Names compare exactly; a request without an image id has no isolated image. Runs once per
/// request, and on rebuilds. Reasons: `isolated host`, `host not isolated for an isolated image`.
///
/// ```
/// use placewise::nova::filters::IsolatedHostsFilter;
///
/// let filter = IsolatedHostsFilter::new()
///     .isolated_images(["img-secure"])
///     .isolated_hosts(["vault-1", "vault-2"])
///     .restrict_isolated_hosts_to_isolated_images(false);
/// assert_eq!(filter.isolated_hosts_list(), ["vault-1", "vault-2"]);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IsolatedHostsFilter {
    isolated_images: Vec<String>,
    isolated_hosts: Vec<String>,
    restrict: bool,
}

impl Default for IsolatedHostsFilter {
    fn default() -> Self {
        IsolatedHostsFilter::new()
    }
}

fn sorted<S: Into<String>>(items: impl IntoIterator<Item = S>) -> Vec<String> {
    let mut v: Vec<String> = items.into_iter().map(Into::into).collect();
    v.sort_unstable();
    v.dedup();
    v
}

impl IsolatedHostsFilter {
    /// No isolated image or host, restriction on (Nova's defaults).
    pub fn new() -> Self {
        IsolatedHostsFilter { isolated_images: Vec::new(), isolated_hosts: Vec::new(), restrict: true }
    }

    /// Sets `isolated_images` (image ids).
    pub fn isolated_images<S: Into<String>>(mut self, images: impl IntoIterator<Item = S>) -> Self {
        self.isolated_images = sorted(images);
        self
    }

    /// Sets `isolated_hosts` (host names).
    pub fn isolated_hosts<S: Into<String>>(mut self, hosts: impl IntoIterator<Item = S>) -> Self {
        self.isolated_hosts = sorted(hosts);
        self
    }

    /// Sets `restrict_isolated_hosts_to_isolated_images` (default `true`).
    pub fn restrict_isolated_hosts_to_isolated_images(mut self, restrict: bool) -> Self {
        self.restrict = restrict;
        self
    }

    /// The isolated image ids, sorted.
    pub fn isolated_images_list(&self) -> &[String] {
        &self.isolated_images
    }

    /// The isolated host names, sorted.
    pub fn isolated_hosts_list(&self) -> &[String] {
        &self.isolated_hosts
    }

    fn is_isolated_host(&self, name: &str) -> bool {
        self.isolated_hosts.binary_search_by(|h| h.as_str().cmp(name)).is_ok()
    }

    /// The verdict for `host` under the request's VM part `vm`.
    fn judge(&self, cx: &Cx<'_>, vm: &VmSpec, host: HostId) -> Verdict {
        let host_isolated = self.is_isolated_host(cx.cluster().service_host_name(host));
        if self.isolated_images.is_empty() {
            return if self.restrict && host_isolated { Verdict::reject(ISOLATED_HOST) } else { Verdict::Pass };
        }
        let image = vm.image.as_ref().and_then(|i| i.id.as_deref());
        let image_isolated =
            image.is_some_and(|id| self.isolated_images.binary_search_by(|i| i.as_str().cmp(id)).is_ok());
        let pass = if self.restrict { image_isolated == host_isolated } else { !image_isolated || host_isolated };
        match (pass, host_isolated) {
            (true, _) => Verdict::Pass,
            (false, true) => Verdict::reject(ISOLATED_HOST),
            (false, false) => Verdict::reject(ISOLATED_IMAGE),
        }
    }
}

impl Filter for IsolatedHostsFilter {
    fn name(&self) -> &str {
        "IsolatedHostsFilter"
    }

    fn check(&self, cx: &Cx<'_>, host: HostId) -> Verdict {
        self.judge(cx, VmSpec::of(cx), host)
    }

    /// Reads the VM part once per chunk, not per host.
    fn check_chunk(&self, cx: &Cx<'_>, chunk: usize, mask: u64, rejected: &mut Rejections) -> u64 {
        let vm = VmSpec::of(cx);
        rejected.check_lanes(chunk, mask, |h| self.judge(cx, vm, h))
    }

    fn describe(&self, _cx: &Cx<'_>, reason: Reason) -> String {
        match reason.0 {
            ISOLATED_HOST => "isolated host",
            _ => "host not isolated for an isolated image",
        }
        .into()
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
    use crate::nova::request::{Image, VmSpec};
    use crate::request::Request;
    use crate::snapshot::Cluster;
    use crate::snapshot::HostSpec;

    fn cluster() -> Cluster {
        Cluster::builder().host(HostSpec::new("iso")).host(HostSpec::new("plain")).build().unwrap()
    }

    fn with_image(id: Option<&str>) -> NovaRequest {
        let image = Image { id: id.map(Into::into), ..Default::default() };
        vm_request(1, VmSpec { image: Some(image), ..Default::default() })
    }

    #[test]
    fn no_isolated_images() {
        let c = cluster();
        let f = IsolatedHostsFilter::new().isolated_hosts(["iso"]);
        assert_eq!(run(&f, &c, &with_image(Some("any"))).unwrap(), names(&["plain"]));
        assert_eq!(reason(&f, &c, &with_image(None), "iso"), "isolated host");
        let loose = f.restrict_isolated_hosts_to_isolated_images(false);
        assert_eq!(run(&loose, &c, &with_image(Some("any"))).unwrap(), names(&["iso", "plain"]));
    }

    #[test]
    fn restricted_isolation_pairs_images_and_hosts() {
        let c = cluster();
        let f = IsolatedHostsFilter::new().isolated_hosts(["iso"]).isolated_images(["secret"]);
        assert_eq!(run(&f, &c, &with_image(Some("secret"))).unwrap(), names(&["iso"]));
        assert_eq!(run(&f, &c, &with_image(Some("public"))).unwrap(), names(&["plain"]));
        // A volume-backed request has no image id: not isolated.
        assert_eq!(run(&f, &c, &with_image(None)).unwrap(), names(&["plain"]));
        assert_eq!(run(&f, &c, &Request::new(1)).unwrap(), names(&["plain"]));
        assert_eq!(reason(&f, &c, &with_image(Some("secret")), "plain"), "host not isolated for an isolated image");
    }

    #[test]
    fn unrestricted_isolation_lets_isolated_hosts_take_anything() {
        let c = cluster();
        let f = IsolatedHostsFilter::new()
            .isolated_hosts(["iso"])
            .isolated_images(["secret"])
            .restrict_isolated_hosts_to_isolated_images(false);
        assert_eq!(run(&f, &c, &with_image(Some("secret"))).unwrap(), names(&["iso"]));
        assert_eq!(run(&f, &c, &with_image(Some("public"))).unwrap(), names(&["iso", "plain"]));
        assert!(f.once_per_request() && crate::nova::runs_on_rebuild(f.name()) && f.host_local());
    }
}
