/* The workspace's pages: members (/members), groups (/groups), invitations (/invitations), API keys
   (/keys) and model providers (/providers). Secrets (an invitation token, a key) are shown once, as the
   API returns them once. Groups: every member lists them; the owner and admins get the controls that
   change them (the API refuses anyone else with its own message, shown like every other refusal). */
"use strict";

document.addEventListener("DOMContentLoaded", () => {
  const { t, api, el } = RL;
  const page = document.querySelector("[data-page]").dataset.page;

  function showSecret(value, extra) {
    const box = document.getElementById("secret");
    document.getElementById("secret-value").textContent = value;
    const link = document.getElementById("secret-link");
    if (link) link.textContent = extra || "";
    box.hidden = false;
  }

  async function guarded(fn) {
    RL.showError("page-error", "");
    try {
      await fn();
    } catch (err) {
      RL.showError("page-error", err);
    }
  }

  // --- members ------------------------------------------------------------------------------------
  async function members() {
    const [{ members: rows }, me] = await Promise.all([api("GET", "/members"), api("GET", "/auth/me")]);
    const myRole = me.workspace ? me.workspace.role : "member";
    const tbody = document.querySelector("#members-table tbody");
    tbody.replaceChildren(...rows.map((m) => {
      const self = m.user_id === me.user.id;
      let role = t(`role.${m.role}`);
      if (m.role !== "owner" && !self && (myRole === "owner" || (myRole === "admin" && m.role === "member"))) {
        const select = el("select", { "aria-label": `${t("members.role")}: ${m.email}` },
          ["member", "admin"].map((r) => el("option", { value: r, selected: r === m.role }, t(`role.${r}`))));
        select.addEventListener("change", () => guarded(async () => {
          await api("PATCH", `/members/${encodeURIComponent(m.user_id)}`, { role: select.value });
          RL.flash(t("common.saved"));
        }));
        role = select;
      }
      const canRemove = !self && m.role !== "owner" && (myRole === "owner" || (myRole === "admin" && m.role === "member"));
      return el("tr", {},
        el("td", {}, m.name || m.email, self ? el("span", { class: "hint" }, ` (${t("members.you")})`) : null),
        el("td", { class: "wide" }, m.email),
        el("td", {}, role),
        el("td", {}, canRemove ? RL.button(t("members.remove"), () => guarded(async () => {
          if (!confirm(t("members.remove_confirm", { name: m.email }))) return;
          await api("DELETE", `/members/${encodeURIComponent(m.user_id)}`);
          await members();
        }), "small danger", { "aria-label": `${t("members.remove")}: ${m.email}` }) : null));
    }));
  }

  // --- groups -------------------------------------------------------------------------------------
  let manager = false; // the owner or an admin: the one who may change groups

  /** E-mail addresses as typed: one per line, or separated by commas, semicolons or spaces. */
  function emails(text) {
    return text.split(/[\s,，;；]+/).map((x) => x.trim()).filter(Boolean);
  }

  async function groups() {
    const { groups: rows } = await api("GET", "/groups");
    document.querySelector("#groups-table tbody").replaceChildren(...rows.map(groupRow));
    document.getElementById("groups-table").hidden = rows.length === 0;
    document.getElementById("groups-empty").hidden = rows.length > 0;
  }

  function groupRow(g) {
    const one = `/groups/${encodeURIComponent(g.id)}`;
    const change = (method, path, body) => guarded(async () => {
      await api(method, path, body);
      await groups();
    });
    const people = el("ul", { class: "group-members", "data-testid": "group-members" }, g.members.map((email) =>
      el("li", {}, el("span", {}, email), manager ? RL.button(t("groups.remove"),
        () => change("POST", `${one}/members/remove`, { emails: [email] }), "small",
        { "aria-label": t("groups.remove_label", { email, name: g.name }) }) : null)));
    let acts = null;
    if (manager) {
      const input = el("input", { name: "emails", placeholder: "name@example.com", spellcheck: "false",
        "aria-label": t("groups.add_label", { name: g.name }) });
      const add = el("form", { class: "group-add" }, input,
        el("button", { type: "submit", class: "small" }, t("groups.add")));
      add.addEventListener("submit", (event) => {
        event.preventDefault();
        const given = emails(input.value);
        if (given.length) change("POST", `${one}/members`, { emails: given });
      });
      acts = [add, RL.button(t("groups.delete"), () => {
        if (confirm(t("groups.delete_confirm", { name: g.name }))) change("DELETE", one);
      }, "small danger", { "aria-label": t("groups.delete_label", { name: g.name }) })];
    }
    return el("tr", { dataset: { groupId: g.id } },
      el("td", {}, el("strong", {}, g.name),
        g.source_id ? el("div", { class: "hint" }, t("groups.from_source")) : null),
      el("td", {}, el("span", { class: "hint", "data-testid": "group-count" },
        t(g.members.length === 1 ? "groups.count_one" : "groups.count", { n: g.members.length })), people),
      el("td", { class: "wide" }, g.description),
      el("td", { class: "acts" }, acts));
  }

  async function setupGroups() {
    const me = await api("GET", "/auth/me");
    manager = Boolean(me.workspace) && ["owner", "admin"].includes(me.workspace.role);
    const form = document.getElementById("group-form");
    form.hidden = !manager;
    document.getElementById("groups-read-only").hidden = manager;
    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      const v = RL.formValues(form);
      const made = await RL.busy(form.querySelector("button[type=submit]"), "page-error", () =>
        api("POST", "/groups", { name: v.name, description: v.description, members: emails(v.members) }));
      if (made) {
        form.reset();
        RL.flash(t("groups.created", { name: made.name }));
        await guarded(groups);
      }
    });
    await groups();
  }

  // --- invitations --------------------------------------------------------------------------------
  async function invitations() {
    const { invitations: rows } = await api("GET", "/invitations");
    document.querySelector("#invitations-table tbody").replaceChildren(...rows.map((inv) => el("tr", {},
      el("td", {}, t(`role.${inv.role}`)),
      el("td", { class: "wide" }, inv.email || t("invitations.anyone")),
      el("td", {}, el("span", { class: `badge ${inv.state}` }, t(`state.${inv.state}`))),
      el("td", { class: "wide" }, RL.when(inv.expires_at)),
      el("td", {}, inv.state === "pending" ? RL.button(t("common.revoke"), () => guarded(async () => {
        await api("DELETE", `/invitations/${encodeURIComponent(inv.id)}`);
        await invitations();
      }), "small danger", { "aria-label": `${t("common.revoke")}: ${inv.email || inv.id}` }) : null))));
  }

  function setupInvitations() {
    const form = document.getElementById("invite-form");
    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      const v = RL.formValues(form);
      const made = await RL.busy(form.querySelector("button[type=submit]"), "page-error", () =>
        api("POST", "/invitations", { role: v.role, email: v.email, expires_in_hours: Number(v.expires_in_hours || 72) }));
      if (made) {
        const link = `${location.origin}${RL.UI}/signup?invitation=${encodeURIComponent(made.token)}`;
        showSecret(made.token, t("invitations.link", { link }));
        await guarded(invitations);
      }
    });
  }

  // --- API keys -----------------------------------------------------------------------------------
  async function keys() {
    const { keys: rows } = await api("GET", "/keys");
    document.querySelector("#keys-table tbody").replaceChildren(...rows.map((k) => el("tr", { dataset: { keyId: k.id } },
      el("td", {}, k.name || "—"),
      el("td", {}, el("code", {}, `${k.prefix}…`)),
      el("td", { class: "wide" }, t(`scope.${k.scope}`)),
      el("td", {}, el("span", { class: `badge ${k.state}`, "data-testid": "key-state" }, t(`state.${k.state}`))),
      el("td", { class: "wide" }, RL.when(k.last_used_at)),
      el("td", {}, k.state === "active" ? RL.button(t("common.revoke"), () => guarded(async () => {
        if (!confirm(t("keys.revoke_confirm", { name: k.name || k.prefix }))) return;
        await api("DELETE", `/keys/${encodeURIComponent(k.id)}`);
        await keys();
      }), "small danger", { "aria-label": `${t("common.revoke")}: ${k.name || k.prefix}` }) : null))));
  }

  function setupKeys() {
    const form = document.getElementById("key-form");
    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      const v = RL.formValues(form);
      const body = { name: v.name, scope: v.scope };
      if (v.expires_in_days) body.expires_in_days = Number(v.expires_in_days);
      const made = await RL.busy(form.querySelector("button[type=submit]"), "page-error", () => api("POST", "/keys", body));
      if (made) {
        showSecret(made.key);
        form.reset();
        await guarded(keys);
      }
    });
  }

  // --- model providers ----------------------------------------------------------------------------
  async function providers() {
    const data = await api("GET", "/providers");
    const own = Object.fromEntries(data.providers.map((p) => [p.kind, p]));
    const inUse = Object.fromEntries(data.in_use.map((m) => [m.kind, m]));
    const box = document.getElementById("providers");
    box.replaceChildren(...["chat", "embedding", "rerank", "vision"].map((kind) =>
      providerCard(kind, own[kind], inUse[kind])));
  }

  function providerCard(kind, p, used) {
    const id = (name) => `${kind}-${name}`;
    const result = el("p", { class: "hint", id: id("result"), role: "status" });
    const error = el("div", { class: "error", role: "alert", id: id("error") });
    const form = el("form", { class: "grid-form", "data-kind": kind },
      el("label", { for: id("url") }, t("providers.base_url")),
      el("input", { id: id("url"), name: "base_url", required: true, value: p ? p.base_url : "",
                    placeholder: "http://127.0.0.1:11434/v1" }),
      el("label", { for: id("model") }, t("providers.model")),
      el("input", { id: id("model"), name: "model", required: true, value: p ? p.model : "" }),
      el("label", { for: id("key") }, t("providers.api_key")),
      el("input", { id: id("key"), name: "api_key", type: "password", autocomplete: "off",
                    placeholder: p && p.has_api_key ? t("providers.key_kept", { hint: p.api_key_hint || "" }) : "" }),
      el("div", { class: "span" }, error),
      el("div", { class: "span actions" },
        el("button", { type: "submit", class: "primary" }, t("common.save")),
        p ? RL.button(t("providers.test"), (e) => test(e, kind, result, error.id)) : null,
        p ? RL.button(t("providers.remove"), (e) => remove(e, kind, error.id), "danger") : null),
      el("div", { class: "span" }, result));
    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      const v = RL.formValues(form);
      const body = { base_url: v.base_url, model: v.model };
      if (form.api_key.value) body.api_key = form.api_key.value;
      const saved = await RL.busy(form.querySelector("button[type=submit]"), error.id,
        () => api("PUT", `/providers/${kind}`, body));
      if (saved) {
        RL.flash(t("common.saved"));
        await guarded(providers);
      }
    });
    const source = used ? t(`providers.source.${used.source}`, { model: used.model || "" }) : "";
    return el("section", { class: "card", "aria-labelledby": id("title") },
      el("h3", { id: id("title") }, t(`providers.kind.${kind}`)),
      el("p", { class: "hint" }, t("providers.in_use"), " ", el("strong", {}, source)),
      kind === "vision" ? el("p", { class: "hint" }, t("providers.hint.vision")) : null,
      form);
  }

  async function test(event, kind, result, errorId) {
    result.textContent = t("providers.testing");
    const r = await RL.busy(event.currentTarget, errorId, () => api("POST", `/providers/${kind}/test`));
    result.textContent = r ? `${r.ok ? "✓" : "✗"} ${r.message} (${Math.round(r.latency_ms)} ms)` : "";
  }

  async function remove(event, kind, errorId) {
    if (!confirm(t("providers.remove_confirm"))) return;
    const done = await RL.busy(event.currentTarget, errorId, async () => {
      await api("DELETE", `/providers/${kind}`);
      return true;
    });
    if (done) await guarded(providers);
  }

  const pages = {
    members: () => guarded(members),
    groups: () => guarded(setupGroups),
    invitations: () => { setupInvitations(); return guarded(invitations); },
    keys: () => { setupKeys(); return guarded(keys); },
    providers: () => guarded(providers),
  };
  pages[page]();
});
