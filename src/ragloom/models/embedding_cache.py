"""A persistent embedding cache keyed by (model, text) content hash.

Re-parsing unchanged text never embeds it twice. The cache is a SQLite file in
the data directory, shared safely by several worker processes (WAL mode).
Query vectors are kept in memory instead (the last ``QUERY_CACHE_SIZE`` questions): a
question asked again, or embedded twice in one request (retrieval, then the answer's
scoring), costs the model once.
"""

from __future__ import annotations

import hashlib
import sqlite3
import threading
from collections import OrderedDict
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from ragloom.models.embedding import Embedder

QUERY_CACHE_SIZE = 2048


class CachedEmbedder:
    """Wraps an :class:`Embedder`; passages are looked up by hash before embedding, queries in
    an in-memory LRU of the last :data:`QUERY_CACHE_SIZE` ones."""

    def __init__(self, inner: Embedder, path: Path) -> None:
        self.inner = inner
        self.name = inner.name
        self.dim = inner.dim
        path.parent.mkdir(parents=True, exist_ok=True)
        self._conn = sqlite3.connect(str(path), timeout=30, check_same_thread=False)
        self._conn.execute("PRAGMA journal_mode=WAL")
        self._conn.execute("CREATE TABLE IF NOT EXISTS emb (key TEXT PRIMARY KEY, vec BLOB NOT NULL)")
        self._conn.commit()
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0
        self._queries: OrderedDict[str, np.ndarray] = OrderedDict()
        self._queries_lock = threading.Lock()
        self.query_hits = 0
        self.query_misses = 0

    def _key(self, text: str) -> str:
        return hashlib.sha256(f"{self.name}\x00{text}".encode()).hexdigest()

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        keys = [self._key(t) for t in texts]
        found: dict[str, np.ndarray] = {}
        with self._lock:
            for i in range(0, len(keys), 500):
                part = keys[i : i + 500]
                marks = ",".join("?" * len(part))
                rows = self._conn.execute(f"SELECT key, vec FROM emb WHERE key IN ({marks})", part)
                for key, blob in rows:
                    found[key] = np.frombuffer(blob, dtype=np.float32)
        # each text not found once: a batch repeating a text (a running header, a boilerplate row) embeds it once
        first: dict[str, int] = {}
        for i, k in enumerate(keys):
            if k not in found:
                first.setdefault(k, i)
        todo = list(first.values())
        self.hits += len(texts) - len(todo)
        self.misses += len(todo)
        if todo:
            vecs = self.inner.embed_passages([texts[i] for i in todo])
            with self._lock:
                self._conn.executemany(
                    "INSERT OR REPLACE INTO emb (key, vec) VALUES (?, ?)",
                    [(keys[i], vecs[j].astype(np.float32).tobytes()) for j, i in enumerate(todo)],
                )
                self._conn.commit()
            for j, i in enumerate(todo):
                found[keys[i]] = vecs[j]
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for i, k in enumerate(keys):
            out[i] = found[k]
        return out

    def embed_query(self, text: str) -> np.ndarray:
        with self._queries_lock:
            vec = self._queries.get(text)
            if vec is not None:
                self._queries.move_to_end(text)
                self.query_hits += 1
                return vec.copy()
        vec = np.asarray(self.inner.embed_query(text), dtype=np.float32)
        with self._queries_lock:
            self.query_misses += 1
            self._queries[text] = vec
            while len(self._queries) > QUERY_CACHE_SIZE:
                self._queries.popitem(last=False)
        return vec.copy()

    def count_tokens(self, text: str) -> int:
        return self.inner.count_tokens(text)

    def close(self) -> None:
        self._conn.close()
