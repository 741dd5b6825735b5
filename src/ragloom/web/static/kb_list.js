/* Knowledge bases: GET /api/v1/datasets (with document counts), POST /api/v1/datasets. */
"use strict";

document.addEventListener("DOMContentLoaded", () => {
  const { t, api, el } = RL;
  const tbody = document.querySelector("#kb-table tbody");

  async function load() {
    RL.showError("kb-list-error", "");
    try {
      const { datasets } = await api("GET", "/datasets?page_size=1000");
      tbody.replaceChildren(...datasets.map((kb) => el("tr", { dataset: { kbId: kb.id } },
        el("td", {}, el("a", { href: `${RL.UI}/kb/${encodeURIComponent(kb.id)}` }, kb.name),
          kb.description ? el("div", { class: "hint" }, kb.description) : null),
        el("td", { class: "num", "data-testid": "doc-count" }, kb.document_count ?? 0),
        el("td", { class: "wide" }, kb.chunk_method),
        el("td", { class: "wide" }, t(`lang.${kb.language}`)),
        el("td", {}, t(`perm.${kb.permission}`)),
        el("td", {}, el("a", { href: `${RL.UI}/kb/${encodeURIComponent(kb.id)}/settings`,
          "aria-label": `${t("settings.title")}: ${kb.name}` }, t("settings.title"))))));
      document.getElementById("kb-empty").hidden = datasets.length > 0;
      document.getElementById("kb-table").hidden = datasets.length === 0;
    } catch (err) {
      RL.showError("kb-list-error", err);
    }
  }

  const form = document.getElementById("kb-create");
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const v = RL.formValues(form);
    const created = await RL.busy(form.querySelector("button[type=submit]"), "kb-create-error", () =>
      api("POST", "/datasets", { name: v.name, language: v.language, chunk_method: v.chunk_method,
                                 permission: v.permission }));
    if (created) location.assign(`${RL.UI}/kb/${encodeURIComponent(created.id)}`);
  });
  load();
});
