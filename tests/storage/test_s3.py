"""What only the S3 engine does: settings, errors that name the setting to fix, prefixes, the
local layout in a bucket, and how puts and deletions exclude each other without a lock.

All against a real S3 server (moto's server mode on loopback); the contract every engine keeps
is in ``test_conformance.py``.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from botocore.exceptions import ClientError

from ragloom.config import Settings
from ragloom.errors import ConfigError, StoreError
from ragloom.storage import LocalStore, ObjectStore, open_object_store
from ragloom.storage.keys import object_path
from ragloom.storage.s3 import DELETING, S3Store
from tests.live import free_port
from tests.storage.engines import ACCESS_KEY, SECRET_KEY, S3Engine, S3Server

NS = "tenant-1"
DATA = b"the bytes of a stored file " * 8


@pytest.fixture
def eng(s3: S3Server) -> Iterator[S3Engine]:
    made = S3Engine(s3)
    yield made
    made.close()


def _markers(eng: S3Engine) -> set[str]:
    return {n for n in eng.raw_names() if n.startswith(DELETING)}


# ---------------------------------------------------------------- settings


def test_the_s3_engine_is_chosen_by_the_settings(s3: S3Server, eng: S3Engine, tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch,
                                                 caplog: pytest.LogCaptureFixture) -> None:
    for name, value in {"OBJECT_STORE": "s3", "S3_BUCKET": eng.bucket, "S3_PREFIX": "ragloom",
                        "S3_ENDPOINT_URL": s3.endpoint_url, "S3_REGION": "us-east-1",
                        "S3_ACCESS_KEY_ID": ACCESS_KEY, "S3_SECRET_ACCESS_KEY": SECRET_KEY}.items():
        monkeypatch.setenv(f"RAGLOOM_{name}", value)
    settings = Settings(home=tmp_path / "home", _env_file=None)
    assert SECRET_KEY not in repr(settings) and settings.s3_secret_access_key is not None
    with caplog.at_level(logging.DEBUG):
        store = open_object_store(settings)
        assert isinstance(store, S3Store) and isinstance(store, ObjectStore)
        key = store.put(DATA, namespace=NS)
        assert store.get(key) == DATA
    assert eng.raw_names() == {object_path(key)}  # under the prefix, "ragloom" read as "ragloom/"
    assert SECRET_KEY not in repr(store) and SECRET_KEY not in caplog.text
    assert not (tmp_path / "home" / "files").exists()


def test_settings_that_cannot_work_are_config_errors_naming_them(s3: S3Server, tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="RAGLOOM_S3_BUCKET"):
        open_object_store(Settings(home=tmp_path, object_store="s3", _env_file=None))
    with pytest.raises(ConfigError, match="RAGLOOM_S3_ACCESS_KEY_ID / RAGLOOM_S3_SECRET_ACCESS_KEY"):
        open_object_store(s3.settings(tmp_path, "some-bucket", s3_secret_access_key=None))
    with pytest.raises(ConfigError, match=r"RAGLOOM_S3_ENDPOINT_URL"):
        open_object_store(s3.settings(tmp_path, "some-bucket", s3_endpoint_url="not a url"))
    with pytest.raises(ConfigError, match=r"the S3 bucket 'no-such-bucket' does not exist .*RAGLOOM_S3_BUCKET"):
        open_object_store(s3.settings(tmp_path, "no-such-bucket"))


def test_no_credentials_anywhere_is_a_config_error_naming_the_settings(
        s3: S3Server, eng: S3Engine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE",
                "AWS_DEFAULT_PROFILE", "AWS_WEB_IDENTITY_TOKEN_FILE", "AWS_ROLE_ARN",
                "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", "AWS_CONTAINER_CREDENTIALS_FULL_URI"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")  # no instance role looked up either
    settings = s3.settings(tmp_path, eng.bucket, s3_access_key_id=None, s3_secret_access_key=None)
    with pytest.raises(ConfigError, match="no S3 credentials .*set RAGLOOM_S3_ACCESS_KEY_ID / "
                                          "RAGLOOM_S3_SECRET_ACCESS_KEY"):
        open_object_store(settings)


def test_credentials_the_server_refuses_are_a_config_error_naming_the_settings(s3: S3Server, eng: S3Engine) -> None:
    key = eng.store.put(DATA, namespace=NS)
    wrong = eng.open(access_key_id="AKIAWRONGWRONGWRONG1", secret_access_key="not-the-secret")
    s3.set_auth(True)
    try:
        with pytest.raises(ConfigError, match="RAGLOOM_S3_ACCESS_KEY_ID / RAGLOOM_S3_SECRET_ACCESS_KEY") as info:
            wrong.check()
        with pytest.raises(ConfigError, match="InvalidAccessKeyId"):
            wrong.get(key)
        assert "not-the-secret" not in info.value.message
    finally:
        s3.set_auth(False)
    assert eng.store.get(key) == DATA


def test_an_unreachable_endpoint_is_a_store_error_naming_the_setting(eng: S3Engine) -> None:
    down = S3Store(eng.bucket, endpoint_url=f"http://127.0.0.1:{free_port()}", access_key_id=ACCESS_KEY,
                   secret_access_key=SECRET_KEY, max_attempts=1)
    with pytest.raises(StoreError, match="cannot reach the S3 endpoint .*RAGLOOM_S3_ENDPOINT_URL"):
        down.put(DATA, namespace=NS)


def test_other_refusals_are_mapped(eng: S3Engine) -> None:
    def refusal(code: str, status: int) -> ClientError:
        return ClientError({"Error": {"Code": code, "Message": "m"}, "ResponseMetadata": {"HTTPStatusCode": status}},
                           "GetObject")

    store = eng.store
    assert isinstance(store, S3Store)
    region = store._error(refusal("PermanentRedirect", 301), "read an object")
    assert isinstance(region, ConfigError) and "RAGLOOM_S3_REGION" in region.message
    assert isinstance(store._error(refusal("AccessDenied", 403), "x"), ConfigError)
    flaky = store._error(refusal("InternalError", 500), "read an object")
    assert type(flaky) is StoreError and "InternalError" in flaky.message  # transient: tasks retry it


# ---------------------------------------------------------------- layout and prefixes


def test_prefixes_keep_stores_in_one_bucket_apart(eng: S3Engine) -> None:
    a, b, root = eng.open(prefix="a"), eng.open(prefix="/b/"), eng.open(prefix="")
    key = a.put(DATA, namespace=NS)
    assert a.exists(key) and not b.exists(key) and not root.exists(key)
    assert [o.key for o in a.scan()] == [key] and list(b.scan()) == [] and list(root.scan()) == []
    assert list(eng.store.scan()) == []  # the engine's own prefix, "ragloom/", is a third
    b.delete(key)
    assert a.get(key) == DATA


def test_a_local_data_directory_synced_into_the_bucket_is_a_ready_store(eng: S3Engine, tmp_path: Path) -> None:
    """The S3 engine keeps the local engine's layout: `aws s3 sync files/ s3://bucket/prefix/` moves a store."""
    local = LocalStore(tmp_path / "files")
    keys = {local.put(f"file {i}".encode(), namespace=ns) for i in range(5) for ns in (NS, "tenant-2")}
    for path in (tmp_path / "files").rglob("*"):  # what a sync copies: every file, the lock included
        if path.is_file():
            eng.raw_put(path.relative_to(tmp_path / "files").as_posix(), path.read_bytes())
    assert {(o.key, o.size) for o in eng.store.scan()} == {(o.key, o.size) for o in local.scan()}
    assert all(eng.store.get(k) == local.get(k) for k in keys)


