"""RAGFlow's document-metadata routes under ``/ragflow/api/v1`` (part of :mod:`ragloom.api.ragflow`'s
sub-application): the summary of a dataset's metadata and its batch update, on ragloom's documents
(:mod:`ragloom.service.documents.catalog`, each change audited as a metadata edit).

The batch update follows RAGFlow's documented semantics (its server differs, see the spec): no
``selector`` means every document of the dataset; ``document_ids`` and ``metadata_condition`` together
select the documents in both."""

from __future__ import annotations

from collections import Counter
from typing import Annotated, Any

from fastapi import APIRouter, Body, Query

from ragloom.api.deps import ContextDep, PrincipalDep
from ragloom.api.ragflow import API, _kb_method, fail
from ragloom.context import Context, Principal
from ragloom.errors import NotFoundError
from ragloom.schemas.ragflow import DATA_ERROR, RFResult
from ragloom.service.documents import catalog

router = APIRouter(prefix=API, tags=["metadata"])

MAX_DOCUMENTS = 100_000


def _type(values: list[Any]) -> str:
    if any(isinstance(v, list) for v in values):
        return "list"
    if values and all(isinstance(v, int | float) and not isinstance(v, bool) for v in values):
        return "number"
    return "string"


@router.get("/datasets/{dataset_id}/metadata/summary", summary="The dataset's metadata: each key's values")
def metadata_summary(
    dataset_id: str, ctx: ContextDep, principal: PrincipalDep,
    doc_ids: Annotated[str | None, Query(description="comma-separated: only these documents")] = None,
) -> RFResult[dict[str, Any]]:
    """``{"summary": {key: {"type", "values": [[value, documents], ...]}}}``, most frequent values first."""
    kb_id, _ = _kb_method(ctx, principal, dataset_id, missing=f"You don't own the dataset {dataset_id}. ")
    wanted = {d.strip() for d in (doc_ids or "").split(",") if d.strip()}
    with ctx.db.session() as s:
        docs, _ = catalog.list_documents(s, principal=principal, kb_id=kb_id, limit=MAX_DOCUMENTS)
        metas = [dict(d.meta or {}) for d in docs if not wanted or d.id in wanted]
    raw: dict[str, list[Any]] = {}
    for meta in metas:
        for key, value in meta.items():
            raw.setdefault(key, []).append(value)
    summary = {}
    for key, values in raw.items():
        counts: Counter[str | int | float] = Counter()
        for v in values:
            for item in (v if isinstance(v, list) else [v]):
                counts[item if isinstance(item, str | int | float) else str(item)] += 1
        summary[key] = {"type": _type(values), "values": [[v, n] for v, n in counts.most_common()]}
    return RFResult(data={"summary": summary})


# --- metadata_condition, evaluated on a document's metadata --------------------------------------


def _number(v: Any) -> float | None:
    try:
        return float(v)
    except (TypeError, ValueError):
        return None


def _holds(meta: dict[str, Any], cond: dict[str, Any]) -> bool:
    name, op, want = cond.get("name"), str(cond.get("comparison_operator", "")).strip(), cond.get("value")
    have = meta.get(str(name))
    items = have if isinstance(have, list) else [] if have is None else [have]
    texts = [str(x) for x in items]
    if op == "empty":
        return not texts or all(t == "" for t in texts)
    if op == "not empty":
        return any(t != "" for t in texts)
    if op in ("is", "=", "=="):
        return str(want) in texts
    if op in ("not is", "≠", "!="):
        return str(want) not in texts
    if op == "contains":
        return any(str(want) in t for t in texts)
    if op == "not contains":
        return not any(str(want) in t for t in texts)
    if op in ("in", "not in"):
        pool = {str(x) for x in (want if isinstance(want, list) else str(want).split(","))}
        found = any(t.strip() in pool for t in texts)
        return found if op == "in" else not found
    if op == "start with":
        return any(t.startswith(str(want)) for t in texts)
    if op == "end with":
        return any(t.endswith(str(want)) for t in texts)
    bound = _number(want)
    numbers = [n for n in (_number(x) for x in items) if n is not None]
    if bound is None or not numbers:
        return False
    compare = {">": float.__gt__, "<": float.__lt__, "≥": float.__ge__, ">=": float.__ge__, "≤": float.__le__,
               "<=": float.__le__}.get(op)
    if compare is None:
        fail(DATA_ERROR, f"Unsupported comparison operator: {op}")
    return any(compare(n, bound) for n in numbers)


