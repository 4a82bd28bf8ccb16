"""Scene record (scene.json), ground meshes, USD writer and validation, MuJoCo physics check."""
