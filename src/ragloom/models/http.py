"""The HTTP client every remote model provider (embeddings, chat, rerank) talks through."""

from __future__ import annotations

import httpx


def api_client(base_url: str, api_key: str | None, *, timeout: float,
               transport: httpx.BaseTransport | None = None) -> httpx.Client:
    """A client for ``base_url`` sending ``Authorization: Bearer <api_key>`` when a key is given."""
    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    return httpx.Client(base_url=base_url.rstrip("/"), headers=headers, timeout=timeout, transport=transport)
