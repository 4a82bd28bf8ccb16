"""The asset store: SQLite (WAL mode) for records, MiniLM text vectors, and an hnswlib index.

Layout of a library folder::

    assets.sqlite     tables ``assets`` (one row per asset: filter columns + the record as JSON)
                      and ``texts`` (unique descriptions with their 384-d embedding as a blob)
    texts.hnsw        approximate nearest-neighbour index over ``texts`` (a derived cache: it
                      records how many texts it covers and is extended or rebuilt when behind)
    ingested/<uid>/   asset folders of ingested files (generated assets live in the mesh cache)

and a table ``appearance``: per asset and image embedder, the embedding of its rendered views and
their colour, written the first time retrieval ranks the asset by look.

Writes happen in one transaction, so a crash leaves the store as before; SQLite's WAL mode lets
several processes search while one writes. One process writes at a time: writers hold the folder's
lock (:meth:`AssetStore.writing`, ``urbanverse.locks``), and a second writer is refused at once with
a message naming the first. Many assets share one description, so texts are embedded once each.
"""

from __future__ import annotations

import contextlib
import json
import logging
import sqlite3
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from urbanverse.assets.embed import EMBED_DIM, embed_texts
from urbanverse.assets.record import Asset
from urbanverse.errors import InputError
from urbanverse.locks import folder_lock
from urbanverse.records import atomic_path, parse_record, record_to_dict, save_json

DB_FILE = "assets.sqlite"
INDEX_FILE = "texts.hnsw"
INDEX_META = "texts.hnsw.json"
#: Below this many candidate texts after filtering, rank them exactly instead of using the index.
EXACT_SEARCH_MAX = 20_000
#: Seconds a record write waits for another process's write to the library before giving up.
WRITE_WAIT_S = 600.0

log = logging.getLogger(__name__)

_SCHEMA = """
-- A NULL vector is a text added without its embedding (``add(..., embed=False)``), embedded before
-- the next text search. (Libraries made before that was allowed have NOT NULL here.)
CREATE TABLE IF NOT EXISTS texts (id INTEGER PRIMARY KEY, text TEXT UNIQUE NOT NULL, vector BLOB);
CREATE TABLE IF NOT EXISTS assets (
    uid TEXT PRIMARY KEY, l1 TEXT NOT NULL, l2 TEXT NOT NULL, l3 TEXT NOT NULL, source_kind TEXT NOT NULL,
    length REAL NOT NULL, width REAL NOT NULL, height REAL NOT NULL,
    dim_small REAL NOT NULL, dim_mid REAL NOT NULL, dim_large REAL NOT NULL,
    mass REAL NOT NULL, movable INTEGER NOT NULL, quality INTEGER NOT NULL,
    text_id INTEGER NOT NULL REFERENCES texts(id), record TEXT NOT NULL
);
-- Covering indexes: a filtered search reads candidate text ids from the index alone, never the
-- (large) record column.
CREATE INDEX IF NOT EXISTS assets_l3 ON assets(l3, height, length, text_id);
CREATE INDEX IF NOT EXISTS assets_l2 ON assets(l2, height, length, text_id);
CREATE INDEX IF NOT EXISTS assets_l1 ON assets(l1, height, length, text_id);
CREATE INDEX IF NOT EXISTS assets_height ON assets(height, length, text_id);
CREATE INDEX IF NOT EXISTS assets_text ON assets(text_id);
-- Appearance of an asset under one image embedder: the mean unit vector of its rendered views and
-- the CIELAB colour of its pixels in them (filled lazily by retrieval, see ``urbanverse.retrieval``).
CREATE TABLE IF NOT EXISTS appearance (
    uid TEXT NOT NULL, embedder TEXT NOT NULL, vector BLOB NOT NULL, lab BLOB NOT NULL,
    PRIMARY KEY (uid, embedder)
);
"""


@dataclass(frozen=True)
class ClassMembers:
    """The assets of one class: ``uids`` and their boxes ``dims`` ``(N, 3)`` (length, width, height,
    m), with ``column`` the taxonomy level (``l3``, ``l2``, ``l1``) the class was matched on."""

    column: str
    uids: tuple[str, ...]
    dims: np.ndarray


