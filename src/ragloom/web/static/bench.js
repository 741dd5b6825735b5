/* The retrieval bench: one question against the chosen knowledge bases (GET /api/v1/datasets), asked
   with POST /api/v1/retrieval under setting A and, to compare, setting B (mode, fusion, vector weight,
   similarity threshold, results per page, metadata filter, TOC enhancement). Each result shows every
   score the API returns; with "explain" the API also returns every recalled candidate with the stage
   that dropped it, shown as a table. Compared results are marked when a chunk moved or appears under
   one setting only. The reranker in use (the workspace's or the server's) is named; a setting may skip
   it (rerank: false) to compare. ?kb=<id or name> (repeatable) chooses the knowledge bases. */
"use strict";

document.addEventListener("DOMContentLoaded", () => {
  const { t, api, el } = RL;
  const SETTINGS = ["a", "b"];
  const NAMES = { a: "A", b: "B" };
  const TRIM = 320; // characters of a chunk shown before "show all"
  const STAGES = new Set(["returned", "prune", "threshold", "relevance", "page"]);
  const form = document.getElementById("bench-form");
  const question = document.getElementById("bench-question");
  const kbList = document.getElementById("bench-kb-list");
  const explainBox = document.getElementById("bench-explain");
  const compareBox = document.getElementById("bench-compare");
  const runButton = document.getElementById("bench-run");
  const state = document.getElementById("bench-state");
  const last = { a: null, b: null }; // per column: {body, data, ms} of the results shown
  const generation = { a: 0, b: 0 }; // a slower, earlier answer never replaces a later one
  let serverFusion = "";
  let copiedToB = false;

  const column = (s) => document.getElementById(`result-${s}`);
  const setting = (s) => document.getElementById(`setting-${s}`);
  const score = (v) => (v === null || v === undefined ? "—" : Number(v).toFixed(4));
  const fusionName = (name) => (name && t(`bench.fusion_${name}`) !== `bench.fusion_${name}` ? t(`bench.fusion_${name}`) : name);

  // --- knowledge bases and the reranker in use -------------------------------------------------------
  async function loadDatasets() {
    try {
      const { datasets } = await api("GET", "/datasets?page_size=1000");
      const wanted = new URLSearchParams(location.search).getAll("kb");
      kbList.replaceChildren(...datasets.map((kb, i) => {
        const id = `bench-kb-${i}`;
        const checked = wanted.length ? wanted.includes(kb.id) || wanted.includes(kb.name) : i === 0;
        return el("div", { class: "bench-check" },
          el("input", { type: "checkbox", id, name: "kb", value: kb.id, checked }),
          el("label", { for: id }, kb.name, " ",
            el("span", { class: "hint" }, t("bench.kb_documents", { n: kb.document_count ?? 0 }))));
      }));
      document.getElementById("bench-no-kbs").hidden = datasets.length > 0;
      if (datasets.length) {
        serverFusion = datasets[0].fusion || "";
        const name = fusionName(serverFusion);
        for (const option of form.querySelectorAll("option[data-default]")) {
          option.textContent = t("bench.fusion_default_is", { name });
        }
      }
    } catch (err) {
      RL.showError("bench-error", err);
    }
  }

  async function loadReranker() {
    const box = document.getElementById("bench-reranker");
    try {
      const { in_use } = await api("GET", "/providers");
      const r = in_use.find((m) => m.kind === "rerank");
      const text = r && r.source !== "none"
        ? t("bench.reranker", { model: t(`providers.source.${r.source}`, { model: r.model || "" }) })
        : t("bench.reranker_none");
      box.replaceChildren(text, " ", el("a", { href: `${RL.UI}/workspace/providers` }, t("bench.reranker_link")));
    } catch (err) {
      box.replaceChildren(); // not everyone may read the providers: the explain table names it too
    }
  }

  // --- the settings --------------------------------------------------------------------------------
  function field(s, name) {
    return setting(s).querySelector(`[name="${name}"]`);
  }

  /** Setting `s` as retrieval options; an Error (shown in its column) when its filter is not JSON. */
  function options(s) {
    const body = { mode: field(s, "mode").value, page_size: Number(field(s, "page_size").value) };
    const fusion = field(s, "fusion").value;
    if (fusion) body.fusion = fusion;
    for (const name of ["vector_similarity_weight", "similarity_threshold"]) {
      const raw = field(s, name).value.trim();
      if (raw !== "") body[name] = Number(raw);
    }
    if (field(s, "toc_enhance").checked) body.toc_enhance = true;
    if (!field(s, "rerank").checked) body.rerank = false;
    const filter = field(s, "metadata_filter").value.trim();
    if (filter) {
      try {
        body.metadata_filter = JSON.parse(filter);
      } catch (err) {
        throw new Error(t("bench.filter_not_json", { error: err.message }));
      }
    }
    return body;
  }

  function copySetting(from, to) {
    for (const source of setting(from).querySelectorAll("[name]")) {
      const target = field(to, source.name);
      if (source.type === "checkbox") target.checked = source.checked;
      else target.value = source.value;
    }
  }

  function describe(body) {
    const parts = [t(`bench.mode_${body.mode}`), fusionName(body.fusion || serverFusion)];
    if (body.vector_similarity_weight !== undefined) parts.push(t("bench.weight_is", { v: body.vector_similarity_weight }));
    if (body.similarity_threshold !== undefined) parts.push(t("bench.threshold_is", { v: body.similarity_threshold }));
    if (body.metadata_filter) parts.push(t("bench.filtered"));
    if (body.toc_enhance) parts.push(t("bench.toc_short"));
    if (body.rerank === false) parts.push(t("bench.no_reranker_short"));
    return parts.filter(Boolean).join(" · ");
  }

  // --- asking --------------------------------------------------------------------------------------
  async function ask(s, body) {
    const gen = ++generation[s];
    const errorId = `result-${s}-error`;
    RL.showError(errorId, "");
    const started = performance.now();
    try {
      const data = await api("POST", "/retrieval", body);
      if (gen !== generation[s]) return;
      last[s] = { body, data, ms: Math.round(performance.now() - started) };
      render(s);
    } catch (err) {
      if (gen !== generation[s]) return;
      last[s] = null;
      clear(s);
      RL.showError(errorId, err);
    }
    column(s).hidden = false;
  }

  async function runAll() {
    RL.showError("bench-error", "");
    const text = question.value.trim();
    const kbs = [...kbList.querySelectorAll("input:checked")].map((i) => i.value);
    if (!text) {
      RL.showError("bench-error", t("bench.need_question"));
      question.focus();
      return;
    }
    if (!kbs.length) {
      RL.showError("bench-error", t("bench.need_kb"));
      return;
    }
    const shown = compareBox.checked ? SETTINGS : ["a"];
    const asks = [];
    for (const s of shown) {
      let body;
      try {
        body = { question: text, dataset_ids: kbs, ...options(s), explain: explainBox.checked };
      } catch (err) {
        generation[s]++;
        last[s] = null;
        clear(s);
        RL.showError(`result-${s}-error`, err);
        column(s).hidden = false;
        continue;
      }
      asks.push(ask(s, body));
    }
    column("b").hidden = !compareBox.checked;
    runButton.disabled = true;
    state.textContent = t("bench.searching");
    try {
      await Promise.all(asks);
    } finally {
      runButton.disabled = false;
    }
    markMoves();
    state.textContent = t("bench.done");
    const first = column("a");
    if (!first.hidden && first.getBoundingClientRect().top > window.innerHeight) first.scrollIntoView({ block: "start" });
  }

  /** Ask column `s`'s last question again with explain, for its candidate table. */
  async function explainOne(s, button) {
    if (!last[s]) return;
    button.disabled = true;
    try {
      await ask(s, { ...last[s].body, explain: true });
    } finally {
      button.disabled = false;
    }
    markMoves();
    const table = column(s).querySelector(".bench-explain h3");
    if (table) table.focus();
  }

  // --- results -------------------------------------------------------------------------------------
  function clear(s) {
    const col = column(s);
    col.querySelector(".bench-summary").textContent = "";
    col.querySelector(".bench-hits").replaceChildren();
    col.querySelector(".bench-none").hidden = true;
    col.querySelector(".bench-explain-one").hidden = true;
    const box = col.querySelector(".bench-explain");
    box.hidden = true;
    box.replaceChildren();
  }

  function render(s) {
    const col = column(s);
    const { body, data, ms } = last[s];
    col.querySelector(".bench-summary").textContent = [describe(body),
      t("bench.count", { shown: data.chunks.length, total: data.total }), t("bench.ms", { ms })].join(" · ");
    col.querySelector(".bench-hits").replaceChildren(
      ...data.chunks.map((c, i) => hit(c, i + 1)));
    col.querySelector(".bench-none").hidden = data.chunks.length > 0;
    col.querySelector(".bench-explain-one").hidden = Boolean(data.explain);
    const box = col.querySelector(".bench-explain");
    box.hidden = !data.explain;
    box.replaceChildren(...(data.explain ? explainTable(s, data) : []));
  }

  function documentLink(kbId, docId, name) {
    if (!kbId) return name;
    return el("a", { href: `${RL.UI}/kb/${encodeURIComponent(kbId)}/documents/${encodeURIComponent(docId)}` }, name);
  }

  function chunkText(content) {
    if (content.length <= TRIM) return el("p", { class: "hit-text" }, content);
    const short = `${content.slice(0, TRIM).trimEnd()}…`;
    const p = el("p", { class: "hit-text" }, short);
    const toggle = RL.button(t("bench.show_all"), () => {
      const open = toggle.getAttribute("aria-expanded") === "true";
      p.textContent = open ? short : content;
      toggle.textContent = open ? t("bench.show_all") : t("bench.show_less");
      toggle.setAttribute("aria-expanded", String(!open));
    }, "link", { "aria-expanded": "false" });
    return el("div", {}, p, toggle);
  }

  function hit(c, rank) {
    const rerank = c.rerank_score;
    const scores = [
      ["final", "bench.score_final", c.similarity],
      ["relevance", "bench.score_relevance", c.relevance],
      ["term", "bench.score_term", c.term_similarity],
      ["vector", "bench.score_vector", c.vector_similarity],
      ["rank-feature", "bench.score_rank_feature", c.rank_feature],
      ["rerank", "bench.score_rerank", rerank],
    ];
    return el("li", { class: "bench-hit", dataset: { chunkId: c.chunk_id, rank } },
      el("div", { class: "hit-head" },
        el("span", { class: "hit-rank" }, t("bench.rank", { n: rank })),
        el("span", { class: "hit-doc", "data-testid": "hit-doc" }, documentLink(c.kb_id, c.doc_id, c.document_name)),
        el("span", { class: "badge bench-move", "data-testid": "bench-move", hidden: true })),
      chunkText(c.content),
      el("dl", { class: "bench-scores" }, scores.map(([name, key, value]) => el("div", { dataset: { score: name } },
        el("dt", {}, t(key)),
        el("dd", {}, score(value))))));
  }

  function stageLabel(stage) {
    return STAGES.has(stage) ? t(`bench.stage_${stage}`) : stage;
  }

  function explainTable(s, data) {
    const { query, candidates } = data.explain;
    const q = query || {};
    const counts = {};
    for (const r of candidates) counts[r.stage] = (counts[r.stage] || 0) + 1;
    const heading = el("h3", { tabindex: "-1" }, t("bench.explain_title", { n: candidates.length }));
    const tally = el("p", { class: "hint", "data-testid": "explain-tally" },
      Object.entries(counts).map(([stage, n]) => `${stageLabel(stage)}: ${n}`).join(" · "));
    const keywords = (q.keywords || []).map((k) => (Array.isArray(k) ? `${k[0]} (${k[1]})` : String(k))).join(", ");
    const facts = [
      ["bench.fact_keywords", keywords || "—"],
      ["bench.fact_fusion", fusionName(q.fusion) || "—"],
      ["bench.fact_weight", q.vector_similarity_weight ?? "—"],
      ["bench.fact_threshold", q.threshold ?? "—"],
      ["bench.fact_min_relevance", q.min_relevance ?? "—"],
      ["bench.fact_reranker", q.reranker || t("providers.source.none")],
    ];
    const factList = el("dl", { class: "bench-facts" }, facts.map(([key, value]) =>
      el("div", {}, el("dt", {}, t(key)), el("dd", {}, String(value)))));
    const raw = el("details", { class: "bench-raw" }, el("summary", {}, t("bench.fact_all")),
      el("pre", {}, JSON.stringify(q, null, 2)));
    const dropped = el("input", { type: "checkbox", id: `explain-dropped-${s}` });
    const tbody = el("tbody", {}, candidates.map((r) => el("tr", { dataset: { chunkId: r.chunk_id, stage: r.stage } },
      el("td", { class: "num" }, r.rank ?? "—"),
      el("td", { class: "name" }, documentLink(r.kb_id, r.doc_id, r.document_name)),
      el("td", { class: "stage" }, el("span", { class: `badge stage-${STAGES.has(r.stage) ? r.stage : "other"}`,
        "data-testid": "explain-stage" }, stageLabel(r.stage)), el("div", { class: "hint" }, r.reason)),
      el("td", { class: "found" }, r.passed_gate ? t("bench.found_text") : t("bench.found_vector")),
      [r.text_score, r.term_similarity, r.vector_similarity, r.rank_feature, r.rerank_score, r.similarity, r.relevance]
        .map((v) => el("td", { class: "num" }, score(v))))));
    dropped.addEventListener("change", () => {
      for (const tr of tbody.children) tr.hidden = dropped.checked && tr.dataset.stage === "returned";
    });
    const heads = ["bench.col_rank", "bench.col_document", "bench.col_stage", "bench.col_found",
      "bench.col_bm25", "bench.score_term", "bench.score_vector", "bench.score_rank_feature",
      "bench.score_rerank", "bench.score_final", "bench.score_relevance"];
    const table = el("table", { class: "list bench-explain-table", "data-testid": "explain-table" },
      el("caption", { class: "sr-only" }, t("bench.explain_caption", { setting: NAMES[s] })),
      el("thead", {}, el("tr", {}, heads.map((key) => el("th", { scope: "col" }, t(key))))), tbody);
    return [heading, tally, factList, raw,
      el("div", { class: "bench-check" }, dropped, el("label", { for: dropped.id }, t("bench.dropped_only"))),
      el("div", { class: "table-wrap" }, table)];
  }

  /** With both columns shown, mark each result: the same rank, another rank, or only under this setting. */
  function markMoves() {
    const both = compareBox.checked && last.a && last.b;
    for (const s of SETTINGS) {
      const other = s === "a" ? "b" : "a";
      const ranks = both ? new Map(last[other].data.chunks.map((c, i) => [c.chunk_id, i + 1])) : null;
      for (const li of column(s).querySelectorAll(".bench-hit")) {
        const badge = li.querySelector(".bench-move");
        badge.classList.remove("only", "moved", "same");
        if (!both) {
          badge.hidden = true;
          delete li.dataset.compare;
          continue;
        }
        const theirs = ranks.get(li.dataset.chunkId);
        let kind;
        if (theirs === undefined) {
          kind = "only";
          badge.textContent = t("bench.only_here", { setting: NAMES[s] });
        } else if (theirs === Number(li.dataset.rank)) {
          kind = "same";
          badge.textContent = t("bench.same_rank", { setting: NAMES[other] });
        } else {
          kind = "moved";
          badge.textContent = t("bench.moved", { rank: theirs, setting: NAMES[other] });
        }
        li.dataset.compare = kind;
        badge.classList.add(kind);
        badge.hidden = false;
      }
    }
  }

  // --- wiring --------------------------------------------------------------------------------------
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    runAll();
  });
  compareBox.addEventListener("change", () => {
    const on = compareBox.checked;
    if (on && !copiedToB) {
      copySetting("a", "b"); // B starts as A: change the one thing to compare
      copiedToB = true;
    }
    setting("b").hidden = !on;
    setting("b").disabled = !on; // out of the form's validation while hidden
    document.getElementById("bench-settings").classList.toggle("compare", on);
    document.getElementById("bench-results").classList.toggle("compare", on);
    if (!on) {
      generation.b++;
      last.b = null;
      column("b").hidden = true;
      clear("b");
    }
    markMoves();
  });
  for (const s of SETTINGS) {
    const button = column(s).querySelector(".bench-explain-one");
    button.setAttribute("aria-label", t("bench.explain_button_for", { setting: NAMES[s] }));
    button.addEventListener("click", () => explainOne(s, button));
  }

  loadDatasets();
  loadReranker();
});
