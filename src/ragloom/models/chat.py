"""Chat LLMs behind one Protocol.

``OpenAIChatModel`` speaks the OpenAI-compatible ``POST {base_url}/chat/completions``
protocol (OpenAI, DeepSeek, Qwen, Ollama, vLLM, llama.cpp server, Xinference),
both as one response and as a server-sent-event stream.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

import httpx

from ragloom.errors import ConfigError, ModelError
from ragloom.models.http import api_client

Message = Mapping[str, str]


@runtime_checkable
class ChatModel(Protocol):
    """A chat LLM.

    ``messages`` are ``{"role": ..., "content": ...}`` mappings (roles
    ``system``, ``user``, ``assistant``). ``chat`` returns the whole reply;
    ``stream`` yields the reply in pieces whose concatenation equals what
    ``chat`` would return. Both raise :class:`ragloom.errors.ModelError` when the
    model fails or cannot be reached. ``name`` identifies the model in answers.
    """

    name: str

    def chat(
        self,
        messages: Sequence[Message],
        *,
        temperature: float = 0.1,
        max_tokens: int | None = None,
    ) -> str: ...

    def stream(
        self,
        messages: Sequence[Message],
        *,
        temperature: float = 0.1,
        max_tokens: int | None = None,
    ) -> Iterator[str]: ...


def _snippet(text: str, limit: int = 300) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit] + "..."


class OpenAIChatModel:
    """Any OpenAI-compatible chat-completions endpoint."""

    def __init__(
        self,
        base_url: str,
        model: str,
        api_key: str | None = None,
        timeout: float = 120.0,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        if not base_url or not model:
            raise ConfigError("the openai chat provider needs a base URL and a model name")
        self.model = model
        self.name = model
        self._client = api_client(base_url, api_key, timeout=timeout, transport=transport)

    def close(self) -> None:
        self._client.close()

    def _body(
        self, messages: Sequence[Message], temperature: float, max_tokens: int | None, stream: bool
    ) -> dict[str, Any]:
        body: dict[str, Any] = {
            "model": self.model,
            "messages": [dict(m) for m in messages],
            "temperature": temperature,
            "stream": stream,
        }
        if max_tokens is not None:
            body["max_tokens"] = max_tokens
        return body

    def chat(
        self,
        messages: Sequence[Message],
        *,
        temperature: float = 0.1,
        max_tokens: int | None = None,
    ) -> str:
        """The whole reply; raises ModelError on transport, status or body errors."""
        body = self._body(messages, temperature, max_tokens, stream=False)
        try:
            resp = self._client.post("/chat/completions", json=body)
        except httpx.HTTPError as exc:
            raise ModelError(f"chat endpoint unreachable: {exc}") from exc
        if resp.status_code != 200:
            raise ModelError(f"chat endpoint returned {resp.status_code}: {_snippet(resp.text)}")
        try:
            content = resp.json()["choices"][0]["message"].get("content")
        except (KeyError, IndexError, TypeError, ValueError) as exc:
            raise ModelError(f"chat endpoint sent an unexpected body: {_snippet(resp.text)}") from exc
        return content or ""

    def stream(
        self,
        messages: Sequence[Message],
        *,
        temperature: float = 0.1,
        max_tokens: int | None = None,
    ) -> Iterator[str]:
        """Reply pieces from the SSE stream (``data: {...}`` lines, ending ``data: [DONE]``)."""
        body = self._body(messages, temperature, max_tokens, stream=True)
        try:
            with self._client.stream("POST", "/chat/completions", json=body) as resp:
                if resp.status_code != 200:
                    resp.read()
                    raise ModelError(f"chat endpoint returned {resp.status_code}: {_snippet(resp.text)}")
                yield from _sse_deltas(resp.iter_lines())
        except httpx.HTTPError as exc:
            raise ModelError(f"chat endpoint failed while streaming: {exc}") from exc


def _sse_deltas(lines: Iterator[str]) -> Iterator[str]:
    for line in lines:
        if not line.startswith("data:"):
            continue  # blank separators, comments, event/id fields
        payload = line[5:].strip()
        if payload == "[DONE]":
            return
        try:
            event = json.loads(payload)
        except ValueError as exc:
            raise ModelError(f"chat stream sent a malformed event: {_snippet(payload)}") from exc
        if not isinstance(event, dict):
            raise ModelError(f"chat stream sent a malformed event: {_snippet(payload)}")
        if event.get("error"):
            detail = _snippet(json.dumps(event["error"]))
            raise ModelError(f"chat stream reported an error: {detail}")
        choices = event.get("choices") or []
        if choices:
            text = (choices[0].get("delta") or {}).get("content")
            if text:
                yield text
