"""A minimal status page at ``/``: queue and document counts, refreshed every few seconds."""

from __future__ import annotations

import html
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse
from sqlalchemy import func, select

from ragloom import __version__
from ragloom.db.models import Document, KnowledgeBase, Task

router = APIRouter(include_in_schema=False)


def system_status(ctx) -> dict[str, Any]:  # type: ignore[no-untyped-def]
    """Counts only: no names or contents of any tenant."""
    with ctx.db.session() as s:
        tasks = dict(s.execute(select(Task.status, func.count()).group_by(Task.status)).all())
        docs = dict(s.execute(select(Document.status, func.count()).group_by(Document.status)).all())
        kbs = s.scalar(select(func.count()).select_from(KnowledgeBase)) or 0
    return {"version": __version__, "knowledge_bases": kbs, "documents": docs, "tasks": tasks}


@router.get("/", response_class=HTMLResponse)
def status_page(request: Request) -> str:
    st = system_status(request.app.state.ctx)

    def table(title: str, counts: dict[str, int]) -> str:
        rows = "".join(f"<tr><td>{html.escape(k)}</td><td>{v}</td></tr>" for k, v in sorted(counts.items()))
        return f"<h2>{title}</h2><table>{rows or '<tr><td>none</td></tr>'}</table>"

    return f"""<!doctype html><html><head><meta charset="utf-8"><title>ragloom</title>
<meta http-equiv="refresh" content="3">
<style>body{{font-family:system-ui,sans-serif;margin:2rem;max-width:40rem}}
td{{padding:.2rem 1rem;border-bottom:1px solid #ddd}}</style></head><body>
<h1>ragloom {html.escape(st['version'])}</h1>
<p>Knowledge bases: {st['knowledge_bases']} · API: <a href="/docs">/docs</a> · health:
<a href="/api/v1/health">/api/v1/health</a></p>
{table('Documents by status', st['documents'])}{table('Tasks by status', st['tasks'])}
</body></html>"""


@router.get("/status.json")
def status_json(request: Request) -> dict[str, Any]:
    return system_status(request.app.state.ctx)
