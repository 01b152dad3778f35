/* GPU Advisor: small progressive enhancements. Every page works without this file. */
(function () {
  "use strict";

  function $(sel, root) { return (root || document).querySelector(sel); }
  function $all(sel, root) { return Array.prototype.slice.call((root || document).querySelectorAll(sel)); }

  /* ---- the question form: preset placeholders, fields of the chosen task ------------- */
  function readJson(id) {
    var node = document.getElementById(id);
    if (!node) return {};
    try { return JSON.parse(node.textContent || "{}"); } catch (e) { return {}; }
  }

  function applyPreset(form, hints, presetId) {
    var h = hints[presetId] || {};
    $all("[data-field]", form).forEach(function (wrap) {
      var name = wrap.getAttribute("data-field");
      var input = $("input[type=text]", wrap);
      var select = $("select", wrap);
      var hint = Object.prototype.hasOwnProperty.call(h, name) ? h[name] : null;
      if (input) {
        input.placeholder = hint !== null ? String(hint) : (input.getAttribute("data-placeholder") || "");
      }
      if (select) {
        var opt = $("option[data-default-option]", select);
        if (opt) {
          if (!opt.hasAttribute("data-text")) opt.setAttribute("data-text", opt.textContent);
          opt.textContent = hint !== null ? hint + " (preset)" : (presetId ? "Default" : opt.getAttribute("data-text"));
        }
      }
    });
    var note = $("[data-preset-note]", form);
    var sel = $("[data-preset-select]", form);
    if (note && sel) {
      note.textContent = presetId
        ? "Blank fields take the values of " + sel.options[sel.selectedIndex].text + "."
        : "Custom workload: give at least the task, the model family and its size.";
    }
  }

  // Show only the fields that matter for the task (typed, or the preset's own).
  function applyTask(form, presetTasks) {
    var taskSel = $("select[name=task]", form);
    var presetSel = $("[data-preset-select]", form);
    var task = (taskSel && taskSel.value) || (presetSel && presetTasks[presetSel.value]) || "";
    form.setAttribute("data-task", task);
    $all("[data-tasks]", form).forEach(function (wrap) {
      var tasks = wrap.getAttribute("data-tasks").split(" ");
      var show = !task || tasks.indexOf(task) >= 0;
      // a field with a value or an error stays visible, so nothing typed is hidden
      var typed = $all("input[type=text], select, textarea", wrap).some(function (el) { return el.value !== ""; }) ||
        $all("input[type=checkbox]", wrap).some(function (el) { return el.checked; }) ||
        wrap.classList.contains("has-error");
      wrap.hidden = !show && !typed;
    });
  }

  $all("form[data-question-form]").forEach(function (form) {
    var hints = readJson("preset-hints");
    var presetTasks = readJson("preset-tasks");
    var sel = $("[data-preset-select]", form);
    var taskSel = $("select[name=task]", form);
    if (sel) {
      sel.addEventListener("change", function () { applyPreset(form, hints, sel.value); applyTask(form, presetTasks); });
    }
    if (taskSel) taskSel.addEventListener("change", function () { applyTask(form, presetTasks); });
    applyTask(form, presetTasks);
    // Blank fields mean "default": leave them out so the shareable URL stays short.
    form.addEventListener("submit", function () {
      $all("input, select, textarea", form).forEach(function (el) {
        if (el.name && el.type !== "checkbox" && el.value === "" && el.name !== "preset") el.disabled = true;
        if (el.closest("[hidden]")) el.disabled = true;
      });
    });
    window.addEventListener("pageshow", function () {
      $all("input, select, textarea", form).forEach(function (el) { el.disabled = false; });
    });
  });

  var summary = document.getElementById("form-errors");
  if (summary) summary.focus();

  /* ---- share link ------------------------------------------------------------------- */
  var copy = $("[data-copy-link]");
  var link = $("[data-share-link]");
  if (copy && link && navigator.clipboard) {
    copy.hidden = false;
    copy.addEventListener("click", function () {
      var status = $("[data-copy-status]");
      navigator.clipboard.writeText(link.href).then(function () {
        if (status) status.textContent = "Link copied.";
      }, function () {
        if (status) status.textContent = "Could not copy; use the Share link.";
      });
    });
  }

  /* ---- catalog: compare selection ---------------------------------------------------- */
  var cmpButton = $("[data-compare-button]");
  if (cmpButton) {
    var boxes = $all('input[name="slugs"][form="compare-form"]');
    var help = document.getElementById("compare-help");
    var update = function () {
      var n = boxes.filter(function (b) { return b.checked; }).length;
      cmpButton.disabled = n < 2;
      if (help) help.textContent = n < 2 ? "Tick two or more GPUs to compare them side by side." : n + " selected.";
    };
    boxes.forEach(function (b) { b.addEventListener("change", update); });
    update();
  }

  /* ---- this machine: benchmark run with live progress -------------------------------- */
  var bench = $("[data-bench]");
  if (bench) {
    var start = $("[data-bench-start]", bench);
    var progressBox = $("[data-bench-progress]", bench);
    var bar = $("progress", bench);
    var step = $("[data-bench-step]", bench);
    var status = $("[data-bench-status]", bench);
    start.hidden = false;

    var say = function (text) { status.textContent = text; };

    var errorText = function (resp, fallback) {
      return resp.json().then(function (body) {
        return (body && body.error && body.error.message) || fallback;
      }, function () { return fallback; });
    };

    var poll = function (id) {
      fetch("/api/v1/benchmark-runs/" + encodeURIComponent(id), { headers: { Accept: "application/json" } })
        .then(function (resp) {
          if (!resp.ok) return errorText(resp, "HTTP " + resp.status).then(function (m) { throw new Error(m); });
          return resp.json();
        })
        .then(function (run) {
          bar.value = Math.max(0, Math.min(1, run.progress || 0));
          step.textContent = run.step || run.status;
          if (run.status === "succeeded") {
            bar.value = 1;
            step.textContent = "done";
            status.textContent = "";
            var a = document.createElement("a");
            a.href = "/device/reports/" + encodeURIComponent(run.report_id);
            a.textContent = "Done — open device report #" + run.report_id;
            a.setAttribute("data-bench-report", "");
            status.appendChild(a);
            a.focus();
            start.disabled = false;
          } else if (run.status === "failed" || run.status === "cancelled") {
            say("The run " + run.status + (run.error ? ": " + run.error : "."));
            start.disabled = false;
          } else {
            window.setTimeout(function () { poll(id); }, 1000);
          }
        })
        .catch(function (err) {
          say("Lost track of the run: " + err.message);
          start.disabled = false;
        });
    };

    start.addEventListener("click", function () {
      start.disabled = true;
      progressBox.hidden = false;
      bar.value = 0;
      step.textContent = "starting";
      say("Starting a quick benchmark on the server…");
      fetch("/api/v1/benchmark-runs", {
        method: "POST",
        headers: { "Content-Type": "application/json", Accept: "application/json" },
        body: JSON.stringify({ profile: "quick" })
      })
        .then(function (resp) {
          if (resp.status !== 202 && !resp.ok) {
            return errorText(resp, "HTTP " + resp.status).then(function (m) { throw new Error(m); });
          }
          return resp.json();
        })
        .then(function (run) {
          say("Running (run " + run.id + ")…");
          poll(run.id);
        })
        .catch(function (err) {
          say("Could not start a run: " + err.message);
          start.disabled = false;
        });
    });
  }
})();
