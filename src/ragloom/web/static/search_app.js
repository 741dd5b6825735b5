/* A search page (issue 33): one question, the answer with its citations above the results, each result
   with its document, the question's terms marked in its text (as text: never markup) and its cited page
   on request. A visitor's page (/share/{token}, a link of kind search) asks /api/v1/share/{token}/search;
   a signed-in member's (/ui/search/{assistant}) asks /api/v1/chats/{assistant}/search. */
"use strict";

(() => {
  const holder = document.querySelector("[data-search-api]");
  const form = document.getElementById("search-form");
  if (!holder || !form) return;
  const member = holder.dataset.member === "true";
  const api = holder.dataset.searchApi;
  const showPages = holder.dataset.showPages === "true";
  const t = RL.t;
  const status = document.getElementById("search-status");
  const panel = document.getElementById("search-page");

  async function post(question) {
    if (member) return RL.api("POST", api, { question });
    const res = await fetch(api, { method: "POST", headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ question }) });
    let data = null;
    try { data = await res.json(); } catch (e) { /* not JSON */ }
    if (!res.ok) throw new Error((data && data.message) || res.statusText);
    return data;
  }

  function marked(text, spans) {
    const out = RL.el("p", { class: "search-snippet" });
    let at = 0;
    for (const [start, end] of spans) {
      if (start > at) out.append(text.slice(at, start));
      out.append(RL.el("mark", {}, text.slice(start, end)));
      at = end;
    }
    out.append(text.slice(at));
    return out;
  }

  async function openPage(title, pagesUrl, positions) {
    panel.hidden = false;
    document.getElementById("search-page-title").textContent = title;
    const body = document.getElementById("search-page-body");
    body.replaceChildren();
    if (!pagesUrl || !RLPages.pagesOf(positions).length) return;
    const res = await fetch(pagesUrl, { headers: { Accept: "application/json" }, credentials: "same-origin" });
    if (!res.ok) return;
    body.append(...RLPages.citedFrames((await res.json()).pages, positions, (n) => t("share.page", { page: n }),
      { "data-testid": "search-page-image" }));
  }

  function show(found) {
    const answer = document.getElementById("search-answer");
    const refs = new Map(found.references.map((r) => [r.id, r]));
    const cite = (n) => {
      const ref = refs.get(n);
      if (!ref) return document.createTextNode("");
      return RL.el("button", { type: "button", class: "cite", title: ref.document_name,
        onclick: () => openPage(ref.document_name, showPages ? ref.pages : null, ref.positions) }, String(n + 1));
    };
    document.getElementById("search-answer-text").replaceChildren(MD.render(found.answer, { cite }));
    answer.hidden = false;
    const list = document.getElementById("search-results");
    list.replaceChildren(...found.results.map((hit) => {
      const item = RL.el("li", { class: "search-hit", "data-testid": "search-hit" },
        RL.el("h3", {}, hit.document_name), marked(hit.content, hit.highlights));
      if (showPages && hit.pages && RLPages.pagesOf(hit.positions).length) {
        item.append(RL.el("button", { type: "button", class: "link", "data-testid": "search-open-page",
          onclick: () => openPage(hit.document_name, hit.pages, hit.positions) },
          t("share.page", { page: RLPages.pagesOf(hit.positions)[0] })));
      }
      return item;
    }));
    document.getElementById("search-results-box").hidden = false;
    status.textContent = t("search.count", { count: found.results.length });
  }

  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const question = document.getElementById("search-q").value.trim();
    if (!question) return;
    status.textContent = t("share.thinking");
    document.getElementById("search-send").disabled = true;
    try {
      show(await post(question));
    } catch (err) {
      status.textContent = t("share.failed", { message: err.message });
    } finally {
      document.getElementById("search-send").disabled = false;
    }
  });
  document.getElementById("search-page-close").addEventListener("click", () => { panel.hidden = true; });
})();
