//! Importing longhorn objects: the fixtures under `tests/data/import/longhorn/`.
