/* A knowledge base's knowledge graph (GET /datasets/{id}/graph): its entities of highest PageRank
   drawn on an SVG with a small force-directed layout (no library; deterministic: the same graph is
   drawn the same way), node size by PageRank, colour by community, the strongest names labelled.
   Choosing an entity (click, or Enter on it) shows its type, description, relations, the chunks of
   its documents that name it, and its community's report. 404 (no graph yet): the empty state with
   the build button of builds.js, and the graph is drawn as soon as that build is done. */
"use strict";

document.addEventListener("DOMContentLoaded", () => {
  const { t, api, el } = RL;
  const SVG = "http://www.w3.org/2000/svg";
  let W = 800; // the drawing's size in its own units: the SVG's width in pixels when drawn, so that
  let H = 600; // labels keep a readable size on a phone as on a wide screen
  const PAD = 36;
  const LIMIT = 150;
  const PALETTE = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf", "#8c564b", "#e377c2",
    "#7f7f0e", "#3b4cc0"];
  const NO_COMMUNITY = "#8a94a3";
  const kbId = document.getElementById("graph-title").dataset.kbId;
  const dataset = `/datasets/${encodeURIComponent(kbId)}`;
  const svg = document.getElementById("graph-svg");
  const body = document.getElementById("graph-detail-body");
  let graph = null;
  let byId = new Map();
  let colours = new Map(); // community id -> colour
  let selected = null;
  const docNames = new Map();

  function node(tag, attrs, ...children) {
    const n = document.createElementNS(SVG, tag);
    for (const [k, v] of Object.entries(attrs || {})) if (v !== null && v !== undefined) n.setAttribute(k, String(v));
    for (const c of children) n.append(c instanceof Node ? c : document.createTextNode(String(c)));
    return n;
  }

  // --- layout: Fruchterman–Reingold from a circle ordered by community, then fitted to the view ------
  function layout(nodes, edges) {
    const n = nodes.length;
    const order = [...nodes].sort((a, b) => String(a.community || "~").localeCompare(String(b.community || "~"))
      || b.pagerank - a.pagerank || a.id.localeCompare(b.id));
    const pos = new Map();
    order.forEach((v, i) => {
      const angle = (2 * Math.PI * i) / Math.max(1, n);
      pos.set(v.id, { x: W / 2 + (W / 3) * Math.cos(angle), y: H / 2 + (H / 3) * Math.sin(angle) });
    });
    if (n > 1) {
      const k = 0.9 * Math.sqrt((W * H) / n);
      const list = order.map((v) => pos.get(v.id));
      const links = edges.map((e) => [pos.get(e.source), pos.get(e.target)]).filter(([a, b]) => a && b && a !== b);
      const rounds = n > 100 ? 180 : 300;
      for (let r = 0; r < rounds; r += 1) {
        const temp = (W / 8) * (1 - r / rounds) + 0.5;
        for (const p of list) { p.dx = 0; p.dy = 0; }
        for (let i = 0; i < n; i += 1) {
          const a = list[i];
          for (let j = i + 1; j < n; j += 1) {
            const b = list[j];
            let dx = a.x - b.x;
            let dy = a.y - b.y;
            let d2 = dx * dx + dy * dy;
            if (d2 < 0.01) { dx = 0.1 * ((i % 3) - 1 || 1); dy = 0.1; d2 = 0.02; }
            const f = (k * k) / d2; // k²/d along the unit vector: k²/d² times the vector
            a.dx += dx * f; a.dy += dy * f;
            b.dx -= dx * f; b.dy -= dy * f;
          }
        }
        for (const [a, b] of links) {
          const dx = a.x - b.x;
          const dy = a.y - b.y;
          const d = Math.sqrt(dx * dx + dy * dy) || 0.01;
          const f = d / k; // d²/k along the unit vector
          a.dx -= dx * f; a.dy -= dy * f;
          b.dx += dx * f; b.dy += dy * f;
        }
        for (const p of list) {
          p.dx += (W / 2 - p.x) * 0.02 * k / 10; // a little gravity keeps loose parts in view
          p.dy += (H / 2 - p.y) * 0.02 * k / 10;
          const d = Math.sqrt(p.dx * p.dx + p.dy * p.dy) || 1;
          const step = Math.min(d, temp);
          p.x += (p.dx / d) * step;
          p.y += (p.dy / d) * step;
        }
      }
    }
    const xs = [...pos.values()].map((p) => p.x);
    const ys = [...pos.values()].map((p) => p.y);
    const [x0, x1, y0, y1] = [Math.min(...xs), Math.max(...xs), Math.min(...ys), Math.max(...ys)];
    const scale = Math.min((W - 2 * PAD) / Math.max(1, x1 - x0), (H - 2 * PAD) / Math.max(1, y1 - y0), 3);
    for (const p of pos.values()) {
      p.x = W / 2 + (p.x - (x0 + x1) / 2) * scale;
      p.y = H / 2 + (p.y - (y0 + y1) / 2) * scale;
    }
    return pos;
  }

  function colourOf(v) {
    return v.community && colours.has(v.community) ? colours.get(v.community) : NO_COMMUNITY;
  }

  function draw() {
    const { nodes, edges } = graph;
    W = Math.round(Math.max(320, Math.min(1000, svg.clientWidth || 800)));
    H = Math.round(W * 0.75);
    svg.setAttribute("viewBox", `0 0 ${W} ${H}`);
    const pos = layout(nodes, edges);
    const top = Math.max(...nodes.map((v) => v.pagerank), 1e-9);
    const maxWeight = Math.max(...edges.map((e) => e.weight), 1e-9);
    const labelled = new Set([...nodes].sort((a, b) => b.pagerank - a.pagerank)
      .slice(0, nodes.length <= 40 ? nodes.length : 25).map((v) => v.id));
    const edgeLayer = node("g", { class: "edges" });
    for (const e of edges) {
      const a = pos.get(e.source);
      const b = pos.get(e.target);
      if (!a || !b) continue;
      const line = node("line", { x1: a.x.toFixed(1), y1: a.y.toFixed(1), x2: b.x.toFixed(1), y2: b.y.toFixed(1),
        "stroke-width": (0.8 + 2.2 * (e.weight / maxWeight)).toFixed(2), class: "edge", "data-source": e.source,
        "data-target": e.target });
      line.append(node("title", {}, `${byId.get(e.source).name} — ${byId.get(e.target).name}`
        + (e.description ? `: ${e.description}` : "")));
      edgeLayer.append(line);
    }
    const nodeLayer = node("g", { class: "nodes" });
    const labelLayer = node("g", { class: "labels", "aria-hidden": "true" });
    for (const v of [...nodes].sort((a, b) => a.pagerank - b.pagerank)) { // the strongest drawn last, on top
      const p = pos.get(v.id);
      const r = (4 + 12 * Math.sqrt(v.pagerank / top)) * Math.max(0.8, Math.min(1.3, W / 640));
      const g = node("g", { class: "node", tabindex: 0, role: "button", "data-id": v.id, "data-testid": "graph-node",
        "aria-label": `${v.name} (${v.type})`, transform: `translate(${p.x.toFixed(1)} ${p.y.toFixed(1)})` },
      node("circle", { r: r.toFixed(1), fill: colourOf(v) }), node("title", {}, `${v.name} (${v.type})`));
      g.addEventListener("click", () => pick(v.id));
      g.addEventListener("keydown", (e) => {
        if (e.key === "Enter" || e.key === " ") { e.preventDefault(); pick(v.id); }
      });
      nodeLayer.append(g);
      if (labelled.has(v.id)) {
        labelLayer.append(node("text", { x: p.x.toFixed(1), y: (p.y + r + 12).toFixed(1), class: "label",
          "data-id": v.id }, v.name.length > 28 ? `${v.name.slice(0, 27)}…` : v.name));
      }
    }
    svg.setAttribute("aria-label", t("graph.canvas_label", { n: nodes.length }));
    svg.replaceChildren(edgeLayer, nodeLayer, labelLayer);
  }

  // --- an entity's details ----------------------------------------------------------------------------
  function highlight(id) {
    const near = new Set([id]);
    for (const e of graph.edges) {
      if (e.source === id) near.add(e.target);
      if (e.target === id) near.add(e.source);
    }
    svg.classList.toggle("focused", Boolean(id));
    for (const g of svg.querySelectorAll(".node")) {
      g.classList.toggle("selected", g.dataset.id === id);
      g.classList.toggle("near", near.has(g.dataset.id));
      g.setAttribute("aria-pressed", g.dataset.id === id ? "true" : "false");
    }
    for (const line of svg.querySelectorAll(".edge")) {
      line.classList.toggle("near", line.dataset.source === id || line.dataset.target === id);
    }
    for (const label of svg.querySelectorAll(".label")) label.classList.toggle("near", near.has(label.dataset.id));
  }

  /** An entity chosen on the drawing: on a narrow screen its details are below it, so scroll to them. */
  function pick(id) {
    choose(id);
    if (window.matchMedia("(max-width: 900px)").matches) {
      document.getElementById("graph-detail").scrollIntoView({ block: "start", behavior: "smooth" });
    }
  }

  function pickButton(id) {
    const v = byId.get(id);
    return RL.button(v ? v.name : id, () => choose(id), "link pick");
  }

  function choose(id) {
    const v = byId.get(id);
    if (!v) return;
    selected = id;
    highlight(id);
    document.getElementById("graph-pick").hidden = true;
    const related = graph.edges.filter((e) => e.source === id || e.target === id)
      .sort((a, b) => b.weight - a.weight).slice(0, 12);
    const community = graph.communities.find((c) => c.id === v.community);
    const sources = el("div", { class: "graph-sources", "data-testid": "graph-sources" },
      el("p", { class: "hint" }, t("graph.sources_loading")));
    body.replaceChildren(
      el("h3", { "data-testid": "entity-name" }, el("span", { class: "swatch", "aria-hidden": "true", dataset: { c: colourOf(v) } }),
        v.name),
      el("dl", { class: "build-facts" },
        el("div", {}, el("dt", {}, t("graph.type")), el("dd", { "data-testid": "entity-type" }, v.type)),
        el("div", {}, el("dt", {}, t("graph.pagerank")), el("dd", {}, v.pagerank.toFixed(4))),
        el("div", {}, el("dt", {}, t("graph.degree")), el("dd", {}, String(v.degree))),
        v.aliases.length ? el("div", {}, el("dt", {}, t("graph.aliases")), el("dd", {}, v.aliases.join(", "))) : null),
      el("h4", {}, t("graph.description")),
      el("p", { class: "graph-text", "data-testid": "entity-description" }, v.description || t("graph.no_description")),
      related.length ? el("h4", {}, t("graph.related")) : null,
      related.length ? el("ul", { class: "graph-related" }, related.map((e) => {
        const other = e.source === id ? e.target : e.source;
        return el("li", {}, pickButton(other), e.description ? el("span", { class: "hint" }, ` — ${e.description}`) : null);
      })) : null,
      el("h4", {}, t("graph.community")),
      community
        ? el("div", { class: "graph-report", "data-testid": "entity-community" },
          el("p", {}, el("strong", {}, community.title || community.id)),
          community.summary ? el("p", { class: "graph-text" }, community.summary) : null)
        : el("p", { class: "hint" }, t("graph.no_community")),
      el("h4", {}, t("graph.sources")),
      sources);
    for (const s of body.querySelectorAll(".swatch")) s.style.background = s.dataset.c; // CSSOM: allowed by the policy
    loadSources(v, sources);
  }

  async function loadSources(v, box) {
    const names = [v.name, ...v.aliases].map((s) => s.toLowerCase()).filter(Boolean);
    const found = [];
    try {
      for (const docId of v.doc_ids.slice(0, 5)) {
        const list = await api("GET", `${dataset}/documents/${encodeURIComponent(docId)}/chunks?page_size=100`);
        for (const c of list.chunks) {
          docNames.set(c.doc_id, c.document_name);
          const text = (c.content || "").toLowerCase();
          if (names.some((n) => text.includes(n))) found.push(c);
        }
        if (found.length >= 6) break;
      }
    } catch (err) {
      box.replaceChildren(el("p", { class: "reason" }, err.message));
      return;
    }
    if (selected !== v.id) return; // another entity was chosen meanwhile
    box.replaceChildren(found.length ? el("ol", { class: "chunk-list" }, found.slice(0, 6).map((c) => el("li",
      { class: "chunk", "data-testid": "entity-source" },
      el("div", { class: "chunk-head" }, el("a", {
        href: `${RL.UI}/kb/${encodeURIComponent(kbId)}/documents/${encodeURIComponent(c.doc_id)}`,
        title: t("graph.open_doc", { name: c.document_name }) }, c.document_name)),
      el("p", { class: "chunk-text" }, c.content.length > 400 ? `${c.content.slice(0, 399)}…` : c.content))))
      : el("p", { class: "hint" }, t("graph.sources_none")));
  }

  // --- communities ------------------------------------------------------------------------------------
  function communities() {
    const list = document.getElementById("community-list");
    document.getElementById("communities-none").hidden = graph.communities.length > 0;
    list.replaceChildren(...graph.communities.map((c) => {
      const members = graph.nodes.filter((v) => v.community === c.id).sort((a, b) => b.pagerank - a.pagerank);
      const item = el("li", { class: "card community", "data-testid": "community", dataset: { id: c.id } },
        el("h3", {}, el("span", { class: "swatch", "aria-hidden": "true", dataset: { c: colours.get(c.id) || NO_COMMUNITY } }),
          t("graph.community_head", { title: c.title || c.id, level: c.level, size: c.size })),
        c.summary ? el("p", { class: "graph-text" }, c.summary) : null,
        members.length ? el("p", { class: "community-members" }, el("span", { class: "hint" }, `${t("graph.members")}: `),
          members.slice(0, 20).flatMap((v, i, shown) => [pickButton(v.id), i < shown.length - 1 ? ", " : ""])) : null);
      return item;
    }));
    for (const s of list.querySelectorAll(".swatch")) s.style.background = s.dataset.c;
  }

  // --- loading ----------------------------------------------------------------------------------------
  async function load() {
    const loading = document.getElementById("graph-loading");
    try {
      const [data, kb] = await Promise.all([api("GET", `${dataset}/graph?limit=${LIMIT}`),
        api("GET", dataset).catch(() => null)]);
      if (kb) document.getElementById("kb-crumb").textContent = kb.name;
      if (!data.entities) throw new RL.ApiError(404, ""); // built, but nothing was found: as if none
      graph = data;
      byId = new Map(graph.nodes.map((v) => [v.id, v]));
      colours = new Map(graph.communities.map((c, i) => [c.id, PALETTE[i % PALETTE.length]]));
      document.getElementById("graph-empty").hidden = true;
      document.getElementById("graph-view").hidden = false;
      document.getElementById("graph-summary").textContent = t("graph.summary",
        { entities: graph.entities, relations: graph.relations, shown: graph.nodes.length });
      draw();
      communities();
      if (selected && byId.has(selected)) choose(selected);
    } catch (err) {
      if (err.status === 404) {
        document.getElementById("graph-empty").hidden = false;
        document.getElementById("graph-view").hidden = true;
      } else {
        RL.showError("graph-error", err);
      }
    } finally {
      loading.hidden = true;
    }
  }

  document.addEventListener("rl:build-done", (e) => { if (e.detail.kind === "graph") load(); });
  load();
});
