"""Asset library: the Asset record, asset folders on disk, and (later) generators, store and search."""
