"""The object-store engines under test, each with what a test needs to reach behind the store.

``local`` is a folder; ``s3`` is a bucket of a real S3 server — moto's server mode, started in this
process on a free loopback port (:func:`s3_server`) — with a fresh bucket per test. An engine can
make an object look older (``age``), plant what the store must ignore, plant the leftover of an
interrupted write, and read the store's raw names; everything else goes through the store itself.
The S3 server keeps ``LastModified`` in whole seconds: ``resolution`` says so, and the engine's
times are rounded up to it.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import logging
import os
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import boto3
from botocore.config import Config

from ragloom.config import Settings
from ragloom.storage import LocalStore, ObjectStore
from ragloom.storage.keys import object_path
from ragloom.storage.s3 import S3Store

ACCESS_KEY, SECRET_KEY = "ragloom-test-key", "ragloom-test-secret"
SMALL_PARTS = 5 << 20  # the S3 engine under test uploads objects of 5 MiB or more in parts


@dataclass(frozen=True)
class S3Server:
    """A running S3 server on loopback."""

    endpoint_url: str

    def client(self, **kwargs: Any) -> Any:
        return boto3.client("s3", endpoint_url=self.endpoint_url, aws_access_key_id=ACCESS_KEY,
                            aws_secret_access_key=SECRET_KEY, region_name="us-east-1",
                            config=Config(s3={"addressing_style": "path"}), **kwargs)

    def new_bucket(self) -> str:
        name = f"ragloom-{uuid.uuid4().hex[:16]}"
        self.client().create_bucket(Bucket=name)
        return name

    def drop_bucket(self, bucket: str) -> None:
        client = self.client()
        with suppress(Exception):
            for page in client.get_paginator("list_objects_v2").paginate(Bucket=bucket):
                for obj in page.get("Contents", []):
                    client.delete_object(Bucket=bucket, Key=obj["Key"])
            for up in client.list_multipart_uploads(Bucket=bucket).get("Uploads", []):
                client.abort_multipart_upload(Bucket=bucket, Key=up["Key"], UploadId=up["UploadId"])
            client.delete_bucket(Bucket=bucket)

    def settings(self, home: Path, bucket: str, **overrides: Any) -> Settings:
        """Settings of a ragloom whose object store is ``bucket`` on this server."""
        values: dict[str, Any] = {
            "home": home, "workers": 0, "worker_poll_seconds": 0.05, "object_store": "s3", "s3_bucket": bucket,
            "s3_prefix": "ragloom/", "s3_endpoint_url": self.endpoint_url, "s3_region": "us-east-1",
            "s3_access_key_id": ACCESS_KEY, "s3_secret_access_key": SECRET_KEY, **overrides,
        }
        return Settings(_env_file=None, **values)

    def set_auth(self, enabled: bool) -> None:
        """Make the server check credentials (it accepts any by default)."""
        import httpx

        httpx.post(f"{self.endpoint_url}/moto-api/reset-auth", content=b"0" if enabled else b"inf",
                   timeout=10).raise_for_status()


@contextmanager
def s3_server() -> Iterator[S3Server]:
    """moto's S3 server in a thread of this process, on 127.0.0.1 and a free port."""
    from moto.server import ThreadedMotoServer

    logging.getLogger("werkzeug").setLevel(logging.WARNING)  # no line per request
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    try:
        yield S3Server(f"http://{host}:{port}")
    finally:
        server.stop()


def age_object(bucket: str, name: str, seconds: float) -> None:
    """Make the object ``name`` look last written ``seconds`` ago, in the server's own record of it
    (moto runs in this process; S3 itself has no way to set ``LastModified``)."""
    from moto.s3.models import s3_backends

    partition, account = s3_backends.bucket_accounts[bucket]
    record = s3_backends[account][partition].buckets[bucket].keys[name]
    record.last_modified = dt.datetime.now(dt.UTC).replace(tzinfo=None) - dt.timedelta(seconds=seconds)


class Engine:
    """One engine under test: its store and the hands behind it."""

    name: str
    store: ObjectStore
    resolution: float  # granularity of modification times, in seconds

    def reopen(self) -> ObjectStore:
        """The same store opened again, as by another process or machine."""
        raise NotImplementedError

    def raw_names(self) -> set[str]:
        """Everything stored, as paths relative to the store's root (the local lock file left out)."""
        raise NotImplementedError

    def raw_get(self, path: str) -> bytes:
        raise NotImplementedError

    def raw_put(self, path: str, data: bytes) -> None:
        """Write bytes at ``path`` behind the store's back."""
        raise NotImplementedError

    def raw_delete(self, path: str) -> None:
        raise NotImplementedError

    def age(self, key: str, seconds: float) -> None:
        """Make the object of ``key`` look last written ``seconds`` ago."""
        raise NotImplementedError

    def mtime(self, key: str) -> float | None:
        raise NotImplementedError

    def plant_leftover(self, data: bytes) -> Callable[[], bool]:
        """What an interrupted write of ``data`` leaves, made long ago; returns "is it still there?"."""
        raise NotImplementedError

    def close(self) -> None:
        pass

    def plant_legacy(self, data: bytes) -> str:
        """Store ``data`` the way ragloom did before per-tenant keys (a bare sha256 key)."""
        sha = hashlib.sha256(data).hexdigest()
        self.raw_put(object_path(sha), data)
        return sha


