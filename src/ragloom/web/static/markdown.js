/* A small, safe Markdown renderer for chat answers: it builds DOM nodes from the text (never markup
   from it), so nothing an answer says can run as script or load anything. Blocks: paragraphs (a line
   break is kept), ATX headings (shown two levels down: a message's headings sit below the page's),
   bullet and numbered lists (nested by indentation), block quotes, fenced code blocks, rules and
   pipe tables. Inline: **strong**, *emphasis*, ~~strike~~, `code`, backslash escapes, links — only
   to http and https addresses, opened with rel=noopener (any other link is shown as its text) — and
   the answer's citation markers [ID:n], which become whatever `options.cite(n)` returns.

     MD.render(text, { cite: (n) => RL.el("button", {}, String(n + 1)) })  // -> a DocumentFragment
*/
"use strict";

const MD = (() => {
  const FENCE = /^ {0,3}(`{3,}|~{3,})\s*([^`\s]*)/;
  const HEADING = /^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$/;
  const RULE = /^ {0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*$/;
  const QUOTE = /^ {0,3}> ?(.*)$/;
  const ITEM = /^( {0,12})([-*+]|\d{1,9}[.)])(?:[ \t]+(.*))?$/;
  const TABLE_RULE = /^ {0,3}\|?[ \t]*:?-+:?[ \t]*(\|[ \t]*:?-+:?[ \t]*)*\|?[ \t]*$/;
  const PUNCT = /[!-/:-@[-`{-~]/;
  const MAX_DEPTH = 12; // nested lists and quotes deeper than this are shown as text
  // inline patterns, matched where the scan stands (sticky: no copy of the rest of the text)
  const BACKTICKS = /`+/y;
  const MARKER = /\[ID:\s*(\d{1,6})\]/iy;
  const AUTOLINK = /<([a-z][a-z0-9+.-]*:[^\s<>]+)>/iy;
  const BARE_URL = /https?:\/\/[^\s<>"'`]*[^\s<>"'`.,;:!?)\]]/iy;
  const DELIMS = /\*+|_+|~+/y;

  function at(pattern, text, i) {
    pattern.lastIndex = i;
    return pattern.exec(text);
  }

  function node(tag, attrs, children) {
    const n = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) n.setAttribute(k, v);
    for (const c of children || []) n.append(c);
    return n;
  }

  /** `href` when it is an absolute http or https address, else null. */
  function safeUrl(href) {
    try {
      const url = new URL(href);
      return url.protocol === "http:" || url.protocol === "https:" ? url.href : null;
    } catch (err) {
      return null;
    }
  }

  // --- inline ----------------------------------------------------------------------------------------

  /** The index of the closing `delim` of an emphasis opened before `from`, or -1. */
  function closing(text, delim, from) {
    for (let k = text.indexOf(delim, from); k !== -1; k = text.indexOf(delim, k + 1)) {
      if (k === from || /\s/.test(text[k - 1])) continue; // "** x" or "x **": not a closing run
      const after = text[k + delim.length];
      if (delim.length === 1 && after === delim) { k += 1; continue; } // part of a longer run
      if (delim[0] === "_" && after && /[\p{L}\p{N}]/u.test(after)) continue; // snake_case words stay words
      return k;
    }
    return -1;
  }

  /** The index of the "]" closing the "[" at `open` (brackets nest), or -1. */
  function closeBracket(text, open) {
    let depth = 0;
    for (let k = open; k < text.length; k++) {
      if (text[k] === "\\") k++;
      else if (text[k] === "[") depth++;
      else if (text[k] === "]" && --depth === 0) return k;
      else if (text[k] === "\n" && text[k + 1] === "\n") return -1;
    }
    return -1;
  }

  /** The index of the ")" closing the "(" at `open` (parentheses nest, as in a URL's), or -1. */
  function closeParen(text, open) {
    let depth = 0;
    for (let k = open; k < text.length; k++) {
      if (text[k] === "\\") k++;
      else if (text[k] === "(") depth++;
      else if (text[k] === ")" && --depth === 0) return k;
      else if (text[k] === "\n") return -1;
    }
    return -1;
  }

  function inline(text, options, depth = 0) {
    const out = [];
    let buf = "";
    const flush = () => {
      if (buf) out.push(document.createTextNode(buf));
      buf = "";
    };
    let i = 0;
    while (i < text.length) {
      const c = text[i];
      if (c === "\\" && i + 1 < text.length && PUNCT.test(text[i + 1])) {
        buf += text[i + 1];
        i += 2;
        continue;
      }
      if (c === "\n") {
        flush();
        out.push(node("br"));
        i += 1;
        continue;
      }
      if (c === "`") {
        const run = at(BACKTICKS, text, i)[0];
        let end = text.indexOf(run, i + run.length);
        while (end !== -1 && text[end + run.length] === "`") end = text.indexOf(run, end + run.length + 1);
        if (end !== -1) {
          flush();
          let code = text.slice(i + run.length, end).replace(/\n/g, " ");
          if (/^ .*[^ ].* $/.test(code)) code = code.slice(1, -1);
          out.push(node("code", {}, [code]));
          i = end + run.length;
        } else {
          buf += run;
          i += run.length;
        }
        continue;
      }
      if (c === "[") {
        const marker = at(MARKER, text, i);
        if (marker) {
          const made = options.cite ? options.cite(Number(marker[1])) : null;
          if (made) {
            flush();
            out.push(made);
          } else {
            buf += marker[0];
          }
          i += marker[0].length;
          continue;
        }
        const close = closeBracket(text, i);
        if (close !== -1 && text[close + 1] === "(") {
          const end = closeParen(text, close + 1);
          if (end !== -1) {
            const target = text.slice(close + 2, end).trim().split(/\s+/)[0].replace(/^<|>$/g, "");
            const label = inline(text.slice(i + 1, close), { ...options, link: true }, depth + 1);
            const href = options.link ? null : safeUrl(target);
            flush();
            out.push(href ? node("a", { href, rel: "noopener noreferrer", target: "_blank" }, label)
              : node("span", {}, label));
            i = end + 1;
            continue;
          }
        }
      }
      if (c === "<") {
        const auto = at(AUTOLINK, text, i);
        const href = auto && !options.link ? safeUrl(auto[1]) : null;
        if (href) {
          flush();
          out.push(node("a", { href, rel: "noopener noreferrer", target: "_blank" }, [auto[1]]));
          i += auto[0].length;
          continue;
        }
      }
      if ((c === "h" || c === "H") && !options.link && !/[\p{L}\p{N}]/u.test(text[i - 1] || "")) {
        const bare = at(BARE_URL, text, i);
        let url = bare ? bare[0] : "";
        while (text[i + url.length] === ")" && url.split("(").length > url.split(")").length) url += ")";
        const href = url ? safeUrl(url) : null;
        if (href) {
          flush();
          out.push(node("a", { href, rel: "noopener noreferrer", target: "_blank" }, [url]));
          i += url.length;
          continue;
        }
      }
      if ((c === "*" || c === "_" || c === "~") && depth < MAX_DEPTH) {
        const run = at(DELIMS, text, i)[0];
        const opensWord = i + run.length < text.length && !/\s/.test(text[i + run.length]);
        const intraword = c === "_" && /[\p{L}\p{N}]/u.test(text[i - 1] || "");
        let done = false;
        if (opensWord && !intraword) {
          const tries = c === "~" ? (run.length === 2 ? [["~~", "del"]] : [])
            : run.length >= 3 ? [[c.repeat(3), "both"], [c.repeat(2), "strong"], [c, "em"]]
              : run.length === 2 ? [[c.repeat(2), "strong"]] : [[c, "em"]];
          for (const [delim, tag] of tries) {
            const end = closing(text, delim, i + delim.length);
            if (end === -1) continue;
            const inner = inline(text.slice(i + delim.length, end), options, depth + 1);
            flush();
            out.push(tag === "both" ? node("strong", {}, [node("em", {}, inner)]) : node(tag, {}, inner));
            i = end + delim.length;
            done = true;
            break;
          }
        }
        if (!done) {
          buf += run;
          i += run.length;
        }
        continue;
      }
      buf += c;
      i += 1;
    }
    flush();
    return out;
  }

  // --- blocks ----------------------------------------------------------------------------------------

  const blank = (line) => /^\s*$/.test(line);
  const indentOf = (line) => /^ */.exec(line.replace(/\t/g, "    "))[0].length;

  function splitRow(line) {
    let row = line.trim();
    if (row.startsWith("|")) row = row.slice(1);
    if (row.endsWith("|") && !row.endsWith("\\|")) row = row.slice(0, -1);
    return row.split(/(?<!\\)\|/).map((cell) => cell.trim());
  }

  /** Whether `line` starts a block that ends a paragraph. */
  function interrupts(line, lines, k) {
    return FENCE.test(line) || HEADING.test(line) || RULE.test(line) || QUOTE.test(line) || ITEM.test(line)
      || (line.includes("|") && k + 1 < lines.length && TABLE_RULE.test(lines[k + 1]) && lines[k + 1].includes("-"));
  }

  function table(lines, i, options, depth) {
    const head = splitRow(lines[i]);
    const aligns = splitRow(lines[i + 1]).map((cell) => {
      if (cell.startsWith(":") && cell.endsWith(":")) return "center";
      if (cell.endsWith(":")) return "right";
      return cell.startsWith(":") ? "left" : "";
    });
    const cell = (tag, text, k) => {
      const content = inline(text.replace(/\\\|/g, "|"), options, depth + 1);
      const td = node(tag, tag === "th" ? { scope: "col" } : {}, content);
      if (aligns[k]) td.style.textAlign = aligns[k];
      return td;
    };
    const rows = [];
    let k = i + 2;
    for (; k < lines.length && !blank(lines[k]) && lines[k].includes("|"); k++) {
      const cells = splitRow(lines[k]);
      rows.push(node("tr", {}, head.map((_, n) => cell("td", cells[n] || "", n))));
    }
    const built = node("table", {}, [node("thead", {}, [node("tr", {}, head.map((h, n) => cell("th", h, n)))]),
      node("tbody", {}, rows)]);
    return [node("div", { class: "md-table" }, [built]), k];
  }

  function list(lines, i, options, depth) {
    const first = ITEM.exec(lines[i]);
    const ordered = /\d/.test(first[2]);
    const marker = ordered ? first[2].slice(-1) : first[2];
    const base = first[1].length;
    const items = [];
    let loose = false;
    let k = i;
    while (k < lines.length) {
      const m = ITEM.exec(lines[k]);
      if (!m || m[1].length > base + 1 || m[1].length < base || /\d/.test(m[2]) !== ordered
          || (ordered ? m[2].slice(-1) : m[2]) !== marker) break;
      const content = base + m[2].length + 1;
      const body = [m[3] || ""];
      k += 1;
      while (k < lines.length) {
        const line = lines[k];
        if (blank(line)) {
          const next = lines[k + 1];
          if (next !== undefined && !blank(next) && indentOf(next) >= Math.min(content, base + 2)) {
            body.push("");
            loose = true;
            k += 1;
            continue;
          }
          break;
        }
        const indent = indentOf(line);
        if (indent >= Math.min(content, base + 2)) {
          body.push(line.replace(/\t/g, "    ").slice(Math.min(indent, content)));
        } else if (!interrupts(line, lines, k) && !blank(body[body.length - 1])) {
          body.push(line.trim()); // a lazy continuation of the item's paragraph
        } else {
          break;
        }
        k += 1;
      }
      items.push(body);
      if (k < lines.length && blank(lines[k]) && k + 1 < lines.length && ITEM.test(lines[k + 1])) {
        const next = ITEM.exec(lines[k + 1]);
        if (next[1].length >= base && next[1].length <= base + 1) {
          loose = true;
          k += 1;
        }
      }
    }
    const attrs = ordered && parseInt(first[2], 10) !== 1 ? { start: String(parseInt(first[2], 10)) } : {};
    const built = node(ordered ? "ol" : "ul", attrs, items.map((body) => {
      const parts = blocks(body, options, depth + 1);
      const tight = !loose && parts.length && parts[0].tagName === "P";
      return node("li", {}, tight ? [...parts[0].childNodes, ...parts.slice(1)] : parts);
    }));
    return [built, k];
  }

  function blocks(lines, options, depth = 0) {
    const out = [];
    let i = 0;
    while (i < lines.length) {
      const line = lines[i];
      if (blank(line)) {
        i += 1;
        continue;
      }
      if (depth >= MAX_DEPTH) {
        out.push(node("p", {}, [lines.slice(i).join("\n")]));
        break;
      }
      const fence = FENCE.exec(line);
      if (fence) {
        const body = [];
        let k = i + 1;
        const end = new RegExp(`^ {0,3}${fence[1][0] === "`" ? "`" : "~"}{${fence[1].length},}\\s*$`);
        for (; k < lines.length && !end.test(lines[k]); k++) body.push(lines[k]);
        const code = node("code", fence[2] ? { "data-lang": fence[2] } : {}, [body.join("\n")]);
        out.push(node("pre", {}, [code]));
        i = k + 1;
        continue;
      }
      const heading = HEADING.exec(line);
      if (heading) {
        const level = Math.min(6, heading[1].length + 2);
        out.push(node(`h${level}`, { class: "md-h" }, inline(heading[2] || "", options, depth)));
        i += 1;
        continue;
      }
      if (RULE.test(line)) {
        out.push(node("hr"));
        i += 1;
        continue;
      }
      if (QUOTE.test(line)) {
        const body = [];
        let k = i;
        for (; k < lines.length && !blank(lines[k]); k++) {
          const q = QUOTE.exec(lines[k]);
          if (!q && interrupts(lines[k], lines, k)) break;
          body.push(q ? q[1] : lines[k]);
        }
        out.push(node("blockquote", {}, blocks(body, options, depth + 1)));
        i = k;
        continue;
      }
      const item = ITEM.exec(line); // a list: an item with text, or an empty one whose text follows indented
      if (item && ((item[3] || "").trim() !== "" || (i + 1 < lines.length && indentOf(lines[i + 1]) >= 2))) {
        const [built, k] = list(lines, i, options, depth);
        out.push(built);
        i = k;
        continue;
      }
      if (line.includes("|") && i + 1 < lines.length && TABLE_RULE.test(lines[i + 1]) && lines[i + 1].includes("-")) {
        const [built, k] = table(lines, i, options, depth);
        out.push(built);
        i = k;
        continue;
      }
      const para = [line.trim()];
      let k = i + 1;
      for (; k < lines.length && !blank(lines[k]) && !interrupts(lines[k], lines, k); k++) para.push(lines[k].trim());
      out.push(node("p", {}, inline(para.join("\n"), options, depth)));
      i = k;
    }
    return out;
  }

  /** `text` as Markdown: a DocumentFragment of DOM nodes (text only ever as text nodes). */
  function render(text, options = {}) {
    const fragment = document.createDocumentFragment();
    fragment.append(...blocks(String(text || "").replace(/\r\n?/g, "\n").split("\n"), options));
    return fragment;
  }

  return { render, safeUrl };
})();
