"""Retrieval and extractive answers per knowledge-base language, with and without the language's analysis.

    .venv/bin/python benchmarks/multilingual_eval.py                 # every set of benchmarks/multilingual/
    .venv/bin/python benchmarks/multilingual_eval.py --languages de,ja

For each language's set in ``benchmarks/multilingual/<code>/`` (written by the team for ragloom: invented
manuals, policies, timetables and facts, with look-alike codes, keyword distractors, inflected and
paraphrased questions; see its README) the corpus is ingested twice into scratch knowledge bases — in
its own language, and as English (``--language en``: the analysis every language had before its own) —
and nDCG@10 of keyword, vector and hybrid retrieval and the extractive answers' accuracy are printed
side by side. The vector side is the same in both: the embedding model is multilingual.
"""

from __future__ import annotations

import argparse
import logging
import os
import tempfile
from pathlib import Path

from rich.console import Console
from rich.table import Table

SETS = Path(__file__).parent / "multilingual"
MODES = ("keyword", "vector", "hybrid")


def measure(directory: Path, language: str) -> dict[str, float]:
    from ragloom.config import Settings
    from ragloom.context import Context
    from ragloom.evaluation import run_eval
    from ragloom.service.accounts import identity

    with tempfile.TemporaryDirectory() as home:
        ctx = Context(Settings(home=Path(home)))
        ctx.init_storage()
        try:
            with ctx.db.session() as s:
                principal = identity.bootstrap(s).principal
            report = run_eval(ctx, principal, directory, modes=MODES, answers=True, language=language).to_dict()
        finally:
            ctx.close()
    out = {m["mode"]: float(m["nDCG@10"]) for m in report["modes"]}
    answerers = report.get("answers", {}).get("answerers", [])
    if answerers:
        out["answers"] = float(answerers[0]["accuracy"])
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    found = sorted(p.name for p in SETS.iterdir() if (p / "queries.jsonl").is_file())
    parser.add_argument("--languages", default=",".join(found), help=f"comma-separated, of: {', '.join(found)}")
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)
    table = Table(title=f"nDCG@10 and extractive answer accuracy per language ({os.cpu_count()} cores)")
    for col in ("set", "analysis", *MODES, "answers"):
        table.add_column(col)
    for code in args.languages.split(","):
        for language, label in ((code, f"{code} (its own)"), ("en", "en (before)")):
            got = measure(SETS / code, language)
            table.add_row(code, label, *(f"{got.get(m, float('nan')):.3f}" for m in (*MODES, "answers")))
    Console().print(table)


if __name__ == "__main__":
    main()
