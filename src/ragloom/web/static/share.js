/* A share link's chat page (/share/{token}): a visitor without an account asks the assistant through
   /api/v1/share/{token}. Answers stream in, their [ID:n] citations open the cited text and, when the
   link shows pages, the cited page with its region drawn. The visitor is an id kept in this browser's
   storage for the link (sent with every request: in an iframe on another site the cookie is not). */
"use strict";

(() => {
  const body = document.body;
  const token = body.dataset.token;
  const showPages = body.dataset.showPages === "true";
  const form = document.getElementById("share-form");
  if (!form) return; // the link is not available: the page says why
  const base = `/api/v1/share/${encodeURIComponent(token)}`;
  const log = document.getElementById("share-log");
  const input = document.getElementById("share-q");
  const send = document.getElementById("share-send");
  const panel = document.getElementById("share-cite");
  const t = RL.t;
  let sessionId = null;

  function visitorId() {
    const key = `ragloom_visitor:${token}`;
    let id = null;
    try { id = localStorage.getItem(key); } catch (e) { /* storage refused: a new id each page load */ }
    if (!id || !/^[A-Za-z0-9_-]{16,64}$/.test(id)) {
      const bytes = crypto.getRandomValues(new Uint8Array(18));
      id = btoa(String.fromCharCode(...bytes)).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
      try { localStorage.setItem(key, id); } catch (e) { /* kept for this page only */ }
    }
    return id;
  }
  const visitor = visitorId();

  function message(role, text) {
    const node = RL.el("div", { class: `share-msg ${role}` }, text || "");
    log.append(node);
    node.scrollIntoView({ block: "end" });
    return node;
  }

  async function openCitation(ref) {
    panel.hidden = false;
    document.getElementById("share-cite-title").textContent = ref.document_name;
    const holder = document.getElementById("share-cite-body");
    holder.replaceChildren(RL.el("blockquote", { class: "share-quote" }, ref.content));
    if (ref.figure) {  // a cited figure: its picture, through the link
      holder.prepend(RL.el("figure", { class: "cite-figure", "data-testid": "cite-figure" },
        RL.el("img", { src: ref.figure, alt: ref.content.slice(0, 200) })));
    }
    if (!showPages || !ref.pages || !RLPages.pagesOf(ref.positions).length) return;
    try {
      const res = await fetch(ref.pages, { headers: { Accept: "application/json" } });
      if (!res.ok) return;
      const label = (n) => t("share.page", { page: n });
      for (const frame of RLPages.citedFrames((await res.json()).pages, ref.positions, label,
        { "data-testid": "cited-page" }, { "data-testid": "cited-region" })) {
        holder.append(RL.el("p", { class: "muted" }, label(Number(frame.dataset.page))), frame);
      }
    } catch (e) { /* the quote stays */ }
  }

  function feedback(bubble, reply) {
    const bar = RL.el("div", { class: "share-feedback" });
    const rate = async (rating) => {
      const url = `${base}/sessions/${reply.session_id}/messages/${reply.message_id}/feedback`;
      const res = await fetch(url, { method: "PUT", headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ rating, visitor_id: visitor }) });
      if (res.ok) bar.replaceChildren(RL.el("span", { class: "muted", "data-testid": "share-thanks" }, t("share.thanks")));
    };
    bar.append(RL.el("button", { type: "button", class: "link", onclick: () => rate("up") }, t("share.helpful")),
               RL.el("button", { type: "button", class: "link", onclick: () => rate("down") }, t("share.not_helpful")));
    bubble.append(bar);
  }

  function showReply(bubble, reply) {
    const refs = new Map(reply.references.map((r) => [r.id, r]));
    const cite = (n) => {
      const ref = refs.get(n);
      if (!ref) return document.createTextNode("");
      return RL.el("button", { type: "button", class: "cite", "data-testid": "share-cite",
        title: ref.document_name, onclick: () => openCitation(ref) }, String(n + 1));
    };
    bubble.replaceChildren(MD.render(reply.answer, { cite }));
    if (reply.references.length) {
      const list = RL.el("ol", { class: "share-sources" });
      for (const ref of reply.references) {
        list.append(RL.el("li", {}, RL.el("button", { type: "button", class: "link", onclick: () => openCitation(ref) },
          ref.document_name)));
      }
      bubble.append(RL.el("p", { class: "muted" }, t("share.sources")), list);
    }
    feedback(bubble, reply);
  }

  async function ask(question) {
    message("user", question);
    const bubble = message("assistant", t("share.thinking"));
    bubble.dataset.testid = "share-answer";
    send.disabled = true;
    try {
      const res = await fetch(`${base}/completions`, {
        method: "POST", headers: { "Content-Type": "application/json", Accept: "text/event-stream" },
        body: JSON.stringify({ question, session_id: sessionId, visitor_id: visitor, stream: true }) });
      if (!res.ok) {
        let text = res.statusText;
        try { text = (await res.json()).message || text; } catch (e) { /* not JSON */ }
        throw new Error(text);
      }
      const reader = res.body.getReader();
      const decoder = new TextDecoder();
      let buffer = "", written = "";
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buffer += decoder.decode(value, { stream: true });
        let cut;
        while ((cut = buffer.indexOf("\n\n")) >= 0) {
          const line = buffer.slice(0, cut).replace(/^data: /, "");
          buffer = buffer.slice(cut + 2);
          if (line === "[DONE]") continue;
          const event = JSON.parse(line);
          if (event.delta !== undefined) {
            written += event.delta;
            bubble.textContent = written;
          } else if (event.reply) {
            sessionId = event.reply.session_id;
            showReply(bubble, event.reply);
          } else if (event.error) {
            throw new Error(event.message);
          }
        }
      }
    } catch (err) {
      bubble.classList.add("error");
      bubble.textContent = t("share.failed", { message: err.message });
    } finally {
      send.disabled = false;
      bubble.scrollIntoView({ block: "end" });
    }
  }

  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const question = input.value.trim();
    if (!question) return;
    input.value = "";
    ask(question);
  });
  input.addEventListener("keydown", (event) => {
    if (event.key === "Enter" && !event.shiftKey) {
      event.preventDefault();
      form.requestSubmit();
    }
  });
  document.getElementById("share-cite-close").addEventListener("click", () => { panel.hidden = true; });
  document.getElementById("share-new").addEventListener("click", () => {
    sessionId = null;
    log.querySelectorAll(".share-msg:not(#share-welcome)").forEach((n) => n.remove());
    input.focus();
  });
})();
