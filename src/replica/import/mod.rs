//! Longhorn's own objects in: nodes, volumes, replicas, settings, engine images and instance
//! managers of `longhorn.io`, as `kubectl get … -o json` prints them.
