//! OpenStack's own objects in: the Placement API's and the Nova API's JSON.
