//! The weighing pass every engine runs its weighers through over a list of candidate hosts.

use super::{normalize, Multipliers, Weigher};
use crate::error::ScheduleError;
use crate::id::HostId;
use crate::request::Cx;

/// One weighing of a host list: for each weigher, its per-request preparation, its check of the
/// candidates ([`Extension::validate`](super::Extension::validate)), its raw values,
/// [normalised](normalize) over the candidates, times its multiplier (per host through the
/// weigher's [`Extension`](super::Extension), a multiplier that is not finite refused), added to
/// each candidate's score.
///
/// The core scheduler keeps its ranking between instances and so scores through its own
/// columns, with the same pieces ([`normalize`]'s rule, the multipliers asked once per
/// aggregate class, the same refusal); the domain engines score their caller's weighers here,
/// so a weigher behaves the same under each. A lone candidate is never weighed: with fewer than
/// two hosts every score is 0 and no weigher is asked anything.
///
/// The buffers are kept between calls: keep a `WeighPass` with the engine's scratch.
///
/// ```
/// use placewise::weigh::WeighPass;
/// use placewise::{weigher_fn, Cluster, Cx, HostId, HostSpec, Request, Weigher};
/// use placewise::snapshot::Overlay;
///
/// let cluster = Cluster::builder()
///     .host(HostSpec::new("a").memory_mb(4096.0))
///     .host(HostSpec::new("b").memory_mb(8192.0))
///     .build()?;
/// let request = Request::new(1);
/// let compiled = request.compile(&cluster)?;
/// let overlay = Overlay::new();
/// let cx = Cx::new(&cluster, &request, &compiled, &overlay, 0);
///
/// let id: Box<dyn Weigher> = Box::new(weigher_fn("id", |_: &Cx<'_>, h: HostId| f64::from(h.0)));
/// let hosts: Vec<HostId> = cluster.hosts().map(|(id, _)| id).collect();
/// let mut scores = vec![0.0; hosts.len()];
/// WeighPass::new().score(&[(id, 2.0)], &cx, &hosts, &mut scores)?;
/// assert_eq!(scores, [0.0, 2.0]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Default)]
pub struct WeighPass {
    raw: Vec<f64>,
    multipliers: Multipliers,
}

impl WeighPass {
    /// An empty pass; its buffers grow on first use.
    pub fn new() -> Self {
        WeighPass::default()
    }

    /// Adds every weigher's weighted terms for `hosts` to `scores` (same length as `hosts`), in
    /// the order given. Computes in O(weighers × hosts) plus what the weighers cost.
    ///
    /// # Errors
    ///
    /// The first weigher's [`ScheduleError`]: from its `prepare`, its candidate check, or
    /// [`ScheduleError::Weigher`] for a multiplier that is not finite. `scores` then holds the
    /// terms of the weighers before it.
    pub fn score<W: AsRef<dyn Weigher>>(
        &mut self,
        weighers: &[(W, f64)],
        cx: &Cx<'_>,
        hosts: &[HostId],
        scores: &mut [f64],
    ) -> Result<(), ScheduleError> {
        if hosts.len() < 2 {
            return Ok(());
        }
        self.multipliers.start(weighers.len());
        for (w, (weigher, multiplier)) in weighers.iter().enumerate() {
            let weigher = weigher.as_ref();
            let state = weigher.prepare(cx)?;
            self.add(w, weigher, *multiplier, &cx.with_state(state.as_deref()), hosts, scores)?;
        }
        Ok(())
    }

    /// Adds weigher number `w`'s terms (its context `cx` already carrying its prepared state).
    fn add(
        &mut self,
        w: usize,
        weigher: &dyn Weigher,
        multiplier: f64,
        cx: &Cx<'_>,
        hosts: &[HostId],
        scores: &mut [f64],
    ) -> Result<(), ScheduleError> {
        weigher.validate(cx, hosts)?;
        self.raw.clear();
        self.raw.resize(hosts.len(), 0.0);
        weigher.weigh_batch(cx, hosts, &mut self.raw);
        normalize(&mut self.raw, weigher.bounds());
        if weigher.per_host_multiplier() {
            for ((&h, &r), s) in hosts.iter().zip(&self.raw).zip(scores.iter_mut()) {
                *s += r * self.multipliers.get(w, weigher, cx, h, multiplier);
            }
            self.multipliers.refused(weigher, cx)?;
        } else {
            for (&r, s) in self.raw.iter().zip(scores.iter_mut()) {
                *s += r * multiplier;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::request::Request;
    use crate::snapshot::{Cluster, HostSpec, Overlay};
    use crate::weigh::{weigher_fn, Extension};

    struct PerHost(f64);

    impl Weigher for PerHost {
        fn name(&self) -> &str {
            "per-host"
        }

        fn weigh(&self, _: &Cx<'_>, host: HostId) -> f64 {
            f64::from(host.0)
        }

        fn extension(&self) -> Option<&dyn Extension> {
            Some(self)
        }
    }

    impl Extension for PerHost {
        fn multiplier(&self, _: &Cx<'_>, host: HostId, configured: f64) -> f64 {
            if host.0 == 2 {
                self.0
            } else {
                configured
            }
        }

        fn per_host_multiplier(&self) -> bool {
            true
        }
    }

    fn run(weighers: &[(Box<dyn Weigher>, f64)], n: usize) -> Result<Vec<f64>, ScheduleError> {
        let mut builder = Cluster::builder();
        for i in 0..n {
            builder = builder.host(HostSpec::new(format!("h{i}")).memory_mb(1024.0));
        }
        let cluster = builder.build().unwrap();
        let request = Request::new(1);
        let compiled = request.compile(&cluster).unwrap();
        let overlay = Overlay::new();
        let cx = Cx::new(&cluster, &request, &compiled, &overlay, 0);
        let hosts: Vec<HostId> = cluster.hosts().map(|(id, _)| id).collect();
        let mut scores = vec![0.0; n];
        WeighPass::new().score(weighers, &cx, &hosts, &mut scores).map(|()| scores)
    }

    #[test]
    fn terms_are_normalised_multiplied_and_summed_in_order() {
        let id: Box<dyn Weigher> = Box::new(weigher_fn("id", |_: &Cx<'_>, h: HostId| f64::from(h.0)));
        let flat: Box<dyn Weigher> = Box::new(weigher_fn("flat", |_: &Cx<'_>, _| 7.0));
        let scores = run(&[(id, 2.0), (flat, 5.0)], 3).unwrap();
        assert_eq!(scores, [0.0, 1.0, 2.0]);
    }

    #[test]
    fn per_host_multipliers_apply_and_a_non_finite_one_is_refused() {
        let scores = run(&[(Box::new(PerHost(-1.0)), 1.0)], 3).unwrap();
        assert_eq!(scores, [0.0, 0.5, -1.0]);
        let err = run(&[(Box::new(PerHost(f64::INFINITY)), 1.0)], 3).unwrap_err();
        assert!(matches!(&err, ScheduleError::Weigher { weigher, .. } if weigher == "per-host"), "{err}");
    }

    #[test]
    fn a_lone_candidate_is_never_weighed() {
        assert_eq!(run(&[(Box::new(PerHost(f64::NAN)), 1.0)], 1).unwrap(), [0.0]);
    }
}
