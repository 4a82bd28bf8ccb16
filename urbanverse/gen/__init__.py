"""The real-to-sim pipeline behind ``urbanverse gen``: the stage table (``table.STAGES``) over the
``video``, ``perception``, ``recon``, ``layout`` and ``retrieval`` packages, the runner that caches and
schedules it (``stages``), and the scene it builds (``assemble``, ``finish``); ``pipeline.run_gen``
runs it on one input, ``shots.run_gen_per_shot`` once per shot."""
