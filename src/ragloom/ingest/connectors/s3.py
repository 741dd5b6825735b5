"""The ``s3`` connector: the objects of an S3-compatible bucket under a prefix.

Settings: ``bucket`` (required), ``prefix`` (default: the whole bucket), ``endpoint_url`` (an
S3-compatible service: MinIO, Ceph, R2...; default AWS), ``region``. Credentials: ``access_key_id`` and
``secret_access_key`` (stored encrypted; none: the server's AWS default credentials). An item's id is
its key, its change token its ETag and size (a listing reads no object), its path the key below the
prefix. Keys ending in ``/`` (folder markers) are not items.

An ``endpoint_url`` is a server-side request a workspace chooses: its host must resolve to public
addresses only, or to ranges an administrator allows (``RAGLOOM_OUTBOUND_ALLOW``), checked when the
connector is made and before each listing (:class:`ragloom.models.http.OutboundPolicy`).
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

import boto3
from botocore import exceptions as bex
from botocore.config import Config

from ragloom.errors import InvalidRequestError
from ragloom.ingest.connectors.base import (
    READ_CHUNK,
    ConnectorSpec,
    Item,
    SourceError,
    bounded,
    screen_url,
    setting,
    unknown_settings,
)
from ragloom.models.http import OutboundPolicy

TRANSIENT_CODES = frozenset({"SlowDown", "ServiceUnavailable", "InternalError", "RequestTimeout", "503", "500"})


class S3Connector:
    """See the module docstring."""

    def __init__(self, spec: ConnectorSpec) -> None:
        unknown_settings(spec.settings, {"bucket", "prefix", "endpoint_url", "region"})
        self.bucket = setting(spec.settings, "bucket", str, required=True).strip()
        if not self.bucket:
            raise InvalidRequestError("settings.bucket is required")
        self.prefix = setting(spec.settings, "prefix", str, "").lstrip("/")
        self.endpoint_url = (setting(spec.settings, "endpoint_url", str, "") or "").strip() or None
        self.region = (setting(spec.settings, "region", str, "") or "").strip() or None
        self.policy = OutboundPolicy.allowing(spec.outbound_allow)
        self.max_bytes = spec.max_bytes
        unknown = set(spec.credentials) - {"access_key_id", "secret_access_key"}
        if unknown:
            raise InvalidRequestError(f"unknown credential(s) {', '.join(sorted(unknown))}; an s3 source takes "
                                      "access_key_id and secret_access_key")
        key, secret = spec.credentials.get("access_key_id", ""), spec.credentials.get("secret_access_key", "")
        if bool(key) != bool(secret):
            raise InvalidRequestError("credentials: give both access_key_id and secret_access_key, or neither")
        if self.endpoint_url is not None:
            parts = urlsplit(self.endpoint_url)
            if parts.scheme not in ("http", "https") or not parts.hostname:
                raise InvalidRequestError(f"settings.endpoint_url {self.endpoint_url!r} is not an http(s) URL")
            self._screen()
        config = Config(signature_version="s3v4", retries={"mode": "standard", "max_attempts": 3},
                        connect_timeout=spec.timeout, read_timeout=spec.timeout,
                        s3={"addressing_style": "path" if self.endpoint_url else "virtual"},
                        request_checksum_calculation="when_required", response_checksum_validation="when_required")
        session = boto3.session.Session(aws_access_key_id=key or None, aws_secret_access_key=secret or None,
                                        region_name=self.region or "us-east-1")
        self._client: Any = session.client("s3", endpoint_url=self.endpoint_url, config=config)

    def _screen(self) -> None:
        """The endpoint's host resolves to addresses this server may reach."""
        assert self.endpoint_url is not None
        screen_url(self.policy, self.endpoint_url, "settings.endpoint_url")

    def settings(self) -> dict[str, Any]:
        out: dict[str, Any] = {"bucket": self.bucket, "prefix": self.prefix}
        if self.endpoint_url:
            out["endpoint_url"] = self.endpoint_url
        if self.region:
            out["region"] = self.region
        return out

    def _error(self, exc: Exception, what: str) -> SourceError:
        if isinstance(exc, bex.ClientError):
            code = str(exc.response.get("Error", {}).get("Code", ""))
            message = exc.response.get("Error", {}).get("Message", "") or code
            return SourceError(f"{what}: {code}: {message}", transient=code in TRANSIENT_CODES)
        return SourceError(f"{what}: {exc}", transient=isinstance(exc, bex.EndpointConnectionError
                                                                   | bex.ConnectionClosedError
                                                                   | bex.ReadTimeoutError | bex.ConnectTimeoutError))

    def check(self) -> str:
        try:
            page = self._client.list_objects_v2(Bucket=self.bucket, Prefix=self.prefix, MaxKeys=10)
        except (bex.BotoCoreError, bex.ClientError) as exc:
            raise self._error(exc, f"cannot list s3://{self.bucket}/{self.prefix}") from None
        return f"s3://{self.bucket}/{self.prefix}: {page.get('KeyCount', 0)} objects in the first page"

    def problems(self) -> list[str]:
        """A bucket is listed whole or not at all."""
        return []

    def list_items(self) -> Iterator[Item]:
        if self.endpoint_url is not None:
            self._screen()
        try:
            for page in self._client.get_paginator("list_objects_v2").paginate(Bucket=self.bucket,
                                                                             Prefix=self.prefix):
                for obj in page.get("Contents", []):
                    key = str(obj["Key"])
                    if key.endswith("/"):
                        continue
                    rel = key[len(self.prefix):].lstrip("/") if key.startswith(self.prefix) else key
                    etag = str(obj.get("ETag", "")).strip('"')
                    modified = obj.get("LastModified")
                    yield Item(id=key, token=f"{etag}-{obj.get('Size', 0)}", name=posixpath.basename(key),
                               title=posixpath.basename(key), path=rel, url=f"s3://{self.bucket}/{key}",
                               size=int(obj.get("Size", 0)),
                               metadata={"bucket": self.bucket, "key": key,
                                         "modified": modified.isoformat() if modified is not None else ""})
        except (bex.BotoCoreError, bex.ClientError) as exc:
            raise self._error(exc, f"cannot list s3://{self.bucket}/{self.prefix}") from None

    def read(self, item: Item) -> Iterator[bytes]:
        if not item.id.startswith(self.prefix):
            raise SourceError(f"{item.id}: not under this source's prefix")
        try:
            body = self._client.get_object(Bucket=self.bucket, Key=item.id)["Body"]
            yield from bounded(body.iter_chunks(READ_CHUNK), self.max_bytes, item.id)
        except (bex.BotoCoreError, bex.ClientError) as exc:
            raise self._error(exc, f"cannot read s3://{self.bucket}/{item.id}") from None

    def close(self) -> None:
        self._client.close()
