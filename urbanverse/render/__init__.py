"""CPU renderer: RGB, metric depth, instance and semantic ids of scenes; walking camera tours.

Layers, bottom up: ``raster`` (textured meshes and pinhole cameras on MuJoCo's OpenGL renderer,
headless through EGL/OSMesa on the CPU; numpy + MuJoCo only) -> ``thumbnail`` (an asset alone in a
small studio, for the library) and ``scene_model`` (a Scene's ground, objects, sky and sun as a raster
scene) -> ``walk`` (a pedestrian's camera path) -> ``tour`` (MP4 + ground truth). ``augment`` adds
camera degradations for domain randomisation.
"""
