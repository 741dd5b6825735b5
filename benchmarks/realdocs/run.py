"""Run the real-document QA set as ``ragloom eval --answers`` does, and break the scores down by the
questions' ``kind`` (fact, title, table, list, zh, unanswerable), with every query's answer.

    .venv/bin/python benchmarks/realdocs/run.py [--corpus ../shared/corpus] [--out realdocs.json]

The data directory is ``RAGLOOM_HOME`` (as for the CLI); a scratch knowledge base is made and dropped.
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict
from pathlib import Path
from typing import Any

from ragloom.config import Settings
from ragloom.context import Context
from ragloom.evaluation import run_eval
from ragloom.service.accounts import identity

HERE = Path(__file__).resolve().parent
MODES = ("keyword", "vector", "hybrid")


def by_kind(out: dict[str, Any]) -> dict[str, dict[str, float]]:
    kinds = {}
    for line in (HERE / "queries.jsonl").read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        kinds[row["id"]] = row.get("kind", "?")
    hybrid = next(m for m in out["modes"] if m["mode"] == "hybrid")
    per_query = {o["id"]: o for o in hybrid.get("per_query", [])}
    groups: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for o in out["answers"]["answerers"][0]["per_query"]:
        groups[kinds[o["id"]]].append(o)
    table = {}
    for kind, rows in groups.items():
        table[kind] = {"n": len(rows), "correct": sum(o["correct"] for o in rows) / len(rows),
                       "refused": sum(o["refused"] for o in rows) / len(rows),
                       "gold_in_evidence": sum(o.get("gold_in_evidence", False) for o in rows) / len(rows),
                       "no_evidence": sum(o.get("evidence", 1) == 0 for o in rows) / len(rows)}
        ranked = [per_query[o["id"]] for o in rows if o["id"] in per_query]
        if ranked:
            table[kind]["nDCG@10"] = sum(r["ndcg"] for r in ranked) / len(ranked)
    return table


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, default=HERE.parents[1].parent / "shared" / "corpus")
    parser.add_argument("--out", type=Path, default=Path("realdocs.json"))
    args = parser.parse_args()
    ctx = Context(Settings())
    ctx.init_storage()
    try:
        with ctx.db.session() as s:
            principal = identity.bootstrap(s).principal
        report = run_eval(ctx, principal, HERE, modes=MODES, answers=True, corpus_root=args.corpus)
    finally:
        ctx.close()
    out = report.to_dict(per_query=True)
    out["by_kind"] = by_kind(out)
    args.out.write_text(json.dumps(out, indent=1, ensure_ascii=False), encoding="utf-8")
    for m in out["modes"]:
        print(m["mode"], {k: v for k, v in m.items() if k not in ("mode", "per_query")})
    ext = out["answers"]["answerers"][0]
    print("extractive", {k: ext.get(k) for k in ("accuracy", "unanswerable_refused", "refusal_rate", "gold_in_evidence",
                                                 "unanswerable_without_evidence", "citation_support",
                                                 "latency_p50_ms")})
    for kind, row in out["by_kind"].items():
        print(kind, {k: round(v, 3) for k, v in row.items()})


if __name__ == "__main__":
    main()
