"""An S3 bucket as the object store: AWS S3 or any S3-compatible service (MinIO, Ceph, R2...).

Layout: the object of a key lives at ``<prefix><namespace>/ab/cd/<sha256>`` — the relative path
of the local engine (:mod:`ragloom.storage.keys`), so a data directory's ``files`` folder synced
into the bucket is a ready store. Nothing else under the prefix is an object but for the
deletion markers below (``<prefix>.deleting/...``), which :meth:`S3Store.scan` never lists.

Modification times are the objects' ``LastModified``, in whole seconds of the S3 server's clock
and *rounded up* (``floor + 1``): an object is never taken for older than it is.

**Puts and deletions.** S3 has no locks, so ``put`` and ``delete_stale`` exclude each other by
announcing themselves (Dekker's protocol, which S3's strong read-after-write consistency
supports): a put first writes the object (or refreshes it: a server-side copy onto itself sets
a new ``LastModified``) and *then* lists the object's deletion markers; a deletion first writes
its marker ``.deleting/<path>/<token>`` and *then* reads the object's ``LastModified``, deletes
the object only if that is older than the cutoff, and removes its marker. One of the two always
sees the other: either the deletion reads the fresh ``LastModified`` and keeps the object, or
the put sees the marker, waits until it is gone and writes the object again. A marker left by a
crashed collector stops counting after ``lease_seconds`` (a collector never deletes after half
of it has passed since it wrote its markers), and :meth:`S3Store.sweep` removes it; sweep also
aborts multipart uploads older than its cutoff (what an interrupted large put leaves behind).

Large objects stream: a put of ``multipart_threshold`` bytes or more goes up in parts read
straight from the caller's bytes (``put_file``: from the file, a part at a time), a refresh of a
large object is a server-side copy (no upload), and ``get`` reads the body once into the bytes it
returns.
"""

from __future__ import annotations

import io
import logging
import math
import os
import time
import uuid
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime
from functools import partial
from pathlib import Path
from typing import Any, Literal, TypeVar
from urllib.parse import quote

import boto3
import botocore.exceptions as bex
from boto3.exceptions import S3UploadFailedError
from boto3.s3.transfer import TransferConfig
from botocore.config import Config

from ragloom.config import Settings
from ragloom.errors import ConfigError, NotFoundError, RagloomError, StoreError
from ragloom.storage.base import StoredObject, SweepResult
from ragloom.storage.keys import content_key, file_key, key_at, object_path

log = logging.getLogger(__name__)

T = TypeVar("T")

DELETING = ".deleting/"  # under the prefix: the markers of deletions in progress
DELETE_BATCH = 256  # objects marked, checked and deleted together
PARALLEL = 8  # requests in flight while a batch is marked, checked and deleted
COPY_THRESHOLD = 1 << 20  # a put of this many bytes or more refreshes a stored object by a server-side copy
MAX_COPY = 5 << 30  # S3's largest single copy
MULTIPART_THRESHOLD = 64 << 20  # a put of this many bytes or more is uploaded in parts
PART_SIZE = 16 << 20
LEASE_SECONDS = 60.0
_MISSING_CODES = {"NoSuchKey", "404", "NotFound"}
_CREDENTIAL_CODES = {"InvalidAccessKeyId", "SignatureDoesNotMatch", "AccessDenied", "InvalidToken",
                     "ExpiredToken", "TokenRefreshRequired", "InvalidClientTokenId", "AllAccessDisabled", "403"}
_REGION_CODES = {"PermanentRedirect", "AuthorizationHeaderMalformed", "IllegalLocationConstraintException", "301"}
_SETTINGS_KEYS = "RAGLOOM_S3_ACCESS_KEY_ID / RAGLOOM_S3_SECRET_ACCESS_KEY"


class _Missing(Exception):
    """The object (or multipart upload) asked for does not exist."""


def _mtime(last_modified: datetime) -> float:
    """An S3 ``LastModified`` as epoch seconds, rounded up to the next whole second (S3 keeps whole
    seconds: the true time of the write is before this)."""
    return math.floor(last_modified.timestamp()) + 1.0


def _attachment(filename: str) -> str:
    fallback = "".join(c if 32 <= ord(c) < 127 and c not in '"\\' else "_" for c in filename) or "file"
    return f"attachment; filename=\"{fallback}\"; filename*=UTF-8''{quote(filename, safe='')}"