def _selected(meta: dict[str, Any], condition: dict[str, Any]) -> bool:
    conditions = [c for c in condition.get("conditions") or [] if isinstance(c, dict)]
    if not conditions:
        return True
    results = [_holds(meta, c) for c in conditions]
    return all(results) if str(condition.get("logic", "and")).lower() == "and" else any(results)


def _apply(meta: dict[str, Any], updates: list[dict[str, Any]], deletes: list[dict[str, Any]]) -> dict[str, Any]:
    new = dict(meta)
    for u in updates:
        key, value, match = str(u["key"]), u["value"], u.get("match")
        if match not in (None, ""):
            current = new.get(key)
            if isinstance(current, list):
                new[key] = [value if str(x) == str(match) else x for x in current]
            elif current is not None and str(current) == str(match):
                new[key] = value
        else:
            new[key] = value
    for d in deletes:
        key = str(d["key"])
        if key not in new:
            continue
        if "value" in d and d["value"] is not None:
            current = new[key]
            if isinstance(current, list):
                new[key] = [x for x in current if str(x) != str(d["value"])]
            elif str(current) == str(d["value"]):
                del new[key]
        else:
            del new[key]
    return new


def _metadata_update(dataset_id: str, body: dict[str, Any], ctx: Context, principal: Principal) -> dict[str, int]:
    selector = body.get("selector", {})
    if selector is None:
        selector = {}
    if not isinstance(selector, dict):
        fail(DATA_ERROR, "selector must be an object.")
    updates, deletes = body.get("updates", []), body.get("deletes", [])
    if not isinstance(updates, list) or not isinstance(deletes, list):
        fail(DATA_ERROR, "updates and deletes must be lists.")
    if any(not isinstance(u, dict) or not u.get("key") or "value" not in u for u in updates):
        fail(DATA_ERROR, "Each update requires key and value.")
    if any(not isinstance(d, dict) or not d.get("key") for d in deletes):
        fail(DATA_ERROR, "Each delete requires key.")
    kb_id, _ = _kb_method(ctx, principal, dataset_id, missing=f"You don't own the dataset {dataset_id}. ")
    ids = selector.get("document_ids")
    condition = selector.get("metadata_condition") or {}
    if not isinstance(condition, dict):
        fail(DATA_ERROR, "metadata_condition must be an object.")
    matched = updated = 0
    with ctx.db.session() as s:
        if ids:
            docs, missing = [], []
            for i in ids:
                try:
                    docs.append(catalog.get(s, principal=principal, kb_id=kb_id, doc_id=str(i)))
                except NotFoundError:
                    missing.append(str(i))
            if missing:
                fail(DATA_ERROR, f"These documents do not belong to dataset {dataset_id}: {', '.join(missing)}")
        else:
            docs, _ = catalog.list_documents(s, principal=principal, kb_id=kb_id, limit=MAX_DOCUMENTS)
        for doc in docs:
            meta = dict(doc.meta or {})
            if not _selected(meta, condition):
                continue
            matched += 1
            new = _apply(meta, updates, deletes)
            if new != meta:
                changes: dict[str, Any] = {k: None for k in meta if k not in new}
                changes.update({k: v for k, v in new.items() if meta.get(k) != v})
                catalog.set_metadata(s, principal=principal, kb_id=kb_id, doc_id=doc.id, changes=changes)
                updated += 1
    return {"updated": updated, "matched_docs": matched}


@router.post("/datasets/{dataset_id}/metadata/update", summary="Update many documents' metadata at once")
def metadata_update(dataset_id: str, ctx: ContextDep, principal: PrincipalDep,
                    body: Annotated[dict[str, Any], Body()]) -> RFResult[dict[str, int]]:
    """``selector`` (``document_ids`` and/or ``metadata_condition`` ``{logic, conditions: [{name,
    comparison_operator, value}]}``; none: every document), ``updates`` ``[{key, value, match?}]`` (with
    ``match``: only where the value is ``match``; in a list, that element) and ``deletes`` ``[{key,
    value?}]`` (with ``value``: only that value)."""
    return RFResult(data=_metadata_update(dataset_id, body, ctx, principal))
