"""The ObjectStore contract (:class:`ragloom.storage.ObjectStore`), the same tests on every engine.

Each test runs on the local engine (a folder) and on the S3 engine against a real S3 server
(moto's server mode on loopback, see ``engines.py``). What differs between engines is reached
only through the engine's hands (raw names, ageing an object, planting leftovers), never by a
different expectation.
"""

from __future__ import annotations

import hashlib
import random
import threading
import time
from contextlib import suppress
from pathlib import Path

import httpx
import pytest

from ragloom.errors import InvalidRequestError, NotFoundError
from ragloom.storage import ObjectStore
from ragloom.storage.keys import object_path
from tests.storage.engines import Engine

NS_A = "a" * 32
NS_B = "0123456789abcdef0123456789abcdef"


def test_put_is_content_addressed_per_namespace_and_idempotent(engine: Engine) -> None:
    store = engine.store
    assert isinstance(store, ObjectStore)
    sha = hashlib.sha256(b"hello").hexdigest()
    key = store.put(b"hello", namespace=NS_A)
    assert key == f"{NS_A}/{sha}"
    assert engine.raw_names() == {f"{NS_A}/{sha[:2]}/{sha[2:4]}/{sha}"}  # the same layout on every engine
    assert engine.raw_get(object_path(key)) == b"hello"
    assert store.put(b"hello", namespace=NS_A) == key
    assert store.get(key) == b"hello" and store.exists(key)
    assert [(o.key, o.size) for o in store.scan()] == [(key, 5)]
    assert len(engine.raw_names()) == 1


def test_two_namespaces_storing_the_same_bytes_get_two_objects(engine: Engine) -> None:
    store = engine.store
    a = store.put(b"same bytes", namespace=NS_A)
    b = store.put(b"same bytes", namespace=NS_B)
    assert a != b and a.split("/")[1] == b.split("/")[1]
    assert store.get(a) == store.get(b) == b"same bytes"
    store.delete(a)
    assert not store.exists(a) and store.get(b) == b"same bytes"
    assert sorted(o.key for o in store.scan()) == [b]


def test_unknown_and_malformed_keys_and_namespaces(engine: Engine) -> None:
    store = engine.store
    sha = "0" * 64
    with pytest.raises(NotFoundError):
        store.get(sha)
    with pytest.raises(NotFoundError):
        store.get(f"{NS_A}/{sha}")
    assert not store.exists(f"{NS_A}/{sha}")
    for bad_key in ("../../etc/passwd", f"../{sha}", f"{NS_A}/../{sha}", f"{sha}\n", f"/{sha}", f"{NS_A}//{sha}",
                    f"..a/{sha}", f"A{NS_A[1:]}/{sha}", sha[:63], f"{NS_A}/{sha}/x", ""):
        for call in (store.get, store.delete, store.exists, store.url):
            with pytest.raises(InvalidRequestError):
                call(bad_key)
        with pytest.raises(InvalidRequestError):
            store.delete_stale([bad_key], older_than=time.time())
    for bad_ns in ("", "ab", "..", "../x", "a/b", "a" * 65, "ABCDEF", ".lock", "-abc", "abc\n", "ab c", "é" * 8,
                   ".deleting"):
        with pytest.raises(InvalidRequestError):
            store.put(b"x", namespace=bad_ns)
    store.delete(sha)  # no error
    assert engine.raw_names() == set()


def test_legacy_bare_sha_keys_stay_readable_listed_and_deletable(engine: Engine) -> None:
    store = engine.store
    legacy = engine.plant_legacy(b"stored before namespaces")
    assert store.exists(legacy) and store.get(legacy) == b"stored before namespaces"
    new = store.put(b"stored before namespaces", namespace=NS_A)  # a new upload gets its own object
    assert new != legacy and {o.key for o in store.scan()} == {legacy, new}
    store.delete(legacy)
    assert not store.exists(legacy) and store.get(new) == b"stored before namespaces"


