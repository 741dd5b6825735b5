/* Knowledge builds of a knowledge base (the knowledge-builds page, and the graph page's empty state):
   a build button first asks the API for an estimate (POST .../builds with dry_run: chat-model calls,
   prompt tokens), shown with "Start the build"; then the list of builds (GET .../builds) is followed
   live with RL.poller while one is queued or running — status, stage, a progress bar, the message,
   a cancel button, and the reason of a failure. A graph build's method and communities are the
   knowledge base's graphrag settings (PATCH /datasets/{id}); when the estimate refuses them (light or
   general without a chat model) the settings are put back and the API's message is shown.
   Whoever wants to know fires on "rl:build-done" (document event, detail: the build). */
"use strict";

document.addEventListener("DOMContentLoaded", () => {
  const { t, api, el } = RL;
  const root = document.getElementById("builds-root");
  if (!root) return;
  const kbId = root.dataset.kbId;
  const dataset = `/datasets/${encodeURIComponent(kbId)}`;
  const base = `${dataset}/builds`;
  const ACTIVE = new Set(["queued", "running"]);
  const table = document.getElementById("builds-table");
  const tbody = table.querySelector("tbody");
  const listKind = table.dataset.kind || "";
  const rows = new Map(); // build id -> its <tr>
  const seenActive = new Set(); // builds this page saw queued or running
  const box = document.getElementById("build-estimate");
  const methodSelect = document.getElementById("graph-method");
  const community = document.getElementById("graph-community");
  let kb = null;
  let pending = null; // the kind whose estimate is shown
  let touched = false; // the user changed the graph form before the knowledge base arrived
  for (const input of [methodSelect, community]) {
    if (input) input.addEventListener("change", () => { touched = true; });
  }

  function kindName(kind) {
    return t(`build.kind_${kind}`);
  }

  async function loadDataset() {
    try {
      kb = await api("GET", dataset);
      const crumb = document.getElementById("kb-crumb");
      if (crumb) crumb.textContent = kb.name;
      document.title = `${document.title.split(" · ")[0]} · ${kb.name} · ragloom`;
      if (!touched && methodSelect && kb.graphrag) methodSelect.value = kb.graphrag.method;
      if (!touched && community && kb.graphrag) community.checked = Boolean(kb.graphrag.community);
    } catch (err) {
      RL.showError("builds-error", err);
    }
  }

  // --- estimate, then start ---------------------------------------------------------------------------
  /** The graph settings the form asks for, when they differ from the knowledge base's: saved first. */
  function graphChanges() {
    if (!methodSelect || !kb) return null;
    const now = kb.graphrag || {};
    const want = { method: methodSelect.value, community: Boolean(community && community.checked) };
    return want.method !== now.method || want.community !== Boolean(now.community) ? want : null;
  }

  function fact(label, value) {
    return el("div", {}, el("dt", {}, label), el("dd", {}, String(value)));
  }

  function showEstimate(kind, e) {
    pending = kind;
    document.getElementById("build-estimate-title").textContent = t("build.estimate_of", { kind: kindName(kind) });
    const facts = [
      fact(t("build.mode"), e.model ? `${e.mode} (${e.model})` : e.mode),
      fact(t("build.documents"), t("build.documents_value", { todo: e.documents_to_build, n: e.documents })),
      fact(t("build.llm_calls"), t("build.llm_calls_value", { n: e.llm_calls, cached: e.llm_calls_cached })),
      fact(t("build.prompt_tokens"), e.prompt_tokens),
      fact(t("build.completion_tokens"), e.completion_tokens),
    ];
    document.getElementById("build-estimate-facts").replaceChildren(...facts);
    document.getElementById("build-estimate-note").textContent =
      e.documents ? e.note : `${e.note} — ${t("build.no_documents")}`;
    box.hidden = false;
    box.dataset.kind = kind;
    document.getElementById("build-estimate-title").focus();
  }

  async function estimate(event, kind) {
    const btn = event.currentTarget;
    box.hidden = true;
    pending = null;
    await RL.busy(btn, "builds-error", async () => {
      await loaded; // the form is compared with the knowledge base's settings, so they must be here
      const changes = kind === "graph" ? graphChanges() : null;
      const before = kb && kb.graphrag ? { method: kb.graphrag.method, community: Boolean(kb.graphrag.community) } : null;
      if (changes) kb = await api("PATCH", dataset, { graphrag: changes });
      try {
        const started = await api("POST", base, { kind, dry_run: true });
        showEstimate(kind, started.estimate);
      } catch (err) {
        if (changes && before) {
          try { kb = await api("PATCH", dataset, { graphrag: before }); } catch (e) { /* the first error says more */ }
        }
        throw err;
      }
    });
  }

  document.getElementById("build-confirm").addEventListener("click", async (e) => {
    const kind = pending;
    if (!kind) return;
    const started = await RL.busy(e.currentTarget, "builds-error", () => api("POST", base, { kind }));
    if (started) {
      box.hidden = true;
      pending = null;
      RL.flash(t("build.started"));
      // shown at once as the API returned them (queued): a quick build may be done by the next poll
      for (const b of [...started.builds].reverse()) {
        seenActive.add(b.id);
        tbody.insertBefore(render(b), tbody.firstChild);
      }
      table.hidden = false;
      document.getElementById("builds-empty").hidden = true;
      poll.now();
    }
  });
  document.getElementById("build-dismiss").addEventListener("click", () => {
    box.hidden = true;
    pending = null;
  });
  for (const btn of document.querySelectorAll("[data-build-kind]")) {
    btn.addEventListener("click", (e) => estimate(e, btn.dataset.buildKind));
  }

  // --- the builds, live -------------------------------------------------------------------------------
  function percent(b) {
    return Math.round(Math.max(0, Math.min(1, Number(b.progress) || 0)) * 100);
  }

  function statusCell(b) {
    const pct = percent(b);
    const active = ACTIVE.has(b.status);
    return [
      el("span", { class: `badge ${b.status}`, "data-testid": "build-status" }, t(`status.${b.status}`)),
      active ? el("progress", { max: 100, value: pct, "aria-label": `${kindName(b.kind)}: ${pct}%` }, `${pct}%`) : null,
      active ? el("span", { class: "pct" }, `${pct}%`) : null,
      active && b.stage ? el("div", { class: "hint", "data-testid": "build-stage" }, t("build.stage", { stage: b.stage })) : null,
      b.message ? el("div", { class: b.status === "failed" ? "reason" : "hint", "data-testid": "build-message" },
        b.message) : null,
    ];
  }

  async function cancel(event, b) {
    const done = await RL.busy(event.currentTarget, "builds-error",
      () => api("POST", `${base}/${encodeURIComponent(b.id)}/cancel`));
    if (done) {
      RL.flash(t("build.cancelling"));
      poll.now();
    }
  }

  function render(b) {
    let tr = rows.get(b.id);
    if (!tr) {
      tr = el("tr", { dataset: { buildId: b.id, kind: b.kind } }, el("td", { class: "kind" }), el("td", { class: "wide" }),
        el("td", { class: "status" }), el("td", { class: "wide" }), el("td", { class: "acts" }));
      rows.set(b.id, tr);
    }
    const fingerprint = JSON.stringify([b.status, b.progress, b.stage, b.message, b.started_at]);
    if (tr.dataset.fingerprint === fingerprint) return tr;
    const [kind, scope, status, when, acts] = tr.children;
    kind.replaceChildren(kindName(b.kind), b.estimate && b.estimate.mode ? " " : "",
      b.estimate && b.estimate.mode ? el("span", { class: "badge" }, b.estimate.mode) : null);
    scope.replaceChildren(b.document_id ? t("build.scope_one") : t("build.scope_all"));
    status.replaceChildren(...statusCell(b).filter(Boolean));
    when.replaceChildren(RL.when(b.started_at || b.created_at));
    if (tr.dataset.status !== b.status) {
      acts.replaceChildren(ACTIVE.has(b.status)
        ? RL.button(t("build.cancel"), (e) => cancel(e, b), "small danger",
          { "aria-label": t("build.cancel_label", { kind: kindName(b.kind) }) })
        : "");
    }
    tr.dataset.status = b.status;
    tr.dataset.fingerprint = fingerprint;
    return tr;
  }

  async function load() {
    const params = new URLSearchParams({ page_size: "20" });
    if (listKind) params.set("kind", listKind);
    let listed;
    try {
      listed = await api("GET", `${base}?${params}`);
    } catch (err) {
      RL.showError("builds-error", err);
      throw err;
    }
    const ids = new Set(listed.builds.map((b) => b.id));
    for (const [id, tr] of rows) if (!ids.has(id)) { tr.remove(); rows.delete(id); }
    listed.builds.forEach((b, at) => {
      const tr = render(b);
      if (tbody.children[at] !== tr) tbody.insertBefore(tr, tbody.children[at] || null);
      if (ACTIVE.has(b.status)) seenActive.add(b.id);
      else if (seenActive.delete(b.id) && b.status === "done") {
        document.dispatchEvent(new CustomEvent("rl:build-done", { detail: b }));
      }
    });
    table.hidden = listed.total === 0;
    document.getElementById("builds-empty").hidden = listed.total > 0;
    return listed.builds.some((b) => ACTIVE.has(b.status));
  }

  const poll = RL.poller(load, 1000);
  const loaded = loadDataset();
  poll.now();
});
