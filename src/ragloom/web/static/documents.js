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

  async function loadDataset() {
    try {
      const kb = await api("GET", `/datasets/${encodeURIComponent(kbId)}`);
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
        doc.message) : null,
    ];
  }

  function render(doc) {
    let tr = rows.get(doc.id);
    const fingerprint = JSON.stringify([doc.status, doc.progress, doc.message, doc.chunk_count, doc.name]);
    if (!tr) {
      tr = el("tr", { dataset: { docId: doc.id } }, el("td", { class: "name" }), el("td", { class: "status" }),
        el("td", { class: "wide num" }), el("td", { class: "acts" }));
      rows.set(doc.id, tr);
    }
    if (tr.dataset.fingerprint === fingerprint) return tr;
    const [name, status, chunks, acts] = tr.children;
    name.replaceChildren(el("a", { href: `${RL.UI}/kb/${encodeURIComponent(kbId)}/documents/${encodeURIComponent(doc.id)}`,
      title: t("docs.open", { name: doc.name }) }, doc.name));
    status.replaceChildren(...statusCell(doc).filter(Boolean));
    chunks.replaceChildren(String(doc.chunk_count));
    if (tr.dataset.status !== doc.status) acts.replaceChildren(actions(doc)); // keeps focus while it runs
    tr.dataset.status = doc.status;
    tr.dataset.fingerprint = fingerprint;
    return tr;
  }

  function summary(docs) {
    const counts = {};
    for (const d of docs) counts[d.status] = (counts[d.status] || 0) + 1;
    return Object.entries(counts).map(([s, n]) => `${t(`status.${s}`)}: ${n}`).join(" · ");
  }

  async function load() {
    clearTimeout(timer);
    try {
      const { documents, total } = await api("GET", `${base}?page_size=1000`);
      const seen = new Set(documents.map((d) => d.id));
      for (const [id, tr] of rows) if (!seen.has(id)) { tr.remove(); rows.delete(id); }
      documents.forEach((doc, i) => {
        const tr = render(doc);
        if (tbody.children[i] !== tr) tbody.insertBefore(tr, tbody.children[i] || null);
      });
      document.getElementById("docs-empty").hidden = total > 0;
      document.getElementById("docs-table").hidden = total === 0;
      document.getElementById("docs-summary").textContent = summary(documents);
      if (documents.some((d) => ACTIVE.has(d.status))) timer = setTimeout(load, 1000);
    } catch (err) {
      RL.showError("docs-error", err);
      if (err.status !== 404 && err.status !== 403) timer = setTimeout(load, 5000);
    }
  }

  async function act(event, method, path, body) {
    await RL.busy(event.currentTarget, "docs-error", () => api(method, base + path, body));
    load();
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