def test_put_refreshes_an_existing_object_and_rewrites_a_vanished_one(engine: Engine) -> None:
    store = engine.store
    key = store.put(b"payload", namespace=NS_A)
    old = time.time() - 7200
    engine.age(key, 7200)
    (obj,) = store.scan()
    assert obj.mtime == pytest.approx(old, abs=1 + engine.resolution)
    before = time.time()
    assert store.put(b"payload", namespace=NS_A) == key
    refreshed = engine.mtime(key)
    assert refreshed is not None and refreshed >= before - 1  # refreshed
    assert next(iter(store.scan())).mtime >= before - 1
    engine.raw_delete(object_path(key))
    assert not store.exists(key)
    assert store.put(b"payload", namespace=NS_A) == key
    assert store.get(key) == b"payload"


def test_a_large_object_round_trips_and_is_refreshed_in_place(engine: Engine) -> None:
    data = random.Random(7).randbytes(12 << 20)  # over the S3 engine's part size under test: a multipart upload
    store = engine.store
    key = store.put(data, namespace=NS_A)
    assert store.get(key) == data
    engine.age(key, 7200)
    before = time.time()
    assert store.put(data, namespace=NS_A) == key  # stored: a refresh, not a second upload
    refreshed = engine.mtime(key)
    assert refreshed is not None and refreshed >= before - 1
    assert [(o.key, o.size) for o in store.scan()] == [(key, len(data))]
    assert store.get(key) == data


def test_put_file_stores_a_file_as_put_stores_its_bytes(engine: Engine, tmp_path: Path) -> None:
    store = engine.store
    data = random.Random(11).randbytes(12 << 20)  # a multipart upload on the S3 engine under test
    source = tmp_path / "upload.bin"
    source.write_bytes(data)
    key = store.put_file(source, namespace=NS_A)  # hashed by reading the file; the file is only read
    assert key == f"{NS_A}/{hashlib.sha256(data).hexdigest()}" and source.read_bytes() == data
    assert store.get(key) == data and [(o.key, o.size) for o in store.scan()] == [(key, len(data))]
    engine.age(key, 7200)
    before = time.time()
    sha = key.rsplit("/", 1)[1]
    assert store.put_file(source, namespace=NS_A, sha256=sha, move=True) == key  # stored: refreshed, file gone
    assert not source.exists() and (engine.mtime(key) or 0) >= before - 1
    small = tmp_path / "small.txt"
    small.write_bytes(b"given away")
    moved = store.put_file(small, namespace=NS_B, sha256=hashlib.sha256(b"given away").hexdigest(), move=True)
    assert not small.exists() and store.get(moved) == b"given away" == engine.raw_get(object_path(moved))
    assert store.put(b"given away", namespace=NS_B) == moved  # the same object as a put of the bytes
    assert {o.key for o in store.scan()} == {key, moved}
    with pytest.raises(InvalidRequestError):
        store.put_file(source, namespace=NS_A, sha256="not-a-sha")
    with pytest.raises(InvalidRequestError):
        store.put_file(source, namespace="..", sha256=sha)
    with pytest.raises(FileNotFoundError):
        store.put_file(tmp_path / "missing", namespace=NS_A)


def test_head_get_file_and_stream_read_an_object_without_holding_it_whole(engine: Engine, tmp_path: Path) -> None:
    store = engine.store
    data = random.Random(12).randbytes(6 << 20)
    key = store.put(data, namespace=NS_A)
    assert store.head(key, 1024) == data[:1024] and store.head(key, 0) == b""
    store.get_file(key, tmp_path / "copy.bin")
    assert (tmp_path / "copy.bin").read_bytes() == data
    short = store.put(b"%PDF-1.7", namespace=NS_A)
    assert store.head(short, 1024) == b"%PDF-1.7"
    empty = store.put(b"", namespace=NS_A)
    assert store.head(empty, 1024) == b""
    store.get_file(empty, tmp_path / "empty.bin")
    assert (tmp_path / "empty.bin").read_bytes() == b""
    assert b"".join(store.stream(key, chunk_size=1 << 20)) == data
    assert all(len(piece) <= 1 << 20 for piece in store.stream(key, chunk_size=1 << 20))
    assert list(store.stream(empty)) in ([], [b""])
    missing = f"{NS_A}/{'0' * 64}"
    with pytest.raises(NotFoundError):
        store.stream(missing)  # before the first piece: a route can still answer 404
    with pytest.raises(NotFoundError):
        store.head(missing, 10)
    with pytest.raises(NotFoundError):
        store.get_file(missing, tmp_path / "missing.bin")


