//! Importing openstack objects: the fixtures under `tests/data/import/openstack/`.
