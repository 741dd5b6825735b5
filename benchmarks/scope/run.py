"""The applicability scope measured (issue 27): an after-sales assistant over the manuals of several
device models and firmware ranges, asked questions that name the model and firmware, that name
neither (then answer the clarifying question), that name only the model, and that name a model or a
firmware no manual covers.

    PYTHONPATH=src .venv/bin/python benchmarks/scope/run.py [--out benchmarks/scope/results.json]

Everything is generated here (seeded): 7 manuals of 5 models (two models with one manual per
firmware range, one manual covering two model names), whose procedures say "the appliance", never
the model (as real manuals do), so only the scope tells them apart. The same questions go to an
assistant with the scope (``model`` equal with an alias, ``firmware`` range) and to one without it
(the baseline: today's behaviour). Counted per question kind: clarifications, in-scope answers
(citing only the right manual, and containing the expected fact), gaps, and answers from another
model's manual. Answers are extractive (no chat model), on the shipped embedding model.
"""

from __future__ import annotations

import argparse
import json
import random
import tempfile
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ragloom.config import Settings
from ragloom.context import Context, Principal
from ragloom.db.models import Document
from ragloom.schemas.assistants import AssistantCreate
from ragloom.schemas.chats import CompletionRequest
from ragloom.schemas.datasets import KBCreate
from ragloom.service import knowledgebases
from ragloom.service.accounts import identity
from ragloom.service.chat import assistants, completion
from ragloom.service.documents import catalog
from ragloom.worker import run_until

BUTTONS = ["red", "blue", "green", "yellow", "white", "black", "orange"]
AGENTS = ["citric acid", "white vinegar", "the supplied descaling tablets", "lactic acid", "sulfamic acid",
          "a descaling powder", "the blue descaler"]
MEANINGS = ["the water tank is empty", "the boiler is overheating", "the pump is blocked", "the lid is open",
            "the filter is clogged", "the sensor is faulty", "the drain hose is kinked"]


@dataclass(frozen=True)
class Manual:
    name: str
    models: tuple[str, ...]
    firmware: str  # a version range
    reset_seconds: int
    button: str
    descale_days: int
    agent: str
    e4: str
    part: str

    def text(self) -> str:
        return (f"Service manual\n\nModel {' / '.join(self.models)}, firmware {self.firmware}.\n\n"
                f"Resetting the appliance\n\nTo reset the appliance, hold the {self.button} button for "
                f"{self.reset_seconds} seconds until the display blinks.\n\n"
                f"Descaling\n\nDescale the appliance every {self.descale_days} days with {self.agent}.\n\n"
                f"Error codes\n\nError E4 means {self.e4}.\n\n"
                f"Spare parts\n\nThe replacement water filter has part number {self.part}.\n")

    def metadata(self) -> dict[str, Any]:
        return {"model": list(self.models) if len(self.models) > 1 else self.models[0], "firmware": self.firmware}


def manuals(rng: random.Random) -> list[Manual]:
    specs = [("a10-fw1", ("A10",), ">=1.0,<2"), ("a10-fw2", ("A10",), ">=2.0,<3"), ("a20", ("A20",), ">=1.0,<3"),
             ("a30", ("A30",), ">=2.0,<4"), ("b5-fw1", ("B5",), ">=1.0,<2"), ("b5-fw2", ("B5",), ">=2.0,<3"),
             ("b7", ("B7", "B7X"), ">=1.0,<3")]
    buttons, agents, meanings = rng.sample(BUTTONS, 7), rng.sample(AGENTS, 7), rng.sample(MEANINGS, 7)
    seconds, days = rng.sample(range(3, 30), 7), rng.sample(range(14, 120), 7)
    return [Manual(f"{name}.txt", models, fw, seconds[i], buttons[i], days[i], agents[i], meanings[i],
                   f"F-{rng.randrange(1000, 9999)}") for i, (name, models, fw) in enumerate(specs)]


# (question template, the manual's fact the answer must contain)
ASKS = [("How do I reset {s}?", lambda m: f"{m.reset_seconds} seconds"),
        ("What does error E4 mean on {s}?", lambda m: m.e4),
        ("What is the part number of the replacement water filter for {s}?", lambda m: m.part),
        ("Which product do I descale {s} with?", lambda m: m.agent)]
ALIASES = {"aqua mini": "A10", "brew pro": "B7"}


@dataclass
class Case:
    kind: str  # named | variant | no-model (then answered) | model-only (then answered) | unknown-model | unknown-fw
    turns: list[str]  # the user's messages, in order
    manual: Manual | None  # the manual that answers (None: a gap)
    fact: str | None