@dataclass(frozen=True)
class SearchHit:
    """A search result: the asset record and the cosine similarity of its description to the query."""

    asset: Asset
    score: float


@dataclass(frozen=True, kw_only=True)
class SearchFilter:
    """Optional constraints: category at any taxonomy level, size limits (m), movability, source kind."""

    category: str | None = None
    min_height: float | None = None
    max_height: float | None = None
    max_length: float | None = None
    movable: bool | None = None
    source_kind: str | None = None

    def sql(self, category_column: str = "l3") -> tuple[str, list]:
        """A WHERE clause (or empty string) and its parameters; ``category`` is matched on
        ``category_column`` (one indexed column: an OR over three levels would scan the table)."""
        clauses, params = [], []
        if self.category:
            clauses.append(f"{category_column} = ?")
            params.append(self.category)
        for column, op, value in (
            ("height", ">=", self.min_height),
            ("height", "<=", self.max_height),
            ("length", "<=", self.max_length),
        ):
            if value is not None:
                clauses.append(f"{column} {op} ?")
                params.append(value)
        if self.movable is not None:
            clauses.append("movable = ?")
            params.append(int(self.movable))
        if self.source_kind:
            clauses.append("source_kind = ?")
            params.append(self.source_kind)
        return (" WHERE " + " AND ".join(clauses)) if clauses else "", params


def search_text(asset: Asset) -> str:
    """The text that represents an asset in the index: its category words and its description without
    numbers (sizes are filtered on columns, not matched as words; this also lets many assets share one
    embedding)."""
    words = f"{asset.category.replace('_', ' ')}: {asset.description}".split()
    return " ".join(w for w in words if not any(ch.isdigit() for ch in w) and w not in ("m", "cm", "mm"))


