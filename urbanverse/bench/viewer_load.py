"""Browsers simulated over the viewer's websocket: what the load test and ``tools/bench_viewer.py`` drive.

A ``ViewerClient`` speaks viser's protocol as its browser page does (``viser/client/src``): it
connects with the subprotocol ``viser-v<version>``, sends msgpack maps ``{"type": ..., ...}`` as
binary frames, and reads the server's frames (16-byte header: msgpack length and zstd length, both
little-endian uint64; zstd-compressed msgpack ``{"messages": [...], ...}``; raw binary buffers after
it). It keeps the GUI it was sent (inputs by uuid: kind, label, value, options, Markdown) and waits
for changes, so a test can click "Open <scene>" and time how long the scene title takes to change.

``run_load`` runs ``clients`` browsers at once for ``seconds``: each opens the scenes in turn,
selects the object with cousins and shows each cousin, and times every request from sending it to
the GUI change that answers it.
"""

from __future__ import annotations

import asyncio
import dataclasses
import os
import time
from collections.abc import Callable

import msgspec
import numpy as np
import zstandard

#: Seconds a request may wait for its answer before it counts as unanswered.
ANSWER_TIMEOUT_S = 30.0


def rss_bytes(pid: int | str = "self") -> int:
    """Resident memory of process ``pid`` in bytes (Linux ``/proc``)."""
    with open(f"/proc/{pid}/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def camera_message() -> dict:
    """The camera report a browser sends first (viser registers a browser on its first one)."""
    return {
        "type": "ViewerCameraMessage",
        "wxyz": [1.0, 0.0, 0.0, 0.0],
        "position": [0.0, -20.0, 15.0],
        "fov": 1.0,
        "near": 0.01,
        "far": 1000.0,
        "image_height": 720,
        "image_width": 1280,
        "look_at": [0.0, 0.0, 0.0],
        "up_direction": [0.0, 0.0, 1.0],
    }


def decode_frame(frame: bytes) -> list[dict]:
    """The messages of one server frame (module docstring)."""
    inner_len = int.from_bytes(frame[0:8], "little")
    comp_len = int.from_bytes(frame[8:16], "little")
    inner = zstandard.ZstdDecompressor().decompress(frame[16 : 16 + comp_len], max_output_size=inner_len)
    return list(msgspec.msgpack.decode(inner)["messages"])


@dataclasses.dataclass
class GuiInput:
    """One GUI element as the browser knows it."""

    kind: str
    label: str | None
    value: object = None
    options: tuple = ()
    markdown: str | None = None


class ViewerClient:
    """One simulated browser (module docstring). Use ``async with ViewerClient(url) as c``."""

    def __init__(self, url: str):
        self.url = url.replace("http://", "ws://")
        self.gui: dict[str, GuiInput] = {}
        self.frames = 0
        self.bytes = 0
        self._changed = asyncio.Event()
        self._reader: asyncio.Task | None = None
        self.ws = None
        self.closed: BaseException | None = None

    async def __aenter__(self) -> ViewerClient:
        import viser
        import websockets

        self.ws = await websockets.connect(
            self.url, subprotocols=[f"viser-v{viser.__version__}"], max_size=None, open_timeout=60
        )
        self._reader = asyncio.create_task(self._read())
        await self.send(camera_message())
        return self

    async def __aexit__(self, *exc) -> None:
        await self.ws.close()
        if self._reader is not None:
            self._reader.cancel()
            await asyncio.gather(self._reader, return_exceptions=True)

    async def send(self, message: dict) -> None:
        await self.ws.send(msgspec.msgpack.encode(message))

    async def send_raw(self, data: bytes | str) -> None:
        await self.ws.send(data)

    async def _read(self) -> None:
        try:
            async for frame in self.ws:
                self.frames += 1
                self.bytes += len(frame)
                for message in decode_frame(frame):
                    self._apply(message)
                self._changed.set()
        except Exception as exc:  # the connection ended: record why for the test
            self.closed = exc
        else:
            self.closed = ConnectionError("closed")
        self._changed.set()

    def _apply(self, message: dict) -> None:
        kind = message.get("type", "")
        if kind.startswith("Gui") and kind.endswith("Message") and "uuid" in message and "props" in message:
            props = message["props"]
            self.gui[message["uuid"]] = GuiInput(
                kind=kind,
                label=props.get("label"),
                value=message.get("value"),
                options=tuple(props.get("options", ())),
                markdown=props.get("_markdown"),
            )
        elif kind == "GuiUpdateMessage" and message["uuid"] in self.gui:
            item, updates = self.gui[message["uuid"]], message["updates"]
            item.value = updates.get("value", item.value)
            item.options = tuple(updates.get("options", item.options))
            item.markdown = updates.get("_markdown", item.markdown)
        elif kind == "GuiRemoveMessage":
            self.gui.pop(message["uuid"], None)

    async def wait_for(self, predicate: Callable[[], object], what: str, timeout: float = ANSWER_TIMEOUT_S):
        """Wait until ``predicate()`` is truthy and return it; ``TimeoutError`` naming ``what`` after
        ``timeout`` s."""
        deadline = time.monotonic() + timeout
        while not (result := predicate()):
            if self.closed is not None:
                raise ConnectionError(f"connection closed: {self.closed}")
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"no {what} within {timeout:.0f} s")
            self._changed.clear()
            try:
                await asyncio.wait_for(self._changed.wait(), timeout=min(left, 1.0))
            except TimeoutError:
                pass
        return result

    def find(self, label: str, kind: str | None = None) -> str | None:
        """The uuid of the input labelled ``label`` (of message ``kind``), or None."""
        for uuid, item in self.gui.items():
            if item.label == label and (kind is None or item.kind == kind):
                return uuid
        return None

    def markdown(self, prefix: str) -> str | None:
        """The first Markdown text starting with ``prefix``."""
        return next((m.markdown for m in self.gui.values() if (m.markdown or "").startswith(prefix)), None)

    async def set_value(self, uuid: str, value) -> None:
        """Change an input as the page does: locally, then tell the server."""
        if uuid in self.gui:
            self.gui[uuid].value = value
        await self.send({"type": "GuiUpdateMessage", "uuid": uuid, "updates": {"value": value}})

    async def open_scene(self, name: str) -> float:
        """Click "Open <name>"; seconds until the scene is drawn anew and the title names it."""
        button = await self.wait_for(lambda: self.find(f"Open {name}", "GuiButtonMessage"), "scene list")
        # the viewer draws its first scene on connecting; each drawing rebuilds the layer toggles, so a
        # new "objects" toggle and the title naming the scene mean this click was answered (not an
        # earlier drawing of the same scene)
        before = await self.wait_for(lambda: self.find("objects", "GuiCheckboxMessage"), "first scene drawn")
        start = time.perf_counter()
        await self.set_value(button, True)

        def drawn() -> bool:
            toggle = self.find("objects", "GuiCheckboxMessage")
            return toggle not in (None, before) and (self.markdown("**") or "").startswith(f"**{name}**")

        await self.wait_for(drawn, f"title {name}")
        return time.perf_counter() - start

    async def show_variant(self, object_id: str, uid: str, is_cousin: bool) -> float:
        """Select ``object_id`` and show its asset or cousin ``uid``; seconds until the attribute
        table shows it."""
        start = time.perf_counter()
        dropdown = self.find("object", "GuiDropdownMessage")
        if self.gui[dropdown].value != object_id:
            await self.wait_for(lambda: object_id in self.gui[dropdown].options, f"option {object_id}")
            await self.set_value(dropdown, object_id)
            await self.wait_for(
                lambda: (self.markdown("### ") or "").startswith(f"### {object_id}\n"),
                f"{object_id} table (title {self.markdown('**')!r:.30})",
            )
        variant = self.find("shown asset", "GuiDropdownMessage")
        await self.wait_for(lambda: uid in self.gui[variant].options, f"option {uid}")
        if self.gui[variant].value != uid:
            await self.set_value(variant, uid)
        want = f"shown cousin** | {uid}" if is_cousin else None

        def shown():
            text = self.markdown(f"### {object_id}\n") or ""
            return (want in text) if want else ("shown cousin" not in text and uid in text)

        await self.wait_for(shown, f"{uid} shown (shown asset {self.gui[variant].value!r})")
        return time.perf_counter() - start


