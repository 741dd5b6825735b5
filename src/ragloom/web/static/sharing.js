/* The chat page's "Share" dialog: an assistant's share links (their state and use), a new link, the chat
   page's address and the embed snippets with a copy button each, and revoking a link. */
"use strict";

(() => {
  const dialog = document.getElementById("share-dialog");
  const opener = document.getElementById("assistant-share");
  if (!dialog || !opener) return;
  const { api, el, t } = RL;
  const list = document.getElementById("share-links");
  const form = document.getElementById("share-create");
  const enc = encodeURIComponent;

  function assistantId() {
    const match = location.pathname.match(/\/chat\/([^/?#]+)/);
    return match ? decodeURIComponent(match[1]) : "";
  }

  function copyRow(label, text, testid) {
    const field = el("input", { type: "text", readonly: true, value: text, "data-testid": testid, "aria-label": label });
    const copy = el("button", { type: "button", class: "small", onclick: async () => {
      field.select();
      try { await navigator.clipboard.writeText(text); } catch (e) { document.execCommand("copy"); }
      RL.flash(t("sharing.copied"));
    } }, t("sharing.copy"));
    return el("div", { class: "share-copy" }, el("span", { class: "hint" }, label), field, copy);
  }

  function row(link) {
    const origin = location.origin;
    const absolute = (snippet) => snippet.replace(/src="\//g, `src="${origin}/`);
    const state = t("sharing.state", { state: t(`sharing.state_${link.state}`), questions: link.questions,
      refused: link.refused, sessions: link.sessions });
    const item = el("li", { class: "share-link", "data-testid": "share-link", dataset: { state: link.state } },
      el("strong", {}, link.title || link.name || link.id), " ",
      el("span", { class: "hint" }, `${t(`sharing.kind_${link.kind}`)} · ${state}`));
    if (link.allowed_origins.length) item.append(el("p", { class: "hint" }, link.allowed_origins.join(", ")));
    if (link.state === "active") {
      item.append(copyRow(t("sharing.page"), origin + link.url, "share-url"),
        copyRow(t("sharing.script"), absolute(link.embed.script), "share-script"),
        copyRow(t("sharing.iframe"), absolute(link.embed.iframe), "share-iframe"),
        el("button", { type: "button", class: "small danger", onclick: async () => {
          if (!confirm(t("sharing.revoke_confirm"))) return;
          try {
            await api("DELETE", `/chats/${enc(assistantId())}/shares/${enc(link.id)}`);
            RL.flash(t("sharing.revoked"));
            await load();
          } catch (err) { RL.showError("share-error", err); }
        } }, t("sharing.revoke")));
    }
    return item;
  }

  async function load() {
    RL.showError("share-error", "");
    try {
      const data = await api("GET", `/chats/${enc(assistantId())}/shares`);
      list.replaceChildren(...data.shares.map(row));
      document.getElementById("share-empty").hidden = data.shares.length > 0;
    } catch (err) { RL.showError("share-error", err); }
  }

  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const v = RL.formValues(form);
    const body = { kind: v.kind || "chat", allowed_origins: (v.origins || "").split(/\s+/).filter(Boolean),
      per_minute: Number(v.per_minute) || undefined, per_day: Number(v.per_day) || undefined,
      show_pages: document.getElementById("s-pages").checked };
    if (v.title) body.title = v.title;
    if (v.welcome) body.welcome = v.welcome;
    if (v.expires_in_days) body.expires_in_days = Number(v.expires_in_days);
    try {
      await api("POST", `/chats/${enc(assistantId())}/shares`, body);
      RL.flash(t("sharing.created"));
      form.reset();
      await load();
    } catch (err) { RL.showError("share-error", err); }
  });
  opener.addEventListener("click", async () => {
    dialog.showModal();
    await load();
  });
  document.getElementById("share-close").addEventListener("click", () => dialog.close());
  const search = document.getElementById("assistant-search");
  if (search) search.addEventListener("click", () => location.assign(`${RL.UI}/search/${enc(assistantId())}`));
})();
