"""Every score threshold of answer generation, in one place.

Scores are in [0, 1]. *Support* (citation verification, :func:`~ragloom.generation.citations.verify_citations`)
is 0.5 x calibrated vector similarity + 0.5 x term similarity of an answer sentence to its cited
chunk (term alone without an embedder), quartered when the sentence states a number the chunk
lacks. The extractive *score* is 0.7 x calibrated cosine(question, sentence) + 0.3 x term
similarity. "Calibrated" means 0 = as related as unrelated probe texts (see
:mod:`ragloom.generation.scoring`), so these values mean the same for any embedding model.

How the values were chosen (``benchmarks/answer_thresholds.py`` measures them): on the shipped
``builtin:en`` / ``builtin:zh`` sets every query was answered once from its relevant passage and
once from its nearest *non*-relevant passages (hard negatives: the same product family, the same
topic), and the answer sentences were verified against the right and against the wrong chunk.
"""

from __future__ import annotations

# --- citation verification --------------------------------------------------------------------
SUPPORTED = 0.5
"""Support from which a citation's verdict is ``supported``: correct citations of the shipped
sets score 0.55-1.0 (median about 0.8); a sentence cited to the wrong chunk of the same topic
rarely reaches 0.5."""
WEAK = 0.3
"""Support from which a citation is kept in the answer with the verdict ``weak`` (the chunk shares
the sentence's topic and some of its terms, not clearly its claim); below it the verdict is
``unsupported`` and the marker is removed (the reference system's insert-citation floor)."""
INSERT_MIN_SCORE = 0.45
"""A sentence the model left uncited gets a marker (then verified) from this similarity on."""

# --- extractive answers -----------------------------------------------------------------------
EXTRACTIVE_FLOOR = 0.3
"""The best sentence must score at least this (question-to-sentence) for any answer."""
EXTRACTIVE_RELATIVE = 0.75
"""Further sentences are quoted while they score at least this share of the best one."""
EXTRACTIVE_MIN_COVERAGE = 0.6
"""Share of the question's key-term weight (:mod:`ragloom.generation.keyterms`) the quoted
sentences must state (terms found only elsewhere in the cited chunks count half). Evidence that
shares the topic but not the subject ("IBM i Access Client Solutions" against a chunk about
DB2 for i) stays below it."""

EXTRACTIVE_MIN_NAMES = 1.0
"""Share of the question's names and codes (``HX-220``, ``IBM``, ``Access Client Solutions``:
:func:`~ragloom.generation.keyterms.name_terms`) the cited chunks must state."""

SUPPORTED_VERDICT, WEAK_VERDICT, UNSUPPORTED_VERDICT = "supported", "weak", "unsupported"


def verdict(support: float, weak: float = WEAK) -> str:
    """``supported`` / ``weak`` / ``unsupported`` for a support score (``weak``: the floor of
    ``weak``, the score below which a citation is removed)."""
    if support < weak:
        return UNSUPPORTED_VERDICT
    return SUPPORTED_VERDICT if support >= SUPPORTED else WEAK_VERDICT
