//! The spread engine: SwarmKit-style placement preferences (spread over labels, hierarchically).
