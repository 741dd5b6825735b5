"""The chat completion use case: one question in a session with an assistant.

Steps, in order: the assistant's knowledge bases the caller can still read (a deleted one is named in
the answer's notes) → the follow-up rewritten into a standalone question with the session's last
turns → optional translations and keywords → retrieval with the assistant's options → the answer,
written by :mod:`ragloom.service.search.answers` with the assistant's prompt and model settings → the
question and the answer stored, the answer's references locked to the versions they cite.

:func:`prepare` does everything that can fail with a clean status (unknown ids, bad variables,
retrieval) before a reply starts; :func:`complete` and :func:`complete_stream` write and store it.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from sqlalchemy.exc import IntegrityError

from ragloom.context import Context, Principal
from ragloom.dataflow import Answer, ChunkKind, Evidence
from ragloom.errors import InvalidRequestError
from ragloom.generation.citations import MarkerFilter
from ragloom.generation.expansion import extract_keywords, translate_question
from ragloom.generation.extractive import DEFAULT_EMPTY_RESPONSE
from ragloom.generation.followup import rewrite_question
from ragloom.generation.prompt import DEFAULT_SYSTEM_PROMPT
from ragloom.generation.sentences import strip_markers
from ragloom.models.chat import Sampling
from ragloom.retrieval.scope import ScopeDecision, is_clarification, without_values
from ragloom.retrieval.types import RetrievalResult
from ragloom.schemas.assistants import PromptSettings
from ragloom.schemas.chats import ChatAnswer, ChatExplain, ChatReply, CompletionRequest
from ragloom.service.accounts import workspace_models
from ragloom.service.chat import assistants, sessions
from ragloom.service.chat.views import citation_view, reference_view
from ragloom.service.documents.catalog import source_urls
from ragloom.service.search import answers
from ragloom.service.search import scope as scoping
from ragloom.service.search.views import explain_view, scope_view
from ragloom.service.views import rounded_positions

HISTORY_TURNS = 3  # the last turns a follow-up is rewritten with (REFERENCE §7 step 2)
STORE_ATTEMPTS = 3  # concurrent answers in one session: retries for the next turn number
NO_KNOWLEDGE = "This assistant cannot answer: it has no knowledge base left to search."


@dataclass(slots=True)
class Prepared:
    """A question ready to be answered: what it searched and found, and how to write the answer."""

    assistant_id: str
    session_id: str | None
    question: str
    standalone: str
    rewrite_method: str
    search_query: str
    quote: bool
    explain: bool
    writing: answers.Writing
    tenant_id: str | None = None  # whose chat model writes the answer (None: the server's)
    notes: list[str] = field(default_factory=list)
    result: RetrievalResult | None = None  # None: no knowledge base to search, or the scope's reply
    evidence: list[Evidence] = field(default_factory=list)
    scope: ScopeDecision | None = None  # the assistant requires scope keys: what was decided
    scope_reply: str | None = None  # the scope asks for a value (clarify) or names a gap: nothing retrieved


def _system_prompt(prompt: PromptSettings, values: dict[str, str]) -> str:
    """The assistant's system prompt with its variables filled; a missing required one, or an
    unknown one, is an InvalidRequestError naming it."""
    declared = {v.name: v for v in prompt.variables}
    unknown = sorted(set(values) - set(declared))
    if unknown:
        raise InvalidRequestError(f"variables.{unknown[0]}: the assistant's prompt has no such variable "
                                  f"(it has: {', '.join(sorted(declared)) or 'none'})")
    missing = [n for n, v in declared.items() if not v.optional and not values.get(n)]
    if missing:
        raise InvalidRequestError(f"variables.{missing[0]}: required by the assistant's prompt")
    text = prompt.system or DEFAULT_SYSTEM_PROMPT
    return re.sub(r"\{([A-Za-z_][A-Za-z0-9_]*)\}",
                  lambda m: values.get(m.group(1), "") if m.group(1) in declared else m.group(0), text)


def _kb_notes(states: list[tuple[str, str, str]]) -> list[str]:
    notes = []
    for kb_id, name, state in states:
        if state == "deleted":
            notes.append(f"knowledge base {name!r} ({kb_id}) of this assistant was deleted; it was not searched.")
        elif state == "unreadable":
            notes.append(f"knowledge base {name!r} of this assistant is not readable by you; it was not searched.")
    return notes


def prepare(ctx: Context, *, principal: Principal, assistant_id: str, request: CompletionRequest,
            history: Sequence[tuple[str, str]] | None = None,
            llm_overrides: Mapping[str, float | int] | None = None) -> Prepared:
    """Resolve the assistant and the session, rewrite the question, search. Unknown or foreign
    assistant and session ids are 404.

    ``history`` — (question, answer) pairs, oldest first — is a conversation the caller keeps (the
    OpenAI-compatible API): it replaces the session's stored turns (``request.session_id`` must then
    be null). ``llm_overrides`` (``temperature``, ``top_p``, ``max_tokens``, the penalties: fields of
    :class:`~ragloom.schemas.assistants.LLMSettings`) override the assistant's for this answer."""
    if history is not None and request.session_id:
        raise InvalidRequestError("session_id: a question with its own history cannot continue a stored session")
    with ctx.db.session() as s:
        assistant = assistants.get(s, principal=principal, assistant_id_or_name=assistant_id)
        chat = (sessions.get(s, principal=principal, assistant=assistant, session_id=request.session_id)
                if request.session_id else None)
        turns = (list(history)[-HISTORY_TURNS:] if history is not None else
                 sessions.recent_turns(s, chat, HISTORY_TURNS) if chat is not None else [])
        states = assistants.dataset_states(s, principal=principal, assistant=assistant)
        prompt, llm = assistants.prompt_settings(assistant), assistants.llm_settings(assistant)
        options = assistants.retrieval_options(assistant, explain=request.explain)
        scope_keys = assistants.scope_settings(assistant).keys
        rerank, assistant_key = assistant.rerank, assistant.id
    if llm_overrides:
        llm = llm.model_copy(update=dict(llm_overrides))
    writing = answers.Writing(
        system_prompt=_system_prompt(prompt, request.variables),
        empty_response=prompt.empty_response or DEFAULT_EMPTY_RESPONSE,
        temperature=llm.temperature, answer_tokens=llm.max_tokens,
        sampling=Sampling(top_p=llm.top_p, presence_penalty=llm.presence_penalty,
                          frequency_penalty=llm.frequency_penalty),
    )
    question = request.question.strip()
    standalone, method = question, "off"
    chat_model = workspace_models.chat_model(ctx, principal.tenant_id)
    kb_ids = [kb_id for kb_id, _, state in states if state == "ok"]
    decision = None
    if kb_ids and scope_keys:  # the applicability scope, decided before anything is searched
        answering = bool(turns) and is_clarification(turns[-1][1])
        decision = scoping.decide_scope(ctx, principal=principal, kb_ids=kb_ids, keys=scope_keys, question=question,
                                        earlier=[q for q, _ in turns], doc_ids=options.document_ids,
                                        answering=answering, chat_model=chat_model)
        asked = scoping.clarified_question(turns, question)
        if asked != question:  # it answers the scope's clarifying question: search the one that was asked
            standalone, method = asked, "scope"
    if method == "off" and prompt.rewrite_followups:
        rewrite = rewrite_question(turns, question, chat_model)
        standalone, method = rewrite.question, rewrite.method
    if decision is not None and decision.status == "scoped" and chat_model is None:
        # the scope holds the values: an extractive answer looks for what is asked, not for "firmware 2.4"
        standalone = without_values(scope_keys, decision, standalone)
    extra = translate_question(standalone, prompt.cross_languages, chat_model)
    if prompt.keyword:
        keywords = extract_keywords(standalone, chat_model)
        if keywords:
            extra.append(" ".join(keywords))
    search_query = "\n".join([standalone, *extra])
    prepared = Prepared(assistant_id=assistant_key, session_id=chat.id if chat is not None else None,
                        question=question, standalone=standalone, rewrite_method=method, search_query=search_query,
                        quote=prompt.quote, explain=request.explain, writing=writing, tenant_id=principal.tenant_id,
                        notes=_kb_notes(states), scope=decision)
    if decision is not None:
        if decision.status in ("clarify", "gap"):  # ask, or name the gap: nothing is retrieved
            prepared.scope_reply = decision.message
            return prepared
        options = scoping.restricted(options, decision)
    if kb_ids:
        prepared.result, prepared.evidence = answers.find_evidence(
            ctx, principal=principal, kb_ids=kb_ids, question=search_query, options=options, rerank=rerank)
    return prepared