class AssetStore:
    """A library folder opened for reading and writing (see the module docstring)."""

    def __init__(self, root: Path):
        self.root = Path(root)
        self.root.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(self.root / DB_FILE, timeout=30.0, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.executescript(_SCHEMA)
        self._index = None
        self._index_count = 0
        self._vectors_cache: tuple[np.ndarray, np.ndarray] | None = None
        self._members_cache: dict[tuple, ClassMembers] = {}

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> AssetStore:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    @contextlib.contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        self._db.execute("BEGIN IMMEDIATE")
        try:
            yield self._db
            self._db.execute("COMMIT")
        except BaseException:
            self._db.execute("ROLLBACK")
            raise

    # ----------------------------------------------------------------- writing
    def writing(self) -> contextlib.AbstractContextManager:
        """Hold the library's writer lock while the block runs (re-entrant in one process); a job that
        writes more than records (an ingest's asset folders) holds it around all of it. Another
        process's write is waited for up to ``WRITE_WAIT_S`` (gen workers of one batch add classes and
        appearance rows to one library, each write seconds long); ``FolderLocked`` (exit 2, naming the
        holder) after that. The ``assets`` commands take the lock first themselves and refuse at once."""
        return folder_lock(self.root, "asset library writer", wait_s=WRITE_WAIT_S)

    def add(
        self, assets: Iterable[Asset], vectors: dict[str, np.ndarray] | None = None, embed: bool = True
    ) -> int:
        """Insert or replace ``assets`` in one transaction; returns how many were written.

        Descriptions not yet in the store are embedded (or taken from ``vectors``, text -> unit vector);
        with ``embed=False`` they are embedded before the next text search instead (what retrieval's
        first fill of a library does: loading the text model costs seconds that a scene does not need).
        Takes the writer lock (:meth:`writing`).
        """
        assets = list(assets)
        texts = {search_text(a) for a in assets}
        known = self._text_ids(texts)
        missing = sorted(texts - known.keys())
        given = vectors or {}
        to_embed = [t for t in missing if t not in given] if embed or not self._vectors_may_wait() else []
        embedded = dict(zip(to_embed, embed_texts(to_embed), strict=True))
        with self.writing(), self._transaction() as db:
            for text in missing:
                vector = given.get(text, embedded.get(text))
                blob = None if vector is None else np.asarray(vector, dtype=np.float32).tobytes()
                # another process may have added the text since the look-up above (the look-up and the
                # embedding run outside the lock): keep its row, filling in a vector it lacks
                db.execute(
                    "INSERT INTO texts (text, vector) VALUES (?, ?) "
                    "ON CONFLICT(text) DO UPDATE SET vector = COALESCE(texts.vector, excluded.vector)",
                    (text, blob),
                )
                known[text] = db.execute("SELECT id FROM texts WHERE text = ?", (text,)).fetchone()[0]
            db.executemany(
                "INSERT OR REPLACE INTO assets VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                [self._row(a, known[search_text(a)]) for a in assets],
            )
        return len(assets)

    def _vectors_may_wait(self) -> bool:
        """Whether this library's texts table takes a NULL vector (see the schema)."""
        columns = self._db.execute("PRAGMA table_info(texts)").fetchall()
        return not next(c for c in columns if c[1] == "vector")[3]

    def _embed_waiting(self) -> None:
        """Embed the texts added without their vectors (``add(..., embed=False)``), under the writer lock."""
        rows = self._db.execute("SELECT id, text FROM texts WHERE vector IS NULL ORDER BY id").fetchall()
        if not rows:
            return
        vectors = embed_texts([text for _, text in rows])
        with self.writing(), self._transaction() as db:
            db.executemany(
                "UPDATE texts SET vector = ? WHERE id = ?",
                [(v.tobytes(), text_id) for (text_id, _), v in zip(rows, vectors, strict=True)],
            )
        self._index, self._index_count = None, 0  # the index never held the waiting texts
        self._vectors_cache = None

    @staticmethod
    def _row(a: Asset, text_id: int) -> tuple:
        small, mid, large = sorted((a.length, a.width, a.height))
        l1, l2, l3 = a.category_path
        return (
            a.uid,
            l1,
            l2,
            l3,
            a.source.kind,
            a.length,
            a.width,
            a.height,
            small,
            mid,
            large,
            a.mass,
            int(a.movable),
            a.quality,
            text_id,
            json.dumps(record_to_dict(a), separators=(",", ":")),
        )

    def _rows_in(self, query: str, values: Iterable, params: Sequence = ()) -> Iterator[tuple]:
        """The rows of ``query``, whose ``{marks}`` stands for ``?`` placeholders of ``values`` (after
        ``params``), run in chunks under SQLite's host-parameter limit."""
        items = sorted(set(values))
        for i in range(0, len(items), 900):
            chunk = items[i : i + 900]
            yield from self._db.execute(query.format(marks=",".join("?" * len(chunk))), [*params, *chunk])

    def _text_ids(self, texts: set[str]) -> dict[str, int]:
        return dict(self._rows_in("SELECT text, id FROM texts WHERE text IN ({marks})", texts))

    # ----------------------------------------------------------------- reading
    def __len__(self) -> int:
        return self._db.execute("SELECT COUNT(*) FROM assets").fetchone()[0]

    def get(self, uid: str) -> Asset:
        row = self._db.execute("SELECT record FROM assets WHERE uid = ?", (uid,)).fetchone()
        if row is None:
            raise InputError(f"no asset with uid {uid!r} in {self.root}")
        return parse_record(Asset, row[0], f"{self.root / DB_FILE}:{uid}")

    def count_by(self, column: str) -> dict[str, int]:
        """Asset counts grouped by ``l1``, ``l2``, ``l3`` or ``source_kind``."""
        if column not in ("l1", "l2", "l3", "source_kind"):
            raise ValueError(f"cannot group by {column!r}")
        rows = self._db.execute(f"SELECT {column}, COUNT(*) FROM assets GROUP BY {column} ORDER BY 2 DESC")
        return dict(rows.fetchall())

    def records(self, limit: int | None = None, offset: int = 0) -> Iterator[Asset]:
        sql = "SELECT record FROM assets ORDER BY uid" + (
            f" LIMIT {int(limit)} OFFSET {int(offset)}" if limit else ""
        )
        for (text,) in self._db.execute(sql):
            yield parse_record(Asset, text, str(self.root / DB_FILE))

    def sample_uids(self, n: int, seed: int = 0) -> list[str]:
        """``n`` uids drawn uniformly without replacement (deterministic for a seed)."""
        uids = [u for (u,) in self._db.execute("SELECT uid FROM assets ORDER BY uid")]
        rng = np.random.default_rng(seed)
        return [uids[i] for i in sorted(rng.choice(len(uids), size=min(n, len(uids)), replace=False))]

    def present(self, uids: Iterable[str]) -> set[str]:
        """Those of ``uids`` that are in the store."""
        return {r[0] for r in self._rows_in("SELECT uid FROM assets WHERE uid IN ({marks})", uids)}

    def members(self, column: str | None, value: str | None) -> ClassMembers:
        """Every asset whose ``column`` (``l1``, ``l2`` or ``l3``) is ``value`` (every asset of the store
        when ``column`` is None), with its box, in uid order.

        Kept per process while the store's content is the same (:meth:`revision`): a scene asks for
        the same classes many times."""
        if column not in ("l1", "l2", "l3", None):
            raise ValueError(f"cannot select by {column!r}")
        key = (column, value, self.revision())
        if key not in self._members_cache:
            where, params = (f" WHERE {column} = ?", (value,)) if column else ("", ())
            rows = self._db.execute(
                f"SELECT uid, length, width, height FROM assets{where} ORDER BY uid", params
            )
            rows = rows.fetchall()
            dims = np.array([r[1:] for r in rows], dtype=np.float64).reshape(-1, 3)
            self._members_cache[key] = ClassMembers(column or "all", tuple(r[0] for r in rows), dims)
        return self._members_cache[key]

    def revision(self, source_kind: str | None = None) -> tuple[int, int]:
        """``(count, largest rowid)`` of the assets (of ``source_kind`` only, when given): changes whenever
        assets are added or replaced, so it tells a cached answer from a stale one."""
        clause, params = ("WHERE source_kind = ?", [source_kind]) if source_kind else ("", [])
        row = self._db.execute(f"SELECT COUNT(*), COALESCE(MAX(rowid), 0) FROM assets {clause}", params)
        return tuple(row.fetchone())

    # -------------------------------------------------------------- appearance
    def appearance(self, uids: Iterable[str], embedder: str) -> dict[str, tuple[np.ndarray, np.ndarray]]:
        """uid -> (unit vector, CIELAB colour (3,)) of the ``uids`` whose appearance under ``embedder``
        is stored; the others are missing from the result."""
        query = "SELECT uid, vector, lab FROM appearance WHERE embedder = ? AND uid IN ({marks})"
        return {
            uid: (np.frombuffer(vector, np.float32), np.frombuffer(lab, np.float64))
            for uid, vector, lab in self._rows_in(query, uids, (embedder,))
        }

    def add_appearance(self, embedder: str, rows: dict[str, tuple[np.ndarray, np.ndarray]]) -> None:
        """Store uid -> (unit vector, CIELAB colour) under ``embedder``, in one transaction (writer lock)."""
        with self.writing(), self._transaction() as db:
            db.executemany(
                "INSERT OR REPLACE INTO appearance VALUES (?, ?, ?, ?)",
                [
                    (
                        uid,
                        embedder,
                        np.asarray(v, np.float32).tobytes(),
                        np.asarray(lab, np.float64).tobytes(),
                    )
                    for uid, (v, lab) in rows.items()
                ],
            )

    # ------------------------------------------------------------------ search
    def _text_count(self) -> int:
        return self._db.execute("SELECT COUNT(*) FROM texts").fetchone()[0]

    def _all_vectors(self) -> tuple[np.ndarray, np.ndarray]:
        """Every text id (sorted) and its vector ``(T, 384)``, cached while the store is unchanged."""
        n_texts = self._text_count()
        if self._vectors_cache is None or len(self._vectors_cache[0]) != n_texts:
            rows = self._db.execute("SELECT id, vector FROM texts ORDER BY id").fetchall()
            ids = np.array([r[0] for r in rows], dtype=np.int64)
            vectors = np.frombuffer(b"".join(r[1] for r in rows), dtype=np.float32).reshape(-1, EMBED_DIM)
            self._vectors_cache = (ids, vectors)
        return self._vectors_cache

    def _ann_index(self):
        """The hnswlib index over all texts, loaded from disk, extended when the store has grown."""
        import hnswlib

        n_texts = self._text_count()
        if self._index is not None and self._index_count == n_texts:
            return self._index
        path, meta = self.root / INDEX_FILE, self.root / INDEX_META
        index = hnswlib.Index(space="ip", dim=EMBED_DIM)
        covered = 0
        if path.is_file():
            try:
                index.load_index(str(path), max_elements=max(n_texts, 1))
                # The index covers the first ``count`` texts by id (texts are only ever appended). Its
                # own count, not the side file's: two processes extending it at once may replace the
                # index and the side file in opposite orders.
                covered = index.get_current_count()
            except RuntimeError as exc:  # unreadable: rebuilt (it is derived from the database)
                log.warning("%s: unreadable vector index (%s); rebuilding it", path, exc)
                index = hnswlib.Index(space="ip", dim=EMBED_DIM)
        if covered == 0 or covered > n_texts:
            covered, index = 0, hnswlib.Index(space="ip", dim=EMBED_DIM)
            index.init_index(max_elements=max(n_texts, 1), ef_construction=100, M=16)
        if covered < n_texts:
            rows = self._db.execute("SELECT id, vector FROM texts ORDER BY id LIMIT -1 OFFSET ?", (covered,))
            rows = rows.fetchall()
            vectors = np.frombuffer(b"".join(r[1] for r in rows), dtype=np.float32).reshape(-1, EMBED_DIM)
            index.add_items(vectors, np.array([r[0] for r in rows]))
            with atomic_path(path) as tmp:
                index.save_index(str(tmp))
            save_json({"texts": n_texts}, meta)  # for people and tools; the index's own count rules
        index.set_ef(64)
        self._index, self._index_count = index, n_texts
        return index

    def _category_column(self, category: str | None) -> str:
        """The taxonomy level (``l3``, ``l2`` or ``l1``) that has ``category``, probed on the indexes."""
        for column in ("l3", "l2", "l1"):
            if (
                category
                and self._db.execute(
                    f"SELECT 1 FROM assets WHERE {column} = ? LIMIT 1", (category,)
                ).fetchone()
            ):
                return column
        return "l3"

    def search(
        self, query: str | np.ndarray, k: int = 10, where: SearchFilter | None = None
    ) -> list[SearchHit]:
        """The ``k`` assets whose descriptions are closest to ``query`` (text or unit vector), filtered.
        Texts added without their vectors are embedded first (``FolderLocked`` while another process
        writes the library)."""
        self._embed_waiting()
        q = embed_texts([query])[0] if isinstance(query, str) else np.asarray(query, dtype=np.float32)
        where = where or SearchFilter()
        clause, params = where.sql(self._category_column(where.category))
        if clause:
            candidate_ids = [
                r[0] for r in self._db.execute(f"SELECT DISTINCT text_id FROM assets{clause}", params)
            ]
        else:
            candidate_ids = None
        if candidate_ids is not None and len(candidate_ids) <= EXACT_SEARCH_MAX:
            all_ids, all_vectors = self._all_vectors()
            text_ids = np.asarray(candidate_ids, dtype=np.int64)
            scores = all_vectors[np.searchsorted(all_ids, text_ids)] @ q
            order = np.argsort(-scores)
            ranked = [(int(text_ids[i]), float(scores[i])) for i in order]
        else:
            index = self._ann_index()
            n = min(self._index_count, max(4 * k, 64))
            labels, distances = index.knn_query(q[None, :], k=n)
            ranked = [(int(t), 1.0 - float(d)) for t, d in zip(labels[0], distances[0], strict=True)]
        hits: list[SearchHit] = []
        for text_id, score in ranked:
            rows = self._db.execute(
                f"SELECT record FROM assets{clause}{' AND' if clause else ' WHERE'} text_id = ? "
                f"ORDER BY quality DESC, uid LIMIT ?",
                [*params, text_id, k - len(hits)],
            )
            hits += [SearchHit(parse_record(Asset, r[0], str(self.root)), score) for r in rows]
            if len(hits) >= k:
                break
        return hits
