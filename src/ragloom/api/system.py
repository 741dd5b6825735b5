"""/health: is the server up, and can its workers run tasks."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request, Response

from ragloom import __version__
from ragloom.api.deps import ContextDep
from ragloom.service import workers

router = APIRouter(tags=["system"])


@router.get("/health", responses={503: {"description": "no worker can run tasks: uploads would wait forever"}})
def health(request: Request, response: Response, ctx: ContextDep) -> dict[str, Any]:
    """Liveness of the API and of the ingestion workers (any machine sharing the DB).

    ``status``: ``ok``; ``degraded`` when fewer workers than expected are alive (a dead one
    is being replaced); ``unavailable`` (HTTP 503) when no worker is alive, so queued
    documents cannot make progress. No tenant data is shown.
    """
    pool = getattr(request.app.state, "pool", None)
    with ctx.db.session() as s:
        alive = workers.alive(s, ctx.settings)
        queue = workers.queue_state(s)
    pool_status = pool.status() if pool is not None else None
    expected = pool_status.expected if pool_status is not None else None
    if not alive:
        status = "unavailable"
    elif expected is not None and len(alive) < expected:
        status = "degraded"
    else:
        status = "ok"
    if status == "unavailable":
        response.status_code = 503
    return {
        "status": status,
        "version": __version__,
        "workers": {
            "alive": len(alive),
            "expected": expected,
            "busy": sum(1 for w in alive if w.task_id),
            "restarts": pool_status.restarts if pool_status is not None else None,
            "last_exits": pool_status.last_exits if pool_status is not None else [],
        },
        "queue": {"queued": queue.queued, "running": queue.running,
                  "oldest_queued_seconds": queue.oldest_queued_seconds},
        **({"message": "no ingestion worker is alive: uploads wait until one starts (ragloom worker)"}
           if status == "unavailable" else {}),
    }