def test_scan_lists_objects_with_size_and_ignores_everything_else(engine: Engine) -> None:
    store = engine.store
    k1 = store.put(b"one", namespace=NS_A)
    k2 = store.put(b"three", namespace=NS_B)
    legacy = engine.plant_legacy(b"legacy!")
    sha = k1[-64:]
    folder = f"{NS_A}/{sha[:2]}/{sha[2:4]}"
    engine.raw_put(f"{folder}/.tmp-abc", b"partial")
    engine.raw_put(f"{folder}/notes.txt", b"stray")
    engine.raw_put(f"{folder}/{sha}.bak", b"stray")
    engine.raw_put("README", b"stray")
    engine.raw_put(f"{NS_A}/00/00/{'f' * 64}", b"x")  # a sha in a folder that does not match it
    engine.raw_put(f"UPPER/{sha[:2]}/{sha[2:4]}/{sha}", b"x")  # not a namespace
    found = {o.key: o.size for o in store.scan()}
    assert found == {k1: 3, k2: 5, legacy: 7}


def test_delete_stale_rechecks_the_modification_time(engine: Engine) -> None:
    store = engine.store
    old_key = store.put(b"old", namespace=NS_A)
    new_key = store.put(b"new", namespace=NS_A)
    engine.age(old_key, 100)
    cutoff = time.time() - 50
    deleted = store.delete_stale([old_key, new_key, f"{NS_A}/{'0' * 64}"], older_than=cutoff)
    assert [o.key for o in deleted] == [old_key] and deleted[0].size == 3
    assert not store.exists(old_key) and store.exists(new_key)
    assert store.delete_stale([], older_than=cutoff) == []
    assert {o.key for o in store.scan()} == {new_key}


def test_sweep_removes_old_leftovers_of_interrupted_writes_and_keeps_objects(engine: Engine) -> None:
    store = engine.store
    key = store.put(b"keep me", namespace=NS_A)
    gone = store.put(b"delete me", namespace=NS_B)
    store.delete(gone)
    leftover = engine.plant_leftover(b"12345")
    cutoff = time.time() - 3600
    dry = store.sweep(older_than=cutoff, dry_run=True)
    assert (dry.temp_files, dry.temp_bytes) == (1, 5) and leftover()
    result = store.sweep(older_than=cutoff)
    assert (result.temp_files, result.temp_bytes) == (1, 5) and not leftover()
    assert store.get(key) == b"keep me" and [o.key for o in store.scan()] == [key]
    again = store.sweep(older_than=cutoff)
    assert (again.temp_files, again.temp_bytes, again.dirs) == (0, 0, 0)
    assert store.put(b"delete me", namespace=NS_B) == gone and store.get(gone) == b"delete me"


def test_a_store_opened_again_sees_the_same_objects(engine: Engine) -> None:
    key = engine.store.put(b"shared", namespace=NS_A)
    other = engine.reopen()
    assert other.get(key) == b"shared" and [o.key for o in other.scan()] == [key]
    other.delete(key)
    assert not engine.store.exists(key)


def test_a_url_when_the_engine_has_them_serves_the_object(engine: Engine) -> None:
    key = engine.store.put(b"%PDF-1.4 tiny", namespace=NS_A)
    url = engine.store.url(key, expires=60, filename="Relatório 1.pdf", media_type="application/pdf")
    if url is None:  # the local engine: the API serves the bytes
        return
    r = httpx.get(url, timeout=30)
    assert r.status_code == 200 and r.content == b"%PDF-1.4 tiny"
    assert r.headers["content-type"] == "application/pdf"
    assert r.headers["content-disposition"].startswith("attachment;") and "Relat%C3%B3rio%201.pdf" in \
        r.headers["content-disposition"]
    plain = engine.store.url(key)
    assert plain is not None and httpx.get(plain, timeout=30).content == b"%PDF-1.4 tiny"


