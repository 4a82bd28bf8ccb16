"""Malformed and oversized websocket messages are dropped; the server and the other browsers go on.

An attacking browser connects like the page does and sends what the page never would: text frames,
random bytes, bad msgpack, maps of unknown message types, known types with wrong fields, GUI updates
of properties other than a value or of values the input cannot hold, and frames over the size
limit. Each kept frame is counted by the guard (``app.guard``); after every one the attacker's own
connection still answers a real request (except after an oversized frame, which closes that
connection with code 1009), a bystander browser is answered, and nothing was logged at error level
(viser and websockets log a traceback when a connection handler fails). A fixed corpus and a seeded
Hypothesis run are in the default run; a long run is ``-m slow``.
"""

from __future__ import annotations

import asyncio
import logging
import os
import re

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.viewer.conftest import SCENES

pytest.importorskip("viser", reason="viser is not installed (pip install viser)")

from urbanverse.bench.viewer_load import ViewerClient, camera_message  # noqa: E402

#: Size limit of the viewer under test (small, so oversized frames stay cheap to send).
LIMIT = 256 * 1024

pack = msgspec.msgpack.encode


def _update(uuid: str, **updates) -> bytes:
    return pack({"type": "GuiUpdateMessage", "uuid": uuid, "updates": updates})


#: (name, frame) pairs; ``@object`` / ``@button`` / ``@variant`` stand for the uuids of the
#: attacker's object dropdown, its "Open" button and its "shown asset" dropdown.
CORPUS: list[tuple[str, object]] = [
    ("text frame", '{"type": "ViewerCameraMessage"}'),
    ("empty binary", b""),
    ("never-used msgpack byte", b"\xc1"),
    ("truncated map", pack({"type": "GuiUpdateMessage", "uuid": "x", "updates": {}})[:-3]),
    ("integer", pack(7)),
    ("list", pack([1, 2, 3])),
    ("map without a type", pack({"uuid": "x"})),
    ("type not a string", pack({"type": 3})),
    ("unknown type", pack({"type": "NoSuchMessage"})),
    ("share request (hidden button)", pack({"type": "ShareUrlRequest"})),
    ("server-to-browser type", pack({"type": "RunJavascriptMessage", "source": "alert(1)"})),
    ("upload start", pack({"type": "FileTransferStartUpload", "transfer_uuid": "t", "filename": "a"})),
    ("camera missing fields", pack({"type": "ViewerCameraMessage", "fov": 1.0})),
    ("camera NaN", pack({**camera_message(), "fov": float("nan")})),
    ("camera infinite", pack({**camera_message(), "position": [0.0, float("inf"), 0.0]})),
    ("camera wrong length", pack({**camera_message(), "wxyz": [1.0, 0.0]})),
    ("camera string", pack({**camera_message(), "fov": "wide"})),
    ("camera extra field", pack({**camera_message(), "zoom": 2})),
    ("update of a callback", "@object:update_cb"),
    ("update of options", "@object:options"),
    ("update of an unknown input", _update("no-such-uuid", value="x")),
    ("dropdown value not an option", "@object=nope"),
    ("dropdown value a number", "@object=#3"),
    ("button value false", "@button=false"),
    ("deep nesting", b"\x91" * 100_000 + b"\xc0"),
    ("map declaring 2^32-1 entries", b"\xdf\xff\xff\xff\xff"),
    ("string declaring 4 GB", b"\xdb\xff\xff\xff\xff"),
    ("many values", pack({**camera_message(), "pad": list(range(50_000))})),
    ("near the limit", os.urandom(LIMIT - 10)),
]


@pytest.fixture(scope="module")
def viewer(scenes_dir, tmp_path_factory):
    from urbanverse.viewer.app import ViewerApp, ViewerCfg

    library = tmp_path_factory.mktemp("no_library")
    app = ViewerApp(ViewerCfg(scenes_dir=scenes_dir, port=0, library=library, max_message_bytes=LIMIT))
    yield app
    app.close()


class Session:
    """An attacker and a bystander browser on one event loop that the test drives step by step."""

    def __init__(self, app):
        self.app = app
        self.loop = asyncio.new_event_loop()
        self.attacker = self.run(ViewerClient(app.url).__aenter__())
        self.bystander = self.run(ViewerClient(app.url).__aenter__())
        self.run(self.attacker.open_scene(SCENES[0]))
        self.turn = 0

    def run(self, coro):
        return self.loop.run_until_complete(coro)

    def frame(self, spec):
        """The frame for a corpus entry (placeholders resolved against the attacker's GUI)."""
        if not isinstance(spec, str) or not spec.startswith("@"):
            return spec
        a = self.attacker
        uuids = {
            "@object": a.find("object", "GuiDropdownMessage"),
            "@variant": a.find("shown asset", "GuiDropdownMessage"),
            "@button": a.find(f"Open {SCENES[1]}", "GuiButtonMessage"),
        }
        key, sep, rest = re.match(r"(@\w+)([:=])(.*)", spec).groups()
        uuid = uuids[key]
        if sep == ":":
            return _update(uuid, **{rest: ["x"]})
        value = {"false": False}.get(rest, rest)
        value = int(value[1:]) if isinstance(value, str) and value.startswith("#") else value
        return _update(uuid, value=value)

    def send(self, frame) -> None:
        """Send one frame from the attacker and wait until the guard has judged it."""
        guard = self.app.guard
        seen = guard.kept + sum(guard.dropped.values())
        self.run(self.attacker.send_raw(frame))

        async def judged() -> None:
            while guard.kept + sum(guard.dropped.values()) <= seen:
                await asyncio.sleep(0.01)

        self.run(asyncio.wait_for(judged(), timeout=30))

    def still_served(self) -> None:
        """Both browsers are answered: each opens the other scene (and one back)."""
        self.turn += 1
        name = SCENES[self.turn % 2]
        self.run(self.attacker.open_scene(name))
        self.run(self.bystander.open_scene(name))

    def close(self) -> None:
        for client in (self.attacker, self.bystander):
            self.run(client.__aexit__(None, None, None))
        self.loop.close()


