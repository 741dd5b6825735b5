/* ragloom web UI: shared helpers. Every page calls the public REST API (/api/v1) with the session
   cookie and, on requests that change data, the X-CSRF-Token header. Text is inserted with
   textContent only (never innerHTML), so nothing a document or a user named can run as script. */
"use strict";

const RL = (() => {
  const messages = JSON.parse(document.getElementById("i18n").textContent);
  const UI = "/ui";

  /** The message `key` of the current language, with {name} placeholders filled from `vars`. */
  function t(key, vars) {
    let text = Object.prototype.hasOwnProperty.call(messages, key) ? messages[key] : key;
    for (const [name, value] of Object.entries(vars || {})) text = text.split(`{${name}}`).join(String(value));
    return text;
  }

  function cookie(name) {
    for (const part of document.cookie.split(";")) {
      const [k, ...rest] = part.trim().split("=");
      if (k === name) return decodeURIComponent(rest.join("="));
    }
    return "";
  }

  /** The session's CSRF token: its cookie is named with the __Host- prefix over HTTPS. */
  function csrf() {
    return cookie("__Host-ragloom_csrf") || cookie("ragloom_csrf");
  }

  class ApiError extends Error {
    constructor(status, message) {
      super(message);
      this.status = status;
    }
  }

  /** Call the API: JSON in and out (a FormData body is sent as multipart). Throws ApiError with
      the API's own message; a 401 on a page sends the browser to the sign-in page. */
  async function api(method, path, body, options = {}) {
    const headers = { Accept: "application/json" };
    let payload;
    if (body instanceof FormData) payload = body;
    else if (body !== undefined) {
      headers["Content-Type"] = "application/json";
      payload = JSON.stringify(body);
    }
    if (method !== "GET" && method !== "HEAD") headers["X-CSRF-Token"] = csrf();
    let response;
    try {
      response = await fetch("/api/v1" + path, { method, headers, body: payload, credentials: "same-origin" });
    } catch (err) {
      throw new ApiError(0, t("error.network"));
    }
    if (response.status === 401 && !options.anonymous) {
      location.assign(`${UI}/login?next=${encodeURIComponent(location.pathname + location.search)}`);
      throw new ApiError(401, t("error.signed_out"));
    }
    if (response.status === 204) return null;
    let data = null;
    try {
      data = await response.json();
    } catch (err) {
      data = null;
    }
    if (!response.ok) {
      const message = data && data.message ? data.message : `${response.status} ${response.statusText}`;
      throw new ApiError(response.status, message);
    }
    return data;
  }

  /** A DOM element: el("td", {class: "x", onclick: f}, "text", child, ...). */
  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [name, value] of Object.entries(attrs || {})) {
      if (value === null || value === undefined || value === false) continue;
      if (name.startsWith("on")) node.addEventListener(name.slice(2), value);
      else if (name === "dataset") Object.assign(node.dataset, value);
      else node.setAttribute(name, value === true ? "" : String(value));
    }
    for (const child of children.flat()) {
      if (child === null || child === undefined || child === false) continue;
      node.append(child instanceof Node ? child : document.createTextNode(String(child)));
    }
    return node;
  }

  function button(label, onclick, cls = "", attrs = {}) {
    return el("button", { type: "button", class: cls, onclick, ...attrs }, label);
  }

  /** Show `err` (an ApiError or a message) in the element with id `id`; "" clears it. */
  function showError(id, err) {
    const box = document.getElementById(id);
    if (!box) return;
    box.textContent = err ? (err.message || String(err)) : "";
  }

  let flashTimer = null;
  function flash(text) {
    const box = document.getElementById("flash");
    box.textContent = text;
    box.classList.add("shown");
    clearTimeout(flashTimer);
    flashTimer = setTimeout(() => box.classList.remove("shown"), 4000);
  }

  /** Run `fn` while `btn` is disabled; its error is shown in the element `errorId`. */
  async function busy(btn, errorId, fn) {
    if (btn) btn.disabled = true;
    showError(errorId, "");
    try {
      return await fn();
    } catch (err) {
      showError(errorId, err);
      return undefined;
    } finally {
      if (btn) btn.disabled = false;
    }
  }

  function when(iso) {
    if (!iso) return "—";
    const date = new Date(iso);
    return isNaN(date) ? iso : date.toLocaleString(document.documentElement.lang);
  }

  /** Live progress, as the documents page follows its tasks: `load()` runs now and, while it returns
      true (something is still queued or running), again every `ms` milliseconds; `now()` runs it at
      once (after a change), `stop()` ends the polling. A failing load is retried after 5 s. */
  function poller(load, ms = 1000) {
    let timer = null;
    let stopped = false;
    async function run() {
      clearTimeout(timer);
      if (stopped) return;
      let again = false;
      let wait = ms;
      try {
        again = await load();
      } catch (err) {
        again = !(err instanceof ApiError) || ![401, 403, 404].includes(err.status);
        wait = 5000;
      }
      if (again && !stopped) timer = setTimeout(run, wait);
    }
    return { now: run, stop() { stopped = true; clearTimeout(timer); } };
  }

  function formValues(form) {
    const out = {};
    for (const [k, v] of new FormData(form).entries()) out[k] = typeof v === "string" ? v.trim() : v;
    return out;
  }

  function setupTopBar() {
    const lang = document.getElementById("lang-switch");
    if (lang) lang.addEventListener("change", () => {
      const name = document.body.dataset.langCookie;
      document.cookie = `${name}=${encodeURIComponent(lang.value)}; path=/; max-age=31536000; samesite=lax`;
      location.reload();
    });
    const out = document.getElementById("sign-out");
    if (out) out.addEventListener("click", async () => {
      try {
        await api("POST", "/auth/logout");
      } catch (err) {
        /* signed out already: the sign-in page is where we go either way */
      }
      location.assign(`${UI}/login`);
    });
    const switcher = document.getElementById("workspace-switcher");
    if (switcher) switcher.addEventListener("change", async () => {
      switcher.disabled = true;
      try {
        await api("POST", "/auth/workspace", { workspace_id: switcher.value });
        // a knowledge base belongs to one workspace: leave its pages for the new workspace's list
        location.assign(location.pathname.startsWith(`${UI}/kb/`) ? `${UI}/kb` : location.pathname);
      } catch (err) {
        flash(err.message);
        switcher.disabled = false;
      }
    });
  }

  document.addEventListener("DOMContentLoaded", setupTopBar);

  // A document's progress messages, which the server writes in English, said in the page's language; any
  // other message (a failure's reason, a parser's note) is shown as it came.
  const PROGRESS = [
    [/^pages (\d+)-(\d+): ([\s\S]*)$/, (m) => t("progress.pages", { from: m[1], to: m[2], message: statusText(m[3]) })],
    [/^(\d+) of (\d+) page ranges done; waiting for a worker$/, (m) => t("progress.ranges_waiting", { done: m[1], n: m[2] })],
    [/^waiting for a worker$/, () => t("progress.waiting")],
    [/^parsing$/, () => t("progress.parsing")],
    [/^reading (\d+) figures$/, (m) => t("progress.figures", { n: m[1] })],
    [/^parsed (\d+) blocks; rendering page previews$/, (m) => t("progress.previews", { n: m[1] })],
    [/^parsed (\d+) blocks; chunking$/, (m) => t("progress.chunking", { n: m[1] })],
    [/^(\d+) chunks; embedding$/, (m) => t("progress.embedding", { n: m[1] })],
    [/^embedded (\d+)\/(\d+) chunks(?:, in a batch of (\d+) parts)?$/, (m) =>
      t(m[3] ? "progress.embedded_batch" : "progress.embedded", { done: m[1], n: m[2], parts: m[3] })],
    [/^indexing$/, () => t("progress.indexing")],
    [/^indexed (\d+)\/(\d+) chunks(?:, in a batch of (\d+) parts)?$/, (m) =>
      t(m[3] ? "progress.indexed_batch" : "progress.indexed", { done: m[1], n: m[2], parts: m[3] })],
    [/^publishing$/, () => t("progress.publishing")],
    [/^(\d+) chunks indexed([\s\S]*)$/, (m) => t("progress.chunks_indexed", { n: m[1] }) + m[2]],
    [/^published (\d+) chunks([\s\S]*)$/, (m) => t("progress.published", { n: m[1] }) + m[2]],
    [/^version (\d+) is built \((\d+) chunks\) and waits for review: publish or discard it$/, (m) =>
      t("progress.waits_for_review", { version: m[1], n: m[2] })],
    [/^cancelled by user$/, () => t("progress.cancelled")],
  ];

  function statusText(message) {
    if (!message) return message;
    for (const [pattern, say] of PROGRESS) {
      const m = pattern.exec(message);
      if (m) return say(m);
    }
    return message;
  }

  return { t, api, el, button, showError, flash, busy, when, formValues, cookie, csrf, poller, ApiError, UI,
    statusText };
})();
