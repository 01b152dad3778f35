/* GPU Advisor: small progressive enhancements. Every page works without this file. */
(function () {
  "use strict";

  function $(sel, root) { return (root || document).querySelector(sel); }
  function $all(sel, root) { return Array.prototype.slice.call((root || document).querySelectorAll(sel)); }

  /* the question form: preset placeholders, fields of the chosen task */
  function readJson(id) {
    var node = document.getElementById(id);
    if (!node) return {};
    try { return JSON.parse(node.textContent || "{}"); } catch (e) { return {}; }
  }

  function applyPreset(form, hints, presetId, byTask, only) {
    var h = Object.assign({}, hints[presetId], byTask);
    $all("[data-field]", form).forEach(function (wrap) {
      var name = wrap.getAttribute("data-field");
      var input = $("input[type=text]", wrap);
      var select = $("select", wrap);
      var hint = Object.prototype.hasOwnProperty.call(h, name) ? h[name] : null;
      if (input) {
        input.placeholder = hint !== null ? String(hint) : (input.getAttribute("data-placeholder") || "");
      }
      if (select && !only) {
        var opt = $("option[data-default-option]", select);
        if (opt) {
          if (!opt.hasAttribute("data-text")) opt.setAttribute("data-text", opt.textContent);
          // data-text: the blank's words without a preset's value (the page writes it)
          opt.textContent = hint !== null ? hint + " (preset)" : opt.getAttribute("data-text");
        }
      }
    });
    var note = $("[data-preset-note]", form);
    var sel = $("[data-preset-select]", form);
    if (note && sel && !only) {
      note.textContent = presetId
        ? "Blank fields take the values of " + sel.options[sel.selectedIndex].text + "."
        : note.getAttribute("data-custom-note");
    }
  }

  // Blank checkpointing as the engine reads it (workloads.recipe_checkpointing).
  function applyRecipe(form, hints, tasks, recipes) {
    var opt = $("[name=gradient_checkpointing] [data-default-option]", form);
    if (!opt) return;
    var v = function (n) { var el = $("select[name=" + n + "]", form); return el ? el.value : ""; };
    var id = v("preset"), r = recipes[id], task = v("task") || tasks[id] || "";
    var peft = v("peft") || (task !== "training" && r && r[1]) || "none";
    // the task's own hint first (question_pages._task_hints: a fine-tuning recipe's
    // checkpointing is not carried into pretraining)
    var th = ((r && r[2]) || {})[task] || {};
    var hint = th.gradient_checkpointing || (hints[id] || {}).gradient_checkpointing;
    var family = r ? r[0] : v("family");
    opt.textContent = task === "fine-tuning" && family !== "diffusion" && (peft !== "none" || family === "decoder")
      ? "Yes (fine-tuning default)" : hint ? hint + " (preset)" : "Default";
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
      // a field with a value or an error stays visible (a select at its default: untouched)
      var typed = $all("input[type=text], select, textarea", wrap).some(function (el) {
        return el.value !== "" && el.value !== el.getAttribute("data-default");
      }) ||
        $all("input[type=checkbox]", wrap).some(function (el) { return el.checked; }) ||
        wrap.classList.contains("has-error");
      wrap.hidden = !show && !typed;
    });
    // a section with no field left to show goes too
    $all(".group", form).forEach(function (group) {
      var fields = $all("[data-field]", group);
      group.hidden = fields.length > 0 && fields.every(function (f) { return f.hidden; });
    });
  }

  $all("form[data-question-form]").forEach(function (form) {
    var hints = readJson("preset-hints");
    var presetTasks = readJson("preset-tasks");
    var sel = $("[data-preset-select]", form);
    var taskSel = $("select[name=task]", form);
    var recipes = readJson("preset-recipes");
    var recipe = function () { applyRecipe(form, hints, presetTasks, recipes); };
    var preset = function (only) {
      var id = sel.value, r = recipes[id] || [];
      applyPreset(form, hints, id, (r[2] || {})[(taskSel && taskSel.value) || presetTasks[id]], only);
    };
    if (sel) {
      sel.addEventListener("change", function () { preset(false); applyTask(form, presetTasks); recipe(); });
    }
    if (taskSel) taskSel.addEventListener("change", function () { if (sel) preset(true); applyTask(form, presetTasks); recipe(); });
    $all("select[name=peft], select[name=family]", form).forEach(function (el) { el.addEventListener("change", recipe); });
    applyTask(form, presetTasks);
    recipe();
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

  // A link to a field inside a folded panel (the answer's "Change usage") opens the panel.
  function openTarget() {
    var id = decodeURIComponent(location.hash.slice(1));
    var el = id ? document.getElementById(id) : null;
    if (!el || !el.closest("details:not([open])")) return;
    for (var d = el.closest("details"); d; d = d.parentElement ? d.parentElement.closest("details") : null) d.open = true;
    el.scrollIntoView({ block: "center" });
    if (el.matches("input, select, textarea")) el.focus();
  }
  openTarget();
  window.addEventListener("hashchange", openTarget);

  /* share link */
  var copy = $("[data-copy-link]");
  var shareUrl = $("[data-share-url]");
  if (copy && shareUrl) {
    copy.hidden = false;
    shareUrl.addEventListener("focus", function () { shareUrl.select(); });
    copy.addEventListener("click", function () {
      var status = $("[data-copy-status]");
      var done = function (ok) { if (status) status.textContent = ok ? "Link copied." : "Select the link and copy it."; };
      shareUrl.select();
      if (navigator.clipboard && window.isSecureContext) {
        navigator.clipboard.writeText(shareUrl.value).then(function () { done(true); }, function () { done(false); });
      } else {
        try { done(document.execCommand("copy")); } catch (e) { done(false); }
      }
    });
  }

  /* deploy blocks: a copy button per command or file */
  $all("[data-copy-block]").forEach(function (btn) {
    var block = document.getElementById(btn.getAttribute("data-copy-block"));
    if (!block) return;
    btn.hidden = false;
    btn.addEventListener("click", function () {
      var text = block.textContent;
      var done = function (ok) { btn.textContent = ok ? "Copied" : "Select and copy"; };
      if (navigator.clipboard && window.isSecureContext) {
        navigator.clipboard.writeText(text).then(function () { done(true); }, function () { done(false); });
      } else {
        var range = document.createRange();
        range.selectNodeContents(block);
        var sel = window.getSelection();
        sel.removeAllRanges();
        sel.addRange(range);
        try { done(document.execCommand("copy")); } catch (e) { done(false); }
      }
    });
  });

  /* tables: sortable columns, a hint when a table scrolls sideways */
  function cellValue(row, index) {
    var cell = row.children[index];
    if (!cell) return null;
    var v = cell.getAttribute("data-value");
    return v === null ? cell.textContent.trim() : v;
  }

  $all("table[data-sortable]").forEach(function (table) {
    var tbody = table.tBodies[0];
    var heads = $all("thead th[data-sort]", table);
    heads.forEach(function (th, index) {
      var button = document.createElement("button");
      button.type = "button";
      button.className = "sort";
      while (th.firstChild) button.appendChild(th.firstChild);
      th.appendChild(button);
      button.addEventListener("click", function () {
        var numeric = th.getAttribute("data-sort") === "num";
        var asc = th.getAttribute("aria-sort") !== "ascending";
        heads.forEach(function (h) { h.removeAttribute("aria-sort"); });
        th.setAttribute("aria-sort", asc ? "ascending" : "descending");
        // a row moves with its explanation row; the baseline stays on top
        var groups = [];
        var fixed = [];
        $all(":scope > tr", tbody).forEach(function (tr) {
          if (tr.hasAttribute("data-baseline")) fixed.push(tr);
          else if (tr.classList.contains("explain-row") && groups.length) groups[groups.length - 1].push(tr);
          else groups.push([tr]);
        });
        groups.sort(function (a, b) {
          var x = cellValue(a[0], index), y = cellValue(b[0], index);
          var blankX = x === "" || x === null, blankY = y === "" || y === null;
          if (blankX || blankY) return blankX === blankY ? 0 : (blankX ? 1 : -1);  // unknowns last
          var c = numeric ? parseFloat(x) - parseFloat(y) : String(x).localeCompare(String(y));
          return asc ? c : -c;
        });
        fixed.concat.apply(fixed, groups).forEach(function (tr) { tbody.appendChild(tr); });
      });
    });
  });

  $all("[data-scroll-wrap]").forEach(function (wrap) {
    // the hint sits right after the table, or right before a long one (the catalog)
    var hint = [wrap.nextElementSibling, wrap.previousElementSibling].filter(function (el) {
      return el && el.hasAttribute("data-scroll-hint");
    })[0] || null;
    var update = function () {
      var more = wrap.scrollWidth - wrap.clientWidth - wrap.scrollLeft > 2;
      wrap.classList.toggle("more-right", more);
      wrap.classList.toggle("more-left", wrap.scrollLeft > 2);
      if (hint) hint.hidden = !(wrap.scrollWidth > wrap.clientWidth + 2);
    };
    wrap.addEventListener("scroll", update, { passive: true });
    window.addEventListener("resize", update);
    update();
  });

  // a table that scrolls sideways takes focus, so keys scroll it (WCAG 2.1.1)
  document.addEventListener("toggle", function (e) {
    $all("table", e.target).forEach(function (t) { if (t.scrollWidth > t.clientWidth) t.tabIndex = 0; });
  }, true);

  /* catalog: compare selection, kept across pages in localStorage */
  var cmpButton = $("[data-compare-button]");
  var cmpForm = document.getElementById("compare-form");
  if (cmpButton && cmpForm) {
    var KEY = "gpu-advisor.compare";
    var load = function () {
      try { var v = JSON.parse(window.localStorage.getItem(KEY) || "[]"); return Array.isArray(v) ? v : []; } catch (e) { return []; }
    };
    var save = function (list) { try { window.localStorage.setItem(KEY, JSON.stringify(list)); } catch (e) { /* private mode */ } };
    var chosen = load();  // [{slug, name}]
    var boxes = $all('input[name="slugs"][form="compare-form"]');
    var help = document.getElementById("compare-help");
    var clear = $("[data-compare-clear]");
    var sync = function () {
      // ticked GPUs on other pages travel as hidden inputs of the compare form
      $all("input[data-carried]", cmpForm).forEach(function (el) { el.remove(); });
      var here = boxes.map(function (b) { return b.value; });
      chosen.forEach(function (c) {
        if (here.indexOf(c.slug) >= 0) return;
        var hidden = document.createElement("input");
        hidden.type = "hidden"; hidden.name = "slugs"; hidden.value = c.slug; hidden.setAttribute("data-carried", "");
        cmpForm.appendChild(hidden);
      });
      var n = chosen.length;
      cmpButton.disabled = n < 2;
      if (clear) clear.hidden = n === 0;
      if (help) {
        help.textContent = n === 0 ? "Tick two or more GPUs to compare them side by side; ticks are kept across pages."
          : n + " selected: " + chosen.map(function (c) { return c.name; }).join(", ") + (n < 2 ? " — tick one more." : ".");
      }
    };
    boxes.forEach(function (b) {
      b.checked = chosen.some(function (c) { return c.slug === b.value; });
      b.addEventListener("change", function () {
        chosen = chosen.filter(function (c) { return c.slug !== b.value; });
        if (b.checked) chosen.push({ slug: b.value, name: b.getAttribute("data-name") || b.value });
        save(chosen); sync();
      });
    });
    if (clear) clear.addEventListener("click", function () { chosen = []; save(chosen); boxes.forEach(function (b) { b.checked = false; }); sync(); });
    sync();
  }

  /* catalog: filters fold away on a phone unless some are set */
  var filters = $("details[data-filters]");
  if (filters && window.matchMedia && window.matchMedia("(max-width: 40rem)").matches &&
      !/[?&](q|vendor|segment|precision|min_memory_gb|max_memory_gb|max_price_usd|max_hourly_usd)=[^&]/.test(window.location.search)) {
    filters.open = false;
  }

  /* measured machines: upload by drag and drop */
  var drop = $("[data-dropzone]");
  if (drop) {
    var fileInput = $("input[type=file]", drop);
    ["dragenter", "dragover"].forEach(function (ev) {
      drop.addEventListener(ev, function (e) { e.preventDefault(); drop.classList.add("dragging"); });
    });
    ["dragleave", "drop"].forEach(function (ev) {
      drop.addEventListener(ev, function () { drop.classList.remove("dragging"); });
    });
    drop.addEventListener("drop", function (e) {
      e.preventDefault();
      if (e.dataTransfer && e.dataTransfer.files && e.dataTransfer.files.length && fileInput) {
        fileInput.files = e.dataTransfer.files;
        var form = drop.closest("form");
        if (form) form.requestSubmit ? form.requestSubmit() : form.submit();
      }
    });
  }

  /* the server's machine: a benchmark run with live progress */
  var bench = $("[data-bench]");
  if (bench) {
    var RUN_KEY = "gpu-advisor.bench-run";
    var start = $("[data-bench-start]", bench);
    var cancel = $("[data-bench-cancel]", bench);
    var progressBox = $("[data-bench-progress]", bench);
    var bar = $("progress", bench);
    var step = $("[data-bench-step]", bench);
    var status = $("[data-bench-status]", bench);
    var current = null;
    start.hidden = false;

    var say = function (text) { status.textContent = text; };
    var remember = function (id) { try { if (id) window.localStorage.setItem(RUN_KEY, id); else window.localStorage.removeItem(RUN_KEY); } catch (e) { /* private mode */ } };
    var idle = function () { start.disabled = false; cancel.hidden = true; current = null; remember(null); };

    var errorBody = function (resp) {
      return resp.json().then(function (body) { return (body && body.error) || {}; }, function () { return {}; });
    };

    var refreshList = function () {
      fetch("/device", { headers: { Accept: "text/html" } }).then(function (r) { return r.text(); }).then(function (html) {
        var doc = new DOMParser().parseFromString(html, "text/html");
        // the workers too: one said "busy" beside "Done" until the page was reloaded
        ["[data-reports-section]", "[data-workers]"].forEach(function (sel) {
          var fresh = doc.querySelector(sel);
          var here = $(sel);
          if (fresh && here) here.innerHTML = fresh.innerHTML;
        });
      });
    };

    var queuedSince = Date.now();
    var poll = function (id) {
      if (current !== id) queuedSince = Date.now();
      current = id;
      remember(id);
      progressBox.hidden = false;
      cancel.hidden = false;
      start.disabled = true;
      fetch("/api/v1/benchmark-runs/" + encodeURIComponent(id), { headers: { Accept: "application/json" } })
        .then(function (resp) {
          if (resp.status === 404) { idle(); progressBox.hidden = true; say(""); return null; }
          if (!resp.ok) return errorBody(resp).then(function (e) { throw new Error(e.message || "HTTP " + resp.status); });
          return resp.json();
        })
        .then(function (run) {
          if (!run || current !== id) return;
          bar.value = Math.max(0, Math.min(1, run.progress || 0));
          step.textContent = run.step_label || run.step || run.status;
          if (run.status === "queued" && Date.now() - queuedSince > 15000) {
            say("No worker has taken the run yet. On the server, start one with: gpu-advisor worker" +
                (run.label ? " --label " + run.label : "") + " (gpu-advisor serve starts one unless --no-worker).");
            var hint = $("[data-worker-hint]");
            if (hint) hint.hidden = false;
          }
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
            idle();
            refreshList();
          } else if (run.status === "failed" || run.status === "cancelled") {
            say("The run " + run.status + (run.error ? ": " + run.error : "."));
            idle();
            refreshList();
          } else {
            window.setTimeout(function () { poll(id); }, 1000);
          }
        })
        .catch(function (err) { say("Lost track of the run: " + err.message); idle(); });
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
          if (resp.status === 409) {
            return errorBody(resp).then(function (e) {
              var other = e.details && e.details.active_run;
              if (other) { say("A benchmark is already running on the server; showing its progress."); poll(other); return null; }
              throw new Error("another benchmark is running on the server; try again when it ends");
            });
          }
          if (resp.status !== 202 && !resp.ok) return errorBody(resp).then(function (e) { throw new Error(e.message || "HTTP " + resp.status); });
          return resp.json();
        })
        .then(function (run) { if (run) { say("Running on the server…"); poll(run.id); } })
        .catch(function (err) { say("Could not start a run: " + err.message); idle(); });
    });

    cancel.addEventListener("click", function () {
      if (!current) return;
      var id = current;
      cancel.disabled = true;
      fetch("/api/v1/benchmark-runs/" + encodeURIComponent(id), { method: "DELETE", headers: { Accept: "application/json" } })
        .then(function () { cancel.disabled = false; say("Cancelling…"); })
        .catch(function () { cancel.disabled = false; });
    });

    // a run started before a reload is picked up again
    var saved = null;
    try { saved = window.localStorage.getItem(RUN_KEY); } catch (e) { saved = null; }
    if (saved) { say("Following the run started earlier…"); poll(saved); }
  }
})();