class S3Store:
    """Objects in ``bucket`` under ``prefix`` (see the module docstring).

    ``endpoint_url`` is an S3-compatible service's URL (None: AWS S3). Without an access key, the
    AWS default chain supplies credentials (``AWS_*`` variables, ``~/.aws``, an instance role).
    ``addressing_style`` ``auto`` means path-style requests (``endpoint/bucket/key``) when an
    endpoint URL is set and virtual-hosted ones on AWS. The bucket must exist. A request that fails
    for a transient reason is tried ``max_attempts`` times in all (with back-off).
    """

    def __init__(self, bucket: str, *, prefix: str = "", endpoint_url: str | None = None,
                 region: str | None = None, access_key_id: str | None = None,
                 secret_access_key: str | None = None,
                 addressing_style: Literal["auto", "path", "virtual"] = "auto",
                 lease_seconds: float = LEASE_SECONDS, multipart_threshold: int = MULTIPART_THRESHOLD,
                 max_attempts: int = 5) -> None:
        if not bucket:
            raise ConfigError("the s3 object store needs a bucket: set RAGLOOM_S3_BUCKET")
        if bool(access_key_id) != bool(secret_access_key):
            raise ConfigError(f"set both {_SETTINGS_KEYS}, or neither (the AWS default credentials)")
        self.bucket = bucket
        self.prefix = prefix.strip("/") + "/" if prefix.strip("/") else ""
        self.endpoint_url = endpoint_url or None
        self.lease_seconds = lease_seconds
        self.multipart_threshold = max(multipart_threshold, 5 << 20)  # S3's smallest part is 5 MiB
        style = addressing_style if addressing_style != "auto" else ("path" if self.endpoint_url else "virtual")
        config = Config(
            signature_version="s3v4", s3={"addressing_style": style},
            retries={"mode": "standard", "max_attempts": max_attempts}, connect_timeout=10, read_timeout=120,
            max_pool_connections=PARALLEL * 2,
            # checksums only where the API demands them: several S3-compatible services refuse the others
            request_checksum_calculation="when_required", response_checksum_validation="when_required",
        )
        try:
            session = boto3.session.Session(aws_access_key_id=access_key_id or None,
                                            aws_secret_access_key=secret_access_key or None,
                                            region_name=region or None)
            self._client: Any = session.client("s3", endpoint_url=self.endpoint_url, config=config)
        except ValueError as exc:  # botocore: an endpoint URL it cannot use
            raise ConfigError(f"invalid S3 endpoint URL {self.endpoint_url!r} (RAGLOOM_S3_ENDPOINT_URL): {exc}") \
                from None
        except bex.BotoCoreError as exc:
            raise self._error(exc, "open the S3 client") from None
        self._transfer = TransferConfig(multipart_threshold=self.multipart_threshold, multipart_chunksize=PART_SIZE,
                                        max_concurrency=4)

    def __repr__(self) -> str:
        return f"S3Store(bucket={self.bucket!r}, prefix={self.prefix!r}, endpoint_url={self.endpoint_url!r})"

    # ------------------------------------------------------------------ requests and their errors

    @property
    def _where(self) -> str:
        return f"s3://{self.bucket}/{self.prefix}" + (f" at {self.endpoint_url}" if self.endpoint_url else "")

    def _error(self, exc: Exception, what: str) -> RagloomError:
        """``exc`` of boto3 as a ragloom error: ConfigError naming the setting to fix, else StoreError."""
        if isinstance(exc, bex.NoCredentialsError | bex.PartialCredentialsError | bex.CredentialRetrievalError):
            return ConfigError(f"no S3 credentials to {what} in {self._where}: set {_SETTINGS_KEYS} "
                               "(or the AWS_* variables, ~/.aws, an instance role)")
        if isinstance(exc, bex.EndpointConnectionError | bex.ConnectTimeoutError):
            return StoreError(f"cannot reach the S3 endpoint to {what} in {self._where} "
                              f"(RAGLOOM_S3_ENDPOINT_URL): {exc}")
        if isinstance(exc, bex.ClientError):
            err = exc.response.get("Error", {})
            code = str(err.get("Code") or "")
            status = exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode")
            message = err.get("Message") or code or str(exc)
            if code == "NoSuchBucket":
                return ConfigError(f"the S3 bucket {self.bucket!r} does not exist ({self._where}): create it or fix "
                                   "RAGLOOM_S3_BUCKET")
            if code == "InvalidBucketName":
                return ConfigError(f"{self.bucket!r} is not a valid S3 bucket name (RAGLOOM_S3_BUCKET)")
            if code in _REGION_CODES or status == 301:
                return ConfigError(f"the S3 bucket {self.bucket!r} is in another region than the one asked "
                                   f"({code}: {message}): set RAGLOOM_S3_REGION")
            if code in _CREDENTIAL_CODES or status == 403:
                return ConfigError(f"S3 refused to {what} in {self._where} ({code}: {message}): check "
                                   f"{_SETTINGS_KEYS} and what they may do in the bucket")
            return StoreError(f"S3 failed to {what} in {self._where}: {code or status}: {message}")
        if isinstance(exc, S3UploadFailedError):  # a multipart upload: the request's own error is inside
            inner = exc.__cause__ or exc.__context__
            if isinstance(inner, bex.ClientError | bex.BotoCoreError):
                return self._error(inner, what)
            return StoreError(f"S3 failed to {what} in {self._where}: {exc}")
        return StoreError(f"S3 failed to {what} in {self._where}: {type(exc).__name__}: {exc}")

    def _call(self, what: str, request: Callable[[], T]) -> T:
        """Run one request; a missing object is :class:`_Missing`, any other failure a ragloom error."""
        try:
            return request()
        except bex.ClientError as exc:
            code = str(exc.response.get("Error", {}).get("Code") or "")
            if code in _MISSING_CODES or code == "NoSuchUpload":
                raise _Missing from None
            raise self._error(exc, what) from None
        except (bex.BotoCoreError, S3UploadFailedError) as exc:
            raise self._error(exc, what) from None

    def check(self) -> None:
        """Make sure the bucket exists and the credentials may use it; ConfigError naming the setting."""
        try:
            self._call("open the bucket", lambda: self._client.head_bucket(Bucket=self.bucket))
        except _Missing:
            raise ConfigError(f"the S3 bucket {self.bucket!r} does not exist ({self._where}): create it or fix "
                              "RAGLOOM_S3_BUCKET") from None

    def _name(self, key: str) -> str:
        return self.prefix + object_path(key)

    # ------------------------------------------------------------------ the object API

    def put(self, data: bytes, *, namespace: str) -> str:
        key = content_key(data, namespace)
        self._put(self._name(key), len(data), partial(self._write_bytes, data))
        return key

    def put_file(self, path: Path, *, namespace: str, sha256: str | None = None, move: bool = False) -> str:
        key = file_key(path, namespace, sha256)
        self._put(self._name(key), os.path.getsize(path), partial(self._write_file, str(path)))
        if move:
            Path(path).unlink(missing_ok=True)
        return key

    def _put(self, name: str, size: int, write: Callable[[str], None]) -> None:
        """Write or refresh the object ``name`` (``size`` bytes, written by ``write(name)``), again as
        long as a collection is deleting it (the protocol of the module docstring)."""
        seen: dict[str, float] = {}  # deletion marker -> when this put first saw it (monotonic)
        pause = 0.02
        while True:
            if not (COPY_THRESHOLD <= size <= MAX_COPY and self._refresh(name)):
                write(name)
            if not self._deletions(name, seen):
                return
            # a collection is deleting this very object: once it is done, write it again
            time.sleep(pause)
            pause = min(pause * 2, 0.5)

    def _refresh(self, name: str) -> bool:
        """Give a stored object a fresh LastModified by a copy onto itself (no upload); False when it
        is not stored."""
        try:
            self._call("refresh an object", lambda: self._client.copy_object(
                Bucket=self.bucket, Key=name, CopySource={"Bucket": self.bucket, "Key": name},
                MetadataDirective="REPLACE", Metadata={"refreshed": f"{time.time():.3f}"}))
        except _Missing:
            return False
        return True

    def _write_bytes(self, data: bytes, name: str) -> None:
        if len(data) >= self.multipart_threshold:
            self._call("upload an object", lambda: self._client.upload_fileobj(
                io.BytesIO(data), self.bucket, name, Config=self._transfer))  # parts read from `data` itself
        else:
            self._call("write an object", lambda: self._client.put_object(Bucket=self.bucket, Key=name, Body=data))

    def _write_file(self, path: str, name: str) -> None:
        """Upload a file by its name: boto3 then reads each part from the file as it sends it (from a
        file object it would read every part into memory first)."""
        self._call("upload an object", lambda: self._client.upload_file(path, self.bucket, name,
                                                                        Config=self._transfer))

    def _deletions(self, name: str, seen: dict[str, float]) -> list[str]:
        """The live deletion markers of the object ``name``: written less than a lease ago (by the
        server's clock) and not seen by this put for a whole lease."""
        listed = self._call("list deletion markers", lambda: self._client.list_objects_v2(
            Bucket=self.bucket, Prefix=self._marker_prefix(name)))
        now, mono = time.time(), time.monotonic()
        live = []
        for obj in listed.get("Contents", []):
            if _mtime(obj["LastModified"]) < now - self.lease_seconds:
                continue  # left by a collection that stopped long ago
            if mono - seen.setdefault(obj["Key"], mono) < self.lease_seconds:
                live.append(obj["Key"])
        return live

    def _marker_prefix(self, name: str) -> str:
        return f"{self.prefix}{DELETING}{name[len(self.prefix):]}/"

    def get(self, key: str) -> bytes:
        name = self._name(key)
        try:
            resp = self._call("read an object", lambda: self._client.get_object(Bucket=self.bucket, Key=name))
        except _Missing:
            raise NotFoundError(f"object {key} not found") from None
        body = resp["Body"]
        try:
            data: bytes = body.read()  # one buffer of the Content-Length, filled from the socket
        except (bex.BotoCoreError, OSError) as exc:
            raise self._error(exc, "read an object") from None
        finally:
            body.close()
        return data

    def head(self, key: str, size: int) -> bytes:
        name = self._name(key)
        if size <= 0:
            return b""

        def first_bytes() -> dict[str, Any] | None:
            try:
                got: dict[str, Any] = self._client.get_object(Bucket=self.bucket, Key=name,
                                                              Range=f"bytes=0-{size - 1}")
            except bex.ClientError as exc:
                if exc.response.get("Error", {}).get("Code") == "InvalidRange":  # an empty object has no byte 0
                    return None
                raise
            return got

        try:
            resp = self._call("read an object", first_bytes)
        except _Missing:
            raise NotFoundError(f"object {key} not found") from None
        if resp is None:
            return b""
        body = resp["Body"]
        try:
            data: bytes = body.read()
        except (bex.BotoCoreError, OSError) as exc:
            raise self._error(exc, "read an object") from None
        finally:
            body.close()
        return data[:size]

    def stream(self, key: str, *, chunk_size: int = 1 << 20) -> Iterator[bytes]:
        name = self._name(key)
        try:
            resp = self._call("read an object", lambda: self._client.get_object(Bucket=self.bucket, Key=name))
        except _Missing:
            raise NotFoundError(f"object {key} not found") from None
        return self._pieces(resp["Body"], chunk_size)

    def _pieces(self, body: Any, chunk_size: int) -> Iterator[bytes]:
        try:
            yield from body.iter_chunks(chunk_size)
        except (bex.BotoCoreError, OSError) as exc:
            raise self._error(exc, "read an object") from None
        finally:
            body.close()

    def get_file(self, key: str, dest: Path) -> None:
        name = self._name(key)
        try:
            self._call("download an object", lambda: self._client.download_file(
                self.bucket, name, str(dest), Config=self._transfer))
        except _Missing:
            raise NotFoundError(f"object {key} not found") from None

    def exists(self, key: str) -> bool:
        name = self._name(key)
        try:
            self._call("look up an object", lambda: self._client.head_object(Bucket=self.bucket, Key=name))
        except _Missing:
            return False
        return True

    def delete(self, key: str) -> None:
        name = self._name(key)
        self._call("delete an object", lambda: self._client.delete_object(Bucket=self.bucket, Key=name))

    def url(self, key: str, *, expires: int = 3600, filename: str | None = None,
            media_type: str | None = None) -> str | None:
        params: dict[str, str] = {"Bucket": self.bucket, "Key": self._name(key)}
        if media_type:
            params["ResponseContentType"] = media_type
        if filename:
            params["ResponseContentDisposition"] = _attachment(filename)
        seconds = max(1, min(int(expires), 7 * 24 * 3600))  # S3's longest is a week
        url: str = self._call("sign a URL", lambda: self._client.generate_presigned_url(
            "get_object", Params=params, ExpiresIn=seconds))
        return url

    # ------------------------------------------------------------------ garbage collection

    def _list(self, prefix: str) -> Iterator[dict[str, Any]]:
        pages = self._client.get_paginator("list_objects_v2").paginate(Bucket=self.bucket, Prefix=prefix)
        it = iter(pages)
        while True:
            try:
                page = self._call("list objects", lambda: next(it))
            except StopIteration:
                return
            yield from page.get("Contents", [])

    def scan(self) -> Iterator[StoredObject]:
        skip = self.prefix + DELETING
        for obj in self._list(self.prefix):
            name = obj["Key"]
            if name.startswith(skip):
                continue
            key = key_at(name[len(self.prefix):])
            if key is not None:
                yield StoredObject(key, int(obj["Size"]), _mtime(obj["LastModified"]))

    def _parallel(self, fn: Callable[[str], T], names: list[str]) -> list[T]:
        if len(names) <= 1:
            return [fn(n) for n in names]
        with ThreadPoolExecutor(min(PARALLEL, len(names))) as pool:
            return list(pool.map(fn, names))

    def _head(self, name: str) -> dict[str, Any] | None:
        try:
            head: dict[str, Any] = self._call("look up an object", lambda: self._client.head_object(
                Bucket=self.bucket, Key=name))
        except _Missing:
            return None
        return head

    def _delete_name(self, name: str) -> None:
        self._call("delete an object", lambda: self._client.delete_object(Bucket=self.bucket, Key=name))

    def delete_stale(self, keys: Iterable[str], *, older_than: float) -> list[StoredObject]:
        named = [(key, self._name(key)) for key in keys]
        deleted: list[StoredObject] = []
        for start in range(0, len(named), DELETE_BATCH):
            batch = named[start : start + DELETE_BATCH]
            token = uuid.uuid4().hex
            markers = [f"{self._marker_prefix(name)}{token}" for _, name in batch]
            marked_at = time.monotonic()
            try:
                self._parallel(lambda m: self._call("mark a deletion", lambda: self._client.put_object(
                    Bucket=self.bucket, Key=m, Body=b"")), markers)
                heads = self._parallel(self._head, [name for _, name in batch])  # read only after marking
                stale = [StoredObject(key, int(h["ContentLength"]), _mtime(h["LastModified"]))
                         for (key, _), h in zip(batch, heads, strict=True)
                         if h is not None and _mtime(h["LastModified"]) < older_than]
                if time.monotonic() - marked_at >= self.lease_seconds / 2:
                    log.warning("object store gc: marking %d objects took over half the lease (%.0f s): "
                                "none of them deleted this time", len(batch), self.lease_seconds)
                    continue
                self._parallel(self._delete_name, [self._name(o.key) for o in stale])
                deleted.extend(stale)
            finally:
                self._parallel(self._delete_name, markers)
        return deleted

    def sweep(self, *, older_than: float, dry_run: bool = False) -> SweepResult:
        """Abort the multipart uploads started before ``older_than`` (interrupted large puts) and remove
        deletion markers of collections that stopped (older than both ``older_than`` and a lease)."""
        result = SweepResult()
        pages = iter(self._client.get_paginator("list_multipart_uploads").paginate(Bucket=self.bucket,
                                                                                   Prefix=self.prefix))
        while True:
            try:
                page = self._call("list multipart uploads", lambda: next(pages))
            except StopIteration:
                break
            for up in page.get("Uploads", []):
                if _mtime(up["Initiated"]) >= older_than:
                    continue
                size = self._upload_size(up["Key"], up["UploadId"])
                if size is None:
                    continue  # finished or aborted meanwhile
                if not dry_run:
                    try:
                        self._call("abort a multipart upload", partial(
                            self._client.abort_multipart_upload, Bucket=self.bucket, Key=up["Key"],
                            UploadId=up["UploadId"]))
                    except _Missing:
                        continue
                result.temp_files += 1
                result.temp_bytes += size
        cutoff = min(older_than, time.time() - self.lease_seconds)
        for obj in self._list(self.prefix + DELETING):
            if _mtime(obj["LastModified"]) < cutoff:
                if not dry_run:
                    self._delete_name(obj["Key"])
                result.temp_files += 1
                result.temp_bytes += int(obj["Size"])
        return result

    def _upload_size(self, name: str, upload_id: str) -> int | None:
        size = 0
        pages = iter(self._client.get_paginator("list_parts").paginate(Bucket=self.bucket, Key=name,
                                                                      UploadId=upload_id))
        while True:
            try:
                page = self._call("list the parts of an upload", lambda: next(pages))
            except StopIteration:
                return size
            except _Missing:
                return None
            size += sum(int(p["Size"]) for p in page.get("Parts", []))


def open_s3(settings: Settings) -> S3Store:
    """``s3``: the bucket ``RAGLOOM_S3_BUCKET`` (checked to exist and to accept the credentials)."""
    if not settings.s3_bucket:
        raise ConfigError("RAGLOOM_OBJECT_STORE=s3 needs a bucket: set RAGLOOM_S3_BUCKET")
    secret = settings.s3_secret_access_key
    store = S3Store(settings.s3_bucket, prefix=settings.s3_prefix, endpoint_url=settings.s3_endpoint_url,
                    region=settings.s3_region, access_key_id=settings.s3_access_key_id,
                    secret_access_key=secret.get_secret_value() if secret else None,
                    addressing_style=settings.s3_addressing_style)
    store.check()
    return store
