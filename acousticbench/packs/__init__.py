"""Benchmark packs: the on-disk format, checksum verification, safe extraction and the open-pack builder."""