def _no_knowledge(ctx: Context, prepared: Prepared) -> Answer:
    model = workspace_models.chat_model(ctx, prepared.tenant_id) if prepared.tenant_id is not None else ctx.chat_model
    return Answer(prepared.scope_reply or NO_KNOWLEDGE, model.name if model else "extractive", insufficient=True)


def _write(ctx: Context, prepared: Prepared) -> Answer:
    if prepared.result is None:
        return _no_knowledge(ctx, prepared)
    return answers.write(ctx, prepared.result, prepared.evidence, prepared.standalone, prepared.writing,
                         tenant_id=prepared.tenant_id)


def _write_stream(ctx: Context, prepared: Prepared) -> Iterator[str | Answer]:
    """Answer deltas (``str``), then the :class:`Answer`."""
    if prepared.result is None:
        answer = _no_knowledge(ctx, prepared)
        yield answer.text
        yield answer
        return
    final: Answer | None = None
    unquoted = None if prepared.quote else MarkerFilter()  # quote off: the deltas carry no markers either
    for item in answers.write_stream(ctx, prepared.result, prepared.evidence, prepared.standalone,
                                     prepared.writing, tenant_id=prepared.tenant_id):
        if isinstance(item, str):
            text = unquoted.feed(item) if unquoted else item
            if text:
                yield text
        else:
            final = item
    if unquoted and (tail := unquoted.flush()):
        yield tail
    assert final is not None, "write_stream ends with the answer"
    yield final


