//! The command line on longhorn objects.
