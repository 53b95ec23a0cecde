"""Toy's face: its one task, and how its pack is built."""
from pathlib import Path

from acousticbench.benchmarks import Face


class ToyFace(Face):
    def build_pack(self, root: Path, zip_path: Path | None, after_another: bool = False) -> str:
        from toy_benchmark.benchmark import build

        return f"Built the toy pack: {build(Path(root))} items."


FACE = ToyFace(("longer",), title="Toy (which of two tones lasts longer)")
