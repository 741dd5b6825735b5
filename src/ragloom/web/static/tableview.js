/* Table chunks shown as tables, shared by the chunks page and the chat's citation panel. Three sources,
   best first: the API's `table` of a chunk ({header_paths, stub_columns, rows, caption, notes}), the
   chunk's HTML (parsed inert with DOMParser: only the cells' text and spans are taken, no server markup
   is inserted), or the chunk's text, whose rows read "State: Kentucky — Permit: 264,140; Pre-Pawn ›
   Handgun: 3" (a citation carries only the text). Every view is a figure: the caption, the table in a
   scroll box of its own (sideways at 25+ columns, the header and the stub column stay in view, see
   app.css .table-view) and the notes under it. The DOM is built with RL.el: text goes in as text. */
"use strict";

const RLTables = (() => {
  const PATH = " › "; // how a header path is joined in a row's text
  const NUMBER = /^[-+−(]?[$€£¥]?\s?\d[\d,.\s\u00a0\u202f']*(?:%|‰)?\)?$/;
  const LONG = 40; // characters: a longer value may wrap (at words) inside a wider cell
  const MAX_SPAN = 1000;

  const same = (a, b, n) => { for (let i = 0; i < n; i++) if (a[i] !== b[i]) return false; return true; };

  /** The header rows of `paths` (per column, its header cells outermost first): a group over several
      columns is one cell spanning them, a column whose path is shorter than the deepest spans the rows
      below its last cell. Returns rows of {text, colspan, rowspan, leaf, column, title}. */
  function headerRows(paths) {
    const depth = Math.max(0, ...paths.map((p) => p.length));
    const rows = [];
    for (let r = 0; r < depth; r++) {
      const row = [];
      for (let c = 0; c < paths.length;) {
        const p = paths[c];
        if (!p.length) { // a column without a header: one empty cell down the whole header
          if (r === 0) row.push({ text: "", colspan: 1, rowspan: depth, leaf: true, column: c, title: "" });
          c += 1;
          continue;
        }
        if (r >= p.length) { c += 1; continue; } // under its last cell's rowspan
        const leaf = r === p.length - 1;
        let end = c + 1;
        while (end < paths.length && paths[end].length > r && (paths[end].length - 1 === r) === leaf
               && same(paths[end], p, r + 1)) end += 1;
        row.push({ text: p[r], colspan: end - c, rowspan: leaf ? depth - r : 1, leaf, column: c,
          title: p.slice(0, r + 1).join(PATH) });
        c = end;
      }
      rows.push(row);
    }
    return rows;
  }

  function valueCell(text, stub) {
    const value = String(text == null ? "" : text);
    if (stub) return RL.el("th", { scope: "row", class: "stub" }, value);
    const cls = NUMBER.test(value.trim()) ? "num" : value.length > LONG ? "long" : null;
    return RL.el("td", { class: cls }, value);
  }

  /** The figure around a table: its caption, the scroll box, its notes. */
  function figure(table, caption, notes) {
    const label = caption || RL.t("table.label");
    return RL.el("figure", { class: "table-view", "data-testid": "table-view" },
      caption ? RL.el("figcaption", { class: "table-caption" }, caption) : null,
      RL.el("div", { class: "table-scroll", tabindex: "0", role: "region", "aria-label": label,
        "data-testid": "table-scroll" }, table),
      notes && notes.length ? RL.el("ul", { class: "table-notes", "aria-label": RL.t("table.notes"),
        "data-testid": "table-notes" }, notes.map((n) => RL.el("li", {}, n))) : null);
  }

  /** A table from header paths and rows; `marked(values, i)` says which body rows to mark (cited). */
  function build({ paths, stub, rows, caption, notes, marked }) {
    const width = Math.max(paths.length, ...rows.map((r) => r.length));
    const cols = paths.concat(Array.from({ length: width - paths.length }, () => []));
    const head = cols.some((p) => p.length) ? headerRows(cols) : [];
    const thead = head.length ? RL.el("thead", {}, head.map((row) => RL.el("tr", {}, row.map((h) => RL.el("th", {
      scope: h.leaf ? "col" : "colgroup", colspan: h.colspan > 1 ? Math.min(h.colspan, MAX_SPAN) : null,
      rowspan: h.rowspan > 1 ? h.rowspan : null, class: h.column < stub ? "stub" : null,
      title: h.leaf && h.title.includes(PATH) ? h.title : null,
    }, h.text))))) : null;
    const tbody = RL.el("tbody", {}, rows.map((values, i) => {
      const cells = Array.from({ length: width }, (_, c) => valueCell(values[c], c < stub));
      return RL.el("tr", { class: marked && marked(values, i) ? "marked" : null }, cells);
    }));
    return figure(RL.el("table", { class: "chunk-table", "data-testid": "chunk-table" }, thead, tbody), caption, notes);
  }

  /** The API's `table` of a chunk (StoredChunk.table). `mark`: text (a cited sentence) whose row is
      marked: the row its stub cells and one of its values are quoted from (without a stub: all values). */
  function fromRows(table, mark) {
    const rows = (table.rows || []).map((r) => r.map(String));
    const stub = Number(table.stub_columns) || 0;
    const quoted = (v) => Boolean(v) && mark.includes(v);
    const marked = (values) => (stub ? values.slice(0, stub).every(quoted) && values.slice(stub).some(quoted)
      : values.some(Boolean) && values.every((v) => !v || quoted(v)));
    return build({
      paths: (table.header_paths || []).map((p) => p.map(String)), stub, rows, caption: table.caption || "",
      notes: table.notes || [], marked: mark ? marked : null,
    });
  }

  /** A chunk's HTML (parsed inert: no script runs, nothing loads), its header rows kept as a header. */
  function fromHtml(html) {
    const parsed = new DOMParser().parseFromString(html, "text/html");
    const source = parsed.querySelector("table");
    if (!source || !source.querySelector("tr")) return null;
    const cell = (c, inHead) => RL.el(c.tagName === "TH" ? "th" : "td", {
      colspan: c.colSpan > 1 ? Math.min(c.colSpan, MAX_SPAN) : null,
      rowspan: c.rowSpan > 1 ? Math.min(c.rowSpan, MAX_SPAN) : null,
      scope: inHead ? "col" : c.tagName === "TH" ? "row" : null,
      class: inHead ? null : c.tagName === "TH" ? "stub" : NUMBER.test(c.textContent.trim()) ? "num"
        : c.textContent.trim().length > LONG ? "long" : null,
    }, c.textContent.trim());
    const rowsOf = (tr, inHead) => RL.el("tr", {},
      [...tr.children].filter((c) => c.tagName === "TD" || c.tagName === "TH").map((c) => cell(c, inHead)));
    const headRows = [...source.querySelectorAll("thead tr")];
    const bodyRows = [...source.querySelectorAll("tr")].filter((tr) => !tr.closest("thead"));
    const table = RL.el("table", { class: "chunk-table", "data-testid": "chunk-table" },
      headRows.length ? RL.el("thead", {}, headRows.map((tr) => rowsOf(tr, true))) : null,
      RL.el("tbody", {}, bodyRows.map((tr) => rowsOf(tr, false))));
    const caption = source.querySelector("caption");
    return figure(table, caption ? caption.textContent.trim() : "", []);
  }

  /** One line of a table chunk's text as [[label, value], ...] with the number of stub pairs, or null
      when it does not read as a row: "Stub: v — Label: v; Label: v", or "a | b | c". */
  function rowOf(line) {
    if (line.includes(" | ") && !line.includes(": ")) {
      return { pairs: line.split(" | ").map((v) => ["", v.trim()]), stub: 0, plain: true };
    }
    const at = line.indexOf(" — ");
    const split = (s) => s.split("; ").map((part) => {
      const k = part.indexOf(": ");
      return k > 0 ? [part.slice(0, k).trim(), part.slice(k + 2).trim()] : ["", part.trim()];
    });
    const stub = at > 0 ? split(line.slice(0, at)) : [];
    const pairs = [...stub, ...split(at > 0 ? line.slice(at + 3) : line)];
    const labelled = pairs.filter(([label]) => label).length;
    if (labelled < 2 || labelled * 2 < pairs.length) return null;
    return { pairs, stub: stub.length, plain: false };
  }

  /** A table chunk's text read back into a table (a citation carries no table): the lines before its
      rows are its caption, the lines after them its notes. Null when the text does not read as table
      rows (prose, a single short pair). `mark`: a cited sentence whose row is marked. */
  function fromText(content, mark) {
    const lines = String(content || "").split("\n").map((l) => l.trim()).filter(Boolean);
    const parsed = lines.map(rowOf);
    const first = parsed.findIndex(Boolean);
    if (first < 0) return null;
    let last = first;
    while (last + 1 < parsed.length && parsed[last + 1]) last += 1;
    const rows = parsed.slice(first, last + 1);
    if (rows.some((r) => r.plain !== rows[0].plain)) return null;
    if (rows.length < 2 && rows[0].pairs.length < 3) return null;
    if (rows[0].plain && (rows.length < 2 || rows.some((r) => r.pairs.length !== rows[0].pairs.length))) return null;
    const caption = lines.slice(0, first).join("\n");
    if (caption.length > 400) return null; // prose with a labelled line in it, not a table
    const { keys, stub } = columnsOf(rows);
    const index = new Map(keys.map((k, i) => [k, i]));
    const values = rows.map((r) => {
      const out = new Array(keys.length).fill("");
      keyed(r).forEach(([key, value]) => { out[index.get(key)] = value; });
      return out;
    });
    const lineOf = new Map(values.map((v, i) => [v, lines[first + i]]));
    return build({
      paths: keys.map((k) => { const label = k.replace(/#\d+$/, ""); return label ? label.split(PATH) : []; }),
      stub, rows: values, caption, notes: lines.slice(last + 1),
      marked: mark ? (v) => { const line = lineOf.get(v) || ""; return line.includes(mark) || mark.includes(line); }
        : null,
    });
  }

  /** A row's pairs keyed by label and occurrence ("Total#0", "#1" for a second unlabelled value). */
  function keyed(row) {
    const seen = new Map();
    return row.pairs.map(([label, value], i) => {
      const n = seen.get(label) || 0;
      seen.set(label, n + 1);
      return [`${label}#${n}`, value, i < row.stub];
    });
  }

  /** The columns of rows whose empty values were left out of their text: every label in the order the
      rows give it, a label new to a row placed right after the one before it in that row. */
  function columnsOf(rows) {
    const lists = { stub: [], rest: [] };
    for (const row of rows) {
      const after = { stub: -1, rest: -1 };
      for (const [key, , isStub] of keyed(row)) {
        const side = isStub ? "stub" : "rest";
        let at = lists[side].indexOf(key);
        if (at < 0) {
          at = after[side] + 1;
          lists[side].splice(at, 0, key);
        }
        after[side] = at;
      }
    }
    return { keys: [...lists.stub, ...lists.rest], stub: lists.stub.length };
  }

  return { fromRows, fromHtml, fromText };
})();
