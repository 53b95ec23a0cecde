"""The identity of the open AcousticBench pack: its name and version in the manifest, and the manifest hash a correct build yields."""

OPEN_PACK_BENCHMARK = "AcousticBench-open"
OPEN_PACK_VERSION = "1.0"
# sha256 of MANIFEST.json as build_open_pack writes it; the manifest lists the hash of every questions.jsonl,
# which lists the hash of every audio file, so this one value pins every byte of the pack.
OPEN_PACK_MANIFEST_SHA256 = "2115aff3dadc88042fd38c60e163de45ea48a3753f55fd03e7dc7ce91772083c"
