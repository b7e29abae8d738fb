//! `ImagePropertiesWeigher`: prefer hosts whose instances share the image's properties, modelled
//! with its multiplier at Nova's default of 0.

use crate::error::BuildError;
use crate::id::HostId;
use crate::request::Cx;
use crate::weigh::{Bounds, Weigher};

/// The filter scheduler's `ImagePropertiesWeigher`, with its configured multiplier
/// `image_props_weight_multiplier` at Nova's default, 0.
///
/// In Nova a host's raw value counts how often the requested image's (property, value) pairs
/// occur among the images of the instances on the host (× the `image_props_weight_setting`
/// ratios), which it reads from the cell database. But when the *configured* multiplier is 0,
/// Nova skips that and every host's raw value is 0, even where an aggregate overrides the
/// multiplier; so the weigher adds 0 to every weight. That is what this weigher models: a raw
/// value of 0 for every host, under any multiplier.
///
/// A non-zero configured multiplier is not modelled: [`check_multiplier`](Self::check_multiplier)
/// refuses it with [`BuildError::NotModelled`], and the configuration by name
/// ([`SchedulerConfig`](crate::nova::config::SchedulerConfig)) calls it for the option. A
/// scheduler built by hand should give this weigher the multiplier 0.
///
/// ```
/// use placewise::nova::weighers::ImagePropertiesWeigher as W;
/// use placewise::{Scheduler, Weigher};
///
/// assert_eq!(W.name(), "ImagePropertiesWeigher");
/// assert!(W::check_multiplier(0.0).is_ok() && W::check_multiplier(1.0).is_err());
/// let scheduler = Scheduler::builder().weigher(W, W::DEFAULT_MULTIPLIER).build()?;
/// # let _ = scheduler;
/// # Ok::<(), placewise::BuildError>(())
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct ImagePropertiesWeigher;

impl ImagePropertiesWeigher {
    /// The Nova class name, which [`name`](Weigher::name) returns.
    pub const NAME: &'static str = "ImagePropertiesWeigher";
    /// The option group of [`OPTION`](Self::OPTION).
    pub const GROUP: &'static str = "filter_scheduler";
    /// The multiplier option.
    pub const OPTION: &'static str = "image_props_weight_multiplier";
    /// The aggregate metadata key that overrides the multiplier per host (it cannot change a
    /// weight: every raw value is 0).
    pub const AGGREGATE_KEY: &'static str = "image_props_weight_multiplier";
    /// The option's default, the only value modelled.
    pub const DEFAULT_MULTIPLIER: f64 = 0.0;
    /// The smallest value the option accepts, if it has a minimum.
    pub const MIN_MULTIPLIER: Option<f64> = None;

    /// Checks the configured multiplier `image_props_weight_multiplier`.
    ///
    /// # Errors
    ///
    /// [`BuildError::NotModelled`] for a value other than 0: the weigher would then read the
    /// images of every host's instances from the cell database.
    pub fn check_multiplier(multiplier: f64) -> Result<(), BuildError> {
        if multiplier == 0.0 {
            return Ok(());
        }
        Err(BuildError::NotModelled {
            name: Self::NAME.to_owned(),
            part: format!(
                "`{}` = {multiplier} (not 0: the weigher reads the images of the hosts' instances from the cell \
                 database)",
                Self::OPTION
            ),
        })
    }
}

impl Weigher for ImagePropertiesWeigher {
    fn name(&self) -> &str {
        Self::NAME
    }

    /// 0 for every host. Computes in O(1).
    #[inline]
    fn weigh(&self, _cx: &Cx<'_>, _host: HostId) -> f64 {
        0.0
    }

    fn bounds(&self) -> Bounds {
        Bounds::NONE
    }

    fn host_local(&self) -> bool {
        true
    }
}
