import hashlib
import os

import pytest

from ragloom.errors import InvalidRequestError, NotFoundError
from ragloom.storage import LocalStore


def test_put_is_content_addressed_and_idempotent(tmp_path):
    store = LocalStore(tmp_path)
    key = store.put(b"hello")
    assert key == hashlib.sha256(b"hello").hexdigest()
    assert store.put(b"hello") == key
    assert store.get(key) == b"hello"
    assert store.exists(key)
    files = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert len(files) == 1 and not os.access(files[0], os.W_OK) or os.geteuid() == 0


def test_unknown_and_malformed_keys(tmp_path):
    store = LocalStore(tmp_path)
    with pytest.raises(NotFoundError):
        store.get("0" * 64)
    with pytest.raises(InvalidRequestError):
        store.get("../../etc/passwd")
    store.delete("0" * 64)  # no error
