"""The harness version, on the ground floor: provenance records it, and the package re-exports it."""

__version__ = "0.1.0"
