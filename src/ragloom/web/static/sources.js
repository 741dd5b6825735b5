/* A knowledge base's sources (GET/POST /datasets/{id}/sources): the add form (the type's main setting
   in "where": a folder's path, a web site's start URL, a WebDAV or Confluence URL, an IMAP host; more
   settings and credentials as JSON; its readers, user:<e-mail> or group:<name>, for knowledge bases with
   source permissions), then the sources with their readers and last sync, each with "Sync now", "Test",
   "Pause"/"Resume" and "Remove"; a source's syncs (counts and per-item errors) under the list. Followed
   live with RL.poller while a sync runs. */
"use strict";

document.addEventListener("DOMContentLoaded", () => {
  const { t, api, el } = RL;
  const root = document.getElementById("sources-root");
  if (!root) return;
  const kbId = root.dataset.kbId;
  const dataset = `/datasets/${encodeURIComponent(kbId)}`;
  const base = `${dataset}/sources`;
  const ACTIVE = new Set(["queued", "running"]);
  const table = document.getElementById("sources-table");
  const tbody = table.querySelector("tbody");
  let shown = null; // the source whose syncs are shown

  function counts(job) {
    if (!job) return t("sources.never");
    const s = job.stats;
    return t("sources.counts_value", { listed: s.listed, new: s.new, changed: s.changed, deleted: s.deleted,
      unchanged: s.unchanged, skipped: s.skipped, failed: s.failed });
  }

  function where(src) {
    const s = src.settings || {};
    if (s.path) return s.path;
    if (Array.isArray(s.urls)) return s.urls.join(", ");
    if (s.repository) return s.repository;
    if (s.bucket) return `s3://${s.bucket}/${s.prefix || ""}`;
    if (s.url) return s.url;
    if (s.host) return `${s.host}:${s.port || ""} ${(s.folders || []).join(", ")}`.trim();
    if (s.api_url) return s.api_url;
    return "";
  }

  function list(text) {
    return text.split(",").map((x) => x.trim()).filter(Boolean);
  }

  /** A source's readers as typed: one per line or separated by commas. */
  function readers(text) {
    return text.split(/[\n,，]+/).map((x) => x.trim()).filter(Boolean);
  }

  function json(text, what) {
    if (!text.trim()) return {};
    try {
      const value = JSON.parse(text);
      if (value && typeof value === "object" && !Array.isArray(value)) return value;
    } catch (err) { /* said below */ }
    throw new Error(t("sources.bad_json", { what }));
  }

  document.getElementById("source-form").addEventListener("submit", async (event) => {
    event.preventDefault();
    const form = event.currentTarget;
    const type = form.type.value;
    let body;
    try {
      const settings = json(form.settings.value, t("sources.settings"));
      const whereValue = form.where.value.trim();
      if (whereValue && type === "folder") settings.path = whereValue;
      if (whereValue && type === "web") settings.urls = [whereValue];
      if (whereValue && type === "git") settings.repository = whereValue;
      if (whereValue && type === "s3") settings.bucket = whereValue;
      if (whereValue && (type === "webdav" || type === "confluence")) settings.url = whereValue;
      if (whereValue && type === "imap") settings.host = whereValue;
      const credentials = json(form.credentials.value, t("sources.credentials"));
      body = { name: form.name.value.trim(), type, settings,
        filters: { include: list(form.include.value), exclude: list(form.exclude.value) },
        readers: readers(form.readers.value) };
      if (Object.keys(credentials).length) body.credentials = credentials;
      if (form.every.value) body.schedule_minutes = Number(form.every.value);
    } catch (err) {
      RL.showError("sources-error", err);
      return;
    }
    const added = await RL.busy(form.querySelector("button[type=submit]"), "sources-error",
      () => api("POST", base, body));
    if (added) {
      form.reset();
      RL.flash(t("sources.added", { name: added.name }));
      poll.now();
    }
  });

  async function act(event, src, method, path, body, done) {
    const result = await RL.busy(event.currentTarget, "sources-error", () => api(method, path, body));
    if (result !== undefined && result !== null && done) done(result);
    poll.now();
  }

  function actions(src) {
    const one = `${base}/${encodeURIComponent(src.id)}`;
    const running = src.last_sync && ACTIVE.has(src.last_sync.status);
    return [
      RL.button(t("sources.sync_now"), (e) => act(e, src, "POST", `${one}/sync`, undefined,
        () => { RL.flash(t("sources.sync_queued", { name: src.name })); show(src); }), "small primary",
        running ? { disabled: "" } : {}),
      RL.button(t("sources.test"), (e) => act(e, src, "POST", `${one}/check`, undefined,
        (r) => RL.flash(`${r.ok ? "✓" : "✗"} ${r.message}`)), "small"),
      RL.button(src.paused ? t("sources.resume") : t("sources.pause"),
        (e) => act(e, src, "PATCH", one, { paused: !src.paused }), "small"),
      RL.button(t("sources.syncs"), () => show(src), "small"),
      RL.button(t("sources.remove"), (e) => {
        if (window.confirm(t("sources.remove_confirm", { name: src.name }))) act(e, src, "DELETE", one);
      }, "small danger"),
    ];
  }

  function row(src) {
    const every = src.schedule_minutes ? t("sources.every_value", { n: src.schedule_minutes }) : t("sources.manual");
    const job = src.last_sync;
    return el("tr", { dataset: { sourceId: src.id } },
      el("td", {}, src.name), el("td", {}, src.type), el("td", { class: "wide" }, where(src)),
      el("td", { class: "readers", "data-testid": "source-readers" }, src.readers && src.readers.length
        ? src.readers.map((r) => el("div", {}, r)) : el("span", { class: "hint" }, t("sources.everyone"))),
      el("td", {}, every, src.paused ? el("span", { class: "badge" }, t("sources.paused")) : null),
      el("td", { class: "wide", "data-testid": "source-last-sync" },
        job ? el("span", { class: `badge ${job.status}` }, t(`status.${job.status}`)) : null, " ", counts(job),
        job && job.status === "failed" ? el("div", { class: "reason" }, job.message) : null),
      el("td", { class: "acts" }, ...actions(src)));
  }

  async function show(src) {
    shown = src.id;
    await loadSyncs();
    const heading = document.getElementById("syncs-heading");
    heading.textContent = t("sources.syncs_of", { name: src.name });
  }

  async function loadSyncs() {
    if (!shown) return false;
    const section = document.getElementById("syncs-section");
    let listed;
    try {
      listed = await api("GET", `${base}/${encodeURIComponent(shown)}/syncs?page_size=20`);
    } catch (err) {
      section.hidden = true;
      shown = null;
      return false;
    }
    const body = document.querySelector("#syncs-table tbody");
    body.replaceChildren(...listed.syncs.map((j) => el("tr", {},
      el("td", {}, RL.when(j.finished_at || j.started_at || j.created_at)),
      el("td", {}, el("span", { class: `badge ${j.status}` }, t(`status.${j.status}`))),
      el("td", { class: "wide" }, counts(j), j.message && j.status !== "done" ? el("div", { class: "hint" }, j.message) : null),
      el("td", { class: "wide" }, ...j.errors.map((e) => el("div", { class: "reason" }, `${e.item}: ${e.message}`))))));
    section.hidden = false;
    return listed.syncs.some((j) => ACTIVE.has(j.status));
  }

  async function load() {
    let listed;
    try {
      listed = await api("GET", base);
    } catch (err) {
      RL.showError("sources-error", err);
      throw err;
    }
    tbody.replaceChildren(...listed.sources.map(row));
    table.hidden = listed.total === 0;
    document.getElementById("sources-empty").hidden = listed.total > 0;
    const syncing = await loadSyncs();
    return syncing || listed.sources.some((s) => s.last_sync && ACTIVE.has(s.last_sync.status));
  }

  api("GET", dataset).then((kb) => {
    document.getElementById("kb-crumb").textContent = kb.name;
    document.title = `${document.title.split(" · ")[0]} · ${kb.name} · ragloom`;
  }).catch((err) => RL.showError("sources-error", err));
  const poll = RL.poller(load, 1000);
  poll.now();
});
