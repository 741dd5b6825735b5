/* The signed-in person's account: password change (POST /auth/password), their workspaces (rename,
   leave, create, join with an invitation token), and for a server administrator the sign-up switch
   (GET/PUT /admin/signup). Everything goes through the public API. */
"use strict";

document.addEventListener("DOMContentLoaded", () => {
  const { t, api, el } = RL;

  const pw = document.getElementById("password-form");
  pw.addEventListener("submit", async (event) => {
    event.preventDefault();
    RL.showError("password-error", "");
    if (!pw.reportValidity()) return;
    if (pw.new_password.value !== pw.again.value) {
      RL.showError("password-error", t("account.passwords_differ"));
      pw.again.focus();
      return;
    }
    const done = await RL.busy(pw.querySelector("button[type=submit]"), "password-error", async () => {
      await api("POST", "/auth/password", { current_password: pw.current_password.value,
        new_password: pw.new_password.value });
      return true;
    });
    if (done) {
      pw.reset();
      RL.flash(t("account.password_changed"));
    }
  });

  async function spaces() {
    const { workspaces } = await api("GET", "/workspaces");
    const tbody = document.querySelector("#spaces-table tbody");
    tbody.replaceChildren(...workspaces.map((w) => {
      const name = el("input", { value: w.name, maxlength: 128, "aria-label": t("account.workspace_name", { name: w.name }),
        disabled: w.role === "member" });
      const acts = [];
      if (w.role !== "member") {
        acts.push(RL.button(t("account.rename"), async (e) => {
          const ok = await RL.busy(e.currentTarget, "spaces-error",
            () => api("PATCH", `/workspaces/${encodeURIComponent(w.id)}`, { name: name.value.trim() }));
          if (ok) location.reload(); // the top bar names the workspace too
        }, "small", { "aria-label": t("account.rename_label", { name: w.name }) }));
      }
      if (w.role !== "owner") {
        acts.push(RL.button(t("account.leave"), async (e) => {
          if (!confirm(t("account.leave_confirm", { name: w.name }))) return;
          const ok = await RL.busy(e.currentTarget, "spaces-error", async () => {
            await api("POST", `/workspaces/${encodeURIComponent(w.id)}/leave`);
            return true;
          });
          if (ok) location.reload(); // the top bar's workspace list changed
        }, "small danger", { "aria-label": t("account.leave_label", { name: w.name }) }));
      }
      return el("tr", { dataset: { workspaceId: w.id } },
        el("td", {}, name, w.current ? el("span", { class: "badge done" }, t("account.current")) : null),
        el("td", {}, t(`role.${w.role}`)),
        el("td", {}, el("div", { class: "row-actions" }, acts)));
    }));
  }

  const create = document.getElementById("space-create");
  create.addEventListener("submit", async (event) => {
    event.preventDefault();
    const ok = await RL.busy(create.querySelector("button"), "spaces-error",
      () => api("POST", "/workspaces", { name: create.name.value.trim() }));
    if (ok) location.reload();
  });
  const accept = document.getElementById("invite-accept");
  accept.addEventListener("submit", async (event) => {
    event.preventDefault();
    const ok = await RL.busy(accept.querySelector("button"), "spaces-error",
      () => api("POST", "/invitations/accept", { token: accept.token.value.trim() }));
    if (ok) location.reload();
  });

  spaces().catch((err) => RL.showError("spaces-error", err));

  const signup = document.getElementById("signup-open");
  if (signup) {
    api("GET", "/admin/signup").then((s) => { signup.checked = s.open; })
      .catch((err) => RL.showError("server-error", err));
    signup.addEventListener("change", async () => {
      const ok = await RL.busy(signup, "server-error", () => api("PUT", "/admin/signup", { open: signup.checked }));
      if (ok) RL.flash(t(ok.open ? "account.signup_opened" : "account.signup_closed"));
      else signup.checked = !signup.checked;
    });
  }
});
