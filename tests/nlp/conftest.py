from __future__ import annotations

import pytest

from ragloom.nlp import Analyzer, TermWeigher


@pytest.fixture(scope="session")
def analyzer() -> Analyzer:
    return Analyzer()


@pytest.fixture(scope="session")
def weigher(analyzer: Analyzer) -> TermWeigher:
    return TermWeigher(analyzer)
