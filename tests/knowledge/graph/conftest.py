"""Fixtures of the knowledge-graph tests: one analyser, a fake OpenAI-compatible server, its chat model."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from ragloom.models.chat import OpenAIChatModel
from ragloom.nlp import Analyzer
from tests.fakes.openai_server import FakeOpenAIServer


@pytest.fixture(scope="session")
def analyzer() -> Analyzer:
    return Analyzer()


@pytest.fixture
def server() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer() as fake:
        yield fake


@pytest.fixture
def chat(server: FakeOpenAIServer) -> Iterator[OpenAIChatModel]:
    model = OpenAIChatModel(server.base_url, "fake-chat")
    yield model
    model.close()
