"""Chat commands: ``assistants create|list|show|update|delete``, ``sessions list|show|rename|delete``
and ``chat`` (one question with ``--question``, else an interactive conversation)."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from typing import Annotated, Any, cast

import typer

from ragloom.cli._app import CliTable, app, emit, err, out, state
from ragloom.errors import RagloomError
from ragloom.schemas.assistants import AssistantView
from ragloom.schemas.base import parse_json_object
from ragloom.schemas.chats import ChatReference, ChatReply
from ragloom.schemas.scope import ScopeSettings
from ragloom.schemas.sessions import SessionList
from ragloom.sdk import AssistantChanges, AssistantFields, ChatEvent, Delta, SearchFields

assistants_app = typer.Typer(help="Chat assistants: knowledge bases, prompt and retrieval settings.",
                             no_args_is_help=True)
sessions_app = typer.Typer(help="Chat sessions and their messages.", no_args_is_help=True)
app.add_typer(assistants_app, name="assistants")
app.add_typer(sessions_app, name="sessions")

KbOpt = Annotated[list[str] | None, typer.Option("--kb", help="A knowledge base to answer from; repeatable.")]
DescriptionOpt = Annotated[str | None, typer.Option("--description")]
SystemOpt = Annotated[str | None, typer.Option("--system", help="System prompt; the evidence goes at its "
                                                                "{knowledge} slot.")]
OpeningOpt = Annotated[str | None, typer.Option("--opening", help="Greeting shown when a session starts.")]
EmptyOpt = Annotated[str | None, typer.Option("--empty-response", help="Reply when the documents do not answer.")]
QuoteOpt = Annotated[bool | None, typer.Option("--quote/--no-quote", help="Cite the evidence with [ID:n].")]
RewriteOpt = Annotated[bool | None, typer.Option("--rewrite/--no-rewrite",
                                                 help="Rewrite follow-up questions with the last turns.")]
TopNOpt = Annotated[int | None, typer.Option("--top-n", help="Evidence chunks per answer (default 6).")]
TemperatureOpt = Annotated[float | None, typer.Option("--temperature")]
LlmOpt = Annotated[str | None, typer.Option("--llm", help='Chat model settings as JSON, e.g. {"top_p": 0.5}.')]
PromptOpt = Annotated[str | None, typer.Option("--prompt", help='Prompt settings as JSON, e.g. '
                                                                '{"cross_languages": ["English"]}.')]
RetrievalOpt = Annotated[str | None, typer.Option("--retrieval", help='Retrieval options as JSON (those of '
                                                                      'search), e.g. {"fusion": "weighted"}.')]
RequireOpt = Annotated[list[str] | None, typer.Option(
    "--require-metadata", help="A document metadata key every answer needs a value for (the applicability "
    "scope), KEY or KEY:MATCH with MATCH equal (default), in (the document lists its values) or range (the "
    "document carries a version range such as >=2.1,<3); repeatable. Asked for when a question lacks it.")]
AliasOpt = Annotated[list[str] | None, typer.Option(
    "--scope-alias", help="Another name of a scope value, KEY:ALIAS=VALUE (e.g. model:pro=X200); repeatable.")]
ScopeOpt = Annotated[str | None, typer.Option("--scope", help='The whole scope as JSON, e.g. {"keys": [{"key": '
                                                              '"model"}]}; {"keys": []} removes it.')]


def _json_option(text: str | None, flag: str) -> dict[str, Any]:
    return {} if text is None else parse_json_object(text, flag)


def _body(*, name: str | None, kb: list[str] | None, description: str | None, system: str | None,
          opening: str | None, empty_response: str | None, quote: bool | None, rewrite: bool | None,
          top_n: int | None, temperature: float | None, llm: str | None, prompt: str | None,
          retrieval: str | None) -> AssistantChanges:
    """The changes of the options given (unset ones left out): ``llm``, ``prompt`` and ``retrieval`` as
    the JSON objects the API merges key by key, checked by the SDK against the API's request model."""
    llm_settings = _json_option(llm, "--llm")
    if temperature is not None:
        llm_settings["temperature"] = temperature
    prompt_settings = _json_option(prompt, "--prompt")
    for key, value in (("system", system), ("opening", opening), ("empty_response", empty_response),
                       ("quote", quote), ("rewrite_followups", rewrite)):
        if value is not None:
            prompt_settings[key] = value
    changes: AssistantChanges = {}
    if name is not None:
        changes["name"] = name
    if kb:
        changes["dataset_ids"] = kb
    if description is not None:
        changes["description"] = description
    if top_n is not None:
        changes["top_n"] = top_n
    if llm_settings:
        changes["llm"] = llm_settings
    if prompt_settings:
        changes["prompt"] = prompt_settings
    if retrieval_options := _json_option(retrieval, "--retrieval"):
        changes["retrieval"] = cast(SearchFields, retrieval_options)  # checked by the SDK (RetrievalOptions)
    return changes


