// @ts-check
// The inspector: what compaction did to one process, through the public API only (docs/inspector.md).
// Native ES modules, no build step; `tsc -p tsconfig.checks.json` checks them against client/types.ts (test/unit/type-checks.test.ts).
// This module wires the controls; the parts are api, dom, state, compaction, timeline, chain,
// gauge, search, process and delete.
import { API_BASE, askKey, enc, KEY_STORAGE } from "./api.js";
import { deleteProcess } from "./delete.js";
import { $, showStatus } from "./dom.js";
import { contextWindow, gaugeWindow, renderGauge, setContextWindow } from "./gauge.js";
import { loadProcessList, openProcess, processFromUrl } from "./process.js";
import { runSearch } from "./search.js";
import { view } from "./state.js";
import { goToPage } from "./timeline.js";

function init() {
  // The reference page is the local runner's; a deployed API serves the document it renders.
  if (API_BASE) $("#api-reference").setAttribute("href", `${API_BASE}/openapi.json`);
  const windowInput = /** @type {HTMLInputElement} */ ($("#context-window"));
  windowInput.value = String(contextWindow());
  windowInput.addEventListener("change", () => {
    const n = Number(windowInput.value);
    if (Number.isFinite(n) && n >= 1000) {
      setContextWindow(n);
      if (view) view.windowOverride = Math.round(n);
    }
    windowInput.value = String(view ? gaugeWindow(view).tokens : contextWindow());
    if (view) renderGauge(view);
  });

  const select = /** @type {HTMLSelectElement} */ ($("#process-select"));
  select.addEventListener("change", () => {
    const option = select.selectedOptions[0];
    if (option?.dataset.more) {
      void loadProcessList(option.dataset.more);
      return;
    }
    const id = select.value;
    history.pushState({}, "", id ? `?process=${enc(id)}` : location.pathname);
    void openProcess(id);
  });
  window.addEventListener("popstate", () => void openProcess(processFromUrl()));

  $("#forget-key").addEventListener("click", async () => {
    localStorage.removeItem(KEY_STORAGE);
    await askKey("Enter the API key to use.");
    await loadProcessList();
    void openProcess(processFromUrl());
  });

  $("#delete-process").addEventListener("click", () => {
    if (!view) return;
    void deleteProcess(view.processId, async (gone) => {
      select.querySelector(`option[value="${CSS.escape(gone)}"]`)?.remove();
      if (view?.processId !== gone) return;
      history.pushState({}, "", location.pathname);
      await openProcess("");
    });
  });

  $("#search-form").addEventListener("submit", (e) => view && runSearch(view, /** @type {SubmitEvent} */ (e)));
  $("#page-first").addEventListener("click", () => view && goToPage(view, 0));
  $("#page-prev").addEventListener("click", () => view && goToPage(view, view.page - 1));
  const next = () => view && goToPage(view, view.page + 1);
  $("#page-next").addEventListener("click", next);
  $("#page-next-bottom").addEventListener("click", next);
  $("#page-last").addEventListener("click", () => view && goToPage(view, "last"));

  void (async () => {
    const processId = processFromUrl();
    await Promise.all([loadProcessList().catch((err) => showStatus(`Could not list processes: ${err.message}`, "error")), openProcess(processId)]);
  })();
}

init();
