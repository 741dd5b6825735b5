"""A real ragloom server on loopback (uvicorn in a thread) with an embedded worker thread."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import httpx
import uvicorn
from fastapi.testclient import TestClient

from ragloom.api.app import create_app
from ragloom.config import Settings
from ragloom.context import Context
from ragloom.service.accounts import identity
from ragloom.worker import serve_forever


@contextmanager
def app_client(settings: Settings) -> Iterator[tuple[TestClient, Context, dict[str, str]]]:
    """The app in process (FastAPI's TestClient) with its workspace bootstrapped: the client, the
    app's context and the admin key's ``Authorization`` header."""
    with TestClient(create_app(settings)) as client:
        ctx = client.app.state.ctx  # type: ignore[attr-defined]
        with ctx.db.session() as s:
            boot = identity.bootstrap(s)
        assert boot.new_key is not None
        yield client, ctx, {"Authorization": f"Bearer {boot.new_key.key}"}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class Live:
    url: str
    ctx: Context

    def client(self, key: str) -> httpx.Client:
        return httpx.Client(base_url=self.url + "/api/v1", headers={"Authorization": f"Bearer {key}"}, timeout=120)


@contextmanager
def live_server(settings: Settings, *, workers: int = 1) -> Iterator[Live]:
    ctx = Context(settings)
    ctx.init_storage()
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(create_app(context=ctx), host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    stop = threading.Event()
    worker_threads = [threading.Thread(target=serve_forever, args=(settings, stop, i), daemon=True)
                      for i in range(workers)]
    for w in worker_threads:
        w.start()
    deadline = time.monotonic() + 30
    while not server.started:
        if time.monotonic() > deadline:
            raise RuntimeError("server did not start")
        time.sleep(0.05)
    try:
        yield Live(url=f"http://127.0.0.1:{port}", ctx=ctx)
    finally:
        stop.set()
        server.should_exit = True
        thread.join(10)
        for w in worker_threads:
            w.join(30)
        ctx.close()


def wait_documents(client: httpx.Client, dataset: str, *, timeout: float = 300) -> list[dict]:
    deadline = time.monotonic() + timeout
    while True:
        docs = client.get(f"/datasets/{dataset}/documents").json()["documents"]
        if all(d["status"] in ("done", "failed", "cancelled") for d in docs):
            return docs
        if time.monotonic() > deadline:
            raise TimeoutError(f"documents still processing: {docs}")
        time.sleep(0.2)
