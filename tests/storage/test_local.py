"""What only the local engine does: files on disk, read-only and private, folders swept away.

The contract every engine keeps is in ``test_conformance.py``.
"""

from __future__ import annotations

import os
import stat
import time

from ragloom.storage import LocalStore

NS_A = "a" * 32
NS_B = "0123456789abcdef0123456789abcdef"


def _mode(path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


def test_objects_are_read_only_files_under_fan_out_folders(tmp_path) -> None:
    store = LocalStore(tmp_path / "files")
    key = store.put(b"hello", namespace=NS_A)
    sha = key[-64:]
    path = tmp_path / "files" / NS_A / sha[:2] / sha[2:4] / sha
    assert path.read_bytes() == b"hello"
    files = [p for p in (tmp_path / "files").rglob("*") if p.is_file() and p.name != ".lock"]
    assert files == [path] and (not os.access(path, os.W_OK) or os.geteuid() == 0)
    assert store.url(key) is None  # no address of its own: the API serves the bytes


def test_sweep_keeps_young_temporary_files_and_removes_empty_folders(tmp_path) -> None:
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


def test_store_folders_are_private(tmp_path) -> None:
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


def test_a_file_given_away_is_renamed_into_place_or_copied_from_another_filesystem(tmp_path) -> None:
    import hashlib
    import tempfile

    store = LocalStore(tmp_path / "files")
    spooled = tmp_path / "spool.bin"
    spooled.write_bytes(b"received upload")
    inode = spooled.stat().st_ino
    key = store.put_file(spooled, namespace=NS_A, move=True)
    sha = key[-64:]
    path = tmp_path / "files" / NS_A / sha[:2] / sha[2:4] / sha
    assert not spooled.exists() and path.stat().st_ino == inode  # renamed, not copied
    assert _mode(path) == 0o444 and store.get(key) == b"received upload"
    other_fs = "/dev/shm" if os.path.isdir("/dev/shm") else None
    with tempfile.TemporaryDirectory(dir=other_fs) as elsewhere:  # tmpfs: another filesystem than tmp_path's
        far = os.path.join(elsewhere, "far.bin")
        with open(far, "wb") as f:
            f.write(b"from far away")
        moved = store.put_file(far, namespace=NS_B, sha256=hashlib.sha256(b"from far away").hexdigest(), move=True)
        assert not os.path.exists(far) and store.get(moved) == b"from far away"
    assert not [p for p in (tmp_path / "files").rglob(".tmp-*")]  # no leftover of the copy
