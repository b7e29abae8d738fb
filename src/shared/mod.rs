//! Concurrent scheduling on one shared cluster state: claims, generations, the update log,
//! partitions.
