"""AcousticBench: an evaluation harness for Large Audio-Language Models."""

__version__ = "0.1.0"
