"""UrbanVerse: real-to-sim urban scenes and batched navigation training."""

__version__ = "0.1.0"
