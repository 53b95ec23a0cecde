"""The identity of the open AcousticBench pack: its name and version in the manifest, and the manifest hash a correct build yields."""

OPEN_PACK_BENCHMARK = "AcousticBench-open"
OPEN_PACK_VERSION = "1.0"
# sha256 of MANIFEST.json as build_open_pack writes it; the manifest lists the hash of every questions.jsonl,
# which lists the hash of every audio file, so this one value pins every byte of the pack.
OPEN_PACK_MANIFEST_SHA256 = "c1477850437d1593d401f9be3f3a0b146ece94f1f7b6fe5ff949b73a27c0b052"