@dataclasses.dataclass
class LoadResult:
    """What ``run_load`` measured: per-request seconds, unanswered requests, frames and bytes received."""

    clients: int
    seconds: float
    times: list[float]
    failures: list[str]
    frames: int
    bytes: int

    def percentile(self, q: float) -> float:
        return float(np.percentile(self.times, q)) if self.times else float("nan")


async def _browse(
    url: str,
    scenes: list[str],
    cousin: tuple[str, str, str],
    until: float,
    index: int,
    out: LoadResult,
) -> None:
    object_id, asset_uid, cousin_uid = cousin
    async with ViewerClient(url) as client:
        step = index
        while time.monotonic() < until:
            try:
                out.times.append(await client.open_scene(scenes[step % len(scenes)]))
                if scenes[step % len(scenes)] == scenes[0] and time.monotonic() < until:
                    out.times.append(await client.show_variant(object_id, cousin_uid, True))
                    out.times.append(await client.show_variant(object_id, asset_uid, False))
            except (TimeoutError, ConnectionError) as exc:
                out.failures.append(f"client {index}: {exc}")
                if client.closed is not None:
                    return
            step += 1
        out.frames += client.frames
        out.bytes += client.bytes


async def run_load(
    url: str, clients: int, seconds: float, scenes: list[str], cousin: tuple[str, str, str]
) -> LoadResult:
    """``clients`` simulated browsers at once for ``seconds`` (module docstring). ``scenes``: names to
    switch between, the first holding ``cousin`` = (object id, its asset uid, a cousin uid)."""
    out = LoadResult(clients, seconds, [], [], 0, 0)
    until = time.monotonic() + seconds
    await asyncio.gather(*(_browse(url, scenes, cousin, until, i, out) for i in range(clients)))
    return out
