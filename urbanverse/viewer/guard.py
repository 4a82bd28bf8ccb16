"""Checks on what browsers send the viewer: a message that is not one the viewer's page sends is
dropped before viser reads it, and the connection goes on.

viser's browser page sends msgpack maps ``{"type": "<MessageClass>", field: value, ...}`` as binary
websocket frames (``viser/client/src/WebsocketInterface.tsx``). viser itself reads every frame with
``assert isinstance(raw, bytes)`` and ``Message.deserialize``, so a text frame or bad msgpack ended
the connection with a traceback, and it acts on any message type its page could send, including a
request to share the server through a public relay (the viewer hides that button) and GUI updates
that set any property of an input (its callbacks too), for every browser. The guard keeps a message
only when all of these hold:

- a binary frame of at most ``max_bytes`` (a larger frame closes that connection with code 1009,
  "message too big", before it is read into memory);
- msgpack of a map whose ``type`` is one of :data:`ALLOWED` (what the viewer's page needs);
- its fields have the types viser declares (``msgspec.convert``), every number is finite, and viser's
  own ``deserialize`` accepts it;
- a ``GuiUpdateMessage`` changes only the ``value`` of an input of that browser, with a value of the
  input's type (a dropdown's value one of its options, a button's ``True``).

Dropped messages are counted (``MessageGuard.dropped``) and logged at debug level, one line each.

viser offers no hook for this, so :func:`install` reaches three internals of viser 1.x: the
websocket server (``ViserServer._websock_server``), its live connections (``_live_connections``, to
wrap one connection's ``recv``), and a GUI's inputs by uuid (``_gui_input_handle_from_uuid``). It
checks they exist and fails with a clear message when a viser release renames them.
"""

from __future__ import annotations

import logging
import math
import threading
from collections import Counter

import msgspec

log = logging.getLogger(__name__)

#: Message types the viewer's page sends: its camera, GUI input changes, clicks on scene nodes and
#: in the scene, and the screenshot it renders on request.
ALLOWED = (
    "ViewerCameraMessage",
    "GuiUpdateMessage",
    "SceneNodeClickMessage",
    "ScenePointerMessage",
    "GetRenderResponseMessage",
)
#: Largest message kept, bytes: a 1280 x 720 PNG screenshot with room to spare.
MAX_MESSAGE_BYTES = 16 * 2**20
#: Most values (map entries, list items, scalars) one message may hold.
MAX_VALUES = 10_000
#: Longest string a GUI input may be set to, characters.
MAX_TEXT = 10_000


def _message_classes() -> tuple[type, dict[str, type]]:
    """viser's message base class (its ``deserialize`` reads any message) and the allowed classes."""
    from viser import _messages

    return _messages.Message, {name: getattr(_messages, name) for name in ALLOWED}


def _walk_reason(data) -> str | None:
    """Why the decoded ``data`` is not plain finite data of bounded size (None when it is)."""
    stack, seen = [data], 0
    while stack:
        item = stack.pop()
        seen += 1
        if seen > MAX_VALUES:
            return f"more than {MAX_VALUES} values"
        if isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, (list, tuple)):
            stack.extend(item)
        elif isinstance(item, float) and not math.isfinite(item):
            return f"a non-finite number ({item})"
    return None


def _value_reason(handle, value) -> str | None:
    """Why ``value`` cannot be the value of the GUI input ``handle`` (None when it can)."""
    from viser import GuiButtonHandle

    current = handle.value
    if isinstance(handle, GuiButtonHandle):
        return None if value is True else f"a button value must be true, got {value!r:.80}"
    if isinstance(current, bool):
        return None if isinstance(value, bool) else f"expected true or false, got {value!r:.80}"
    if isinstance(current, str):
        if not isinstance(value, str) or len(value) > MAX_TEXT:
            return f"expected a string of at most {MAX_TEXT} characters, got {value!r:.80}"
        options = getattr(handle, "options", None)
        if options is not None and value not in options:
            return f"{value!r:.80} is not one of the dropdown's options"
        return None
    if isinstance(current, (int, float)):
        ok = isinstance(value, (int, float)) and not isinstance(value, bool)
        return None if ok else f"expected a number, got {value!r:.80}"
    if isinstance(current, tuple):
        ok = isinstance(value, (list, tuple)) and len(value) == len(current)
        ok = ok and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in value)
        return None if ok else f"expected {len(current)} numbers, got {value!r:.80}"
    return f"the input's value ({type(current).__name__}) cannot be set by a browser"


