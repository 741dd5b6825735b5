"""Chat LLMs behind one Protocol.

``OpenAIChatModel`` speaks the OpenAI-compatible ``POST {base_url}/chat/completions``
protocol (OpenAI, DeepSeek, Qwen, Ollama, vLLM, llama.cpp server, Xinference),
both as one response and as a server-sent-event stream.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

import httpx

from ragloom.errors import ConfigError, ModelError
from ragloom.models.http import api_client, reply_problem

Message = Mapping[str, str]


@dataclass(frozen=True, slots=True)
class Sampling:
    """Sampling parameters beyond the temperature; ``None`` leaves the endpoint's default."""

    top_p: float | None = None
    presence_penalty: float | None = None
    frequency_penalty: float | None = None


class Reply(str):
    """A reply (or the last piece of a stream) that knows why the model stopped: ``"stop"``,
    ``"length"`` (it reached ``max_tokens``), ``"content_filter"``...; ``None`` when not reported."""

    finish_reason: str | None

    def __new__(cls, text: str, finish_reason: str | None = None) -> Reply:
        reply = super().__new__(cls, text)
        reply.finish_reason = finish_reason
        return reply


def finish_reason(text: str) -> str | None:
    """Why the model stopped, for a :class:`Reply` (``None`` for a plain string)."""
    return text.finish_reason if isinstance(text, Reply) else None


@runtime_checkable
class ChatModel(Protocol):
    """A chat LLM.

    ``messages`` are ``{"role": ..., "content": ...}`` mappings (roles
    ``system``, ``user``, ``assistant``). ``chat`` returns the whole reply;
    ``stream`` yields the reply in pieces whose concatenation equals what
    ``chat`` would return. Both raise :class:`ragloom.errors.ModelError` when the
    model fails or cannot be reached. ``name`` identifies the model in answers.
    A model that knows why it stopped returns a :class:`Reply` from ``chat`` and makes the last
    piece of ``stream`` one (possibly empty).
    """

    name: str

    def chat(
        self,
        messages: Sequence[Message],
        *,
        temperature: float = 0.1,
        max_tokens: int | None = None,
        sampling: Sampling | None = None,
    ) -> str: ...

    def stream(
        self,
        messages: Sequence[Message],
        *,
        temperature: float = 0.1,
        max_tokens: int | None = None,
        sampling: Sampling | None = None,
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
        self, messages: Sequence[Message], temperature: float, max_tokens: int | None, sampling: Sampling | None,
        stream: bool,
    ) -> dict[str, Any]:
        body: dict[str, Any] = {
            "model": self.model,
            "messages": [dict(m) for m in messages],
            "temperature": temperature,
            "stream": stream,
        }
        if max_tokens is not None:
            body["max_tokens"] = max_tokens
        if sampling is not None:
            body.update({k: v for k, v in (("top_p", sampling.top_p), ("presence_penalty", sampling.presence_penalty),
                                           ("frequency_penalty", sampling.frequency_penalty)) if v is not None})
        return body

    def chat(
        self,
        messages: Sequence[Message],
        *,
        temperature: float = 0.1,
        max_tokens: int | None = None,
        sampling: Sampling | None = None,
    ) -> Reply:
        """The whole reply; raises ModelError on transport, status or body errors."""
        body = self._body(messages, temperature, max_tokens, sampling, stream=False)
        try:
            resp = self._client.post("/chat/completions", json=body)
        except httpx.HTTPError as exc:
            raise ModelError(f"chat endpoint unreachable: {exc}") from exc
        if resp.status_code != 200:
            raise ModelError(f"chat endpoint returned {resp.status_code}: {reply_problem(resp)}")
        try:
            choice = resp.json()["choices"][0]
            content = choice["message"].get("content")
            reason = choice.get("finish_reason")
        except (KeyError, IndexError, TypeError, ValueError, AttributeError) as exc:
            raise ModelError(f"chat endpoint answered {resp.status_code} with {reply_problem(resp)}") from exc
        return Reply(content or "", reason if isinstance(reason, str) else None)

    def stream(
        self,
        messages: Sequence[Message],
        *,
        temperature: float = 0.1,
        max_tokens: int | None = None,
        sampling: Sampling | None = None,
    ) -> Iterator[str]:
        """Reply pieces from the SSE stream (``data: {...}`` lines, ending ``data: [DONE]``); the last
        one is a :class:`Reply` with the finish reason when the stream reported one."""
        body = self._body(messages, temperature, max_tokens, sampling, stream=True)
        try:
            with self._client.stream("POST", "/chat/completions", json=body) as resp:
                if resp.status_code != 200:
                    resp.read()
                    raise ModelError(f"chat endpoint returned {resp.status_code}: {reply_problem(resp)}")
                yield from _sse_deltas(resp.iter_lines())
        except httpx.HTTPError as exc:
            raise ModelError(f"chat endpoint failed while streaming: {exc}") from exc


def _sse_deltas(lines: Iterator[str]) -> Iterator[str]:
    reason: str | None = None
    for line in lines:
        if not line.startswith("data:"):
            continue  # blank separators, comments, event/id fields
        payload = line[5:].strip()
        if payload == "[DONE]":
            break
        try:
            event = json.loads(payload)
        except ValueError as exc:
            raise ModelError(f"chat stream sent a malformed event ({len(payload)} characters, not JSON): not an "
                             "OpenAI-compatible reply") from exc
        if not isinstance(event, dict):
            raise ModelError("chat stream sent a malformed event (JSON, not an object): not an OpenAI-compatible "
                             "reply")
        if event.get("error"):
            detail = _snippet(json.dumps(event["error"]))
            raise ModelError(f"chat stream reported an error: {detail}")
        choices = event.get("choices") or []
        if choices:
            text = (choices[0].get("delta") or {}).get("content")
            if text:
                yield text
            if isinstance(choices[0].get("finish_reason"), str):
                reason = choices[0]["finish_reason"]
    if reason is not None:
        yield Reply("", reason)
