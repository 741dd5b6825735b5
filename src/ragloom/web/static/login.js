/* Sign in / sign up: POST /api/v1/auth/login or /auth/signup; the response sets the session
   cookie (HttpOnly) and the readable CSRF cookie. */
"use strict";

document.addEventListener("DOMContentLoaded", () => {
  const form = document.getElementById("auth-form");
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const values = RL.formValues(form);
    const signup = form.dataset.mode === "signup";
    const body = signup
      ? { email: values.email, password: form.password.value, name: values.name || "", invitation: values.invitation || "" }
      : { email: values.email, password: form.password.value };
    if (!body.email || !body.password) {
      RL.showError("auth-error", RL.t("signin.required"));
      return;
    }
    const ok = await RL.busy(form.querySelector("button[type=submit]"), "auth-error", async () => {
      await RL.api("POST", signup ? "/auth/signup" : "/auth/login", body, { anonymous: true });
      return true;
    });
    if (ok) location.assign(form.dataset.next);
  });
  document.getElementById("email").focus();
});