def _scope(require: list[str] | None, aliases: list[str] | None, scope: str | None) -> dict[str, Any] | None:
    """The ``scope`` of the request body from --require-metadata, --scope-alias and --scope (None: unchanged)."""
    if scope is not None:
        if require or aliases:
            raise RagloomError("--scope: give either the whole scope or --require-metadata/--scope-alias")
        return _json_option(scope, "--scope")
    if not require:
        if aliases:
            raise RagloomError("--scope-alias: give the keys too (--require-metadata)")
        return None
    keys: dict[str, dict[str, Any]] = {}
    for item in require:
        key, _, match = item.partition(":")
        keys[key.strip()] = {"key": key.strip(), "match": match.strip() or "equal", "aliases": {}}
    for item in aliases or []:
        key, colon, rest = item.partition(":")
        alias, eq, value = rest.partition("=")
        if not colon or not eq or key.strip() not in keys:
            raise RagloomError(f"--scope-alias {item!r}: give KEY:ALIAS=VALUE for a key of --require-metadata")
        keys[key.strip()]["aliases"][alias.strip()] = value.strip()
    return {"keys": list(keys.values())}


def _scope_text(scope: ScopeSettings) -> str:
    if not scope.keys:
        return ""
    parts = []
    for k in scope.keys:
        aliases = ", ".join(f"{a}={v}" for a, v in k.aliases.items())
        parts.append(f"{k.key} ({k.match}{'; aliases ' + aliases if aliases else ''})")
    return "scope: requires " + ", ".join(parts)


def _assistant_text(a: AssistantView) -> str:
    kbs = ", ".join(d.name + ("" if d.state == "ok" else f" ({d.state})") for d in a.datasets)
    p, r = a.prompt, a.retrieval
    lines = [f"[bold]{a.name}[/] ({a.id})", a.description or "", f"knowledge bases: {kbs}",
             f"chat model: {a.llm.model or 'the configured one (else extractive answers)'}, "
             f"temperature {a.llm.temperature}, "
             f"max_tokens {a.llm.max_tokens}",
             f"prompt: {'custom' if p.system else 'default'} system prompt, quote {'on' if p.quote else 'off'}, "
             f"follow-up rewriting {'on' if p.rewrite_followups else 'off'}",
             f"retrieval: top_n {a.top_n}, mode {r.mode}, fusion {r.fusion or 'server default'}"]
    if p.opening:
        lines.append(f"opening: {p.opening}")
    lines.append(_scope_text(a.scope))
    return "\n".join(line for line in lines if line)


@assistants_app.command("create")
def assistants_create(
    name: str, kb: KbOpt = None, description: DescriptionOpt = None, system: SystemOpt = None,
    opening: OpeningOpt = None, empty_response: EmptyOpt = None, quote: QuoteOpt = None, rewrite: RewriteOpt = None,
    top_n: TopNOpt = None, temperature: TemperatureOpt = None, llm: LlmOpt = None, prompt: PromptOpt = None,
    retrieval: RetrievalOpt = None, require_metadata: RequireOpt = None, scope_alias: AliasOpt = None,
    scope: ScopeOpt = None,
) -> None:
    """Create an assistant over one or more knowledge bases (--kb); with --require-metadata, an
    applicability scope: it asks for a missing value, answers from the matching documents only, and
    names the gap when no document carries the value."""
    if not kb:
        raise RagloomError("--kb: give at least one knowledge base to answer from")
    fields = _body(name=None, kb=None, description=description, system=system, opening=opening,
                   empty_response=empty_response, quote=quote, rewrite=rewrite, top_n=top_n, temperature=temperature,
                   llm=llm, prompt=prompt, retrieval=retrieval)
    if (scoped := _scope(require_metadata, scope_alias, scope)) is not None:
        fields["scope"] = scoped
    # without name and knowledge bases (given apart), the changes are the fields of a new assistant
    a = state.client().assistant_create(name, kb, cast(AssistantFields, fields))
    emit(a, f"Created assistant [bold]{a.name}[/] ({a.id})")


@assistants_app.command("list")
def assistants_list() -> None:
    """List the assistants of your workspace."""
    rows = state.client().assistant_list()
    table = CliTable("name", "id", "knowledge bases", "top n", optional=("top n",))
    for a in rows:
        table.add_row(a.name, a.id, ", ".join(d.name for d in a.datasets), str(a.top_n))
    emit({"assistants": rows, "total": len(rows)}, table)