def cases(ms: list[Manual], rng: random.Random) -> list[Case]:
    out: list[Case] = []
    by_name = {m.name: m for m in ms}

    def version_in(m: Manual) -> str:
        low = float(m.firmware.split(",")[0][2:])
        return f"{low + rng.choice([0.1, 0.3, 0.5, 0.8]):.1f}"

    for m in ms:
        for template, fact in ASKS:
            fw = version_in(m)
            model = m.models[-1]
            out.append(Case("named", [template.format(s=f"my {model} with firmware {fw}")], m, fact(m)))
            variant = {"A10": "a-10", "A20": "a 20", "A30": "a30", "B5": "b-5", "B7": "Brew Pro", "B7X": "b7x"}[model]
            out.append(Case("variant", [template.format(s=f"the {variant} (fw v{fw})")], m, fact(m)))
            out.append(Case("no-model", [template.format(s="the appliance"),
                                         f"It is an {model}, firmware {fw}"], m, fact(m)))
            out.append(Case("model-only", [template.format(s=f"my {model}"), f"firmware {fw}"], m, fact(m)))
    for template, _ in ASKS:
        for model in ("A40", "C3"):
            out.append(Case("unknown-model", [template.format(s=f"my {model} with firmware 1.2")], None, None))
        m = by_name["a20.txt"]
        out.append(Case("unknown-firmware", [template.format(s="my A20 with firmware 7.1")], m, None))
    return out


def run(ctx: Context, principal: Principal, assistant: str, case: Case) -> dict[str, Any]:
    session = None
    replies = []
    for text in case.turns:
        prepared = completion.prepare(ctx, principal=principal, assistant_id=assistant,
                                request=CompletionRequest(question=text, session_id=session))
        reply = completion.complete(ctx, principal=principal, prepared=prepared)
        session = reply.session_id
        replies.append(reply)
        status = reply.explain.scope.status if reply.explain.scope is not None else "none"
        if status != "clarify":
            break
    statuses = [r.explain.scope.status if r.explain.scope is not None else "none" for r in replies]
    last = replies[-1]
    cited = {r.document_name for r in last.references}
    return {"kind": case.kind, "turns": case.turns[:len(replies)], "statuses": statuses, "answer": last.answer,
            "cited": sorted(cited), "expected": case.manual.name if case.manual else None,
            "fact_found": bool(case.fact and case.fact.lower() in last.answer.lower())}


def outcome(case: Case, row: dict[str, Any], scoped: bool) -> str:
    """What happened, as counted: clarified-then-answered, answered (right manual / fact), gap, wrong manual."""
    cited, expected = set(row["cited"]), row["expected"]
    if row["statuses"][-1] == "gap":
        return "gap"
    if row["statuses"][-1] == "clarify":
        return "clarify (unanswered)"
    if not cited:
        return "no answer"
    if case.fact is None:  # a gap question answered: from a neighbour's manual
        return "answered from another manual"
    if cited == {expected}:
        return "in scope, fact found" if row["fact_found"] else "in scope, fact missing"
    if expected in cited:
        return "mixed manuals"
    return "answered from another manual"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", type=Path, default=Path(__file__).with_name("results.json"))
    args = parser.parse_args()
    rng = random.Random(27)
    ms = manuals(rng)
    all_cases = cases(ms, rng)
    with tempfile.TemporaryDirectory() as tmp:
        ctx = Context(Settings(home=Path(tmp) / "home", _env_file=None))
        ctx.init_storage()
        with ctx.db.session() as s:
            principal = identity.bootstrap(s).principal
            kb = knowledgebases.create(ctx, s, principal=principal, spec=KBCreate(name="manuals")).id
            docs = catalog.add_documents(ctx, s, principal=principal, kb_id=kb, uploads=[
                catalog.Upload(filename=m.name, data=m.text().encode()) for m in ms])
            for doc, m in zip(docs, ms, strict=True):
                catalog.set_metadata(s, principal=principal, kb_id=kb, doc_id=doc.id, changes=m.metadata())
            doc_ids = [d.id for d in docs]

        def done() -> bool:
            with ctx.db.session() as s:
                return all(s.get(Document, d).status in ("done", "failed") for d in doc_ids)  # type: ignore[union-attr]

        run_until(ctx, done, poll=0.05)
        scope = {"keys": [{"key": "model", "aliases": ALIASES},
                          {"key": "firmware", "match": "range", "names": ["fw"]}]}
        with ctx.db.session() as s:
            for name, extra in (("scoped", {"scope": scope}), ("baseline", {})):
                assistants.create(ctx, s, principal=principal, spec=AssistantCreate.model_validate(
                    {"name": name, "dataset_ids": [kb], **extra}))
        report: dict[str, Any] = {"manuals": len(ms), "questions": len(all_cases), "assistants": {}}
        rows_out: dict[str, list[dict[str, Any]]] = {}
        for name in ("scoped", "baseline"):
            table: dict[str, Counter[str]] = defaultdict(Counter)
            clarifications = 0
            rows = []
            for case in all_cases:
                row = run(ctx, principal, name, case)
                row["outcome"] = outcome(case, row, name == "scoped")
                clarifications += row["statuses"].count("clarify")
                table[case.kind][row["outcome"]] += 1
                rows.append(row)
            report["assistants"][name] = {"clarifying_questions": clarifications,
                                          "by_kind": {k: dict(v) for k, v in table.items()}}
            rows_out[name] = rows
        ctx.close()
    args.out.write_text(json.dumps({**report, "rows": rows_out}, indent=1, ensure_ascii=False) + "\n")
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
