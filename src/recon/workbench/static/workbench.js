// The workbench's few lines of plain JS: forms with data-api send JSON to the API with the
// session's CSRF token, then reload (or say why not). No framework, no build step.
"use strict";

function csrf() {
  const meta = document.querySelector('meta[name="csrf"]');
  return meta ? meta.getAttribute("content") : "";
}

function say(text, bad) {
  const status = document.getElementById("status");
  if (status) {
    status.textContent = text;
    status.className = bad ? "error" : "ok";
  }
}

// Reload the page, then say `text` on it (kept in sessionStorage across the reload, so no
// timer races the next navigation).
function reloadSaying(text) {
  window.sessionStorage.setItem("recon-status", text);
  window.location.reload();
}

async function send(url, method, data) {
  const response = await fetch(url, {
    method: method,
    credentials: "same-origin",
    headers: { "Content-Type": "application/json", "X-CSRF-Token": csrf() },
    body: data === null ? undefined : JSON.stringify(data),
  });
  let body = {};
  try { body = await response.json(); } catch (e) { body = {}; }
  return { status: response.status, body: body };
}

function formData(form) {
  const data = {};
  for (const field of form.querySelectorAll("input[name], select[name], textarea[name]")) {
    if (field.dataset.list) {
      data[field.name] = field.value.split(",").map((s) => s.trim()).filter((s) => s);
    } else if (field.type === "checkbox") {
      data[field.name] = field.checked;
    } else {
      data[field.name] = field.value;
    }
  }
  return data;
}

document.addEventListener("DOMContentLoaded", () => {
  const kept = window.sessionStorage.getItem("recon-status");
  if (kept) {
    window.sessionStorage.removeItem("recon-status");
    say(kept, false);
  }
  const login = document.getElementById("login");
  if (login) {
    login.addEventListener("submit", async (event) => {
      event.preventDefault();
      const result = await send("/api/v1/session", "POST", formData(login));
      if (result.status === 200) {
        const next = new URLSearchParams(window.location.search).get("next");
        window.location.assign(next && next.startsWith("/") && !next.startsWith("//") ? next : "/queue");
      } else {
        say(result.body.error || "cannot log in", true);
      }
    });
  }
  const logout = document.getElementById("logout");
  if (logout) {
    logout.addEventListener("click", async () => {
      await send("/api/v1/session", "DELETE", null);
      window.location.assign("/login");
    });
  }
  const bulk = document.getElementById("bulk");
  if (bulk) {
    const out = document.getElementById("bulk-result");
    bulk.addEventListener("submit", async (event) => {
      event.preventDefault();
      const preview = !event.submitter || event.submitter.dataset.preview !== "false";
      const data = formData(bulk);
      data.filters = JSON.parse(bulk.dataset.filters);
      data.preview = preview;
      const result = await send("/api/v1/bulk", "POST", data);
      if (result.status !== 200) {
        out.textContent = result.body.error || ("refused (" + result.status + ")");
        out.className = "error";
        return;
      }
      out.className = "ok";
      if (preview) {
        out.textContent = result.body.count + " finding(s) would change, " +
          result.body.needs_approval + " of them through an approver: " +
          result.body.keys.join(", ");
        return;
      }
      out.textContent = "Batch " + result.body.batch + ": " + result.body.applied +
        " applied, " + result.body.proposals.length + " proposal(s). ";
      const undo = document.createElement("button");
      undo.type = "button";
      undo.id = "bulk-undo";
      undo.textContent = "Undo the batch";
      undo.addEventListener("click", async () => {
        const done = await send("/api/v1/batches/" + encodeURIComponent(result.body.batch) + "/undo", "POST", {});
        out.textContent = done.status === 200 ? ("Undone: " + done.body.undone + " reopened.") : (done.body.error || "refused");
      });
      out.appendChild(undo);
    });
  }
  const saveView = document.getElementById("save-view");
  if (saveView) {
    saveView.addEventListener("submit", async (event) => {
      event.preventDefault();
      const data = formData(saveView);
      data.filters = JSON.parse(saveView.dataset.filters);
      const result = await send("/api/v1/views", "POST", data);
      if (result.status === 200) {
        window.location.reload();
      } else {
        say(result.body.error || ("refused (" + result.status + ")"), true);
      }
    });
  }
  for (const button of document.querySelectorAll("button[data-view-delete]")) {
    button.addEventListener("click", async () => {
      const result = await send("/api/v1/views/" + encodeURIComponent(button.dataset.viewDelete), "DELETE", null);
      if (result.status === 200) {
        window.location.reload();
      } else {
        say(result.body.error || ("refused (" + result.status + ")"), true);
      }
    });
  }
  for (const form of document.querySelectorAll("form[data-api]")) {
    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      let url = form.dataset.api;
      const verb = event.submitter ? event.submitter.dataset.verb : undefined;
      if (verb) {
        url = url.replace(/\/(approve|reject)$/, "/" + verb);
      }
      const result = await send(url, "POST", formData(form));
      if (result.status === 200) {
        reloadSaying(result.body.already ? "Already so: " + result.body.already + "." : "Done.");
      } else if (result.status === 202) {
        reloadSaying("Proposal " + result.body.proposal + " waits for an approver.");
      } else {
        say(result.body.error || ("refused (" + result.status + ")"), true);
      }
    });
  }
});
