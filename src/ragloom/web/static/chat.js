/* Chat: assistants (GET/POST/PATCH/DELETE /chats), their sessions (list, new, rename, delete) and a
   conversation. A question is sent to POST /chats/{id}/completions with stream: true and the answer is
   read from the server-sent events with fetch's stream reader, rendered as Markdown (markdown.js) as
   it grows; the final reply replaces it with the stored answer, its citation markers [ID:n] turned into
   buttons marked with their verification (supported, weak, unsupported). A marker opens the side panel:
   the reference's document, its verification, the cited text (a table chunk's rows as a small table,
   tableview.js), and each page it lies on (every page of a chunk that crosses pages) with its region
   outlined by pageview.js, scaled by that page's own size (a table's row chunk: its rows only).
   Answers citing a document version that was re-parsed, replaced or deleted since say so. Feedback is
   PUT .../messages/{id}/feedback. The session is in the address (?session=ID). */
"use strict";

document.addEventListener("DOMContentLoaded", () => {
  const { t, api, el } = RL;

  /** A superseded reference's "what changed" button: the diff from the cited version to the live one. */
  function changesOf(r) {
    const box = el("div", { class: "ref-changes", "data-testid": "ref-changes" });
    const button = RL.button(t("chat.ref_changes"), async () => {
      try {
        const d = await api("GET", r.changes.replace(/^\/api\/v1/, ""));
        box.replaceChildren(el("p", {}, t("docs.version_diff_title", { from: d.from_version, to: d.to_version,
          added: d.added, removed: d.removed, changed: d.changed })),
        el("ul", {}, d.changes.slice(0, 10).map((c) => el("li", {}, el("span", { class: "badge" },
          t(`docs.diff_${c.change}`)), " ", c.change === "changed" ? c.marked : (c.after || c.before || "")))));
      } catch (err) {
        box.replaceChildren(el("p", { class: "error" }, err.message));
      }
    }, "small");
    return el("div", {}, button, box);
  }
  const enc = encodeURIComponent;
  const requested = document.getElementById("chat-title").dataset.chatId;
  const layout = document.getElementById("chat-layout");
  const list = document.getElementById("messages");
  const form = document.getElementById("ask-form");
  const question = document.getElementById("question");
  let started = Promise.resolve(); // the page's first opening of an assistant and its session (below)
  const panel = document.getElementById("cite-panel");
  const dialog = document.getElementById("assistant-dialog");
  const aform = document.getElementById("assistant-form");
  const VERDICTS = new Set(["supported", "weak", "unsupported"]);

  let assistants = [];
  let assistant = null; // the open assistant (its view)
  let sessionId = new URLSearchParams(location.search).get("session") || null;
  let sessions = [];
  let streaming = null; // the AbortController of the answer being read
  let panelOpener = null;
  let panelToken = 0;

  const fail = (err) => RL.showError("chat-error", err);
  const chatPath = () => `/chats/${enc(assistant.id)}`;
  const say = (text) => { document.getElementById("chat-status").textContent = text; };

  // --- assistants ----------------------------------------------------------------------------------
  async function loadAssistants() {
    ({ assistants } = await api("GET", "/chats"));
    renderAssistants();
  }

  function renderAssistants() {
    const box = document.getElementById("assistant-list");
    const current = assistant ? assistant.id : requested;
    box.replaceChildren(...assistants.map((a) => el("li", {},
      el("a", { href: `${RL.UI}/chat/${enc(a.id)}`,
        "aria-current": a.id === current || a.name === current ? "page" : null }, a.name))));
    document.getElementById("assistants-empty").hidden = assistants.length > 0;
  }

  async function openAssistant() {
    const wanted = requested || (assistants[0] && assistants[0].id);
    if (!wanted) { // nothing to talk to yet: the side column says how to start, on a phone too
      document.getElementById("chat-main").hidden = true;
      layout.classList.add("side-open");
      document.getElementById("side-toggle").setAttribute("aria-expanded", "true");
      return;
    }
    try {
      assistant = await api("GET", `/chats/${enc(wanted)}`);
    } catch (err) {
      fail(err);
      return;
    }
    if (!requested) history.replaceState(null, "", address(sessionId));
    showAssistant();
    document.getElementById("chat-main").hidden = false;
    document.getElementById("sessions-section").hidden = false;
    await loadSessions();
    await openSession(sessionId, false);
  }

  function showAssistant() {
    document.getElementById("conversation-heading").textContent = assistant.name;
    document.title = `${assistant.name} · ${t("chat.title")} · ragloom`;
    const names = assistant.datasets.map((d) => (d.state === "ok" ? d.name : `${d.name} (${t(`chat.kb_${d.state}`)})`));
    document.getElementById("assistant-datasets").textContent = t("chat.answers_from", { names: names.join(", ") });
    const box = document.getElementById("ask-variables");
    box.replaceChildren(...(assistant.prompt.variables || []).map((v) => el("label", { class: "chat-variable" },
      el("span", {}, v.optional ? v.name : `${v.name} *`),
      el("input", { name: `var-${v.name}`, "data-variable": v.name, required: v.optional ? null : true,
        maxlength: 2000 }))));
  }

  // --- sessions ------------------------------------------------------------------------------------
  function address(sid) {
    const base = `${RL.UI}/chat/${enc(assistant ? assistant.id : requested)}`;
    return sid ? `${base}?session=${enc(sid)}` : base;
  }

  async function loadSessions() {
    try {
      ({ sessions } = await api("GET", `${chatPath()}/sessions?page_size=100`));
    } catch (err) {
      fail(err);
      return;
    }
    renderSessions();
  }

  function renderSessions() {
    const box = document.getElementById("session-list");
    box.replaceChildren(...sessions.map((s) => {
      const current = s.id === sessionId;
      return el("li", { class: current ? "current" : null, dataset: { sessionId: s.id } },
        el("button", { type: "button", class: "link session-open", "aria-current": current ? "true" : null,
          onclick: () => { openSession(s.id, true); closeSide(); } },
        el("span", { class: "session-name" }, s.name),
        s.share_id ? el("span", { class: "badge", "data-testid": "visitor-session", title: s.visitor_id },
          t("chat.visitor_session")) : null,
        el("span", { class: "hint" }, t("chat.session_meta", { count: s.message_count, when: RL.when(s.updated_at) }))),
        el("span", { class: "row-actions" },
          RL.button(t("chat.rename"), () => startRename(s), "small",
            { "aria-label": `${t("chat.rename")}: ${s.name}` }),
          RL.button(t("chat.delete"), (e) => removeSession(e, s), "small danger",
            { "aria-label": `${t("chat.delete")}: ${s.name}` })));
    }));
    document.getElementById("sessions-empty").hidden = sessions.length > 0;
    const shown = sessions.find((s) => s.id === sessionId);
    document.getElementById("session-name").textContent = shown ? shown.name : t("chat.session_untitled");
  }

  function startRename(s) {
    const li = document.querySelector(`#session-list li[data-session-id="${CSS.escape(s.id)}"]`);
    const input = el("input", { value: s.name, maxlength: 128, required: true, "aria-label": t("chat.rename_label") });
    const cancel = () => renderSessions();
    const rename = el("form", { class: "session-rename", onsubmit: async (e) => {
      e.preventDefault();
      const done = await RL.busy(e.submitter, "chat-error",
        () => api("PATCH", `${chatPath()}/sessions/${enc(s.id)}`, { name: input.value.trim() }));
      if (done) {
        await loadSessions();
        RL.flash(t("chat.renamed"));
      }
    } }, input, el("span", { class: "row-actions" },
      el("button", { type: "submit", class: "small primary" }, t("common.save")),
      RL.button(t("chat.cancel"), cancel, "small")));
    input.addEventListener("keydown", (e) => { if (e.key === "Escape") { e.preventDefault(); cancel(); } });
    li.replaceChildren(rename);
    input.focus();
    input.select();
  }

  async function removeSession(event, s) {
    if (!confirm(t("chat.session_delete_confirm", { name: s.name }))) return;
    const done = await RL.busy(event.currentTarget, "chat-error", async () => {
      await api("DELETE", `${chatPath()}/sessions/${enc(s.id)}`);
      return true;
    });
    if (!done) return;
    RL.flash(t("chat.session_deleted"));
    if (s.id === sessionId) await openSession(null, true);
    await loadSessions();
  }

  async function openSession(sid, push) {
    if (streaming) streaming.abort();
    sessionId = sid;
    if (push) history.pushState(null, "", address(sid));
    closePanel(false);
    renderSessions();
    list.replaceChildren(...opening());
    if (!sid) {
      question.focus();
      return;
    }
    try {
      const { messages } = await api("GET", `${chatPath()}/sessions/${enc(sid)}/messages`);
      if (sid !== sessionId) return; // another session was opened meanwhile
      const asked = new Map(messages.filter((m) => m.role === "user").map((m) => [m.turn, m.content]));
      list.append(...messages.map((m) => (m.role === "user" ? questionItem(m.content)
        : answerItem({ ...m, question: asked.get(m.turn) }).li)));
      list.lastElementChild && list.lastElementChild.scrollIntoView({ block: "nearest" });
    } catch (err) {
      fail(err);
    }
  }

  function opening() {
    const text = assistant && assistant.prompt.opening;
    return text ? [el("li", { class: "msg answer opening" }, el("div", { class: "msg-who" }, assistant.name),
      el("div", { class: "md" }, MD.render(text)))] : [];
  }

  // --- messages ------------------------------------------------------------------------------------
  function questionItem(text) {
    return el("li", { class: "msg question", "data-testid": "question" },
      el("div", { class: "msg-who" }, t("chat.you")), el("div", { class: "msg-text" }, text));
  }

  /** An answer's list item; `m`: a stored message or a finished reply (content, references, citations,
      feedback, id...). Without `m.id` it is being written (streaming). */
  function answerItem(m) {
    const body = el("div", { class: "md", "data-testid": "answer-text" });
    const extras = el("div", { class: "msg-extras" });
    const li = el("li", { class: "msg answer", "data-testid": "answer" },
      el("div", { class: "msg-who" }, assistant.name), body, extras);
    const item = { li, body, extras };
    if (m) fill(item, m);
    return item;
  }

  function fill(item, m) {
    const refs = new Map((m.references || []).map((r) => [r.id, r]));
    const verified = new Map(); // reference id -> its citations still in the text, in sentence order
    for (const c of m.citations || []) {
      if (c.supported === false) continue;
      if (!verified.has(c.id)) verified.set(c.id, []);
      verified.get(c.id).push(c);
    }
    for (const cs of verified.values()) cs.sort((a, b) => a.sentence - b.sentence);
    const seen = new Map();
    const cite = (n) => {
      const r = refs.get(n);
      if (!r) return null;
      const k = seen.get(n) || 0;
      seen.set(n, k + 1);
      const cs = verified.get(n) || [];
      const c = cs[k] || cs[cs.length - 1] || null;
      return citeButton(m, r, c);
    };
    item.li.dataset.state = "done";
    item.li.removeAttribute("aria-busy");
    item.li.classList.toggle("insufficient", Boolean(m.insufficient));
    if (m.id) item.li.dataset.messageId = m.id;
    item.body.replaceChildren(MD.render(m.content, { cite }));
    const extras = [];
    const stale = (m.references || []).filter((r) => r.status !== "current");
    if (stale.length) {
      const deleted = stale.some((r) => r.status === "deleted");
      extras.push(el("p", { class: "warn", "data-testid": "superseded-warning" },
        t(deleted ? "chat.warn_deleted" : "chat.warn_superseded")));
    }
    if (m.truncated) extras.push(el("p", { class: "hint" }, t("chat.truncated")));
    for (const note of m.notes || []) extras.push(el("p", { class: "hint" }, note));
    const scope = m.explain && m.explain.scope;
    if (scope && scope.status === "scoped") {
      const values = Object.entries(scope.values).map(([k, v]) => `${k} ${v}`).join(", ");
      extras.push(el("p", { class: "hint", "data-testid": "scope-used" }, t("chat.scope_used", { values })));
    }
    if (m.explain && m.explain.standalone_question && m.question && m.explain.standalone_question !== m.question) {
      extras.push(el("p", { class: "hint" }, t("chat.searched_as", { q: m.explain.standalone_question })));
    }
    const figures = [...refs.values()].filter((r) => r.figure);
    if (figures.length) { // a cited figure is shown with the answer; a click opens its citation
      extras.push(el("div", { class: "answer-figures" }, figures.map((r) => el("button", {
        type: "button", class: "figure-thumb", "data-testid": "answer-figure",
        onclick: (e) => openPanel(m, r, (verified.get(r.id) || [])[0] || null, e.currentTarget) },
      el("img", { src: r.figure, alt: r.content.slice(0, 200), loading: "lazy" })))));
    }
    if (refs.size) {
      extras.push(el("div", { class: "sources" }, el("span", { class: "hint" }, t("chat.sources")),
        el("ol", {}, [...refs.values()].map((r) => {
          const cs = verified.get(r.id) || [];
          const pages = RLPages.pagesOf(r.positions);
          const where = pages.length ? ` · ${t("chat.pages", { pages: pages.join(", ") })}` : "";
          return el("li", {}, el("button", { type: "button", class: "link", "data-testid": "source",
            onclick: (e) => openPanel(m, r, cs[0] || null, e.currentTarget) },
          `${r.id + 1}. ${r.document_name}${where}`),
          r.status !== "current" ? el("span", { class: `badge ref-${r.status}` }, t(`chat.status.${r.status}`)) : null);
        }))));
    }
    if (m.id) extras.push(feedbackRow(m));
    item.extras.replaceChildren(...extras);
  }

  function verdictOf(c) {
    return c && VERDICTS.has(c.verdict) ? c.verdict : "unverified";
  }

  function citeButton(m, r, c) {
    const verdict = verdictOf(c);
    const label = t("chat.cite_label", { n: r.id + 1, doc: r.document_name, verdict: t(`chat.verdict.${verdict}`) });
    const btn = el("button", { type: "button", class: `cite ${verdict}`, "aria-label": label, title: label,
      "data-testid": "cite", dataset: { ref: r.id, verdict }, onclick: () => openPanel(m, r, c, btn) },
    String(r.id + 1));
    return btn;
  }

  function feedbackRow(m) {
    const row = el("div", { class: "feedback", role: "group", "aria-label": t("chat.feedback") });
    const show = (rating) => {
      for (const b of row.querySelectorAll("button")) {
        b.setAttribute("aria-pressed", String(b.dataset.rating === rating));
      }
    };
    const rate = async (event, rating) => {
      const current = m.feedback ? m.feedback.rating : null;
      const next = current === rating ? null : rating;
      const saved = await RL.busy(event.currentTarget, "chat-error", () =>
        api("PUT", `${chatPath()}/sessions/${enc(m.session_id)}/messages/${enc(m.id)}/feedback`, { rating: next }));
      if (!saved) return;
      m.feedback = saved.feedback;
      show(saved.feedback ? saved.feedback.rating : null);
      RL.flash(t(saved.feedback ? "chat.feedback_saved" : "chat.feedback_removed"));
    };
    row.append(
      el("button", { type: "button", class: "small", "data-rating": "up", "data-testid": "feedback-up",
        onclick: (e) => rate(e, "up") }, t("chat.helpful")),
      el("button", { type: "button", class: "small", "data-rating": "down", "data-testid": "feedback-down",
        onclick: (e) => rate(e, "down") }, t("chat.not_helpful")));
    show(m.feedback ? m.feedback.rating : null);
    return row;
  }

  // --- asking: the answer streamed -------------------------------------------------------------------
  function pendingCite(n) {
    return el("span", { class: "cite pending" }, String(n + 1));
  }

  async function ask(text) {
    const variables = {};
    document.querySelectorAll("#ask-variables [data-variable]").forEach((input) => {
      if (input.value.trim()) variables[input.dataset.variable] = input.value.trim();
    });
    RL.showError("ask-error", "");
    const opened = sessionId;
    list.append(questionItem(text));
    const item = answerItem(null);
    item.li.dataset.state = "streaming";
    item.li.setAttribute("aria-busy", "true");
    item.body.append(el("span", { class: "typing" }, t("chat.writing")));
    list.append(item.li);
    item.li.scrollIntoView({ block: "nearest" });
    question.value = "";
    streaming = new AbortController();
    const controller = streaming;
    setAsking(true);
    let written = "";
    try {
      const response = await fetch(`/api/v1${chatPath()}/completions`, {
        method: "POST", credentials: "same-origin", signal: controller.signal,
        headers: { "Content-Type": "application/json", Accept: "text/event-stream",
          "X-CSRF-Token": RL.csrf() },
        body: JSON.stringify({ question: text, session_id: opened, stream: true, variables }),
      });
      if (response.status === 401) {
        location.assign(`${RL.UI}/login?next=${enc(location.pathname + location.search)}`);
        return;
      }
      if (!response.ok) {
        let data = null;
        try {
          data = await response.json();
        } catch (err) {
          data = null;
        }
        throw new RL.ApiError(response.status,
          data && data.message ? data.message : `${response.status} ${response.statusText}`);
      }
      const reader = response.body.getReader();
      const decoder = new TextDecoder();
      let buffer = "";
      let reply = null;
      let failure = null;
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buffer = (buffer + decoder.decode(value, { stream: true })).replace(/\r\n/g, "\n");
        let grew = false;
        for (let cut = buffer.indexOf("\n\n"); cut !== -1; cut = buffer.indexOf("\n\n")) {
          const data = buffer.slice(0, cut).split("\n").filter((line) => line.startsWith("data:"))
            .map((line) => line.slice(5).replace(/^ /, "")).join("\n");
          buffer = buffer.slice(cut + 2);
          if (!data || data === "[DONE]") continue;
          const event = JSON.parse(data);
          if (typeof event.delta === "string") {
            written += event.delta;
            grew = true;
          } else if (event.reply) {
            reply = event.reply;
          } else if (event.error) {
            failure = event.message || event.error;
          }
        }
        if (grew && !reply) item.body.replaceChildren(MD.render(written, { cite: pendingCite }));
      }
      if (failure) throw new Error(failure);
      if (!reply) throw new Error(t("chat.cut_off"));
      sessionId = reply.session_id;
      // the question box is free again before the answer shows as done: a question sent the moment
      // it shows is asked, not dropped while the session list reloads
      if (streaming === controller) streaming = null;
      setAsking(false);
      fill(item, { ...reply, id: reply.message_id, session_id: reply.session_id, content: reply.answer,
        feedback: null, question: text });
      say(t("chat.answered"));
      if (opened !== reply.session_id) history.replaceState(null, "", address(sessionId));
      await loadSessions();
    } catch (err) {
      item.li.dataset.state = "failed";
      item.li.removeAttribute("aria-busy");
      const stopped = err && err.name === "AbortError";
      item.body.replaceChildren(...(written ? [MD.render(written)] : []));
      item.extras.replaceChildren(el("p", { class: stopped ? "hint" : "reason" },
        stopped ? t("chat.stopped") : err.message));
      if (!stopped) {
        RL.showError("ask-error", err);
        if (!question.value) question.value = text; // to send again
      }
    } finally {
      if (streaming === controller) streaming = null;
      if (!streaming) setAsking(false); // a next question may already be streaming
    }
  }

  function setAsking(on) {
    document.getElementById("ask-send").disabled = on;
    document.getElementById("ask-stop").hidden = !on;
    form.setAttribute("aria-busy", String(on));
  }

  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    await started; // a question typed while the page opens its session is asked in it, not wiped by it
    const text = question.value.trim();
    if (!text || streaming || !assistant) return;
    ask(text);
  });
  question.addEventListener("keydown", (e) => {
    if (e.key === "Enter" && !e.shiftKey && !e.isComposing) {
      e.preventDefault();
      form.requestSubmit();
    }
  });
  document.getElementById("ask-stop").addEventListener("click", () => { if (streaming) streaming.abort(); });

  // --- the citation panel --------------------------------------------------------------------------
  function openPanel(m, r, c, opener) {
    const token = ++panelToken;
    document.querySelectorAll(".cite.active").forEach((b) => b.classList.remove("active"));
    if (opener && opener.classList.contains("cite")) opener.classList.add("active");
    panelOpener = opener;
    const verdict = verdictOf(c);
    document.getElementById("cite-heading").textContent = t("chat.reference", { n: r.id + 1 });
    const pages = el("div", { class: "cite-pages", "data-testid": "cite-pages" });
    const links = [];
    if (r.kb_id && r.status !== "deleted") {
      const at = r.chunk_id ? `?chunk=${enc(r.chunk_id)}` : "";
      links.push(el("a", { href: `${RL.UI}/kb/${enc(r.kb_id)}/documents/${enc(r.doc_id)}${at}` }, t("chat.open_chunks")));
    }
    if (r.file) links.push(el("a", { href: r.file, download: "" }, t("chat.open_file")));
    if (r.source_url && /^https?:\/\//i.test(r.source_url)) {  // a synced document: back to its source (http(s) only)
      links.push(el("a", { href: r.source_url, target: "_blank", rel: "noopener noreferrer",
        "data-testid": "cite-source" }, t("chat.open_source")));
    }
    const body = [
      el("h3", { class: "cite-doc", "data-testid": "cite-doc" }, r.document_name),
      el("p", { class: "cite-badges" },
        el("span", { class: `badge ref-${r.status}`, "data-testid": "cite-status" }, t(`chat.status.${r.status}`)),
        el("span", { class: `badge verdict-${verdict}`, "data-testid": "cite-verdict" },
          c && typeof c.support === "number" ? t("chat.verdict_score", { verdict: t(`chat.verdict.${verdict}`),
            score: Math.round(c.support * 100) }) : t(`chat.verdict.${verdict}`)),
        c && c.inserted ? el("span", { class: "badge" }, t("chat.inserted")) : null),
      r.status === "superseded" ? el("p", { class: "warn" }, t("chat.ref_superseded")) : null,
      r.status === "superseded" && r.changes ? changesOf(r) : null,
      r.status === "deleted" ? el("p", { class: "warn" }, t("chat.ref_deleted")) : null,
      c && c.sentence_text ? el("dl", { class: "cite-match" },
        el("dt", {}, t("chat.answer_sentence")), el("dd", {}, c.sentence_text),
        c.supporting_sentence ? el("dt", {}, t("chat.source_sentence")) : null,
        c.supporting_sentence ? el("dd", {}, c.supporting_sentence) : null) : null,
      r.figure ? el("figure", { class: "cite-figure", "data-testid": "cite-figure" },
        el("img", { src: r.figure, alt: r.content.slice(0, 200) })) : null,
      el("h4", {}, t("chat.cited_text")),
      citedText(r, c && c.supporting_sentence),
      pages,
      links.length ? el("p", { class: "actions" }, links) : null,
    ];
    document.getElementById("cite-body").replaceChildren(...body.filter(Boolean));
    panel.hidden = false;
    layout.classList.add("panel-open");
    document.body.classList.add("cite-overlay");
    setBehind(window.matchMedia("(max-width: 900px)").matches); // a full-screen overlay on a phone
    document.getElementById("cite-close").focus({ preventScroll: true });
    panel.scrollTop = 0;
    const mark = panel.querySelector(".cite-text mark, .cite-text tr.marked");
    if (mark) { // the supporting sentence (or its row, under the table's header) in its own scroll box
      const box = mark.closest(".table-scroll, .cite-text");
      const head = box.querySelector("thead");
      const over = head ? head.getBoundingClientRect().height : 16;
      box.scrollTop += mark.getBoundingClientRect().top - box.getBoundingClientRect().top - over;
    }
    showPages(r, pages, token);
  }

  /** The cited text: a table chunk's rows as a small table (from the reference's `table` when it has
      one, else read back from its text), its row holding the supporting sentence marked; other text
      as it is, that sentence marked. */
  function citedText(r, sentence) {
    const table = r.table ? RLTables.fromRows(r.table, sentence) : RLTables.fromText(r.content, sentence);
    if (table) return el("div", { class: "cite-text cite-table", "data-testid": "cite-text" }, table);
    return el("blockquote", { class: "cite-text", "data-testid": "cite-text" }, marked(r.content, sentence));
  }

  /** The cited text with the sentence that best supports the answer marked. */
  function marked(content, sentence) {
    const at = sentence ? content.indexOf(sentence) : -1;
    if (at < 0) return [content];
    return [content.slice(0, at), el("mark", {}, sentence), content.slice(at + sentence.length)];
  }

  async function showPages(r, box, token) {
    const numbers = RLPages.pagesOf(r.positions);
    if (!numbers.length || !r.pages) {
      if (r.preview) {
        box.append(el("p", {}, el("a", { href: r.preview, target: "_blank", rel: "noopener" }, t("chat.open_view"))));
      }
      return;
    }
    box.append(el("p", { class: "hint" }, t("chat.loading_pages")));
    let sizes;
    try {
      ({ pages: sizes } = await api("GET", r.pages.replace(/^\/api\/v1/, "")));
    } catch (err) {
      if (token === panelToken) box.replaceChildren(el("p", { class: "reason" }, err.message));
      return;
    }
    if (token !== panelToken) return;
    // the whole document in the viewer, the cited pages' regions drawn, opened at the first region
    const cited = new Set(numbers);
    const shown = sizes.filter((p) => p.image && p.width > 0 && p.height > 0);
    if (!shown.some((p) => cited.has(p.page))) {
      box.replaceChildren();
      return;
    }
    const view = RLPages.viewer(shown, {
      label: t("chat.pages_of", { doc: r.document_name }), thumbs: false,
      frameAttrs: (p) => (cited.has(p.page) ? { "data-testid": "cite-page", loading: "eager" } : {}),
    });
    for (const [n, frame] of view.frames) {
      if (!cited.has(n)) continue;
      frame.classList.add("cite-frame");
      for (const pos of r.positions) {
        if (pos.length >= 5 && pos[0] === n) {
          frame.append(RLPages.place(el("div", { class: "region cited", "data-testid": "cite-region" }), frame, pos));
        }
      }
    }
    box.replaceChildren(view.node);
    const first = box.querySelector(".region");
    if (first) {
      const img = first.parentElement.querySelector("img");
      const reveal = () => { if (token === panelToken) view.reveal(first); };
      if (img.complete) reveal();
      else img.addEventListener("load", reveal, { once: true });
    }
  }

  /** While the panel covers the screen, what lies behind it takes no focus (Tab stays in the panel). */
  function setBehind(inert) {
    const main = document.getElementById("main");
    const behind = [...[...document.body.children].filter((n) => !n.contains(panel)),
      ...[...main.children].filter((n) => !n.contains(panel)), ...[...layout.children].filter((n) => n !== panel)];
    for (const n of behind) {
      if (inert) n.setAttribute("inert", "");
      else n.removeAttribute("inert");
    }
  }

  function closePanel(restore = true) {
    if (panel.hidden) return;
    setBehind(false);
    panel.hidden = true;
    panelToken += 1;
    layout.classList.remove("panel-open");
    document.body.classList.remove("cite-overlay");
    document.querySelectorAll(".cite.active").forEach((b) => b.classList.remove("active"));
    if (restore && panelOpener && panelOpener.isConnected) panelOpener.focus();
    panelOpener = null;
  }

  document.getElementById("cite-close").addEventListener("click", () => closePanel());
  panel.addEventListener("keydown", (e) => {
    if (e.key === "Escape") {
      e.preventDefault();
      closePanel();
    }
  });

  // --- the side column on a phone --------------------------------------------------------------------
  const toggle = document.getElementById("side-toggle");
  function closeSide() {
    layout.classList.remove("side-open");
    toggle.setAttribute("aria-expanded", "false");
  }
  toggle.addEventListener("click", () => {
    const open = !layout.classList.contains("side-open");
    layout.classList.toggle("side-open", open);
    toggle.setAttribute("aria-expanded", String(open));
  });

  document.getElementById("session-new").addEventListener("click", () => {
    openSession(null, true);
    closeSide();
  });

  window.addEventListener("popstate", () => {
    if (assistant) openSession(new URLSearchParams(location.search).get("session") || null, false);
  });

  // --- the assistant's settings ------------------------------------------------------------------------
  const DEFAULTS = {
    name: "", description: "", dataset_ids: [], permission: "me", top_n: 6, rerank: true,
    llm: { temperature: 0.1, top_p: 0.3, max_tokens: 1024, presence_penalty: 0.4, frequency_penalty: 0.7 },
    prompt: { system: null, variables: [], opening: "", empty_response: null, quote: true, rewrite_followups: true,
      cross_languages: [], keyword: false },
    retrieval: { similarity_threshold: null, vector_similarity_weight: null, mode: "hybrid", fusion: null,
      toc_enhance: false, route: false },
    scope: { keys: [] },
  };
  const LLM_FIELDS = ["temperature", "top_p", "max_tokens", "presence_penalty", "frequency_penalty"];
  let editing = null; // the assistant being edited; null: a new one

  async function openDialog(which) {
    editing = which;
    const a = which || DEFAULTS;
    RL.showError("assistant-error", "");
    document.getElementById("assistant-dialog-title").textContent =
      which ? t("chat.assistant_edit_title", { name: which.name }) : t("chat.assistant_new");
    document.getElementById("assistant-delete").hidden = !which;
    const f = aform.elements;
    f.name.value = a.name;
    f.description.value = a.description || "";
    f.permission.value = a.permission || "me";
    f.opening.value = a.prompt.opening || "";
    f.empty_response.value = a.prompt.empty_response || "";
    f.system.value = a.prompt.system || "";
    f.variables.value = (a.prompt.variables || []).map((v) => (v.optional ? v.name : `${v.name}*`)).join(", ");
    f.cross_languages.value = (a.prompt.cross_languages || []).join(", ");
    f.quote.checked = a.prompt.quote !== false;
    f.rewrite_followups.checked = a.prompt.rewrite_followups !== false;
    f.keyword.checked = Boolean(a.prompt.keyword);
    f.top_n.value = a.top_n;
    f.scope_keys.value = ((a.scope && a.scope.keys) || [])
      .map((k) => (k.match === "equal" ? k.key : `${k.key}:${k.match}`)).join(", ");
    f.rerank.checked = a.rerank !== false;
    const r = a.retrieval || {};
    f.similarity_threshold.value = r.similarity_threshold ?? "";
    f.vector_similarity_weight.value = r.vector_similarity_weight ?? "";
    f.mode.value = r.mode || "hybrid";
    f.fusion.value = r.fusion || "";
    f.toc_enhance.checked = Boolean(r.toc_enhance);
    f.route.checked = Boolean(r.route);
    for (const k of LLM_FIELDS) f[k].value = a.llm[k] ?? "";
    dialog.showModal();
    f.name.focus();
    await Promise.all([fillDatasets(a), fillModel()]);
  }

  /** The knowledge bases to choose from; saving waits for them (it would drop the assistant's own). */
  async function fillDatasets(a) {
    const box = document.getElementById("a-datasets");
    const save = document.getElementById("assistant-save");
    save.disabled = true;
    box.replaceChildren(el("p", { class: "hint" }, t("chat.loading")));
    try {
      const { datasets } = await api("GET", "/datasets?page_size=1000");
      const chosen = new Set(a.dataset_ids || []);
      const gone = (a.datasets || []).filter((d) => d.state !== "ok");
      box.replaceChildren(...datasets.map((kb) => el("label", { class: "check" },
        el("input", { type: "checkbox", name: "dataset", value: kb.id,
          checked: chosen.has(kb.id) || (datasets.length === 1 && !editing) }),
        ` ${kb.name}`)),
      ...gone.map((d) => el("p", { class: "hint" },
        t("chat.a_dataset_gone", { name: d.name, state: t(`chat.kb_${d.state}`) }))));
      document.getElementById("a-datasets-empty").hidden = datasets.length > 0;
      save.disabled = false;
    } catch (err) {
      box.replaceChildren(el("p", { class: "reason" }, err.message));
    }
  }

  // without a chat model every answer is extractive: the page says so, with a link to set one
  async function showAnswerMode() {
    try {
      const { in_use: inUse } = await api("GET", "/providers");
      const chat = inUse.find((m) => m.kind === "chat");
      document.getElementById("chat-extractive").hidden = Boolean(chat && chat.model);
    } catch (err) {
      document.getElementById("chat-extractive").hidden = true;
    }
  }

  async function fillModel() {
    const hint = document.getElementById("a-model");
    try {
      const { in_use: inUse } = await api("GET", "/providers");
      const chat = inUse.find((m) => m.kind === "chat");
      hint.textContent = chat && chat.model ? t("chat.a_model", { model: chat.model }) : t("chat.a_no_model");
    } catch (err) {
      hint.textContent = "";
    }
  }

  function numberOr(value, fallback) {
    return value.trim() === "" ? fallback : Number(value);
  }

  function assistantBody() {
    const f = aform.elements;
    const words = (s) => s.split(/[,，]/).map((w) => w.trim()).filter(Boolean);
    const llm = {};
    for (const k of LLM_FIELDS) {
      if (f[k].value.trim() !== "") llm[k] = Number(f[k].value);
    }
    return {
      name: f.name.value.trim(), description: f.description.value.trim(), permission: f.permission.value,
      dataset_ids: [...aform.querySelectorAll("input[name=dataset]:checked")].map((i) => i.value),
      top_n: numberOr(f.top_n.value, 6), rerank: f.rerank.checked, llm,
      // the required scope keys: "model, firmware:range"; the aliases and names an assistant has are kept
      scope: { keys: words(f.scope_keys.value).map((w) => {
        const [key, match] = w.split(":").map((x) => x.trim());
        const had = ((editing && editing.scope && editing.scope.keys) || []).find((k) => k.key === key);
        return { ...(had || {}), key, match: match || "equal" };
      }) },
      prompt: {
        opening: f.opening.value, empty_response: f.empty_response.value.trim() || null,
        system: f.system.value.trim() || null, quote: f.quote.checked, rewrite_followups: f.rewrite_followups.checked,
        keyword: f.keyword.checked, cross_languages: words(f.cross_languages.value),
        variables: words(f.variables.value)
          .map((v) => ({ name: v.replace(/\*$/, "").trim(), optional: !v.endsWith("*") })),
      },
      retrieval: {
        similarity_threshold: numberOr(f.similarity_threshold.value, null),
        vector_similarity_weight: numberOr(f.vector_similarity_weight.value, null),
        mode: f.mode.value, fusion: f.fusion.value || null, toc_enhance: f.toc_enhance.checked, route: f.route.checked,
      },
    };
  }

  aform.addEventListener("submit", async (e) => {
    e.preventDefault();
    const body = assistantBody();
    if (!body.dataset_ids.length) {
      RL.showError("assistant-error", t("chat.a_datasets_required"));
      return;
    }
    const saved = await RL.busy(document.getElementById("assistant-save"), "assistant-error", () =>
      (editing ? api("PATCH", `/chats/${enc(editing.id)}`, body) : api("POST", "/chats", body)));
    if (!saved) return;
    dialog.close();
    if (!editing) {
      location.assign(`${RL.UI}/chat/${enc(saved.id)}`);
      return;
    }
    assistant = saved;
    RL.flash(t("common.saved"));
    showAssistant();
    await loadAssistants();
    renderSessions();
  });

  document.getElementById("assistant-cancel").addEventListener("click", () => dialog.close());
  document.getElementById("assistant-delete").addEventListener("click", async (e) => {
    if (!editing || !confirm(t("chat.assistant_delete_confirm", { name: editing.name }))) return;
    const done = await RL.busy(e.currentTarget, "assistant-error", async () => {
      await api("DELETE", `/chats/${enc(editing.id)}`);
      return true;
    });
    if (done) location.assign(`${RL.UI}/chat`);
  });
  document.getElementById("assistant-new").addEventListener("click", () => openDialog(null));
  document.getElementById("assistant-edit").addEventListener("click", () => { if (assistant) openDialog(assistant); });

  showAnswerMode();
  started = (async () => {
    try {
      await loadAssistants();
    } catch (err) {
      fail(err);
      return;
    }
    await openAssistant();
    renderAssistants(); // marks the open one (a name in the address, or the first)
  })();
});
