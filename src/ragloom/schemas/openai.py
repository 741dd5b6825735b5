"""OpenAI's chat completions and models API as ragloom serves it (``/v1/chat/completions``,
``/v1/models``): the request, the reply, its stream's chunks, the model list and OpenAI's error body."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from ragloom.schemas.chats import ChatAnswer

MAX_MESSAGES = 200


class _Request(BaseModel):
    # OpenAI clients send parameters ragloom does not use (n, seed, tools...): ignored, not refused.
    model_config = ConfigDict(extra="ignore")


class ContentPart(_Request):
    type: str = Field(description="only 'text' parts are read; other parts are ignored")
    text: str | None = None


class ChatMessageIn(_Request):
    role: Literal["system", "developer", "user", "assistant", "tool", "function"]
    content: str | list[ContentPart] | None = Field(None, description="text, or content parts (their text)")

    def text(self) -> str:
        if isinstance(self.content, list):
            return "".join(p.text or "" for p in self.content if p.type == "text")
        return self.content or ""


class StreamOptions(_Request):
    include_usage: bool = Field(False, description="send a last chunk with the usage (and usage: null on the others)")


class ChatCompletionRequest(_Request):
    """OpenAI's chat completion request; ``model`` is an assistant's id or name."""

    model: str = Field(min_length=1, max_length=255, description="an assistant's id or name (the caller's tenant)")
    messages: list[ChatMessageIn] = Field(min_length=1, max_length=MAX_MESSAGES,
                                          description="the conversation; the last one is the user's question")
    stream: bool = False
    stream_options: StreamOptions | None = None
    temperature: float | None = Field(None, ge=0.0, le=2.0, description="overrides the assistant's")
    top_p: float | None = Field(None, ge=0.0, le=1.0, description="overrides the assistant's")
    presence_penalty: float | None = Field(None, ge=-2.0, le=2.0, description="overrides the assistant's")
    frequency_penalty: float | None = Field(None, ge=-2.0, le=2.0, description="overrides the assistant's")
    max_tokens: int | None = Field(None, ge=1, le=32768, description="overrides the assistant's max_tokens")
    max_completion_tokens: int | None = Field(None, ge=1, le=32768, description="the same as max_tokens")
    user: str | None = Field(None, description="accepted and ignored")


class _Reply(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Usage(_Reply):
    prompt_tokens: int
    completion_tokens: int
    total_tokens: int


class ChatMessageOut(_Reply):
    role: Literal["assistant"]
    content: str
    reference: ChatAnswer = Field(description="ragloom's extra field: the answer's references, citations and notes "
                                  "(the chat completions reply's payload, nothing stored)")


class ChatChoice(_Reply):
    index: int
    message: ChatMessageOut
    finish_reason: Literal["stop", "length"]


class ChatCompletion(_Reply):
    """OpenAI's ``chat.completion``."""

    id: str
    object: Literal["chat.completion"]
    created: int
    model: str = Field(description="the model asked for (the assistant's id or name)")
    choices: list[ChatChoice]
    usage: Usage


class ChunkDelta(_Reply):
    role: Literal["assistant"] | None = None
    content: str | None = None


class ChunkChoice(_Reply):
    index: int
    delta: ChunkDelta
    finish_reason: Literal["stop", "length"] | None


class ChatCompletionChunk(_Reply):
    """OpenAI's ``chat.completion.chunk`` (the stream's events)."""

    id: str
    object: Literal["chat.completion.chunk"]
    created: int
    model: str
    choices: list[ChunkChoice]
    usage: Usage | None = Field(None, description="present with stream_options.include_usage: null but on the "
                                "last chunk (whose choices are empty)")
    reference: ChatAnswer | None = Field(None, description="ragloom's extra field, on the finish_reason chunk only")


class ModelCard(_Reply):
    id: str = Field(description="the assistant's id")
    object: Literal["model"]
    created: int
    owned_by: str
    name: str = Field(description="ragloom's extra field: the assistant's name (also accepted as model)")


class ModelList(_Reply):
    """OpenAI's model list: the caller's assistants."""

    object: Literal["list"]
    data: list[ModelCard]


class OpenAIErrorDetail(_Reply):
    message: str
    type: str = Field(examples=["invalid_request_error"])
    param: str | None = Field(examples=["model"])
    code: str | None = Field(examples=["model_not_found"])


class OpenAIError(_Reply):
    """OpenAI's error body."""

    error: OpenAIErrorDetail
