import hashlib
import os
import stat
import time

import pytest

from ragloom.errors import InvalidRequestError, NotFoundError
from ragloom.storage import LocalStore, ObjectStore

NS_A = "a" * 32
NS_B = "0123456789abcdef0123456789abcdef"


def _mode(path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


def _legacy_put(root, data: bytes) -> str:
    """Store ``data`` the way ragloom did before per-tenant keys: ``root/ab/cd/<sha256>``."""
    sha = hashlib.sha256(data).hexdigest()
    path = root / sha[:2] / sha[2:4] / sha
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    os.chmod(path, 0o444)
    return sha


def test_put_is_content_addressed_per_namespace_and_idempotent(tmp_path):
    store = LocalStore(tmp_path / "files")
    assert isinstance(store, ObjectStore)
    sha = hashlib.sha256(b"hello").hexdigest()
    key = store.put(b"hello", namespace=NS_A)
    assert key == f"{NS_A}/{sha}"
    assert (tmp_path / "files" / NS_A / sha[:2] / sha[2:4] / sha).read_bytes() == b"hello"
    assert store.put(b"hello", namespace=NS_A) == key
    assert store.get(key) == b"hello"
    assert store.exists(key)
    files = [p for p in (tmp_path / "files").rglob("*") if p.is_file() and p.name != ".lock"]
    assert len(files) == 1 and (not os.access(files[0], os.W_OK) or os.geteuid() == 0)


def test_two_namespaces_storing_the_same_bytes_get_two_objects(tmp_path):
    store = LocalStore(tmp_path)
    a = store.put(b"same bytes", namespace=NS_A)
    b = store.put(b"same bytes", namespace=NS_B)
    assert a != b and a.split("/")[1] == b.split("/")[1]
    assert store.get(a) == store.get(b) == b"same bytes"
    store.delete(a)
    assert not store.exists(a) and store.get(b) == b"same bytes"
    assert sorted(o.key for o in store.scan()) == [b]


def test_unknown_and_malformed_keys_and_namespaces(tmp_path):
    store = LocalStore(tmp_path / "files")
    sha = "0" * 64
    with pytest.raises(NotFoundError):
        store.get(sha)
    with pytest.raises(NotFoundError):
        store.get(f"{NS_A}/{sha}")
    for bad_key in ("../../etc/passwd", f"../{sha}", f"{NS_A}/../{sha}", f"{sha}\n", f"/{sha}", f"{NS_A}//{sha}",
                    f"..a/{sha}", f"A{NS_A[1:]}/{sha}", sha[:63], f"{NS_A}/{sha}/x", ""):
        with pytest.raises(InvalidRequestError):
            store.get(bad_key)
        with pytest.raises(InvalidRequestError):
            store.delete(bad_key)
    for bad_ns in ("", "ab", "..", "../x", "a/b", "a" * 65, "ABCDEF", ".lock", "-abc", "abc\n", "ab c", "é" * 8):
        with pytest.raises(InvalidRequestError):
            store.put(b"x", namespace=bad_ns)
    store.delete(sha)  # no error
    assert not any(p.is_file() and p.name != ".lock" for p in (tmp_path / "files").rglob("*"))


def test_legacy_bare_sha_keys_stay_readable_listed_and_deletable(tmp_path):
    store = LocalStore(tmp_path)
    legacy = _legacy_put(tmp_path, b"stored before namespaces")
    assert store.exists(legacy) and store.get(legacy) == b"stored before namespaces"
    new = store.put(b"stored before namespaces", namespace=NS_A)  # a new upload gets its own object
    assert new != legacy and {o.key for o in store.scan()} == {legacy, new}
    store.delete(legacy)
    assert not store.exists(legacy) and store.get(new) == b"stored before namespaces"


def test_put_refreshes_an_existing_object_and_rewrites_a_vanished_one(tmp_path):
    store = LocalStore(tmp_path)
    key = store.put(b"payload", namespace=NS_A)
    (obj,) = store.scan()
    path = tmp_path / NS_A / obj.key[-64:][:2] / obj.key[-64:][2:4] / obj.key[-64:]
    old = time.time() - 7200
    os.utime(path, (old, old))
    assert next(iter(store.scan())).mtime == pytest.approx(old, abs=1)
    before = time.time()
    assert store.put(b"payload", namespace=NS_A) == key
    assert os.stat(path).st_mtime >= before - 1  # refreshed
    os.unlink(path)
    assert store.put(b"payload", namespace=NS_A) == key
    assert store.get(key) == b"payload"


def test_scan_lists_objects_with_size_and_ignores_everything_else(tmp_path):
    store = LocalStore(tmp_path)
    k1 = store.put(b"one", namespace=NS_A)
    k2 = store.put(b"three", namespace=NS_B)
    legacy = _legacy_put(tmp_path, b"legacy!")
    sha = k1[-64:]
    (tmp_path / NS_A / sha[:2] / sha[2:4] / ".tmp-abc").write_bytes(b"partial")
    (tmp_path / NS_A / sha[:2] / sha[2:4] / "notes.txt").write_bytes(b"stray")
    (tmp_path / "README").write_text("stray")
    wrong_place = tmp_path / NS_A / "00" / "00" / ("f" * 64)  # a sha in a folder that does not match it
    wrong_place.parent.mkdir(parents=True)
    wrong_place.write_bytes(b"x")
    found = {o.key: o.size for o in store.scan()}
    assert found == {k1: 3, k2: 5, legacy: 7}


def test_delete_stale_rechecks_the_modification_time(tmp_path):
    store = LocalStore(tmp_path)
    old_key = store.put(b"old", namespace=NS_A)
    new_key = store.put(b"new", namespace=NS_A)
    old = time.time() - 100
    sha = old_key[-64:]
    os.utime(tmp_path / NS_A / sha[:2] / sha[2:4] / sha, (old, old))
    cutoff = time.time() - 50
    deleted = store.delete_stale([old_key, new_key, f"{NS_A}/{'0' * 64}"], older_than=cutoff)
    assert [o.key for o in deleted] == [old_key] and deleted[0].size == 3
    assert not store.exists(old_key) and store.exists(new_key)


def test_sweep_removes_old_temporary_files_and_empty_folders(tmp_path):
    store = LocalStore(tmp_path)
    key = store.put(b"keep me", namespace=NS_A)
    gone = store.put(b"delete me", namespace=NS_B)
    store.delete(gone)
    sha = key[-64:]
    leaf = tmp_path / NS_A / sha[:2] / sha[2:4]
    old_tmp, young_tmp = leaf / ".tmp-crashed", leaf / ".tmp-writing"
    old_tmp.write_bytes(b"12345")
    young_tmp.write_bytes(b"1")
    old = time.time() - 7200
    os.utime(old_tmp, (old, old))
    cutoff = time.time() - 3600
    dry = store.sweep(older_than=cutoff, dry_run=True)
    assert (dry.temp_files, dry.temp_bytes, dry.dirs) == (1, 5, 3) and old_tmp.exists()
    assert (tmp_path / NS_B).exists()
    result = store.sweep(older_than=cutoff)
    assert (result.temp_files, result.temp_bytes, result.dirs) == (1, 5, 3)  # NS_B/xx/yy, NS_B/xx, NS_B
    assert not old_tmp.exists() and young_tmp.exists() and store.get(key) == b"keep me"
    assert not (tmp_path / NS_B).exists() and tmp_path.is_dir()
    assert store.put(b"delete me", namespace=NS_B) == gone and store.get(gone) == b"delete me"


def test_store_folders_are_private(tmp_path):
    store = LocalStore(tmp_path / "new" / "files")
    key = store.put(b"secret", namespace=NS_A)
    sha = key[-64:]
    for d in (tmp_path / "new", tmp_path / "new" / "files", tmp_path / "new" / "files" / NS_A,
              tmp_path / "new" / "files" / NS_A / sha[:2], tmp_path / "new" / "files" / NS_A / sha[:2] / sha[2:4]):
        assert _mode(d) & 0o077 == 0, d
    mine = tmp_path / "mine"
    mine.mkdir(mode=0o755)
    os.chmod(mine, 0o755)
    LocalStore(mine)
    assert _mode(mine) == 0o755  # a folder the user made is left as it is
