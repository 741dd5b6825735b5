"""Server administration of accounts, on the data directory itself (the server's machine, as the
user who runs it): ``users list``, ``users password`` (reset a password), ``users signup open|closed``."""

from __future__ import annotations

import sys
from typing import Annotated, Any

import typer

from ragloom.cli._app import CliTable, app, emit, state
from ragloom.errors import InvalidRequestError

users_app = typer.Typer(help="Accounts (server administration, on the data directory).", no_args_is_help=True)
app.add_typer(users_app, name="users")


def _local() -> None:
    if state.url:
        raise InvalidRequestError("`ragloom users` administers the data directory: run it on the server, "
                                  "without --url")


@users_app.command("list")
def users_list() -> None:
    """Every account: e-mail address, name, server administrator or not, workspaces."""
    from ragloom.service.accounts import signin, workspaces

    _local()
    ctx = state.context()
    with ctx.db.session() as s:
        rows = [(u, workspaces.of_user(s, u.id)) for u in signin.users(s)]
        data: list[dict[str, Any]] = [{"id": u.id, "email": u.email, "name": u.name, "is_admin": u.is_superuser,
                 "has_password": u.password_hash is not None,
                 "workspaces": [{"id": t.id, "name": t.name, "role": r} for t, r in spaces]} for u, spaces in rows]
    table = CliTable("email", "name", "admin", "password", "workspaces")
    for d in data:
        table.add_row(d["email"], d["name"], "yes" if d["is_admin"] else "", "set" if d["has_password"] else "none",
                      ", ".join(f"{w['name']} ({w['role']})" for w in d["workspaces"]))
    emit(data, table)


@users_app.command("password")
def users_password(
    email: Annotated[str, typer.Argument(help="The account's e-mail address.")],
    password_stdin: Annotated[bool, typer.Option("--password-stdin", help="Read the new password from stdin "
                                                 "(else a random one is made and shown once).")] = False,
) -> None:
    """Reset an account's password (every web session of it ends)."""
    from ragloom.service.accounts import signin

    _local()
    given = sys.stdin.readline().rstrip("\n") if password_stdin else None
    ctx = state.context()
    with ctx.db.session() as s:
        plain = signin.reset_password(s, email=email, password=given)
    emit({"email": email, "password": None if given else plain},
         f"Password of {email} reset." + ("" if given else f" New password (shown once): [bold]{plain}[/]"))


@users_app.command("signup")
def users_signup(
    mode: Annotated[str, typer.Argument(help="open (anyone may sign up) or closed (invitations only).")],
) -> None:
    """Open or close sign-up to the public."""
    from ragloom.service.accounts import signin

    _local()
    if mode not in ("open", "closed"):
        raise InvalidRequestError("signup: 'open' or 'closed'")
    ctx = state.context()
    with ctx.db.session() as s:
        signin.set_signup(s, open_=mode == "open")
    emit({"signup": mode}, f"Sign-up is {mode}.")