class MessageGuard:
    """The checks of one viewer's server (module docstring). ``client_gui(client_id)`` returns the GUI
    APIs (viser ``GuiApi``) whose inputs that browser may change."""

    def __init__(self, client_gui, max_bytes: int = MAX_MESSAGE_BYTES):
        self.client_gui = client_gui
        self.max_bytes = max_bytes
        self.dropped: Counter[str] = Counter()
        self.kept = 0
        self._base, self._classes = _message_classes()
        self._lock = threading.Lock()

    def reason(self, client_id: int, raw) -> tuple[str, str] | None:
        """Why the frame ``raw`` from browser ``client_id`` is dropped, as ``(kind of fault, one-line
        detail)``; None when it is kept. Kinds: "text frame", "too large", "not msgpack", "not a map",
        "unknown type", "bad fields", "bad update"."""
        if not isinstance(raw, bytes):
            return "text frame", "the viewer's page sends binary msgpack"
        if len(raw) > self.max_bytes:
            return "too large", f"{len(raw)} bytes, more than {self.max_bytes}"
        try:
            data = msgspec.msgpack.decode(raw)
        except (msgspec.DecodeError, RecursionError) as exc:
            return "not msgpack", str(exc)[:160]
        if not isinstance(data, dict):
            return "not a map", type(data).__name__
        kind = data.get("type")
        if not isinstance(kind, str) or kind not in self._classes:
            return "unknown type", f"{kind!r:.80} is not a message the viewer's page sends"
        if (why := _walk_reason(data)) is not None:
            return "bad fields", f"{kind}: {why}"
        cls = self._classes[kind]
        try:
            msgspec.convert({k: v for k, v in data.items() if k != "type"}, type=cls)
            self._base.deserialize(raw)
        except Exception as exc:  # noqa: BLE001 - any failure of viser's reader means: drop it
            return "bad fields", f"{kind}: {type(exc).__name__}: {str(exc)[:160]}"
        if kind == "GuiUpdateMessage":
            why = self._update_reason(client_id, data["uuid"], data["updates"])
            return None if why is None else ("bad update", why)
        return None

    def _update_reason(self, client_id: int, uuid: str, updates: dict) -> str | None:
        if set(updates) != {"value"}:
            return f"a browser may change only an input's value, not {sorted(map(str, updates))!r:.80}"
        handle = None
        for gui in self.client_gui(client_id):
            handle = gui._gui_input_handle_from_uuid.get(uuid)
            if handle is not None:
                break
        if handle is None:
            return f"no input {uuid!r:.60} of this browser"
        return _value_reason(handle, updates["value"])

    def check(self, client_id: int, raw) -> bool:
        """Count and log ``raw``; True when it is kept."""
        why = self.reason(client_id, raw)
        with self._lock:
            if why is None:
                self.kept += 1
                return True
            self.dropped[why[0]] += 1
        log.debug("viewer: dropped a message from browser %d (%s): %s", client_id, *why)
        return False

    def wrap(self, client_id: int, connection) -> None:
        """Make ``connection`` (a ``websockets`` server connection) refuse frames over ``max_bytes`` and
        hand viser only the messages :meth:`check` keeps."""
        connection.protocol.max_message_size = self.max_bytes
        receive = connection.recv

        async def recv_checked(*args, **kwargs):
            while True:
                raw = await receive(*args, **kwargs)
                if self.check(client_id, raw):
                    return raw

        connection.recv = recv_checked


def install(server, max_bytes: int = MAX_MESSAGE_BYTES) -> MessageGuard:
    """Put a :class:`MessageGuard` in front of every connection of the ``viser.ViserServer`` ``server``;
    a browser may change the inputs of its own GUI and of the server's."""
    import viser

    ws = getattr(server, "_websock_server", None)
    inputs = hasattr(server.gui, "_gui_input_handle_from_uuid")
    if ws is None or not hasattr(ws, "_live_connections") or not inputs:
        raise RuntimeError(
            f"viser {viser.__version__} changed the internals the viewer's message checks use "
            "(urbanverse/viewer/guard.py); install viser 1.1"
        )

    def client_gui(client_id: int):
        client = server.get_clients().get(client_id)
        return (server.gui,) if client is None else (client.gui, server.gui)

    guard = MessageGuard(client_gui, max_bytes)

    async def on_connect(conn) -> None:
        connection = ws._live_connections.get(conn.client_id)
        if connection is not None:
            guard.wrap(conn.client_id, connection)

    ws.on_client_connect(on_connect)
    return guard
