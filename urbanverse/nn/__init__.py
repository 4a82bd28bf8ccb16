"""Policy networks: ``ops`` (reference + fast kernels) -> ``layers`` -> ``backbones``.

Imports flow down only, and this package depends on torch alone.
"""
