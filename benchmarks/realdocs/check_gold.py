"""Check the real-document QA set against its PDFs: every gold answer of a query occurs in one of its
gold documents (after the same normalisation ``ragloom eval --answers`` compares with), every corpus
file opens, and the set loads. Reads the corpus from ``../shared/corpus`` (or the directory given).

    .venv/bin/python benchmarks/realdocs/check_gold.py [CORPUS_ROOT]
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path

import pypdfium2 as pdfium

from ragloom.evaluation import load_dataset
from ragloom.evaluation.answers import normalise

HERE = Path(__file__).resolve().parent
DEFAULT_ROOT = HERE.parents[1].parent / "shared" / "corpus"


def pdf_text(path: Path) -> str:
    doc = pdfium.PdfDocument(str(path))
    try:
        return "\n".join(doc[i].get_textpage().get_text_range() for i in range(len(doc)))
    finally:
        doc.close()


def main(root: Path) -> int:
    data = load_dataset(HERE, corpus_root=root)
    texts = {c.id: normalise(pdf_text(c.path)) for c in data.corpus if c.path is not None}
    problems = 0
    for q in data.queries:
        if q.unanswerable:
            continue
        for gold in q.answers:
            if not any(normalise(gold) in texts[r] for r in q.relevant):
                print(f"{q.id}: gold answer {gold!r} not found in {sorted(q.relevant)}")
                problems += 1
    kinds = Counter("unanswerable" if q.unanswerable else
                    "zh" if any("\u4e00" <= ch <= "\u9fff" for ch in q.query) else "answerable" for q in data.queries)
    print(f"{len(data.queries)} queries ({dict(kinds)}), {len(data.corpus)} documents, {problems} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("corpus_root", nargs="?", type=Path, default=DEFAULT_ROOT, help="default: ../shared/corpus")
    sys.exit(main(ap.parse_args().corpus_root))
