"""Vision models: a picture in, a description out (figures at ingestion, ragloom.service.documents.figures).

:class:`OpenAIVisionModel` speaks OpenAI's chat-completions protocol with an image part
(``{"type": "image_url", "image_url": {"url": "data:image/png;base64,..."}}``), which OpenAI, vLLM,
Ollama, llama.cpp's server and most gateways accept for their image-capable models.
"""

from __future__ import annotations

import base64
from typing import Any, Protocol, runtime_checkable

import httpx

from ragloom.errors import ConfigError, ModelError
from ragloom.models.http import api_client, reply_problem

DESCRIBE_PROMPT = (
    "Describe this figure from a document for a search index, in the language of any text it shows (else "
    "English): what it shows (a chart, diagram, photo, table, screenshot...), its title and labels, the values "
    "and trends it states, and any text in it. Plain sentences, at most 120 words, nothing it does not show."
)


@runtime_checkable
class VisionModel(Protocol):
    """Describes a picture."""

    name: str

    def describe(self, png: bytes, prompt: str = DESCRIBE_PROMPT) -> str:
        """What the picture shows; raises :class:`ModelError` when the model cannot answer."""
        ...


class OpenAIVisionModel:
    """An image-capable chat model behind an OpenAI-compatible API."""

    def __init__(self, base_url: str, model: str, api_key: str | None = None, *, timeout: float = 120.0,
                 max_tokens: int = 400, transport: httpx.BaseTransport | None = None) -> None:
        if not base_url or not model:
            raise ConfigError("the vision provider needs a base URL and a model name")
        self.model = model
        self.name = model
        self.max_tokens = max_tokens
        self._client = api_client(base_url, api_key, timeout=timeout, transport=transport)

    def close(self) -> None:
        self._client.close()

    def body(self, png: bytes, prompt: str) -> dict[str, Any]:
        url = "data:image/png;base64," + base64.b64encode(png).decode("ascii")
        return {"model": self.model, "temperature": 0.1, "max_tokens": self.max_tokens, "stream": False,
                "messages": [{"role": "user", "content": [{"type": "text", "text": prompt},
                                                          {"type": "image_url", "image_url": {"url": url}}]}]}

    def describe(self, png: bytes, prompt: str = DESCRIBE_PROMPT) -> str:
        try:
            resp = self._client.post("/chat/completions", json=self.body(png, prompt))
        except httpx.HTTPError as exc:
            raise ModelError(f"vision endpoint unreachable: {exc}") from exc
        if resp.status_code != 200:
            raise ModelError(f"vision endpoint returned {resp.status_code}: {reply_problem(resp)}")
        try:
            content = resp.json()["choices"][0]["message"].get("content")
        except (KeyError, IndexError, TypeError, ValueError, AttributeError) as exc:
            raise ModelError(f"vision endpoint answered {resp.status_code} with {reply_problem(resp)}") from exc
        return " ".join(str(content or "").split())
