//! Importing swarm objects: the fixtures under `tests/data/import/swarm/`.