@assistants_app.command("show")
def assistants_show(assistant: str) -> None:
    """An assistant's settings (by name or id)."""
    a = state.client().assistant_get(assistant)
    emit(a, _assistant_text(a))


@assistants_app.command("update")
def assistants_update(
    assistant: str, name: Annotated[str | None, typer.Option("--name", help="A new name.")] = None, kb: KbOpt = None,
    description: DescriptionOpt = None, system: SystemOpt = None, opening: OpeningOpt = None,
    empty_response: EmptyOpt = None, quote: QuoteOpt = None, rewrite: RewriteOpt = None, top_n: TopNOpt = None,
    temperature: TemperatureOpt = None, llm: LlmOpt = None, prompt: PromptOpt = None, retrieval: RetrievalOpt = None,
    require_metadata: RequireOpt = None, scope_alias: AliasOpt = None, scope: ScopeOpt = None,
) -> None:
    """Change an assistant: only the options given change (--kb replaces the knowledge bases,
    --require-metadata the scope)."""
    changes = _body(name=name, kb=kb, description=description, system=system, opening=opening,
                    empty_response=empty_response, quote=quote, rewrite=rewrite, top_n=top_n,
                    temperature=temperature, llm=llm, prompt=prompt, retrieval=retrieval)
    if (scoped := _scope(require_metadata, scope_alias, scope)) is not None:
        changes["scope"] = scoped
    a = state.client().assistant_update(assistant, changes)
    emit(a, _assistant_text(a))


@assistants_app.command("delete")
def assistants_delete(assistant: str) -> None:
    """Delete an assistant with its sessions."""
    state.client().assistant_delete(assistant)
    emit({"deleted": assistant}, f"Deleted assistant {assistant}")


# --- sessions ---------------------------------------------------------------------------------------

def _sessions_table(res: SessionList) -> CliTable:
    table = CliTable("name", "id", "messages", "updated", title=f"{res.total} sessions, newest first",
                     optional=("updated",), fluid=("name",))
    for s in res.sessions:
        table.add_row(s.name, s.id, str(s.message_count), (s.updated_at or "")[:19])
    return table


@sessions_app.command("list")
def sessions_list(assistant: str, page: Annotated[int, typer.Option("--page")] = 1,
                  page_size: Annotated[int, typer.Option("--page-size")] = 30) -> None:
    """Your sessions with an assistant, newest first."""
    res = state.client().session_list(assistant, page=page, page_size=page_size)
    emit(res, _sessions_table(res))


def _pages(ref: ChatReference) -> str:
    pages = sorted({int(p[0]) for p in ref.positions if int(p[0]) > 0})  # 0: the HTML view
    return f" p.{','.join(map(str, pages))}" if pages else ""


def _citations(refs: list[ChatReference]) -> list[str]:
    """One line per cited reference: id, document, pages, and its state when not current."""
    lines = []
    for ref in refs:
        flag = "" if ref.status == "current" else f" [yellow]({ref.status})[/]"
        lines.append(f"  [bold][ID:{ref.id}][/] {ref.document_name}{_pages(ref)}{flag}")
    return lines


@sessions_app.command("show")
def sessions_show(assistant: str, session: str) -> None:
    """A session's messages, with each answer's citations (flagged when their document changed)."""
    res = state.client().session_get(assistant, session)
    lines = [f"[bold]{res.name}[/] ({res.id})"]
    if res.opening:
        lines.append(f"[dim]assistant:[/] {res.opening}")
    for m in res.messages:
        who = "you" if m.role == "user" else f"assistant ({m.id})"  # the id rates or forgets the turn
        lines.append(f"[dim]{who}:[/] {m.content}")
        lines += _citations(m.references)
        if m.feedback:
            comment = f": {m.feedback.comment}" if m.feedback.comment else ""
            lines.append(f"  [dim]rated {m.feedback.rating}{comment}[/]")
    emit(res, "\n".join(lines))


@sessions_app.command("rename")
def sessions_rename(assistant: str, session: str, name: str) -> None:
    """Rename a session."""
    res = state.client().session_rename(assistant, session, name)
    emit(res, f"Renamed session {res.id} to [bold]{res.name}[/]")


@sessions_app.command("delete")
def sessions_delete(assistant: str, session: str) -> None:
    """Delete a session with its messages."""
    state.client().session_delete(assistant, session)
    emit({"deleted": session}, f"Deleted session {session}")


Rating = Annotated[str, typer.Argument(help="up, down, or none to remove the rating")]


