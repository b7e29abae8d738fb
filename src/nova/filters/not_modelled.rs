//! The shape NUMATopologyFilter and PciPassthroughFilter share: every host passes, unless the
//! request has a part the model does not express, which `prepare` refuses.

/// Implements [`Filter`](crate::filter::Filter) for `$ty`, whose `NAME` is its class name and
/// whose `requested(cx) -> Option<String>` says what part of the request the model does not
/// express (naming the key that asks for it), if any: `prepare` then fails with
/// [`ScheduleError::NotModelled`](crate::error::ScheduleError::NotModelled), and otherwise
/// every host passes, for every instance, not on rebuilds. Host-local.
macro_rules! pass_unless_not_modelled {
    ($ty:ty) => {
        impl $crate::filter::Filter for $ty {
            fn name(&self) -> &str {
                Self::NAME
            }

            /// Refuses a request with the part. Computes in O(extra specs).
            fn prepare(
                &self,
                cx: &$crate::request::Cx<'_>,
            ) -> Result<$crate::request::Prepared, $crate::error::ScheduleError> {
                match Self::requested(cx) {
                    Some(part) => Err($crate::error::ScheduleError::NotModelled { by: Self::NAME.to_owned(), part }),
                    None => Ok(None),
                }
            }

            /// Every host passes: a request the filter could reject never gets past `prepare`.
            #[inline]
            fn check(&self, _cx: &$crate::request::Cx<'_>, _host: $crate::id::HostId) -> $crate::filter::Verdict {
                $crate::filter::Verdict::Pass
            }

            fn check_chunk(
                &self,
                _cx: &$crate::request::Cx<'_>,
                _chunk: usize,
                mask: u64,
                _rejected: &mut $crate::filter::Rejections,
            ) -> u64 {
                mask
            }

            fn host_local(&self) -> bool {
                true
            }
        }
    };
}
