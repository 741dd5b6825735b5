/* A knowledge base's documents: drag-and-drop upload (multipart POST .../documents, field "file"),
   and a live list: GET .../documents every second while any document is queued or running, rows
   updated in place (no page reload; focus stays where it is). Re-parse, cancel and delete call
   the document routes. Each name opens the document's chunks page. */
"use strict";

document.addEventListener("DOMContentLoaded", () => {
  const { t, api, el } = RL;
  const kbId = document.getElementById("kb-title").dataset.kbId;
  const base = `/datasets/${encodeURIComponent(kbId)}/documents`;
  const tbody = document.querySelector("#docs-table tbody");
  const rows = new Map(); // document id -> its <tr>
  const ACTIVE = new Set(["queued", "running"]);
  const BATCH = 50; // files per upload request (the server takes up to RAGLOOM_MAX_UPLOAD_FILES)
  let timer = null;

  let dataset = null;
  let methods = [];
  let page = 1;
  const PAGE_SIZE = 50;
  const open = new Map(); // document id -> its details <tr> (chunk method, metadata, versions)
  const filters = document.getElementById("doc-filters");

  async function loadDataset() {
    try {
      const [kb, list] = await Promise.all([api("GET", `/datasets/${encodeURIComponent(kbId)}`),
        api("GET", "/chunk-methods")]);
      dataset = kb;
      methods = list.methods.map((m) => m.name);
      document.getElementById("kb-title").textContent = kb.name;
      document.getElementById("kb-name-crumb").textContent = kb.name;
      document.title = `${kb.name} · ragloom`;
    } catch (err) {
      RL.showError("docs-error", err);
    }
  }

  function percent(doc) {
    return Math.round(Math.max(0, Math.min(1, Number(doc.progress) || 0)) * 100);
  }

  function actions(doc) {
    const list = [];
    const label = (key) => `${t(key)}: ${doc.name}`;
    list.push(RL.button(t("docs.details"), () => toggleDetails(doc.id), "small details-toggle",
      { "aria-label": label("docs.details"), "aria-expanded": open.has(doc.id) ? "true" : "false" }));
    if (ACTIVE.has(doc.status)) {
      list.push(RL.button(t("docs.cancel"), (e) => act(e, "POST", `/${doc.id}/cancel`), "small",
        { "aria-label": label("docs.cancel") }));
    } else {
      list.push(RL.button(t("docs.reparse"), (e) => act(e, "POST", `/${doc.id}/reparse`), "small",
        { "aria-label": label("docs.reparse") }));
    }
    list.push(RL.button(t("docs.delete"), (e) => {
      if (confirm(t("docs.delete_confirm", { name: doc.name }))) act(e, "DELETE", "", { ids: [doc.id] });
    }, "small danger", { "aria-label": label("docs.delete") }));
    return el("div", { class: "row-actions" }, list);
  }

  function statusCell(doc) {
    const pct = percent(doc);
    return [
      el("span", { class: `badge ${doc.status}`, "data-testid": "doc-status" }, t(`status.${doc.status}`)),
      ACTIVE.has(doc.status)
        ? el("progress", { max: 100, value: pct, "aria-label": `${doc.name}: ${pct}%` }, `${pct}%`) : null,
      ACTIVE.has(doc.status) ? el("span", { class: "pct" }, `${pct}%`) : null,
      doc.message ? el("div", { class: doc.status === "failed" ? "reason" : "hint", "data-testid": "doc-message" },
        RL.statusText(doc.message)) : null,
    ];
  }

  /** The file-type families the icons are coloured by (the extension is written on the icon). */
  const FAMILY = {
    pdf: "pdf", doc: "doc", docx: "doc", odt: "doc", rtf: "doc", txt: "text", md: "text", markdown: "text",
    xls: "sheet", xlsx: "sheet", csv: "sheet", tsv: "sheet", ods: "sheet", ppt: "slides", pptx: "slides",
    odp: "slides", png: "image", jpg: "image", jpeg: "image", gif: "image", bmp: "image", tif: "image",
    tiff: "image", webp: "image", htm: "web", html: "web", xml: "web", json: "web", eml: "mail", msg: "mail",
    mbox: "mail", epub: "doc",
  };

  /** The first page's small image when the document has one, else an icon naming its file type. */
  function thumbnail(doc) {
    const type = (doc.file_type || "").toLowerCase();
    const icon = el("span", { class: `file-icon ft-${FAMILY[type] || "other"}`, "aria-hidden": "true",
      "data-testid": "doc-icon" }, (type || "?").slice(0, 4).toUpperCase());
    if (!doc.thumbnail) return el("span", { class: "doc-thumb" }, icon);
    const img = el("img", { src: doc.thumbnail, alt: "", loading: "lazy", "data-testid": "doc-thumbnail" });
    img.addEventListener("error", () => img.replaceWith(icon), { once: true });
    return el("span", { class: "doc-thumb" }, img);
  }

  /** Bytes in the page's language: 940 B, 12.4 kB, 3.1 MB. */
  function bytes(n) {
    if (n === null || n === undefined) return null;
    const units = ["B", "kB", "MB", "GB"];
    let i = 0;
    let v = Number(n);
    while (v >= 1000 && i < units.length - 1) { v /= 1000; i += 1; }
    const shown = new Intl.NumberFormat(document.documentElement.lang || undefined,
      { maximumFractionDigits: i === 0 || v >= 100 ? 0 : 1 }).format(v);
    return `${shown} ${units[i]}`;
  }

  /** "PDF · 12 pages · 1.2 MB": what the file is, under its name. */
  function facts(doc) {
    const parts = [doc.file_type ? doc.file_type.toUpperCase() : null,
      doc.page_count ? t(doc.page_count === 1 ? "docs.pages_one" : "docs.pages", { n: doc.page_count }) : null, bytes(doc.size)].filter(Boolean);
    return parts.length ? el("div", { class: "hint doc-facts", "data-testid": "doc-facts" }, parts.join(" · ")) : null;
  }

  function render(doc) {
    let tr = rows.get(doc.id);
    const fingerprint = JSON.stringify([doc.status, doc.progress, doc.message, doc.chunk_count, doc.name,
      doc.chunk_method, doc.thumbnail, doc.size, doc.page_count]);
    if (!tr) {
      tr = el("tr", { dataset: { docId: doc.id } }, el("td", { class: "name" }), el("td", { class: "status" }),
        el("td", { class: "wide num" }), el("td", { class: "acts" }));
      rows.set(doc.id, tr);
    }
    tr.doc = doc;
    if (tr.dataset.fingerprint === fingerprint) return tr;
    const [name, status, chunks, acts] = tr.children;
    const href = `${RL.UI}/kb/${encodeURIComponent(kbId)}/documents/${encodeURIComponent(doc.id)}`;
    name.replaceChildren(el("div", { class: "doc-name" },
      el("a", { href, tabindex: "-1", "aria-hidden": "true", class: "doc-thumb-link" }, thumbnail(doc)),
      el("div", {},
        el("a", { href, title: t("docs.open", { name: doc.name }) }, doc.name),
        ...(doc.chunk_method ? [" ", el("span", { class: "badge", "data-testid": "doc-method" }, doc.chunk_method)] : []),
        facts(doc))));
    status.replaceChildren(...statusCell(doc).filter(Boolean));
    chunks.replaceChildren(String(doc.chunk_count));
    if (tr.dataset.status !== doc.status) acts.replaceChildren(actions(doc)); // keeps focus while it runs
    tr.dataset.status = doc.status;
    tr.dataset.fingerprint = fingerprint;
    return tr;
  }

  function summary(docs, total) {
    const counts = {};
    for (const d of docs) counts[d.status] = (counts[d.status] || 0) + 1;
    const parts = Object.entries(counts).map(([s, n]) => `${t(`status.${s}`)}: ${n}`);
    return [t("docs.total", { n: total }), ...parts].join(" · ");
  }

  function query() {
    const params = new URLSearchParams({ page: String(page), page_size: String(PAGE_SIZE) });
    for (const name of ["status", "type", "name"]) {
      const value = filters.elements[name].value.trim();
      if (value) params.set(name, value);
    }
    return params.toString();
  }

  async function load() {
    clearTimeout(timer);
    try {
      const { documents, total } = await api("GET", `${base}?${query()}`);
      const pages = Math.max(1, Math.ceil(total / PAGE_SIZE));
      if (page > pages) {
        page = pages;
        return load();
      }
      const seen = new Set(documents.map((d) => d.id));
      for (const [id, tr] of rows) if (!seen.has(id)) { tr.remove(); rows.delete(id); }
      for (const [id, details] of open) if (!seen.has(id)) { details.remove(); open.delete(id); }
      let at = 0;
      for (const doc of documents) {
        const tr = render(doc);
        if (tbody.children[at] !== tr) tbody.insertBefore(tr, tbody.children[at] || null);
        at += 1;
        const details = open.get(doc.id);
        if (details) {
          if (tbody.children[at] !== details) tbody.insertBefore(details, tbody.children[at] || null);
          at += 1;
        }
      }
      const filtered = [...new FormData(filters).values()].some((v) => String(v).trim());
      document.getElementById("docs-empty").hidden = total > 0 || filtered;
      document.getElementById("docs-none-match").hidden = total > 0 || !filtered;
      document.getElementById("docs-table").hidden = total === 0;
      document.getElementById("docs-summary").textContent = summary(documents, total);
      document.getElementById("pager").hidden = pages <= 1;
      document.getElementById("page-info").textContent = t("docs.page_of", { page, pages });
      document.getElementById("page-prev").disabled = page <= 1;
      document.getElementById("page-next").disabled = page >= pages;
      if (documents.some((d) => ACTIVE.has(d.status))) timer = setTimeout(load, 1000);
    } catch (err) {
      RL.showError("docs-error", err);
      if (err.status !== 404 && err.status !== 403) timer = setTimeout(load, 5000);
    }
    return undefined;
  }

  async function act(event, method, path, body) {
    await RL.busy(event.currentTarget, "docs-error", () => api(method, base + path, body));
    load();
  }

  let filterTimer = null;
  filters.addEventListener("input", () => {
    clearTimeout(filterTimer);
    filterTimer = setTimeout(() => { page = 1; load(); }, 300);
  });
  filters.addEventListener("submit", (e) => { e.preventDefault(); page = 1; load(); });
  document.getElementById("page-prev").addEventListener("click", () => { page -= 1; load(); });
  document.getElementById("page-next").addEventListener("click", () => { page += 1; load(); });

  // --- a document's details: its own chunk method, its metadata, its versions -----------------------
  function toggleDetails(id) {
    const tr = rows.get(id);
    const button = tr.querySelector(".details-toggle");
    if (open.has(id)) {
      open.get(id).remove();
      open.delete(id);
      button.setAttribute("aria-expanded", "false");
      return;
    }
    const cell = el("td", { colspan: 4 });
    const details = el("tr", { class: "doc-details", dataset: { detailsOf: id } }, cell);
    open.set(id, details);
    tr.after(details);
    button.setAttribute("aria-expanded", "true");
    fillDetails(cell, tr.doc);
  }

  /** A metadata value as typed: numbers, true/false and [lists] as JSON, the rest as text. */
  function typed(text) {
    const v = text.trim();
    if (/^(-?\d+(\.\d+)?|true|false|\[.*\])$/s.test(v)) {
      try { return JSON.parse(v); } catch (err) { /* text after all */ }
    }
    return v;
  }

  function metaRow(key, value) {
    const shown = typeof value === "string" ? value : JSON.stringify(value);
    const row = el("div", { class: "meta-row", "data-testid": "meta-row" },
      el("input", { "aria-label": t("docs.meta_key"), class: "meta-key", value: key, maxlength: 128 }),
      el("input", { "aria-label": t("docs.meta_value"), class: "meta-value", value: shown ?? "" }));
    row.append(RL.button(t("docs.meta_remove"), () => row.remove(), "small", { "aria-label": t("docs.meta_remove") }));
    return row;
  }

  async function fillDetails(cell, doc) {
    const id = doc.id;
    const errorId = `details-error-${id}`;
    const method = el("select", { id: `method-${id}`, "data-testid": "doc-method-select" },
      el("option", { value: "" }, t("docs.method_dataset", { method: dataset ? dataset.chunk_method : "" })),
      methods.map((m) => el("option", { value: m, selected: m === doc.chunk_method }, m)));
    const apply = RL.button(t("docs.method_apply"), async (e) => {
      if (!confirm(t("docs.method_confirm", { name: doc.name }))) return;
      const saved = await RL.busy(e.currentTarget, errorId,
        () => api("PATCH", `${base}/${id}`, { chunk_method: method.value || null }));
      if (saved) { RL.flash(t("docs.method_applied")); load(); }
    }, "small");
    const metaBox = el("div", { class: "meta-rows" },
      Object.entries(doc.metadata || {}).map(([k, v]) => metaRow(k, v)));
    const original = new Set(Object.keys(doc.metadata || {}));
    const saveMeta = RL.button(t("docs.meta_save"), async (e) => {
      const changes = {};
      const kept = new Set();
      for (const row of metaBox.querySelectorAll(".meta-row")) {
        const key = row.querySelector(".meta-key").value.trim();
        if (!key) continue;
        kept.add(key);
        changes[key] = typed(row.querySelector(".meta-value").value);
      }
      for (const key of original) if (!kept.has(key)) changes[key] = null;
      const saved = await RL.busy(e.currentTarget, errorId,
        () => api("PATCH", `${base}/${id}/metadata`, { metadata: changes }));
      if (saved) {
        original.clear();
        for (const key of Object.keys(saved.metadata)) original.add(key);
        metaBox.replaceChildren(...Object.entries(saved.metadata).map(([k, v]) => metaRow(k, v))); // as stored
        rows.get(id).doc = saved;
        RL.flash(t("common.saved"));
      }
    }, "small primary");
    const versionsBox = el("div", { class: "table-wrap" }, el("p", { class: "hint" }, t("docs.loading")));
    const diffBox = el("div", { class: "diff-box" });
    const newFile = el("input", { type: "file", id: `new-version-${id}`, "data-testid": "version-upload" });
    newFile.addEventListener("change", async () => {
      if (!newFile.files.length) return;
      const form = new FormData();
      form.append("file", newFile.files[0], newFile.files[0].name);
      try {
        await api("PUT", `${base}/${id}/file`, form);
        RL.flash(t("docs.version_uploaded"));
        refresh();
      } catch (err) {
        RL.showError(errorId, err);
      }
    });
    cell.replaceChildren(
      el("div", { class: "error", role: "alert", id: errorId }),
      el("h3", {}, t("docs.method")),
      el("div", { class: "actions" }, el("label", { for: `method-${id}`, class: "sr-only" }, t("docs.method")),
        method, apply),
      el("p", { class: "hint" }, t("docs.method_hint")),
      el("h3", {}, t("docs.metadata")),
      metaBox,
      el("div", { class: "actions" },
        RL.button(t("docs.meta_add"), () => metaBox.append(metaRow("", "")), "small"), saveMeta),
      el("p", { class: "hint" }, t("docs.meta_hint")),
      el("h3", {}, t("docs.versions")),
      el("div", { class: "actions" }, el("label", { for: `new-version-${id}` }, t("docs.version_upload")), newFile),
      versionsBox, diffBox);
    const refresh = async () => { load(); fillDetails(cell, (await api("GET", `${base}/${id}`))); };
    const versionAct = async (e, v, what) => {
      const done = await RL.busy(e.currentTarget, errorId, () => api("POST", `${base}/${id}/versions/${v.id}/${what}`));
      if (done) { RL.flash(done.message); refresh(); }
    };
    const showDiff = async (e, v) => {
      const d = await RL.busy(e.currentTarget, errorId,
        () => api("GET", `${base}/${id}/versions/diff?to=${encodeURIComponent(v.id)}`));
      if (!d) return;
      diffBox.replaceChildren(
        el("h3", {}, t("docs.version_diff_title", { from: d.from_version, to: d.to_version, added: d.added,
          removed: d.removed, changed: d.changed })),
        el("ul", { class: "version-diff", "data-testid": "version-diff" }, d.changes.map((c) => el("li",
          { class: `diff-${c.change}` }, el("span", { class: "badge" }, t(`docs.diff_${c.change}`)), " ",
          c.change === "changed" ? c.marked : (c.after || c.before || ""),
          c.cells.length ? el("ul", {}, c.cells.map((x) => el("li", {},
            `${x.row} · ${x.column}: ${x.before ?? "∅"} → ${x.after ?? "∅"}`))) : null))));
    };
    try {
      const { versions } = await api("GET", `${base}/${id}/versions`);
      versionsBox.replaceChildren(el("table", { class: "versions", "data-testid": "versions" },
        el("thead", {}, el("tr", {}, ["docs.version", "docs.status", "docs.version_why", "kb.chunk_method",
          "docs.chunks", "docs.created", "docs.published", "docs.version_actions"].map((k) =>
          el("th", { scope: "col" }, t(k))))),
        el("tbody", {}, versions.map((v) => el("tr", { class: v.active ? "active" : "", dataset: { version: v.number } },
          el("td", {}, `#${v.number}`, v.active ? el("span", { class: "badge done", "data-testid": "version-active" },
            t("docs.version_active")) : null),
          el("td", {}, el("span", { class: `badge ${v.status}` }, t(`version.${v.status}`)),
            v.error ? el("div", { class: "reason" }, v.error) : null),
          el("td", {}, t(`version.reason_${v.reason}`), v.created_by_name ? ` · ${v.created_by_name}` : ""),
          el("td", {}, v.chunk_method), el("td", { class: "num" }, String(v.chunk_count)),
          el("td", {}, RL.when(v.created_at)), el("td", {}, RL.when(v.published_at)),
          el("td", { class: "row-actions" },
            v.kept && !v.active ? RL.button(v.staged && !v.published_at ? t("docs.version_publish")
              : t("docs.version_activate"), (e) => versionAct(e, v, "activate"), "small",
            { "data-testid": "version-activate" }) : null,
            v.staged && v.status === "ready" && !v.published_at && !v.active ? RL.button(t("docs.version_discard"),
              (e) => versionAct(e, v, "discard"), "small danger") : null,
            v.kept ? RL.button(t("docs.version_changes"), (e) => showDiff(e, v), "small",
              { "data-testid": "version-changes" }) : null))))));
    } catch (err) {
      versionsBox.replaceChildren();
      RL.showError(errorId, err);
    }
  }

  // --- upload ---------------------------------------------------------------------------------------
  const state = document.getElementById("upload-state");

  async function upload(files) {
    if (!files.length) return;
    RL.showError("docs-error", "");
    let sent = 0;
    for (let i = 0; i < files.length; i += BATCH) {
      const form = new FormData();
      for (const f of files.slice(i, i + BATCH)) form.append("file", f, f.relativePath || f.name);
      state.textContent = t("docs.uploading", { done: sent, total: files.length });
      try {
        await api("POST", base, form);
        sent += Math.min(BATCH, files.length - i);
      } catch (err) {
        RL.showError("docs-error", err);
        break;
      }
      load();
    }
    state.textContent = t("docs.uploaded", { done: sent, total: files.length });
    load();
  }

  /** Every file under a dropped folder (a browser gives folders as FileSystemEntry objects). */
  async function filesOf(entry, prefix = "") {
    if (entry.isFile) {
      const file = await new Promise((resolve, reject) => entry.file(resolve, reject));
      file.relativePath = prefix + file.name;
      return [file];
    }
    const reader = entry.createReader();
    const out = [];
    for (;;) {
      const batch = await new Promise((resolve, reject) => reader.readEntries(resolve, reject));
      if (!batch.length) break;
      for (const child of batch) out.push(...await filesOf(child, `${prefix}${entry.name}/`));
    }
    return out;
  }

  async function dropped(transfer) {
    const entries = [...(transfer.items || [])].map((i) => i.webkitGetAsEntry && i.webkitGetAsEntry()).filter(Boolean);
    if (!entries.length) return [...transfer.files];
    const lists = await Promise.all(entries.map((e) => filesOf(e)));
    return lists.flat();
  }

  const zone = document.getElementById("dropzone");
  for (const name of ["dragenter", "dragover"]) zone.addEventListener(name, (e) => {
    e.preventDefault();
    zone.classList.add("over");
  });
  for (const name of ["dragleave", "drop"]) zone.addEventListener(name, () => zone.classList.remove("over"));
  zone.addEventListener("drop", async (e) => {
    e.preventDefault();
    upload(await dropped(e.dataTransfer));
  });
  const input = document.getElementById("file-input");
  document.getElementById("choose-files").addEventListener("click", () => input.click());
  input.addEventListener("change", () => {
    upload([...input.files]);
    input.value = "";
  });

  loadDataset();
  load();
});
