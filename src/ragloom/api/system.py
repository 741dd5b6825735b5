"""/health: is the server up, and can its workers run tasks. Anyone sees the status (for load
balancers and monitors); the workers and the queue — how busy the server is, which says something of
other workspaces' activity — only a caller with an API key or a web session."""

from __future__ import annotations

from fastapi import APIRouter, Request, Response

from ragloom import __version__
from ragloom.api.deps import ContextDep, authenticate
from ragloom.context import Context
from ragloom.schemas.system import Health, HealthStatus, QueueState, WorkerState
from ragloom.service.system import worker_health
from ragloom.web import cookies

router = APIRouter(tags=["system"])


@router.get("/health", responses={503: {"model": Health,
                                        "description": "no worker can run tasks: uploads would wait forever"}})
def health(request: Request, response: Response, ctx: ContextDep) -> Health:
    """Liveness of the API and of the ingestion workers (any machine sharing the DB).

    ``status``: ``ok``; ``degraded`` when fewer workers than expected are alive (a dead one
    is being replaced); ``unavailable`` (HTTP 503) when no worker is alive, so queued
    documents cannot make progress. No tenant data is shown; ``workers`` and ``queue`` only to a
    caller with an API key or a web session (an unknown key is a 401).
    """
    detailed = _signed_in(request, ctx)
    pool = getattr(request.app.state, "pool", None)
    workers = worker_health(ctx)
    pool_status = pool.status() if pool is not None else None
    expected = pool_status.expected if pool_status is not None else None
    status: HealthStatus
    if not workers.alive:
        status = "unavailable"
    elif expected is not None and workers.alive < expected:
        status = "degraded"
    else:
        status = "ok"
    if status == "unavailable":
        response.status_code = 503
    return Health(
        status=status,
        version=__version__,
        workers=None if not detailed else WorkerState(
            alive=workers.alive,
            expected=expected,
            busy=workers.busy,
            restarts=pool_status.restarts if pool_status is not None else None,
            last_exits=pool_status.last_exits if pool_status is not None else [],
        ),
        queue=None if not detailed else QueueState(
            queued=workers.queued, running=workers.running, oldest_queued_seconds=workers.oldest_queued_seconds,
            builds_queued=workers.builds_queued, builds_running=workers.builds_running),
        message="no ingestion worker is alive: uploads wait until one starts (ragloom worker)"
        if status == "unavailable" else None,
    )


def _signed_in(request: Request, ctx: Context) -> bool:
    """Whether the request carries an API key or a session (``AuthenticationError`` for an unknown one)."""
    header = request.headers.get("authorization", "")
    token = cookies.session_token(request.cookies, secure=cookies.is_secure(request.scope, ctx.settings.cookie_secure))
    if not header and not token:
        return False
    authenticate(ctx, header, token)
    return True
