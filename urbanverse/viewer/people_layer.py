"""The people of a scene in one browser (viser): their paths on the ground and their bodies walking
along them, looping over the scene's time span, with a time slider and a play switch.

Scene graph names (per browser)::

    /scene/people/paths    line segments, one colour per person, just above the ground
    /scene/people/bodies   batched meshes: one capsule body per person (hidden while it is not seen)

The bodies move on the server: one :class:`Animator` thread of the viewer advances every playing
browser's people by the wall-clock time since its last frame, ``FRAME_S`` apart, and sends each
browser one update of all its bodies per frame (positions, headings, scales: hidden ones have
scale 0) plus the slider's new value.
"""

from __future__ import annotations

import logging
import threading
import time

from urbanverse.viewer.people import PeopleTracks, body_mesh

log = logging.getLogger(__name__)

#: Seconds between animation frames (10 per second: a walker moves about 14 cm a frame).
FRAME_S = 0.1
#: Width (m) of the drawn paths.
PATH_THICKNESS_M = 0.06
#: Resolution (s) of the time slider.
SLIDER_STEP_S = 0.1


class PeopleLayer:
    """Draws ``tracks`` in one browser (a viser ``ClientHandle``) under ``/scene/people`` at time
    ``start_s``; ``add_controls`` adds its slider and play switch; ``advance`` and ``set_time`` move
    the bodies; ``close`` stops it (its scene was closed or the browser left)."""

    def __init__(self, client, tracks: PeopleTracks, lift: float):
        self.client = client
        self.tracks = tracks
        self.time_s = tracks.start_s
        self.playing = True
        self.slider = None
        self._closed = False
        self._lock = threading.Lock()
        api = client.scene
        api.add_frame("/scene/people", show_axes=False)
        segments, colours = tracks.path_segments(lift)
        api.add_line_segments("/scene/people/paths", segments, colours, thickness=PATH_THICKNESS_M)
        positions, wxyzs, present = tracks.poses_at(self.time_s)
        mesh = body_mesh()
        self.bodies = api.add_batched_meshes_simple(
            "/scene/people/bodies",
            mesh.vertices,
            mesh.faces,
            batched_wxyzs=wxyzs,
            batched_positions=positions,
            batched_scales=tracks.body_scales(present),
            batched_colors=tracks.colours,
            lod="off",
        )

    def add_controls(self, gui, on_time, on_play) -> list:
        """Add a summary, the time slider and the play switch to the current GUI container; the
        browser's changes call ``on_time`` / ``on_play`` (viser update callbacks). Returns the handles."""
        tracks = self.tracks
        summary = gui.add_markdown(
            f"**{tracks.count} people** seen walking, {tracks.start_s:.1f} to {tracks.end_s:.1f} s"
        )
        self.slider = gui.add_slider(
            "time (s)",
            min=round(tracks.start_s, 1),
            max=round(max(tracks.end_s, tracks.start_s + SLIDER_STEP_S), 1),
            step=SLIDER_STEP_S,
            initial_value=round(tracks.start_s, 1),
            hint="Seconds from the video's start",
        )
        play = gui.add_checkbox("play", self.playing, hint="Walk the people along their paths, looping")
        self.slider.on_update(on_time)
        play.on_update(on_play)
        return [summary, self.slider, play]

    def set_time(self, t: float) -> None:
        """Show everyone at ``t`` (s), kept within the scene's span; playing goes on from there."""
        with self._lock:
            if not self._closed:
                self.time_s = min(max(float(t), self.tracks.start_s), self.tracks.end_s)
                self._show()

    def set_playing(self, playing: bool) -> None:
        self.playing = bool(playing)

    def advance(self, dt: float) -> None:
        """Move on by ``dt`` seconds when playing (looping over the span)."""
        if not self.playing:
            return
        with self._lock:
            if self._closed:
                return
            self.time_s = self.tracks.loop_time(self.time_s + dt)
            self._show()

    def _show(self) -> None:
        """Send the bodies' poses at ``time_s`` and the slider's value in one message batch."""
        positions, wxyzs, present = self.tracks.poses_at(self.time_s)
        with self.client.atomic():
            self.bodies.batched_positions = positions
            self.bodies.batched_wxyzs = wxyzs
            self.bodies.batched_scales = self.tracks.body_scales(present)
            if self.slider is not None:
                self.slider.value = round(self.time_s, 1)

    def close(self) -> None:
        with self._lock:
            self._closed = True


class Animator:
    """One thread that advances every added :class:`PeopleLayer` each ``frame_s`` seconds, until
    ``close()``. A layer that fails is logged and goes on at the next frame."""

    def __init__(self, frame_s: float = FRAME_S):
        self.frame_s = frame_s
        self._layers: set[PeopleLayer] = set()
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="viewer-people", daemon=True)
        self._thread.start()

    def add(self, layer: PeopleLayer) -> None:
        with self._lock:
            self._layers.add(layer)

    def discard(self, layer: PeopleLayer) -> None:
        with self._lock:
            self._layers.discard(layer)

    def _run(self) -> None:
        last = time.monotonic()
        while not self._stop.wait(self.frame_s):
            now = time.monotonic()
            dt, last = now - last, now
            with self._lock:
                layers = list(self._layers)
            for layer in layers:
                try:
                    layer.advance(dt)
                except Exception:
                    log.exception("viewer: animating people failed")

    def close(self) -> None:
        """Stop the thread (after its current frame)."""
        self._stop.set()
        self._thread.join()