@pytest.fixture
def session(viewer):
    s = Session(viewer)
    yield s
    s.close()


def _no_errors_logged(caplog) -> None:
    errors = [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert not errors, [r.getMessage() for r in errors][:3]


@pytest.mark.parametrize("name,spec", CORPUS, ids=[name for name, _ in CORPUS])
def test_corpus_message_is_dropped_and_everyone_is_still_served(session, viewer, name, spec, caplog) -> None:
    dropped = sum(viewer.guard.dropped.values())
    session.send(session.frame(spec))
    assert sum(viewer.guard.dropped.values()) == dropped + 1, f"{name} was not dropped"
    session.still_served()
    _no_errors_logged(caplog)


def test_oversized_frame_closes_only_that_connection(session, viewer, caplog) -> None:
    session.run(session.attacker.send_raw(os.urandom(LIMIT + 1)))
    with pytest.raises(ConnectionError):
        session.run(session.attacker.wait_for(lambda: False, "close", timeout=30))
    assert getattr(session.attacker.closed, "rcvd", None) is not None
    assert session.attacker.closed.rcvd.code == 1009
    session.run(session.bystander.open_scene(SCENES[1]))
    _no_errors_logged(caplog)


def test_the_page_s_own_messages_are_kept(session, viewer) -> None:
    kept = viewer.guard.kept
    session.send(msgspec.msgpack.encode(camera_message()))
    assert viewer.guard.kept == kept + 1


# --------------------------------------------------------------------------------------- Hypothesis
_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**63), max_value=2**64 - 1),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=40),
    st.binary(max_size=40),
)
_values = st.recursive(
    _scalars,
    lambda inner: st.lists(inner, max_size=6) | st.dictionaries(st.text(max_size=12), inner, max_size=6),
    max_leaves=30,
)
_TYPES = (
    "ViewerCameraMessage",
    "GuiUpdateMessage",
    "SceneNodeClickMessage",
    "ScenePointerMessage",
    "GetRenderResponseMessage",
    "GuiButtonHoldMessage",
    "ShareUrlRequest",
    "SceneNodeUpdateMessage",
    "NoSuchMessage",
)
_typed_maps = st.builds(
    lambda kind, fields: pack({**fields, "type": kind}),
    st.sampled_from(_TYPES),
    st.dictionaries(st.text(max_size=12), _values, max_size=6),
)
_camera_variants = st.builds(
    lambda key, value: pack({**camera_message(), key: value}),
    st.sampled_from(sorted(camera_message())),
    _values,
)
_frames = st.one_of(
    st.binary(max_size=2048),
    st.text(max_size=200),
    _values.map(pack),
    _typed_maps,
    _camera_variants,
    st.builds(lambda data, cut: data[:cut], _typed_maps, st.integers(0, 64)),
)
_updates = st.tuples(st.sampled_from(["@object", "@variant", "@button"]), st.text(max_size=12), _values)


def _fuzz(session, frames, updates, caplog) -> None:
    for frame in frames:
        session.send(frame)
    for key, prop, value in updates:
        uuid = session.frame(f"{key}=x")  # resolves the uuid; rebuilt below with the drawn values
        uuid = msgspec.msgpack.decode(uuid)["uuid"]
        session.send(_update(uuid, **{prop or "value": value}))
    session.still_served()
    _no_errors_logged(caplog)


def test_random_messages_are_dropped_seeded(session, caplog) -> None:
    @settings(
        max_examples=20,
        derandomize=True,
        deadline=None,
        suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    )
    @given(frames=st.lists(_frames, min_size=1, max_size=4), updates=st.lists(_updates, max_size=2))
    def check(frames, updates) -> None:
        _fuzz(session, frames, updates, caplog)

    check()


@pytest.mark.slow
def test_random_messages_are_dropped_long(session, caplog) -> None:
    @settings(max_examples=400, deadline=None, suppress_health_check=list(HealthCheck))
    @given(frames=st.lists(_frames, min_size=1, max_size=8), updates=st.lists(_updates, max_size=4))
    def check(frames, updates) -> None:
        _fuzz(session, frames, updates, caplog)

    check()
