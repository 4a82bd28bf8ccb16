"""Benchmark and experiment code: ground-truth stand-ins for gen's stages, the round trip's scores and
plots, and the scenes the speed benchmarks run in. Used by ``tools/`` and the tests; nothing in the
product imports it (an import-linter contract in pyproject.toml keeps it so)."""