@sessions_app.command("feedback")
def sessions_feedback(assistant: str, session: str, message: str, rating: Rating,
                      comment: Annotated[str, typer.Option("--comment", help="why")] = "") -> None:
    """Rate an answer of a session (its message id, from sessions show)."""
    if rating not in ("up", "down", "none"):
        raise typer.BadParameter(f"{rating!r}: use up, down or none", param_hint="RATING")
    res = state.client().message_feedback(assistant, session, message, None if rating == "none" else rating,
                                          comment)
    emit(res, f"Rated answer {res.id} {rating}" if rating != "none" else f"Removed the rating of {res.id}")


@sessions_app.command("forget")
def sessions_forget(assistant: str, session: str, message: str) -> None:
    """Delete a question and its answer from a session (either one's message id)."""
    res = state.client().message_delete(assistant, session, message)
    emit(res, f"Deleted messages {', '.join(res.deleted)}")


# --- chat -------------------------------------------------------------------------------------------

def _stream_reply(events: Iterator[ChatEvent]) -> ChatReply:
    """Print the answer as it arrives, then its citations; returns the reply. An error in the stream
    raises from ``events`` (the SDK reads the stream's error event)."""
    streamed: list[str] = []
    reply: ChatReply | None = None
    for event in events:
        if isinstance(event, Delta):
            streamed.append(event.text)
            out.print(event.text, end="", markup=False, highlight=False)
        else:
            reply = event.reply
    out.print()
    if reply is None:
        raise RagloomError("the answer stream ended without a reply")
    if reply.answer.strip() != "".join(streamed).strip():  # citations repaired, a refusal, notes...
        out.print("[dim]checked answer:[/]")
        out.print(reply.answer, markup=False, highlight=False)
    for line in _citations(reply.references):
        out.print(line)
    if (scope := reply.explain.scope) is not None:
        values = ", ".join(f"{k} {v}" for k, v in scope.values.items())
        err.print(f"scope: {scope.status}{' (' + values + ')' if values else ''} — {scope.reason}",
                  style="dim", markup=False, highlight=False)
    return reply


def _interactive(assistant: str, session: str | None, explain: bool) -> None:
    client = state.client()
    a = client.assistant_get(assistant)
    err.print(f"[bold]{a.name}[/]: /new starts a new session, /sessions lists yours, /quit ends")
    if a.prompt.opening:
        out.print(f"[dim]assistant:[/] {a.prompt.opening}")
    while True:
        try:
            question = input("you> " if sys.stdin.isatty() else "").strip()
        except (EOFError, KeyboardInterrupt):
            break
        if not question:
            continue
        if question in ("/quit", "/exit"):
            break
        if question == "/new":
            session = None
            err.print("[dim]new session[/]")
            continue
        if question == "/sessions":
            out.print(_sessions_table(client.session_list(a.id)))
            continue
        reply = _stream_reply(client.chat_stream(a.id, question, session=session, explain=explain))
        session = reply.session_id


@app.command()
def chat(
    assistant: Annotated[str, typer.Argument(help="Assistant name or id.")],
    session: Annotated[str | None, typer.Option("--session", help="Continue this session ('last': your newest "
                                                                  "one).")] = None,
    question: Annotated[str | None, typer.Option("--question", "-q", help="Ask one question and exit; without "
                                                                         "it, chat interactively.")] = None,
    explain: Annotated[bool, typer.Option("--explain", help="Include the retrieval's scores in the reply.")]
    = False,
) -> None:
    """Chat with an assistant: cited answers; interactive without --question (/new, /sessions, /quit).

    Answers stream as they are written, then their citations with document and page. With --json:
    the reply; without --question, questions are read from stdin and all replies printed."""
    client = state.client()
    if session == "last":
        newest = client.session_list(assistant, page_size=1).sessions
        session = newest[0].id if newest else None
    if question is not None:
        if state.json:
            emit(client.chat(assistant, question, session=session, explain=explain))
        else:
            reply = _stream_reply(client.chat_stream(assistant, question, session=session, explain=explain))
            err.print(f"[dim]session {reply.session_id}[/]")
        return
    if not state.json:
        _interactive(assistant, session, explain)
        return
    replies: list[ChatReply] = []  # --json: questions from stdin, one JSON document of all replies on stdout
    for line in sys.stdin:
        if line.strip() in ("/quit", "/exit"):
            break
        if line.strip() == "/new":
            session = None
        elif line.strip():
            replies.append(client.chat(assistant, line.strip(), session=session, explain=explain))
            session = replies[-1].session_id
    emit({"replies": replies})
