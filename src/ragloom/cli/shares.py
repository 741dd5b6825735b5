"""Share links: ``share create|list|update|revoke`` — an assistant answering visitors without an account
on a chat page (``/share/{token}``) or in a web site (the script tag or the iframe)."""

from __future__ import annotations

from typing import Annotated

import typer

from ragloom.cli._app import CliTable, app, emit, state
from ragloom.schemas.shares import ShareView
from ragloom.sdk import ShareFields

share_app = typer.Typer(help="Share an assistant by link: a chat page and a web-site widget for visitors "
                             "without an account.", no_args_is_help=True)
app.add_typer(share_app, name="share")

NameOpt = Annotated[str | None, typer.Option("--name", help="Your label for the link.")]
TitleOpt = Annotated[str | None, typer.Option("--title", help="The chat page's title (default: the assistant's "
                                                              "name).")]
WelcomeOpt = Annotated[str | None, typer.Option("--welcome", help="What visitors read first (default: the "
                                                                  "assistant's opening).")]
OriginOpt = Annotated[list[str] | None, typer.Option(
    "--origin", help="A web site that may embed the link, scheme://host[:port]; repeatable (update: replaces "
    "them; --origin '' removes them all).")]
PerMinuteOpt = Annotated[int | None, typer.Option("--per-minute", help="Questions a minute, all visitors "
                                                                       "(default 10).")]
PerDayOpt = Annotated[int | None, typer.Option("--per-day", help="Questions a day, all visitors (default 500).")]
PagesOpt = Annotated[bool | None, typer.Option("--pages/--no-pages", help="Show visitors the cited pages' "
                                                                          "images (default: shown).")]
DaysOpt = Annotated[int | None, typer.Option("--expires-in-days", help="The link stops working after this many "
                                                                       "days (default: never).")]
ShareArg = Annotated[str, typer.Argument(help="The link's id or name.")]
KindOpt = Annotated[str, typer.Option("--kind", help="chat (a conversation) or search (a search page: the "
                                                     "answer above the results).")]
ServerOpt = Annotated[str, typer.Option("--server", help="This server's address as visitors reach it, for the "
                                                         "links printed (e.g. https://kb.example.com).")]


def _fields(*, name: str | None, title: str | None, welcome: str | None, origin: list[str] | None,
            per_minute: int | None, per_day: int | None, pages: bool | None) -> ShareFields:
    fields: ShareFields = {}
    for key, value in (("name", name), ("title", title), ("welcome", welcome)):
        if value is not None:
            fields[key] = value  # type: ignore[literal-required]
    if origin is not None:
        fields["allowed_origins"] = [o for o in origin if o.strip()]
    if per_minute is not None:
        fields["per_minute"] = per_minute
    if per_day is not None:
        fields["per_day"] = per_day
    if pages is not None:
        fields["show_pages"] = pages
    return fields


def _absolute(snippet: str, base: str) -> str:
    """An embed snippet (its addresses relative to the server) with the server's address."""
    return snippet.replace('src="/share/', f'src="{base}/share/')


def _text(link: ShareView, server: str) -> str:
    base = server.rstrip("/")
    lines = [f"share link {link.name or link.id} ({link.kind}, id {link.id}) of assistant {link.assistant_id}: "
             f"{link.state}",
             f"  {link.kind} page: {base}{link.url}",
             f"  script tag: {_absolute(link.embed.script, base)}",
             f"  iframe: {_absolute(link.embed.iframe, base)}",
             f"  allowed origins: {', '.join(link.allowed_origins) or 'none (the chat page on this server only)'}",
             f"  limits: {link.per_minute} questions a minute, {link.per_day} a day; pages "
             f"{'shown' if link.show_pages else 'hidden'}; expires {link.expires_at or 'never'}",
             f"  use: {link.questions} questions, {link.refused} refused, {link.sessions} sessions"]
    return "\n".join(lines)


@share_app.command("create")
def share_create(assistant: str, name: NameOpt = None, kind: KindOpt = "chat", title: TitleOpt = None,
                 welcome: WelcomeOpt = None, origin: OriginOpt = None, per_minute: PerMinuteOpt = None,
                 per_day: PerDayOpt = None, pages: PagesOpt = None, expires_in_days: DaysOpt = None,
                 server: ServerOpt = "http://127.0.0.1:9380") -> None:
    """Create a share link of an assistant (by name or id) and print its chat page and embed snippets."""
    fields = _fields(name=name, title=title, welcome=welcome, origin=origin, per_minute=per_minute,
                     per_day=per_day, pages=pages)
    if expires_in_days is not None:
        fields["expires_in_days"] = expires_in_days
    if kind not in ("chat", "search"):
        raise typer.BadParameter("chat or search", param_hint="--kind")
    fields["kind"] = "search" if kind == "search" else "chat"
    link = state.client().share_create(assistant, fields)
    emit(link, _text(link, server))


@share_app.command("list")
def share_list(assistant: str) -> None:
    """The assistant's share links with their state and use."""
    links = state.client().share_list(assistant)
    table = CliTable("id", "name", "kind", "state", "origins", "questions", "refused", "sessions", "expires",
                     optional=("origins", "expires"))
    for link in links.shares:
        table.add_row(link.id, link.name, link.kind, link.state, ", ".join(link.allowed_origins), str(link.questions),
                      str(link.refused), str(link.sessions), link.expires_at or "never")
    emit(links, table)


@share_app.command("update")
def share_update(assistant: str, share: ShareArg, name: NameOpt = None, title: TitleOpt = None,
                 welcome: WelcomeOpt = None, origin: OriginOpt = None, per_minute: PerMinuteOpt = None,
                 per_day: PerDayOpt = None, pages: PagesOpt = None, expires_in_days: DaysOpt = None,
                 never_expires: Annotated[bool, typer.Option("--never-expires", help="Remove the expiry.")] = False,
                 server: ServerOpt = "http://127.0.0.1:9380") -> None:
    """Change a share link (only the options given); effective at its next request."""
    fields = _fields(name=name, title=title, welcome=welcome, origin=origin, per_minute=per_minute,
                     per_day=per_day, pages=pages)
    if expires_in_days is not None:
        from datetime import UTC, datetime, timedelta

        fields["expires_at"] = (datetime.now(UTC) + timedelta(days=expires_in_days)).isoformat()
    if never_expires:
        fields["never_expires"] = True
    link = state.client().share_update(assistant, share, fields)
    emit(link, _text(link, server))


@share_app.command("revoke")
def share_revoke(assistant: str, share: ShareArg) -> None:
    """Revoke a share link: every request with it is refused from now on (its sessions are kept)."""
    link = state.client().share_revoke(assistant, share)
    emit(link, f"share link {link.id} revoked; {link.questions} questions were answered through it")
