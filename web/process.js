// @ts-check
// Opening a process (its details, summary chain, history and thresholds), undoing its active
// compaction, and the process picker.
import { api, ApiError, enc } from "./api.js";
import { $, fmt, h, showStatus } from "./dom.js";
import { isBackgroundFold, maxId } from "./compaction.js";
import { renderChain } from "./chain.js";
import { gaugeWindow, renderGauge } from "./gauge.js";
import { loadNextPage, newView, setView, view } from "./state.js";
import { renderPager, renderTimeline } from "./timeline.js";

/**
 * @typedef {import("../client/types.js").Memory} Memory
 * @typedef {import("../client/types.js").Process} Process
 * @typedef {import("../client/types.js").ProcessDetail} ProcessDetail
 * @typedef {import("../client/types.js").RevertResult} RevertResult
 * @typedef {import("../client/types.js").Page<Memory>} MemoryPage
 * @typedef {import("../client/types.js").Page<Process>} ProcessPage
 * @typedef {import("./state.js").View} View
 * @typedef {import("./state.js").Thresholds} Thresholds
 */

/** Reads the rest of the history behind the first page, for the gauge, the chain and the pager. @param {View} v */
async function loadRestInBackground(v) {
  while (!v.closed && !v.exhausted) {
    await loadNextPage(v);
    if (v.closed) return;
    renderPager(v);
    renderGauge(v);
  }
  if (v.closed) return;
  renderChain(v, undoCompaction);
  renderPager(v);
  renderGauge(v);
}

/**
 * Undoes the active summary's compaction after a confirmation, then reloads the process.
 * @param {View} v
 * @param {Memory} memory
 */
async function undoCompaction(v, memory) {
  const ok = window.confirm(
    `Undo compaction ${memory.id}? Its ${memory.metadata.compactedMessages} folded messages become active again and the summary before it is replayed.`,
  );
  if (!ok) return;
  try {
    /** @type {RevertResult} */
    const res = await api(`/v1/processes/${enc(v.processId)}/memories/${enc(memory.id)}/revert`, { method: "POST" });
    if (view !== v) return;
    await openProcess(v.processId);
    showStatus(`Undone: ${fmt(res.restoredMessages)} messages are active again.`);
  } catch (err) {
    showStatus(`Could not undo ${memory.id}: ${/** @type {Error} */ (err).message}`, "error");
  }
}

/** Files each memory under the message it stitches after, and each range marker under its memory. @param {View} v */
function indexMemories(v) {
  for (const m of v.memories) {
    if (m.metadata.markerMessageId) v.markers.set(m.metadata.markerMessageId, m);
    // A background fold archived nothing: it gets no stitch in the timeline.
    if (m.sourceRefs.length === 0 || isBackgroundFold(m)) continue;
    const anchor = maxId(m.sourceRefs);
    const list = v.stitchesAt.get(anchor) ?? [];
    list.push(m);
    // In commit order: a range job keeps the (older) id it was queued under.
    list.sort((a, b) => (a.createdAt === b.createdAt ? (a.id < b.id ? -1 : 1) : a.createdAt < b.createdAt ? -1 : 1));
    v.stitchesAt.set(anchor, list);
  }
}

/** Opens a process (or none, for ""). @param {string} processId */
export async function openProcess(processId) {
  if (view) view.closed = true;
  showStatus("");
  $("#empty").hidden = Boolean(processId);
  $("#process-view").hidden = !processId;
  setView(null);
  if (!processId) return;
  const v = newView(processId);
  setView(v);
  selectProcessOption(processId);
  $("#timeline").replaceChildren(h("li", { class: "empty-row" }, "Loading…"));
  $("#search-results").replaceChildren();
  $("#search-info").textContent = "";
  $("#chain").replaceChildren();
  $("#gauge-text").textContent = "";
  $("#process-title").textContent = processId;
  try {
    // The first page of messages goes out with the rest, so the first rows show quickly.
    const first = loadNextPage(v);
    first.catch(() => {}); // awaited below; this only keeps an early failure from being reported twice
    const [{ process, lastTurn }, memories] = await Promise.all([
      /** @type {Promise<ProcessDetail>} */ (api(`/v1/processes/${enc(processId)}`)),
      /** @type {Promise<MemoryPage>} */ (api(`/v1/processes/${enc(processId)}/memories?includeFailed=true&includePrepared=true&includeReverted=true`)),
    ]);
    if (view !== v) return;
    v.process = process;
    v.lastTurn = lastTurn ?? null;
    /** @type {HTMLInputElement} */ ($("#context-window")).value = String(gaugeWindow(v).tokens);
    v.memories = memories.items;
    indexMemories(v);
    $("#process-title").replaceChildren(
      h("strong", {}, process.processId),
      ` · project ${process.projectId}`,
      process.name ? ` · ${process.name}` : "",
      process.title ? ` · ${process.title}` : "",
      ` · created ${new Date(process.createdAt).toLocaleString()}`,
    );
    await first;
    await renderTimeline(v);
    renderChain(v, undoCompaction);
    /** @type {{ effective: Thresholds }} */
    const settings = await api(`/v1/settings?projectId=${enc(process.projectId)}`);
    if (view !== v) return;
    v.thresholds = settings.effective;
    renderGauge(v);
    await loadRestInBackground(v);
  } catch (err) {
    if (view !== v) return;
    if (err instanceof ApiError && err.status === 404) showStatus(`Process “${processId}” was not found (or belongs to another tenant).`, "error");
    else showStatus(`Could not load the process: ${/** @type {Error} */ (err).message}`, "error");
    $("#process-view").hidden = true;
  }
}

/** @returns {HTMLSelectElement} */
const processSelect = () => $("#process-select");

/** @param {string} processId */
function selectProcessOption(processId) {
  const select = processSelect();
  if (![...select.options].some((o) => o.value === processId)) select.append(h("option", { value: processId }, processId));
  select.value = processId;
}

/** Lists the tenant's processes in the picker, a page at a time. @param {string} [cursor] */
export async function loadProcessList(cursor) {
  const select = processSelect();
  /** @type {ProcessPage} */
  const res = await api(`/v1/processes?limit=100${cursor ? `&cursor=${enc(cursor)}` : ""}`);
  select.querySelector("option[data-more]")?.remove();
  for (const p of res.items) {
    if ([...select.options].some((o) => o.value === p.processId)) continue;
    const label = [p.processId, p.name, p.title].filter(Boolean).join(" · ");
    select.append(h("option", { value: p.processId }, `${label} (${p.projectId})`));
  }
  if (res.nextCursor) select.append(h("option", { value: "", "data-more": res.nextCursor }, "More processes…"));
  if (view) select.value = view.processId;
}

export function processFromUrl() {
  return new URLSearchParams(location.search).get("process") || "";
}
