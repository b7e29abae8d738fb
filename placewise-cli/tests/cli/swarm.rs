//! The command line on swarm objects.
