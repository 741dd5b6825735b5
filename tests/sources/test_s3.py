"""The s3 connector against moto's S3 server on loopback: only the prefix's objects (no folder markers),
credentials kept encrypted and used by the sync, a wrong key or a missing bucket named, and an endpoint
on a loopback address refused unless an administrator allows it (RAGLOOM_OUTBOUND_ALLOW)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import select

from ragloom.context import Context, Principal
from ragloom.db.models import Source
from ragloom.errors import InvalidRequestError
from ragloom.ingest.connectors import ConnectorSpec, SourceError, open_connector
from tests.sources.helpers import add_source, documents, make_kb, sync
from tests.storage.engines import ACCESS_KEY, SECRET_KEY, S3Server, s3_server

KEYS = {"access_key_id": ACCESS_KEY, "secret_access_key": SECRET_KEY}
ALLOW_ALL = '{"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "*", "Resource": "*"}]}'


def iam_keys(s3: S3Server) -> dict[str, str]:
    """A user of the server's IAM with a key of its own: once the server checks credentials, only such
    a key is accepted."""
    import boto3

    client = boto3.client("iam", endpoint_url=s3.endpoint_url, aws_access_key_id=ACCESS_KEY,
                          aws_secret_access_key=SECRET_KEY, region_name="us-east-1")
    client.create_user(UserName="sync")
    client.put_user_policy(UserName="sync", PolicyName="all", PolicyDocument=ALLOW_ALL)
    key = client.create_access_key(UserName="sync")["AccessKey"]
    return {"access_key_id": key["AccessKeyId"], "secret_access_key": key["SecretAccessKey"]}


@pytest.fixture(scope="module")
def s3() -> Iterator[S3Server]:
    with s3_server() as server:
        yield server


def test_a_bucket_prefix_synced_with_stored_credentials(ctx: Context, principal: Principal, s3: S3Server) -> None:
    client, bucket = s3.client(), s3.new_bucket()
    client.put_object(Bucket=bucket, Key="manuals/pump.md", Body=b"# Pump\n\nGrease every 450 hours.\n")
    client.put_object(Bucket=bucket, Key="manuals/sub/valve.md", Body=b"# Valve\n\nThe valve is blue.\n")
    client.put_object(Bucket=bucket, Key="manuals/sub/", Body=b"")
    client.put_object(Bucket=bucket, Key="private/salaries.md", Body=b"# Salaries\n")
    keys = iam_keys(s3)
    kb = make_kb(ctx, principal)
    source = add_source(ctx, principal, kb, type="s3", credentials=keys,
                        settings={"bucket": bucket, "prefix": "manuals/", "endpoint_url": s3.endpoint_url})
    with ctx.db.session() as s:
        secret = s.scalar(select(Source.secret))
    assert secret and keys["secret_access_key"] not in secret and keys["access_key_id"] not in secret
    s3.set_auth(True)  # from now on the server checks the key the sync signs with
    try:
        first = sync(ctx, principal, kb, source)
        assert (first.stats["listed"], first.stats["new"]) == (2, 2), first.message
        docs = documents(ctx, kb)
        assert set(docs) == {"pump.md", "valve.md"}
        assert docs["valve.md"].meta["source_url"] == f"s3://{bucket}/manuals/sub/valve.md"
        assert docs["valve.md"].meta["source_path"] == "sub/valve.md"
        s3.set_auth(False)  # the test's own changes, with the test's own key
        client.put_object(Bucket=bucket, Key="manuals/pump.md", Body=b"# Pump\n\nGrease every 500 hours.\n")
        client.delete_object(Bucket=bucket, Key="manuals/sub/valve.md")
        s3.set_auth(True)
        second = sync(ctx, principal, kb, source)
        assert (second.stats["changed"], second.stats["deleted"]) == (1, 1)

        wrong = open_connector("s3", ConnectorSpec(
            settings={"bucket": bucket, "endpoint_url": s3.endpoint_url}, outbound_allow=("127.0.0.1/32",),
            credentials={"access_key_id": keys["access_key_id"], "secret_access_key": "not-the-secret"}))
        with pytest.raises(SourceError) as refused:
            list(wrong.list_items())
        assert not refused.value.transient and "SignatureDoesNotMatch" in refused.value.message
    finally:
        s3.set_auth(False)
    missing = open_connector("s3", ConnectorSpec(settings={"bucket": "no-such-bucket", "endpoint_url": s3.endpoint_url},
                                                 outbound_allow=("127.0.0.1/32",), credentials=KEYS))
    with pytest.raises(SourceError, match="NoSuchBucket"):
        missing.check()


def test_a_loopback_endpoint_is_refused_unless_allowed(s3: S3Server, tmp_path: Path) -> None:
    with pytest.raises(InvalidRequestError, match="loopback address.*RAGLOOM_OUTBOUND_ALLOW"):
        open_connector("s3", ConnectorSpec(settings={"bucket": "b", "endpoint_url": s3.endpoint_url}))
    with pytest.raises(InvalidRequestError, match="not an http"):
        open_connector("s3", ConnectorSpec(settings={"bucket": "b", "endpoint_url": "file:///etc"}))
    with pytest.raises(InvalidRequestError, match="both access_key_id and secret_access_key"):
        open_connector("s3", ConnectorSpec(settings={"bucket": "b"}, credentials={"access_key_id": "x"}))
