/* A knowledge base's settings: GET and PATCH /api/v1/datasets/{id}; DELETE removes it; POST .../reindex
   moves it to another embedding model. The chunk method's parameters are a form built from
   GET /chunk-methods (types, defaults and bounds: the ones the API validates against), and a live
   preview chunks a sample (a document of the knowledge base or a file) with the unsaved form values
   through POST .../chunking-preview, which stores nothing. The API's own messages are shown as is. */
"use strict";

document.addEventListener("DOMContentLoaded", async () => {
  const { t, api, el } = RL;
  const kbId = document.getElementById("settings-title").dataset.kbId;
  const path = `/datasets/${encodeURIComponent(kbId)}`;
  const form = document.getElementById("kb-settings");
  const paramsBox = document.getElementById("method-params");
  let methods = {}; // name -> {description, parameters}
  let kb = null;

  /** The message `key`, or `fallback` when the catalogue has none (a plugin's method or parameter). */
  function tx(key, fallback) {
    const text = t(key);
    return text === key ? fallback : text;
  }

  // The delimiter grammar reads the two characters \n and \t as newline and tab: show them so.
  const shown = (v) => String(v).split("\n").join("\\n").split("\t").join("\\t");

  function paramField(p, value) {
    const id = `p-${p.name}`;
    const hintId = `${id}-hint`;
    const attrs = { id, name: p.name, "aria-describedby": hintId, dataset: { type: p.type, param: p.name } };
    let input;
    if (p.type === "boolean") {
      input = el("input", { ...attrs, type: "checkbox", class: "check" });
      input.checked = Boolean(value);
    } else if (p.type === "integer" || p.type === "number") {
      input = el("input", { ...attrs, type: "number", min: p.minimum, max: p.maximum,
        step: p.type === "integer" ? 1 : "any", required: !p.nullable,
        placeholder: p.nullable ? t("settings.param_default") : null });
      input.value = value === null || value === undefined ? "" : String(value);
    } else if (p.type === "object") {
      input = el("textarea", { ...attrs, rows: 3, spellcheck: "false", class: "mono",
        placeholder: t("settings.param_object") });
      input.value = value && Object.keys(value).length ? JSON.stringify(value, null, 2) : "";
    } else {
      input = el("input", { ...attrs, maxlength: p.max_length, spellcheck: "false", class: "mono" });
      input.value = value === null || value === undefined ? "" : shown(value);
    }
    if (p.nullable) input.dataset.nullable = "1";
    return [
      el("label", { for: id }, tx(`param.${p.name}`, p.name)),
      input,
      el("p", { class: "hint span", id: hintId }, tx(`param.${p.name}.hint`, p.description),
        p.minimum !== null && p.minimum !== undefined
          ? ` ${t("settings.param_range", { min: p.minimum, max: p.maximum })}` : ""),
    ];
  }

  /** The parameter form of the chosen method, with `config`'s values (else the defaults). */
  function showMethod(name, config) {
    const m = methods[name];
    document.getElementById("s-method-about").textContent = m ? tx(`method.${name}`, m.description) : "";
    const params = m ? m.parameters : [];
    paramsBox.replaceChildren(...params.flatMap((p) =>
      paramField(p, Object.prototype.hasOwnProperty.call(config, p.name) ? config[p.name] : p.default)));
    document.getElementById("s-params-none").hidden = params.length > 0;
  }

  /** The parameters as the form holds them; throws {field, message} when one is out of bounds
      (the browser checks the bounds the API gave: a form value the API would refuse is not sent). */
  function parserConfig() {
    const out = {};
    for (const input of paramsBox.querySelectorAll("[data-param]")) {
      const name = input.dataset.param;
      const label = tx(`param.${name}`, name);
      if (!input.checkValidity()) throw { field: input, message: `${label}: ${input.validationMessage}` };
      if (input.dataset.type === "object") {
        const text = input.value.trim();
        if (!text) continue;
        try {
          out[name] = JSON.parse(text);
        } catch (err) {
          throw { field: input, message: `${label}: ${t("settings.param_not_json", { error: err.message })}` };
        }
      } else if (input.dataset.type === "boolean") out[name] = input.checked;
      else if (input.dataset.type === "integer" || input.dataset.type === "number") {
        if (input.value.trim() === "") continue; // nullable: the default
        out[name] = Number(input.value);
      } else out[name] = input.value;
    }
    return out;
  }

  function fill(data) {
    kb = data;
    document.getElementById("kb-crumb").textContent = kb.name;
    document.getElementById("settings-title").textContent = `${t("settings.title")}: ${kb.name}`;
    form.name.value = kb.name;
    form.description.value = kb.description || "";
    form.language.value = t(`lang.${kb.language}`);
    form.chunk_method.value = kb.chunk_method;
    showMethod(kb.chunk_method, kb.parser_config || {});
    form.permission.value = kb.permission;
    form.pagerank.value = kb.pagerank;
    form.review_versions.checked = Boolean(kb.review_versions);
    form.source_permissions.checked = Boolean(kb.source_permissions);
    form.admins_see_all.checked = Boolean(kb.admins_see_all);
    form.admins_see_all.disabled = !form.source_permissions.checked;
    form.synonyms.value = (kb.synonyms || []).map((group) => group.join(", ")).join("\n");
    form.embedding_model.value = kb.embedding_model;
    document.getElementById("s-embedding-note").textContent = kb.embedding_note || "";
    form.topn_tags.value = kb.topn_tags;
    for (const option of form.tag_kb_ids.options) option.selected = kb.tag_kb_ids.includes(option.value);
  }

  async function loadTagSets() {
    const { datasets } = await api("GET", "/datasets?page_size=1000");
    const sets = datasets.filter((d) => d.chunk_method === "tag" && d.id !== kbId);
    form.tag_kb_ids.replaceChildren(...sets.map((d) => el("option", { value: d.id }, d.name)));
    form.tag_kb_ids.disabled = sets.length === 0;
    if (!sets.length) form.tag_kb_ids.append(el("option", { value: "", disabled: true }, t("settings.no_tag_sets")));
  }

  try {
    const [list, data] = await Promise.all([api("GET", "/chunk-methods"), api("GET", path), loadTagSets()]);
    methods = Object.fromEntries(list.methods.map((m) => [m.name, m]));
    fill(data);
    form.hidden = false;
  } catch (err) {
    RL.showError("settings-load-error", err);
    return;
  }

  form.addEventListener("input", () => RL.showError("settings-error", "")); // an old refusal, answered

  // "owner and admins see everything" means something only with source permissions
  form.source_permissions.addEventListener("change", () => {
    form.admins_see_all.disabled = !form.source_permissions.checked;
  });

  form.chunk_method.addEventListener("change", () => {
    // keep what the new method also reads; the rest would be refused or ignored
    let current = {};
    try { current = parserConfig(); } catch (err) { current = {}; }
    showMethod(form.chunk_method.value, current);
    schedulePreview();
  });

  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    RL.showError("settings-error", "");
    let config;
    try {
      config = parserConfig();
    } catch (err) {
      RL.showError("settings-error", err.message);
      err.field.focus();
      return;
    }
    for (const input of [form.name, form.pagerank, form.topn_tags]) {
      if (!input.checkValidity()) {
        RL.showError("settings-error", `${document.querySelector(`label[for=${input.id}]`).textContent}: `
          + input.validationMessage);
        input.focus();
        return;
      }
    }
    const synonyms = form.synonyms.value.split("\n")
      .map((line) => line.split(/[,，]/).map((w) => w.trim()).filter(Boolean))
      .filter((group) => group.length);
    const body = {
      name: form.name.value.trim(), description: form.description.value, chunk_method: form.chunk_method.value,
      parser_config: config, permission: form.permission.value, pagerank: Number(form.pagerank.value || 0),
      review_versions: form.review_versions.checked,
      source_permissions: form.source_permissions.checked, admins_see_all: form.admins_see_all.checked,
      synonyms, tag_kb_ids: [...form.tag_kb_ids.selectedOptions].map((o) => o.value).filter(Boolean),
      topn_tags: Number(form.topn_tags.value || 3),
    };
    const saved = await RL.busy(form.querySelector("button[type=submit]"), "settings-error",
      () => api("PATCH", path, body));
    if (saved) {
      fill(saved);
      RL.flash(t("common.saved"));
    }
  });

  // --- preview -----------------------------------------------------------------------------------
  const docSelect = document.getElementById("preview-doc");
  const fileInput = document.getElementById("preview-file");
  const list = document.getElementById("preview-list");
  const summary = document.getElementById("preview-summary");
  let previewTimer = null;
  let previewRun = 0;

  try {
    const { documents } = await api("GET", `${path}/documents?status=done&page_size=200`);
    docSelect.append(...documents.map((d) => el("option", { value: d.id }, d.name)));
  } catch (err) {
    RL.showError("preview-error", err);
  }

  const hasSample = () => Boolean(docSelect.value || fileInput.files.length);

  function schedulePreview() {
    if (!hasSample()) return;
    clearTimeout(previewTimer);
    previewTimer = setTimeout(runPreview, 500);
  }

  function previewItem(c) {
    const pages = c.pages.length ? t("preview.pages", { pages: c.pages.join(", ") }) : "";
    return el("li", { class: "chunk", "data-testid": "preview-chunk" },
      el("div", { class: "chunk-head" },
        el("strong", {}, `#${c.order + 1}`),
        el("span", { class: "badge", "data-testid": "preview-tokens" }, t("preview.tokens", { n: c.tokens })),
        pages ? el("span", { class: "hint" }, pages) : null),
      el("p", { class: "chunk-text" }, c.text + (c.truncated ? " …" : "")));
  }

  async function runPreview() {
    clearTimeout(previewTimer);
    RL.showError("preview-error", "");
    if (!hasSample()) {
      RL.showError("preview-error", t("preview.need_sample"));
      return;
    }
    let config;
    try {
      config = parserConfig();
    } catch (err) {
      RL.showError("preview-error", err.message);
      return;
    }
    const body = new FormData();
    if (docSelect.value) body.append("document_id", docSelect.value);
    else body.append("file", fileInput.files[0], fileInput.files[0].name);
    body.append("chunk_method", form.chunk_method.value);
    body.append("parser_config", JSON.stringify(config));
    const run = ++previewRun;
    summary.textContent = t("preview.running");
    const button = document.getElementById("preview-run");
    const result = await RL.busy(button, "preview-error", () => api("POST", `${path}/chunking-preview`, body));
    if (run !== previewRun) return; // a newer preview was asked for meanwhile
    if (!result) {
      summary.textContent = "";
      return;
    }
    const pages = result.pages_total
      ? t("preview.pages_read", { read: result.pages_parsed, total: result.pages_total }) : "";
    summary.textContent = `${t("preview.summary", { name: result.filename, method: result.chunk_method,
      count: result.chunk_count, shown: result.chunks.length })} ${pages}`.trim();
    list.replaceChildren(...result.chunks.map(previewItem));
  }

  document.getElementById("preview-run").addEventListener("click", runPreview);
  docSelect.addEventListener("change", () => {
    if (docSelect.value) fileInput.value = "";
    schedulePreview();
  });
  fileInput.addEventListener("change", () => {
    if (fileInput.files.length) docSelect.value = "";
    schedulePreview();
  });
  paramsBox.addEventListener("input", schedulePreview);

  // --- embedding model and deletion --------------------------------------------------------------
  document.getElementById("kb-reindex").addEventListener("click", async (event) => {
    const model = document.getElementById("s-reindex-model").value.trim();
    if (!confirm(t("settings.reindex_confirm", { name: kb.name }))) return;
    const done = await RL.busy(event.currentTarget, "reindex-error",
      () => api("POST", `${path}/reindex`, model ? { embedding_model: model } : {}));
    if (done) {
      fill(done.dataset);
      RL.flash(t("settings.reindexed", { n: done.documents_queued, model: done.embedding_model }));
    }
  });

  document.getElementById("kb-delete").addEventListener("click", async (event) => {
    if (!confirm(t("settings.delete_confirm", { name: form.name.value }))) return;
    const done = await RL.busy(event.currentTarget, "delete-error", async () => {
      await api("DELETE", path);
      return true;
    });
    if (done) location.assign(`${RL.UI}/kb`);
  });
});
