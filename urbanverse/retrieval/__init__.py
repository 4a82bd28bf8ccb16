"""Matching the generated layout to the library: object cousins, ground materials, sky."""
