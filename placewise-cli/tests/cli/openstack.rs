//! The command line on openstack objects.