def test_concurrent_puts_and_collections_never_lose_a_referenced_object(engine: Engine, monkeypatch) -> None:
    """Uploader threads put one of a few payloads, record a reference to it (the "commit"), check it
    is there while referenced, then drop the reference; objects age out and collections run all the
    time (on stores opened apart, as another process would), so re-puts of old unreferenced objects
    race with their deletion."""
    import ragloom.service.documents.gc as gc_module
    from ragloom.service.documents.gc import collect_garbage

    class _Ctx:  # what collect_garbage uses: the store (references are patched in below)
        def __init__(self, store: object) -> None:
            self.objects = store

    class _SlowCollector:  # a collector's view: a long scan, so puts land between scan and delete
        def __init__(self, store: ObjectStore) -> None:
            self._store = store

        def __getattr__(self, name: str) -> object:
            return getattr(self._store, name)

        def delete_stale(self, keys, *, older_than):  # type: ignore[no-untyped-def]
            keys = list(keys)
            time.sleep(random.uniform(0, 0.2))
            deleted = self._store.delete_stale(keys, older_than=older_than)
            gone = {o.key for o in deleted}
            stats["rescued"] += sum(1 for k in keys if k not in gone and self._store.exists(k))  # a put came between
            return deleted

    store = engine.store
    grace = 0.4 + engine.resolution  # no object is younger than its engine's resolution
    refs: dict[str, int] = {}
    refs_lock = threading.Lock()

    def referenced(_ctx) -> set[str]:  # type: ignore[no-untyped-def]
        with refs_lock:
            return {k for k, n in refs.items() if n}

    monkeypatch.setattr(gc_module, "referenced_keys", referenced)
    # this race is the object store's: no database here, so no document versions to trim first
    monkeypatch.setattr("ragloom.service.documents.versions.trim", lambda ctx: 0)
    payloads = [f"payload {i}".encode() * 50 for i in range(24)]
    stop = threading.Event()
    errors: list[str] = []
    stats = {"checked": 0, "revived": 0, "rescued": 0, "deleted": 0}

    def uploader(seed: int) -> None:
        rng = random.Random(seed)
        while not stop.is_set():
            data = rng.choice(payloads)
            with suppress(TypeError):  # an old object (collectable unless referenced) this put revives
                key = f"{'t' * 32}/{hashlib.sha256(data).hexdigest()}"
                stats["revived"] += time.time() - engine.mtime(key) > grace  # type: ignore[operator]
            put_at = time.time()
            key = store.put(data, namespace="t" * 32)
            with refs_lock:
                refs[key] = refs.get(key, 0) + 1
                committed_at = time.time()
            time.sleep(rng.uniform(0, 0.05))
            if committed_at - put_at < grace:  # the documented bound; beyond it a loss would be allowed
                try:
                    if store.get(key) != data:
                        errors.append(f"{key}: wrong bytes")
                except Exception as exc:  # noqa: BLE001 - any failure to read is the bug looked for
                    errors.append(f"{key}: {exc!r}")
                stats["checked"] += 1
            with refs_lock:
                refs[key] -= 1
            time.sleep(rng.uniform(0, grace * 1.5))  # unreferenced long enough, sometimes, to age out

    def collector() -> None:
        collectors_store = _SlowCollector(engine.reopen())
        while not stop.is_set():
            report = collect_garbage(_Ctx(collectors_store), grace_seconds=grace)  # type: ignore[arg-type]
            stats["deleted"] += report.deleted
            time.sleep(random.uniform(0, 0.6))

    threads = [threading.Thread(target=uploader, args=(i,)) for i in range(round(6 * (1 + engine.resolution)))]
    threads += [threading.Thread(target=collector), threading.Thread(target=collector)]
    for t in threads:
        t.start()
    # run until the race has really happened (below), at least the usual span, at most a loaded CI's worth
    started = time.monotonic()
    while time.monotonic() - started < 45 and not (
        time.monotonic() - started >= 4.0 + 4 * engine.resolution and _raced(stats)
    ):
        time.sleep(0.2)
    stop.set()
    for t in threads:
        t.join(timeout=60)
    assert not errors, errors[:5]
    # the race really happened: objects were collected, and puts refreshed old ones between scan and delete
    assert _raced(stats), stats


def _raced(stats: dict[str, int]) -> bool:
    """Objects were checked and collected, and puts refreshed old ones between scan and delete."""
    return stats["checked"] > 40 and stats["deleted"] > 5 and stats["revived"] + stats["rescued"] > 3