class LocalEngine(Engine):
    name = "local"
    resolution = 0.0

    def __init__(self, root: Path) -> None:
        self.root = root
        self.store = LocalStore(root)

    def reopen(self) -> ObjectStore:
        return LocalStore(self.root)

    def raw_names(self) -> set[str]:
        return {p.relative_to(self.root).as_posix() for p in self.root.rglob("*")
                if p.is_file() and p.name != ".lock"}

    def raw_get(self, path: str) -> bytes:
        return (self.root / path).read_bytes()

    def raw_put(self, path: str, data: bytes) -> None:
        target = self.root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
        os.chmod(target, 0o444)

    def raw_delete(self, path: str) -> None:
        (self.root / path).unlink()

    def age(self, key: str, seconds: float) -> None:
        then = time.time() - seconds
        os.utime(self.root / object_path(key), (then, then))

    def mtime(self, key: str) -> float | None:
        try:
            return (self.root / object_path(key)).stat().st_mtime
        except FileNotFoundError:
            return None

    def plant_leftover(self, data: bytes) -> Callable[[], bool]:
        leftover = self.root / "tenant-x" / "ab" / "cd" / ".tmp-crashed"
        leftover.parent.mkdir(parents=True, exist_ok=True)
        leftover.write_bytes(data)
        then = time.time() - 7200
        os.utime(leftover, (then, then))
        return leftover.exists


class S3Engine(Engine):
    name = "s3"
    resolution = 1.0

    def __init__(self, server: S3Server, *, prefix: str = "ragloom/", **options: Any) -> None:
        self.server = server
        self.bucket = server.new_bucket()
        self.prefix = prefix
        self.client = server.client()
        self.options = {"prefix": prefix, "endpoint_url": server.endpoint_url, "region": "us-east-1",
                        "access_key_id": ACCESS_KEY, "secret_access_key": SECRET_KEY,
                        "multipart_threshold": SMALL_PARTS, **options}
        self.store = self.open()

    def open(self, **options: Any) -> S3Store:
        return S3Store(self.bucket, **{**self.options, **options})

    def reopen(self) -> ObjectStore:
        return self.open()

    def raw_names(self) -> set[str]:
        names = set()
        for page in self.client.get_paginator("list_objects_v2").paginate(Bucket=self.bucket):
            names |= {o["Key"].removeprefix(self.prefix) for o in page.get("Contents", [])}
        return names

    def raw_get(self, path: str) -> bytes:
        body: bytes = self.client.get_object(Bucket=self.bucket, Key=self.prefix + path)["Body"].read()
        return body

    def raw_put(self, path: str, data: bytes) -> None:
        self.client.put_object(Bucket=self.bucket, Key=self.prefix + path, Body=data)

    def raw_delete(self, path: str) -> None:
        self.client.delete_object(Bucket=self.bucket, Key=self.prefix + path)

    def age_raw(self, path: str, seconds: float) -> None:
        age_object(self.bucket, self.prefix + path, seconds)

    def age(self, key: str, seconds: float) -> None:
        self.age_raw(object_path(key), seconds)

    def mtime(self, key: str) -> float | None:
        try:
            head = self.client.head_object(Bucket=self.bucket, Key=self.prefix + object_path(key))
        except self.client.exceptions.ClientError:
            return None
        return float(head["LastModified"].timestamp()) + 1.0

    def plant_leftover(self, data: bytes) -> Callable[[], bool]:
        """An unfinished multipart upload (moto reports every upload as started in 2010: long ago)."""
        name = self.prefix + "tenant-x/ab/cd/" + "ab" * 32
        upload = self.client.create_multipart_upload(Bucket=self.bucket, Key=name)["UploadId"]
        self.client.upload_part(Bucket=self.bucket, Key=name, UploadId=upload, PartNumber=1, Body=data)

        def there() -> bool:
            uploads = self.client.list_multipart_uploads(Bucket=self.bucket).get("Uploads", [])
            return any(u["UploadId"] == upload for u in uploads)

        return there

    def close(self) -> None:
        self.server.drop_bucket(self.bucket)
