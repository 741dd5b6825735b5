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

  return { frame, place, pagesOf };
})();
