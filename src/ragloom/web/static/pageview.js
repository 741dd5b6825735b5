/* Page images with regions drawn on them, shared by the chunks page and the chat's citation panel.
   Positions are [page, left, right, top, bottom] in PDF points of their own page (GET .../pages gives
   each page's width and height in points): a region is placed in percent of its page's size, so every
   page is scaled on its own and the boxes follow the image at any displayed size. */
"use strict";

const RLPages = (() => {
  /** A page's frame: its image (laid out at the page's aspect ratio before it loads); the page's size
      in points is kept on the frame for `place`. `page`: one entry of GET .../pages. */
  function frame(page, alt, attrs = {}) {
    const size = { page: page.page, width: page.width, height: page.height };
    const node = RL.el("div", { class: "page-frame", dataset: size },
      RL.el("img", { src: page.image, alt, loading: "lazy", ...attrs }));
    node.style.aspectRatio = `${page.width} / ${page.height}`;
    return node;
  }

  /** Place `node` (absolutely positioned) over `frame` at `pos` = [page, left, right, top, bottom]. */
  function place(node, frame, pos) {
    const width = Number(frame.dataset.width);
    const height = Number(frame.dataset.height);
    const pct = (v, of) => `${Math.max(0, Math.min(100, (v / of) * 100))}%`;
    const [, left, right, top, bottom] = pos;
    node.style.left = pct(Math.min(left, right), width);
    node.style.top = pct(Math.min(top, bottom), height);
    node.style.width = pct(Math.abs(right - left), width);
    node.style.height = pct(Math.abs(bottom - top), height);
    return node;
  }

  /** The page numbers `positions` lie on, in order, each once (0: no page, as a flowing document's). */
  function pagesOf(positions) {
    return [...new Set((positions || []).filter((p) => p.length >= 5).map((p) => p[0]).filter((n) => n > 0))]
      .sort((a, b) => a - b);
  }

  /** The frames of the pages `positions` lie on, among `pages` (GET .../pages's list), each with its
      regions drawn: a citation's pages alone, without the viewer. `label(n)` is a page's alternative
      text; `attrs` go on each image, `regionAttrs` on each region. */
  function citedFrames(pages, positions, label, attrs = {}, regionAttrs = {}) {
    const wanted = pagesOf(positions);
    return pages.filter((p) => wanted.includes(p.page) && p.image).map((page) => {
      const node = frame(page, label(page.page), attrs);
      for (const pos of positions.filter((p) => p.length >= 5 && p[0] === page.page)) {
        node.append(place(RL.el("div", { class: "region cited", ...regionAttrs }), node, pos));
      }
      return node;
    });
  }

  const ZOOMS = [0.5, 0.75, 1, 1.25, 1.5, 2, 3];

  /** A document viewer: a bar (previous/next page, a page number to type, zoom out/in, fit width, the
      thumbnails' toggle), a column of page thumbnails and the pages, one under the other, scaled
      together (regions are placed in percent, so they follow any zoom). Keys while it holds the focus:
      PageDown/→ next page, PageUp/← previous, Home/End, + and − zoom, 0 fits the width.
      `pages`: GET .../pages entries with an image; `opts.frameAttrs(page)`: attributes of a page's <img>
      (its test id, loading); `opts.thumbs`: the thumbnails shown at first. Returns the node, the
      frames by page number (draw regions on them), `goTo(n)` and `reveal(node)` (scroll a region to
      the middle of the view, at any zoom). */
  function viewer(pages, opts = {}) {
    const { t, el } = RL;
    const frames = new Map();
    let zoom = 1;
    let current = pages.length ? pages[0].page : 0;
    const scroller = el("div", { class: "viewer-pages", tabindex: "0", "aria-label": opts.label || t("viewer.label") });
    const thumbs = el("nav", { class: "viewer-thumbs", "aria-label": t("viewer.thumbs") });
    const number = el("input", { type: "number", class: "viewer-page", min: 1, max: pages.length || 1, value: 1,
      "aria-label": t("viewer.page"), "data-testid": "viewer-page" });
    const total = el("span", { class: "hint" }, t("viewer.of", { n: pages.length }));
    const zoomShown = el("span", { class: "viewer-zoom hint", "aria-live": "polite", "data-testid": "viewer-zoom" },
      "100%");
    const tool = (label, text, onclick, attrs = {}) => el("button", { type: "button", class: "small icon",
      title: label, "aria-label": label, onclick, ...attrs }, text);
    const prev = tool(t("viewer.prev"), "‹", () => step(-1));
    const next = tool(t("viewer.next"), "›", () => step(1));
    const thumbsToggle = tool(t("viewer.thumbs"), "▤", () => showThumbs(thumbs.hidden),
      { "aria-pressed": "false", class: "small icon viewer-thumbs-toggle" });
    const bar = el("div", { class: "viewer-bar", role: "toolbar", "aria-label": t("viewer.tools") },
      thumbsToggle, prev, number, total, next,
      el("span", { class: "viewer-sep" }),
      tool(t("viewer.zoom_out"), "−", () => zoomTo(ZOOMS[Math.max(0, ZOOMS.indexOf(zoom) - 1)])),
      zoomShown,
      tool(t("viewer.zoom_in"), "+", () => zoomTo(ZOOMS[Math.min(ZOOMS.length - 1, ZOOMS.indexOf(zoom) + 1)])),
      tool(t("viewer.fit"), "↔", () => zoomTo(1)));
    const thumbButtons = new Map();
    for (const p of pages) {
      const attrs = opts.frameAttrs ? opts.frameAttrs(p) : {};
      const f = frame(p, t("viewer.page_alt", { n: p.page }), attrs);
      f.append(el("span", { class: "page-no", "aria-hidden": "true" }, String(p.page)));
      frames.set(p.page, f);
      scroller.append(f);
      const small = el("button", { type: "button", class: "viewer-thumb", "aria-label": t("viewer.go", { n: p.page }),
        onclick: () => goTo(p.page) },
      el("img", { src: thumbSrc(p.image), alt: "", loading: "lazy" }), el("span", {}, String(p.page)));
      small.querySelector("img").style.aspectRatio = `${p.width} / ${p.height}`;
      thumbButtons.set(p.page, small);
      thumbs.append(small);
    }
    const node = el("div", { class: "doc-viewer", "data-testid": "doc-viewer" }, bar,
      el("div", { class: "viewer-body" }, thumbs, scroller));
    showThumbs(opts.thumbs !== false && pages.length > 1);

    function thumbSrc(src) {
      return `${src}${src.includes("?") ? "&" : "?"}width=160`;
    }

    function showThumbs(on) {
      thumbs.hidden = !on;
      thumbsToggle.setAttribute("aria-pressed", String(on));
      node.classList.toggle("with-thumbs", on);
    }

    function step(by) {
      const list = [...frames.keys()];
      const at = list.indexOf(current);
      goTo(list[Math.max(0, Math.min(list.length - 1, at + by))]);
    }

    function goTo(n, smooth = false) {
      const f = frames.get(n);
      if (!f) return;
      scroller.scrollTo({ top: f.offsetTop - 8, behavior: smooth ? "smooth" : "auto" });
      mark(n);
    }

    function reveal(target) {
      const f = target.closest(".page-frame");
      if (!f) return;
      const box = target.getBoundingClientRect();
      const view = scroller.getBoundingClientRect();
      scroller.scrollTop += box.top - view.top - (view.height - box.height) / 2;
      scroller.scrollLeft += box.left - view.left - Math.max(0, (view.width - box.width) / 2);
      mark(Number(f.dataset.page));
    }

    function mark(n) {
      if (!n) return;
      current = n;
      number.value = String([...frames.keys()].indexOf(n) + 1);
      prev.disabled = n === pages[0].page;
      next.disabled = n === pages[pages.length - 1].page;
      for (const [page, b] of thumbButtons) {
        if (page === n) {
          b.setAttribute("aria-current", "page");
          if (!thumbs.hidden) {
            const tb = b.getBoundingClientRect();
            const area = thumbs.getBoundingClientRect();
            if (tb.top < area.top || tb.bottom > area.bottom) thumbs.scrollTop += tb.top - area.top - area.height / 3;
          }
        } else {
          b.removeAttribute("aria-current");
        }
      }
    }

    function zoomTo(z) {
      const keep = current;
      const within = frames.get(keep)
        ? (scroller.scrollTop - (frames.get(keep).offsetTop)) / frames.get(keep).offsetHeight : 0;
      zoom = z;
      scroller.style.setProperty("--zoom", String(z));
      node.classList.toggle("zoomed", z > 1);
      zoomShown.textContent = `${Math.round(z * 100)}%`;
      const f = frames.get(keep);
      if (f) scroller.scrollTop = f.offsetTop + within * f.offsetHeight;
    }

    let ticking = false;
    scroller.addEventListener("scroll", () => {
      if (ticking) return;
      ticking = true;
      requestAnimationFrame(() => {
        ticking = false;
        // the page showing most of itself in the view
        const top = scroller.scrollTop;
        const bottom = top + scroller.clientHeight;
        let seen = current;
        let most = 0;
        for (const [n, f] of frames) {
          const shown = Math.min(bottom, f.offsetTop + f.offsetHeight) - Math.max(top, f.offsetTop);
          if (shown > most) { most = shown; seen = n; }
          if (f.offsetTop > bottom) break;
        }
        if (seen !== current) mark(seen);
      });
    });
    number.addEventListener("change", () => {
      const list = [...frames.keys()];
      const i = Math.max(1, Math.min(list.length, Math.round(Number(number.value) || 1)));
      goTo(list[i - 1]);
    });
    node.addEventListener("keydown", (e) => {
      if (e.target === number || e.altKey || e.ctrlKey || e.metaKey) return;
      const keys = {
        PageDown: () => step(1), ArrowRight: () => step(1), PageUp: () => step(-1), ArrowLeft: () => step(-1),
        Home: () => goTo(pages[0].page), End: () => goTo(pages[pages.length - 1].page),
        "+": () => zoomTo(ZOOMS[Math.min(ZOOMS.length - 1, ZOOMS.indexOf(zoom) + 1)]),
        "=": () => zoomTo(ZOOMS[Math.min(ZOOMS.length - 1, ZOOMS.indexOf(zoom) + 1)]),
        "-": () => zoomTo(ZOOMS[Math.max(0, ZOOMS.indexOf(zoom) - 1)]), 0: () => zoomTo(1),
      };
      const act = keys[e.key];
      if (!act) return;
      e.preventDefault();
      act();
    });
    if (pages.length) mark(current);
    return { node, frames, goTo, reveal, scroller };
  }

  return { frame, place, pagesOf, citedFrames, viewer };
})();
