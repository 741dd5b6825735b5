"""Dependencies declared once as ``Annotated`` aliases."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request

from ragloom.errors import AuthenticationError
from ragloom.service import accounts
from ragloom.service.context import Context, Principal


def get_context(request: Request) -> Context:
    return request.app.state.ctx


ContextDep = Annotated[Context, Depends(get_context)]


def current_principal(request: Request, ctx: ContextDep) -> Principal:
    header = request.headers.get("authorization", "")
    scheme, _, key = header.partition(" ")
    if scheme.lower() != "bearer" or not key.strip():
        raise AuthenticationError("missing API key: send 'Authorization: Bearer <key>'")
    with ctx.db.session() as s:
        return accounts.authenticate(s, key.strip())


PrincipalDep = Annotated[Principal, Depends(current_principal)]
