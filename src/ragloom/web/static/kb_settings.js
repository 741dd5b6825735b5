/* A knowledge base's settings: GET and PATCH /api/v1/datasets/{id}; DELETE removes it. The API
   validates everything (chunk method parameters included) and its message is shown as is. */
"use strict";

document.addEventListener("DOMContentLoaded", async () => {
  const { t, api } = RL;
  const kbId = document.getElementById("settings-title").dataset.kbId;
  const path = `/datasets/${encodeURIComponent(kbId)}`;
  const form = document.getElementById("kb-settings");

  function fill(kb) {
    document.getElementById("kb-crumb").textContent = kb.name;
    document.getElementById("settings-title").textContent = `${t("settings.title")}: ${kb.name}`;
    form.name.value = kb.name;
    form.description.value = kb.description || "";
    form.language.value = t(`lang.${kb.language}`);
    form.chunk_method.value = kb.chunk_method;
    form.parser_config.value = JSON.stringify(kb.parser_config || {}, null, 2);
    form.permission.value = kb.permission;
    form.pagerank.value = kb.pagerank;
    form.synonyms.value = (kb.synonyms || []).map((group) => group.join(", ")).join("\n");
    form.embedding_model.value = kb.embedding_model;
  }

  try {
    fill(await api("GET", path));
    form.hidden = false;
  } catch (err) {
    RL.showError("settings-load-error", err);
    return;
  }

  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    let config;
    try {
      config = JSON.parse(form.parser_config.value.trim() || "{}");
    } catch (err) {
      RL.showError("settings-error", t("settings.bad_json", { error: err.message }));
      form.parser_config.focus();
      return;
    }
    const synonyms = form.synonyms.value.split("\n")
      .map((line) => line.split(/[,，]/).map((w) => w.trim()).filter(Boolean))
      .filter((group) => group.length);
    const body = {
      name: form.name.value.trim(), description: form.description.value, chunk_method: form.chunk_method.value,
      parser_config: config, permission: form.permission.value, pagerank: Number(form.pagerank.value || 0),
      synonyms,
    };
    const saved = await RL.busy(form.querySelector("button[type=submit]"), "settings-error",
      () => api("PATCH", path, body));
    if (saved) {
      fill(saved);
      RL.flash(t("common.saved"));
    }
  });

  document.getElementById("kb-delete").addEventListener("click", async (event) => {
    if (!confirm(t("settings.delete_confirm", { name: form.name.value }))) return;
    const done = await RL.busy(event.currentTarget, "settings-error", async () => {
      await api("DELETE", path);
      return true;
    });
    if (done) location.assign(`${RL.UI}/kb`);
  });
});
