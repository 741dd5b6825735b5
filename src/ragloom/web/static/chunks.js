/* A document's chunks: its page images (GET .../pages, <img> of .../pages/{n}.png) with every chunk's
   region drawn as a box placed in percent of its own page's size (positions are [page, left, right,
   top, bottom] in PDF points of that page; pageview.js places them), so each page is scaled on its
   own. Boxes are outlines with a light fill; a box drawn already by an earlier chunk (a table's region
   shared by chunks of a version parsed before row regions) is outlined without a fill of its own, so
   stacked boxes never add up to a solid block. Click a box to select its chunk in the list; click a
   chunk to scroll to its boxes (a table's row chunk: its rows'). Table chunks are shown as tables
   (tableview.js: header paths as grouped header rows, scrolling sideways with the header in view).
   Edit, disable/enable, delete and add call the chunk routes; edited chunks are marked. Documents
   without pages show the list only, with a link to their HTML view. */
"use strict";

document.addEventListener("DOMContentLoaded", () => {
  const { t, api, el } = RL;
  const heading = document.getElementById("doc-title");
  const kbId = heading.dataset.kbId;
  const docId = heading.dataset.docId;
  const base = `/datasets/${encodeURIComponent(kbId)}/documents/${encodeURIComponent(docId)}`;
  const HIDDEN = new Set(["parent", "toc"]); // rows no one reads: they follow their chunks
  const ACTIVE = new Set(["queued", "running"]);
  const list = document.getElementById("chunk-list");
  const filter = document.getElementById("chunk-filter");
  const layout = document.getElementById("chunk-layout");
  const frames = new Map(); // page number -> its .page-frame
  const items = new Map(); // chunk id -> its <li>
  const regions = new Map(); // chunk id -> its region buttons
  let chunks = [];
  let selected = null;
  let viewer = null; // pageview.js's document viewer of the shown version's pages
  let shownVersion = null;
  let timer = null;

  const fail = (err) => RL.showError("chunks-error", err);

  // --- the document and its pages ----------------------------------------------------------------
  async function loadDocument() {
    clearTimeout(timer);
    try {
      const doc = await api("GET", base);
      heading.textContent = doc.name;
      document.title = `${doc.name} · ragloom`;
      const state = document.getElementById("doc-state");
      if (ACTIVE.has(doc.status)) {
        state.textContent = t("chunks.processing", { pct: Math.round((Number(doc.progress) || 0) * 100) });
        timer = setTimeout(loadDocument, 1000);
      } else {
        state.textContent = doc.status === "failed" ? doc.message : "";
      }
      if (doc.active_version_id !== shownVersion) {
        const first = shownVersion === null;
        shownVersion = doc.active_version_id;
        await loadPages();
        await loadChunks();
        // opened from a citation (?chunk=ID): that chunk selected, its region in the middle of the view
        const asked = first ? new URLSearchParams(location.search).get("chunk") : null;
        if (asked && items.has(asked)) {
          select(asked, "list");
          items.get(asked).scrollIntoView({ block: "nearest" });
        }
      }
    } catch (err) {
      fail(err);
    }
  }

  async function loadDataset() {
    try {
      const kb = await api("GET", `/datasets/${encodeURIComponent(kbId)}`);
      document.getElementById("kb-crumb").textContent = kb.name;
    } catch (err) {
      /* the document's own request reports a missing knowledge base */
    }
  }

  async function loadPages() {
    const { pages } = await api("GET", `${base}/pages`);
    const box = document.getElementById("pages");
    frames.clear();
    const shown = pages.filter((p) => p.image && p.width > 0 && p.height > 0);
    viewer = RLPages.viewer(shown, { label: t("chunks.pages"), frameAttrs: () => ({ "data-testid": "page-image" }) });
    for (const [n, frame] of viewer.frames) frames.set(n, frame);
    box.replaceChildren(viewer.node);
    layout.classList.toggle("no-pages", shown.length === 0);
    document.getElementById("no-pages").hidden = shown.length > 0;
    const view = document.getElementById("doc-view");
    view.hidden = shown.length > 0 || !shownVersion;
    view.setAttribute("href", `/api/v1${base}/preview`);
  }

  // --- the chunks ----------------------------------------------------------------------------------
  async function loadChunks() {
    const all = [];
    for (let page = 1; ; page++) {
      const listed = await api("GET", `${base}/chunks?include_hidden=true&page_size=1000&page=${page}`);
      all.push(...listed.chunks);
      if (!listed.chunks.length || all.length >= listed.total) break;
    }
    chunks = all.filter((c) => !HIDDEN.has(c.kind));
    render();
  }

  /** A table chunk as a table (tableview.js): from its rows with their header paths, else from its
      HTML; its text once edited (an edit drops the HTML: the rows no longer show what it says). */
  function body(c) {
    const stale = c.edited && !c.html;
    const table = c.kind !== "table" || stale ? null
      : c.table ? RLTables.fromRows(c.table) : c.html ? RLTables.fromHtml(c.html) : null;
    return table || el("p", { class: "chunk-text", "data-testid": "chunk-text" }, c.content);
  }

  function pagesOf(c) {
    return [...new Set((c.positions || []).map((p) => p[0]).filter((n) => n > 0))];
  }

  function item(c, n) {
    const label = t("chunks.chunk", { n });
    const li = el("li", {
      class: `chunk${c.available ? "" : " disabled"}`, tabindex: "-1", dataset: { chunkId: c.chunk_id },
      "aria-label": label,
    },
    el("div", { class: "chunk-head" },
      el("button", { type: "button", class: "link pick", onclick: () => select(c.chunk_id, "list") }, label),
      pagesOf(c).map((p) => el("span", { class: "hint" }, t("chunks.page", { n: p }))),
      c.edited ? el("span", { class: "badge edited", "data-testid": "chunk-edited" }, t("chunks.edited")) : null,
      c.available ? null : el("span", { class: "badge disabled" }, t("chunks.disabled")),
      c.kind === "table" ? el("span", { class: "badge" }, t("chunks.table")) : null),
    el("div", { class: "chunk-body" }, body(c)),
    actions(c, n, label));
    return li;
  }

  function actions(c, n, label) {
    const aria = (key) => ({ "aria-label": `${t(key)}: ${label}` });
    return el("div", { class: "row-actions" },
      RL.button(t("chunks.edit"), () => startEdit(c, n), "small", aria("chunks.edit")),
      RL.button(c.available ? t("chunks.disable") : t("chunks.enable"),
        (e) => change(e, "PATCH", c, { available: !c.available }, "chunks.saved"), "small",
        aria(c.available ? "chunks.disable" : "chunks.enable")),
      RL.button(t("chunks.delete"), (e) => {
        if (confirm(t("chunks.delete_confirm", { n }))) change(e, "DELETE", c, undefined, "chunks.deleted");
      }, "small danger", aria("chunks.delete")));
  }

  function startEdit(c, n) {
    const li = items.get(c.chunk_id);
    const holder = li.querySelector(".chunk-body");
    const area = el("textarea", { rows: Math.min(16, Math.max(4, Math.ceil(c.content.length / 60))),
      "aria-label": t("chunks.text", { n }) });
    area.value = c.content;
    holder.replaceChildren(area, el("div", { class: "actions" },
      RL.button(t("chunks.save"), (e) => change(e, "PATCH", c, { content: area.value }, "chunks.saved"), "small primary"),
      RL.button(t("chunks.cancel"), () => holder.replaceChildren(body(c)), "small")));
    area.focus();
  }

  async function change(event, method, c, payload, done) {
    const result = await RL.busy(event.currentTarget, "chunks-error",
      () => api(method, `${base}/chunks/${encodeURIComponent(c.chunk_id)}`, payload));
    if (result === undefined && method !== "DELETE") return; // the error is shown
    RL.flash(t(done));
    await loadChunks();
    if (method !== "DELETE") select(c.chunk_id, "list");
  }

  // --- drawing and selecting ------------------------------------------------------------------------
  function render() {
    items.clear();
    regions.clear();
    for (const frame of frames.values()) frame.querySelectorAll(".region").forEach((r) => r.remove());
    const drawn = new Set(); // page and box of every region drawn: one fill for boxes drawn again
    list.replaceChildren(...chunks.map((c, i) => {
      const li = item(c, i + 1);
      items.set(c.chunk_id, li);
      const boxes = [];
      for (const pos of c.positions || []) {
        const frame = frames.get(pos[0]);
        if (!frame || pos.length < 5) continue;
        const key = pos.slice(0, 5).map((v) => Math.round(Number(v))).join(",");
        const again = drawn.has(key);
        drawn.add(key);
        const box = el("button", {
          type: "button",
          class: `region${c.edited ? " edited" : ""}${c.available ? "" : " disabled"}${again ? " again" : ""}`,
          "aria-label": t("chunks.region", { n: i + 1 }), dataset: { chunkId: c.chunk_id },
          onclick: (e) => select(pickAt(e, c.chunk_id), "region"),
        });
        RLPages.place(box, frame, pos);
        frame.append(box);
        boxes.push(box);
      }
      regions.set(c.chunk_id, boxes);
      return li;
    }));
    applyFilter();
    if (selected && items.has(selected)) select(selected, null);
  }

  /** Chunks split from one paragraph share its box: a click where several boxes overlap selects the
      next of their chunks after the one selected (a keyboard press selects the focused box's own). */
  function pickAt(event, id) {
    if (event.detail === 0) return id;
    const frame = event.currentTarget.parentElement;
    const under = [...frame.querySelectorAll(".region:not([hidden])")].filter((b) => {
      const r = b.getBoundingClientRect();
      return event.clientX >= r.left && event.clientX <= r.right && event.clientY >= r.top && event.clientY <= r.bottom;
    }).map((b) => b.dataset.chunkId);
    const ids = [...new Set(under)];
    if (ids.length < 2 || !ids.includes(selected)) return id;
    return ids[(ids.indexOf(selected) + 1) % ids.length];
  }

  function select(id, from) {
    selected = id;
    for (const [cid, li] of items) li.classList.toggle("selected", cid === id);
    for (const [cid, boxes] of regions) boxes.forEach((b) => b.classList.toggle("selected", cid === id));
    const li = items.get(id);
    if (from === "region" && li) {
      li.scrollIntoView({ block: "nearest" });
      li.focus({ preventScroll: true });
    } else if (from === "list") {
      const first = (regions.get(id) || [])[0];
      if (first && viewer) viewer.reveal(first); // on any page, at any zoom
    }
  }

  function applyFilter() {
    const words = filter.value.toLowerCase().split(/\s+/).filter(Boolean);
    let shown = 0;
    for (const c of chunks) {
      const text = c.content.toLowerCase();
      const match = words.every((w) => text.includes(w));
      items.get(c.chunk_id).hidden = !match;
      (regions.get(c.chunk_id) || []).forEach((b) => { b.hidden = !match; });
      shown += match ? 1 : 0;
    }
    document.getElementById("chunks-count").textContent = t("chunks.count", { shown, total: chunks.length });
    document.getElementById("chunks-empty").hidden = shown > 0;
  }

  filter.addEventListener("input", applyFilter);

  document.getElementById("add-chunk").addEventListener("submit", async (e) => {
    e.preventDefault();
    const text = document.getElementById("add-chunk-text");
    const added = await RL.busy(e.submitter, "chunks-error",
      () => api("POST", `${base}/chunks`, { content: text.value.trim() }));
    if (!added) return;
    text.value = "";
    RL.flash(t("chunks.added"));
    await loadChunks();
    select(added.chunk_id, "region");
  });

  document.getElementById("doc-reparse").addEventListener("click", async (e) => {
    const done = await RL.busy(e.currentTarget, "chunks-error", () => api("POST", `${base}/reparse`));
    if (done) loadDocument();
  });

  loadDataset();
  loadDocument();
});