def complete(ctx: Context, *, principal: Principal, prepared: Prepared) -> ChatReply:
    """Answer the prepared question and store both messages."""
    return _finish(ctx, principal, prepared, _write(ctx, prepared))


def complete_stream(ctx: Context, *, principal: Principal, prepared: Prepared) -> Iterator[str | ChatReply]:
    """Answer deltas (``str``), then the stored reply (the same :class:`ChatReply` as :func:`complete`'s)."""
    for item in _write_stream(ctx, prepared):
        yield item if isinstance(item, str) else _finish(ctx, principal, prepared, item)


def reply(ctx: Context, *, prepared: Prepared) -> ChatAnswer:
    """Answer the prepared question without storing anything (the caller keeps the conversation)."""
    return _unstored(ctx, prepared, _write(ctx, prepared))


def reply_stream(ctx: Context, *, prepared: Prepared) -> Iterator[str | ChatAnswer]:
    """Answer deltas (``str``), then the same :class:`ChatAnswer` as :func:`reply`'s; nothing is stored."""
    for item in _write_stream(ctx, prepared):
        yield item if isinstance(item, str) else _unstored(ctx, prepared, item)


def count_tokens(ctx: Context, prepared: Prepared, text: str) -> int:
    """``text``'s length in tokens of the searched knowledge bases' embedding model (an estimate of the
    chat model's count: the chat model does not report its own); words without a knowledge base."""
    if prepared.result is None:
        return len(text.split())
    return workspace_models.embedder(ctx, prepared.result.embedding_model).count_tokens(text)


def prompt_text(prepared: Prepared) -> str:
    """What the chat model was given to answer: the system prompt, the evidence and the question."""
    return "\n".join([prepared.writing.system_prompt, *(ev.content for ev in prepared.evidence), prepared.standalone])


def _stored_reference(ev: Evidence, kb_of: dict[str, str], links: dict[str, str]) -> dict[str, Any]:
    ref = {"id": ev.index, "chunk_id": ev.chunk_id, "doc_id": ev.doc_id, "kb_id": kb_of.get(ev.chunk_id),
           "version_id": ev.version_id, "document_name": ev.document_name, "content": ev.content,
           "positions": rounded_positions(ev.positions), "similarity": round(ev.similarity, 6)}
    for side in ("vector_similarity", "term_similarity"):
        score = getattr(ev, side)
        if score is not None:
            ref[side] = round(score, 6)
    if ev.doc_id in links:  # a synced document: the citation links back to its source too
        ref["source_url"] = links[ev.doc_id]
    if ev.table is not None:  # a table's rows, to show the citation as the table it came from
        ref["table"] = ev.table
    if ev.kind == ChunkKind.FIGURE:  # shown with its picture
        ref["kind"] = ev.kind
    return ref


