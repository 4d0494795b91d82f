// @ts-check
// The gauge: how full the replay is against the window the process's last turn used (as the
// service recorded it; one the person chose when there is no turn yet), and where the compaction
// thresholds of the process's project lie.
import { $, fmt, h, pct } from "./dom.js";
import { activeSummary } from "./compaction.js";
import { view } from "./state.js";

/** @typedef {import("./state.js").View} View */

const WINDOW_STORAGE = "vancetope.contextWindow";
const DEFAULT_WINDOW = 128000;

/** The window chosen in this browser, for a process with no recorded turn (kept in this browser). */
export function contextWindow() {
  const n = Number(localStorage.getItem(WINDOW_STORAGE));
  return Number.isFinite(n) && n >= 1000 ? n : DEFAULT_WINDOW;
}

/** @param {number} n */
export function setContextWindow(n) {
  localStorage.setItem(WINDOW_STORAGE, String(Math.round(n)));
}

/**
 * The window the gauge measures `v` against, and where it comes from.
 * @param {View} v
 * @returns {{ tokens: number, from: string }}
 */
export function gaugeWindow(v) {
  if (v.windowOverride !== null) return { tokens: v.windowOverride, from: "chosen here" };
  const recorded = v.lastTurn?.window;
  if (recorded) return { tokens: recorded.tokens, from: `its last turn's window${recorded.model ? `, ${recorded.model}` : ""}${recorded.source === "setting" ? ", capped by maxPromptTokens" : ""}` };
  return { tokens: contextWindow(), from: "chosen here: no turn recorded yet" };
}

/** @param {View} v */
export function renderGauge(v) {
  if (view !== v || !v.thresholds) return;
  const summary = activeSummary(v);
  const summaryTokens = summary?.tokens ?? 0;
  let activeTokens = 0;
  let activeCount = 0;
  for (const m of v.messages) {
    if (m.archivedInMemoryId === null) {
      activeTokens += m.tokens;
      activeCount++;
    }
  }
  const replay = summaryTokens + activeTokens;
  const { tokens: window, from } = gaugeWindow(v);
  const ratio = replay / window;
  const { softThreshold: soft, hardThreshold: hard, emergencyThreshold: emergency } = v.thresholds;
  const zone = ratio >= emergency ? "emergency" : ratio >= hard ? "hard" : ratio >= soft ? "soft" : "ok";
  const gauge = $("#gauge");
  gauge.dataset.zone = zone;
  /** @type {HTMLElement} */ (gauge.querySelector(".gauge-fill")).style.width = `${Math.min(100, ratio * 100)}%`;
  const bar = /** @type {HTMLElement} */ (gauge.querySelector(".gauge-bar"));
  bar.querySelectorAll(".mark").forEach((el) => el.remove());
  for (const [name, t] of /** @type {const} */ ([["soft", soft], ["hard", hard], ["emergency", emergency]])) {
    bar.append(h("span", { class: `mark mark-${name}`, style: `left:${t * 100}%`, title: `${name} ${pct(t)}` }, name));
  }
  const where =
    zone === "ok" ? `below soft (${pct(soft)})` : `past ${zone} (${pct(zone === "soft" ? soft : zone === "hard" ? hard : emergency)}): the next turn compacts ${zone.toUpperCase()}`;
  $("#gauge-text").textContent =
    `Replay ${fmt(replay)} tokens = ${pct(ratio)} of ${fmt(window)} (${from}) — ${where}. ` +
    `Summary ${fmt(summaryTokens)} tokens + ${fmt(activeCount)} active messages ${fmt(activeTokens)} tokens` +
    `${v.exhausted ? "" : ` (counting: ${fmt(v.messages.length)} messages read so far)`}. ` +
    `Thresholds: soft ${fmt(soft * window)} · hard ${fmt(hard * window)} · emergency ${fmt(emergency * window)}.`;
}
