"""What every substrate shares: delivery over sinks, the drivers, the registry of backends."""
