"""The real-to-sim pipeline behind ``urbanverse gen``: ``pipeline.run_gen`` runs the stages of
``video``, ``perception``, ``recon``, ``layout`` and ``retrieval`` with caching (``stages``) and
builds the scene (``assemble``, ``finish``)."""