def _shape(ctx: Context, prepared: Prepared,
           answer: Answer) -> tuple[str, list[dict[str, Any]], list[dict[str, Any]], ChatExplain]:
    """Apply the assistant's rules to the answer (empty response, quote, notes): its text, stored
    references, citations and explain."""
    citations = [{**asdict(c), "sentence_text": answer.sentences[c.sentence] if c.sentence < len(answer.sentences)
                  else None} for c in answer.citations]
    text, cited = answer.text, list(answer.references)
    # the extractive answerer leads a refusal with the assistant's empty response, then lists what the documents
    # cover nearest to the question, cited: kept; any other refusal is the empty response alone
    nearest = answer.mode == "extractive" and bool(answer.citations)
    if answer.insufficient and prepared.result is not None and not nearest:
        text, cited, citations = prepared.writing.empty_response, [], []
    elif not prepared.quote:
        text, cited, citations = strip_markers(text), list(prepared.evidence), []
    if prepared.notes:
        text = f"{text.rstrip()}\n\n" + "\n".join(f"Note: {n}" for n in prepared.notes)
    kb_of = {c.record.id: c.record.kb_id for c in prepared.result.chunks} if prepared.result else {}
    with ctx.db.session() as s:
        links = source_urls(s, [ev.doc_id for ev in cited])
    refs = [_stored_reference(ev, kb_of, links) for ev in cited]
    explain = ChatExplain(
        question=prepared.question, standalone_question=prepared.standalone, rewrite_method=prepared.rewrite_method,
        search_query=prepared.search_query,
        retrieval=explain_view(prepared.result) if prepared.explain and prepared.result is not None else None,
        scope=scope_view(prepared.scope.as_json()) if prepared.scope is not None else None,
    )
    return text, refs, citations, explain


def _unstored(ctx: Context, prepared: Prepared, answer: Answer) -> ChatAnswer:
    text, refs, citations, explain = _shape(ctx, prepared, answer)
    with ctx.db.session() as s:
        active = sessions.active_versions(s, refs)
    return ChatAnswer(answer=text, model=answer.model, insufficient=answer.insufficient, truncated=answer.truncated,
                      references=[reference_view(r, active) for r in refs],
                      citations=[citation_view(c) for c in citations], notes=prepared.notes, explain=explain)


def _finish(ctx: Context, principal: Principal, prepared: Prepared, answer: Answer) -> ChatReply:
    """Store the turn (the answer shaped by :func:`_shape`) and build the reply."""
    text, refs, citations, explain = _shape(ctx, prepared, answer)
    for attempt in range(STORE_ATTEMPTS):
        try:
            return _store(ctx, principal, prepared, answer, text, refs, citations, explain)
        except IntegrityError:  # another answer in the same session took this turn's number: take the next
            if attempt == STORE_ATTEMPTS - 1:
                raise
    raise AssertionError("unreachable")


def _store(ctx: Context, principal: Principal, prepared: Prepared, answer: Answer, text: str,
           refs: list[dict[str, Any]], citations: list[dict[str, Any]], explain: ChatExplain) -> ChatReply:
    """Store the question and the answer (in a new session when the question named none)."""
    with ctx.db.session() as s:
        assistant = assistants.get(s, principal=principal, assistant_id_or_name=prepared.assistant_id)
        if prepared.session_id is None:
            chat = sessions.create(s, principal=principal, assistant=assistant,
                                   name=sessions.name_from(prepared.question))
        else:
            chat = sessions.get(s, principal=principal, assistant=assistant, session_id=prepared.session_id)
        asked, answered = sessions.add_turn(
            s, chat, question=prepared.question, answer=text, model=answer.model, insufficient=answer.insufficient,
            refs=refs, citations=citations, explain=explain.model_dump(mode="json"))
        active = sessions.active_versions(s, refs)
        return ChatReply(
            session_id=chat.id, question_id=asked.id, message_id=answered.id, answer=text, model=answer.model,
            insufficient=answer.insufficient, truncated=answer.truncated,
            references=[reference_view(r, active) for r in refs],
            citations=[citation_view(c) for c in citations], notes=prepared.notes, explain=explain,
        )