# ---------------------------------------------------------------- puts and deletions without a lock


def test_a_put_between_a_deletions_check_and_its_delete_writes_the_object_again(eng: S3Engine) -> None:
    collector, putter = eng.open(), eng.open()
    key = putter.put(DATA, namespace=NS)
    eng.age(key, 7200)  # unreferenced and old: the collection will delete it
    saw_marker = threading.Event()
    real_deletions, real_head = putter._deletions, collector._head

    def deletions(name: str, seen: dict[str, float]) -> list[str]:
        live = real_deletions(name, seen)
        if live:
            saw_marker.set()
        return live

    put_result: list[str] = []
    uploads: list[threading.Thread] = []

    def head_then_upload(name: str):  # type: ignore[no-untyped-def]
        head = real_head(name)  # the collection has read the old time: it will delete the object...
        uploads.append(threading.Thread(target=lambda: put_result.append(putter.put(DATA, namespace=NS))))
        uploads[0].start()  # ...while an upload of the same bytes refreshes it
        assert saw_marker.wait(30), "the put did not see the deletion in progress"
        return head

    putter._deletions = deletions  # type: ignore[method-assign]
    collector._head = head_then_upload  # type: ignore[method-assign]
    deleted = collector.delete_stale([key], older_than=time.time() - 3600)
    assert [o.key for o in deleted] == [key]  # the deletion went ahead on what it had read...
    uploads[0].join(30)
    assert put_result == [key] and putter.get(key) == DATA  # ...and the put, once it was done, wrote it again
    assert _markers(eng) == set()


def test_a_marker_left_by_a_stopped_collection_neither_blocks_puts_nor_stays(eng: S3Engine) -> None:
    key = eng.store.put(DATA, namespace=NS)
    marker = f"{DELETING}{object_path(key)}/crashed"
    eng.raw_put(marker, b"")
    started = time.monotonic()
    assert eng.open(lease_seconds=0.5).put(DATA, namespace=NS) == key  # waits out the lease, no longer
    assert 0.5 <= time.monotonic() - started < 10
    assert eng.store.sweep(older_than=time.time() + 3600).temp_files == 0  # a collection may still be running
    assert _markers(eng) == {marker}
    eng.age_raw(marker, 3600)  # older than a lease by the server's clock: not waited for at all
    started = time.monotonic()
    assert eng.store.put(DATA, namespace=NS) == key and time.monotonic() - started < 5
    dry = eng.store.sweep(older_than=time.time(), dry_run=True)
    assert dry.temp_files == 1 and _markers(eng) == {marker}
    assert eng.store.sweep(older_than=time.time()).temp_files == 1 and _markers(eng) == set()
    assert eng.store.get(key) == DATA


def test_a_collection_slower_than_half_its_lease_deletes_nothing(eng: S3Engine,
                                                                 caplog: pytest.LogCaptureFixture) -> None:
    key = eng.store.put(DATA, namespace=NS)
    eng.age(key, 7200)
    hurried = eng.open(lease_seconds=0)  # every batch "took too long"
    with caplog.at_level(logging.WARNING, logger="ragloom.storage.s3"):
        assert hurried.delete_stale([key], older_than=time.time()) == []
    assert "none of them deleted" in caplog.text
    assert eng.store.exists(key) and _markers(eng) == set()
    assert [o.key for o in eng.store.delete_stale([key], older_than=time.time())] == [key]
