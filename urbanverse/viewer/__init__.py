"""Web viewer for scenes and the asset library (``urbanverse view``).

Built on viser: its browser client (three.js, React) ships prebuilt inside the ``viser`` wheel
on PyPI, so nothing is fetched from a CDN at run time, no JavaScript is vendored or built in
this repository, and the whole app is Python. viser gives orbit / pan / zoom and WASD
walk-through camera controls, clickable meshes, a GUI panel (buttons, dropdowns, images,
Markdown) and server-side screenshots (``client.get_render``). Its HTTP server serves only its
own client files; scene data reaches the browser over the websocket, read by this package
from inside the scenes folder only (``catalog``).

Every browser gets its own tabs (what one opens or selects does not move the others), drawn from
data read once for all of them; every message a browser sends is checked before viser reads it.

Modules: ``catalog`` (which scene folders and episode files may be read), ``topdown`` (PIL
maps and thumbnails), ``geometry`` (meshes, cameras, attribute tables: plain data), ``cache``
(scenes, meshes, maps and assets shared by all browsers, bounded), ``guard`` (the checks on
browsers' websocket messages), ``people`` (the people seen walking: tracks, poses at a time, body
mesh: plain data), ``people_layer`` (drawing and animating them), ``scene_panel`` and ``asset_panel``
(the two tabs, one per browser), ``app`` (server and configuration).
"""
