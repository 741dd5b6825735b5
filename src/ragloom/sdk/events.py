"""The events of a streamed answer (``Ragloom.answer_stream``) and of a streamed chat reply
(``Ragloom.chat_stream``): the text as the model writes it, then the finished, checked result.

An error after the stream started is raised by the iterator, as any other error."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ragloom.errors import RagloomError
from ragloom.schemas.answers import CitedAnswer
from ragloom.schemas.chats import ChatReply


@dataclass(frozen=True, slots=True)
class Delta:
    """A piece of the answer text, as the model writes it (before citations are checked)."""

    text: str


@dataclass(frozen=True, slots=True)
class AnswerFinal:
    """The finished answer with its references, after the last delta (``POST /answer``)."""

    answer: CitedAnswer


@dataclass(frozen=True, slots=True)
class ChatFinal:
    """The stored reply after the last delta (``POST /chats/{id}/completions``); its answer text
    replaces the streamed text (citations repaired, a refusal, ...)."""

    reply: ChatReply


AnswerEvent = Delta | AnswerFinal
ChatEvent = Delta | ChatFinal


def answer_event(event: dict[str, Any]) -> AnswerEvent:
    if "delta" in event:
        return Delta(str(event["delta"]))
    if "answer" in event:
        return AnswerFinal(CitedAnswer.model_validate(event["answer"]))
    raise RagloomError(f"unexpected event in the answer stream: {sorted(event)}")


def chat_event(event: dict[str, Any]) -> ChatEvent:
    if "delta" in event:
        return Delta(str(event["delta"]))
    if "reply" in event:
        return ChatFinal(ChatReply.model_validate(event["reply"]))
    raise RagloomError(f"unexpected event in the chat stream: {sorted(event)}")
