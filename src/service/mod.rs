//! The service scheduler: edge-site filters, four-level ranking, sticky restarts, host-failure
//! handling.
