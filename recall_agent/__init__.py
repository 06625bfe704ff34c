"""recall: memory and code sense for coding agents."""

__version__ = "0.1.0"
