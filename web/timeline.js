// @ts-check
// The timeline: one page of the history at a time, with the compaction stitches where each fold
// ended, and the pin control of active messages.
import { api, enc } from "./api.js";
import { $, badge, contentNode, fmt, h, showStatus } from "./dom.js";
import { beforeAfterText, modeOf, rangeOf, strengthOf } from "./compaction.js";
import { nativeNode } from "./native.js";
import { ensureLoaded, loadNextPage, ROWS_PER_PAGE, view } from "./state.js";

/**
 * @typedef {import("../client/types.js").Message} Message
 * @typedef {import("../client/types.js").Memory} Memory
 * @typedef {import("./state.js").View} View
 */

/** @param {View} v @param {Message} m */
function messageRow(v, m) {
  const strength = strengthOf(m);
  const range = rangeOf(v, m);
  const archived = m.archivedInMemoryId !== null;
  const otherTags = m.tags.filter((t) => !t.startsWith("STRENGTH:"));
  return h(
    "li",
    {
      class: ["msg-row", archived && "archived", range && "range-marker"].filter(Boolean).join(" "),
      "data-id": m.id,
      id: `msg-${m.id}`,
    },
    h(
      "div",
      { class: "meta" },
      badge(`role role-${m.role.toLowerCase()}`, m.role),
      strength ? badge(`strength strength-${strength}`, strength, `STRENGTH:${strength}`) : badge("strength untagged", "untagged", "no STRENGTH tag"),
      otherTags.map((t) => badge(t.startsWith("RECOMPACTION:") ? "tag range" : "tag", t)),
      archived
        ? h("a", { class: "archived-link", href: `#mem-${m.archivedInMemoryId}`, title: "the memory this message was folded into" }, `archived in ${m.archivedInMemoryId}`)
        : null,
      // A cleared tool result: the replay shows a placeholder; the content below is the stored original.
      m.cleared
        ? badge("cleared", "cleared", `cleared from the replay at ${m.cleared.at}: ${m.cleared.toolName}, ${fmt(m.cleared.chars)} chars (~${fmt(m.cleared.tokens)} tokens); the prompt shows a placeholder`)
        : null,
      h("span", { class: "tokens" }, m.cleared ? `${fmt(m.tokens)} tok (was ${fmt(m.cleared.tokens)})` : `${fmt(m.tokens)} tok`),
      archived ? null : pinToggle(v, m, strength),
      h("time", { datetime: m.createdAt, title: m.id }, new Date(m.createdAt).toLocaleString()),
    ),
    range ? h("div", { class: "range-title" }, `Range recompaction: ${range.metadata.topicLabel ?? ""}`) : null,
    // Built here, so only for the rows of the page being drawn.
    nativeNode(m.native),
    contentNode(m.content),
    m.toolCalls?.length
      ? h("div", { class: "tool-calls" }, `tool calls: ${m.toolCalls.map((c) => `${c.name}(${c.arguments.slice(0, 120)})`).join(", ")}`)
      : null,
    m.toolCallId ? h("div", { class: "tool-calls" }, `result of ${m.toolCallId}`) : null,
  );
}

/**
 * Pins an active message (or removes its STRENGTH tag again) through PATCH …/messages/{id}; the row
 * is redrawn from the message the API answers with. An archived message cannot change (409).
 * @param {View} v
 * @param {Message} m
 * @param {string | null} strength
 */
function pinToggle(v, m, strength) {
  const pinned = strength === "pinned";
  return h(
    "button",
    {
      type: "button",
      class: "link pin-toggle",
      title: pinned ? "remove the STRENGTH tag (the default rules apply again)" : "keep this message verbatim through every compaction",
      onclick: async (/** @type {MouseEvent} */ e) => {
        const button = /** @type {HTMLButtonElement} */ (e.target);
        button.disabled = true;
        try {
          /** @type {{ message: Message }} */
          const { message } = await api(`/v1/processes/${enc(v.processId)}/messages/${enc(m.id)}`, {
            method: "PATCH",
            body: { strength: pinned ? null : "pinned" },
          });
          if (view !== v) return;
          const i = v.indexById.get(message.id);
          if (i !== undefined) v.messages[i] = message;
          showStatus("");
          await renderTimeline(v);
        } catch (err) {
          button.disabled = false;
          showStatus(`Could not ${pinned ? "unpin" : "pin"} ${m.id}: ${/** @type {Error} */ (err).message}`, "error");
        }
      },
    },
    pinned ? "unpin" : "pin",
  );
}

/** @param {Memory} memory */
function stitchRow(memory) {
  const md = memory.metadata;
  const failed = memory.status === "FAILED";
  const reverted = memory.status === "REVERTED";
  const parts = [
    `[compaction] ${modeOf(memory)}${md.topicLabel ? ` "${md.topicLabel}"` : ""}`,
    failed
      ? `FAILED, ${md.compactedMessages} messages not folded`
      : reverted
        ? `REVERTED, ${md.compactedMessages} messages restored`
        : `${md.compactedMessages} messages folded`,
    beforeAfterText(memory),
    failed && md.error ? `error: ${md.error}` : null,
  ].filter(Boolean);
  return h(
    "li",
    { class: `stitch${failed ? " failed" : ""}${reverted ? " reverted" : ""}`, "data-memory-id": memory.id },
    h("span", { class: "stitch-text" }, parts.join(" · ")),
    " ",
    h("a", { href: `#mem-${memory.id}` }, memory.id),
  );
}

/** @param {View} v */
export async function renderTimeline(v) {
  const start = v.page * ROWS_PER_PAGE;
  await ensureLoaded(v, start + ROWS_PER_PAGE);
  if (v.closed || view !== v) return;
  const rows = v.messages.slice(start, start + ROWS_PER_PAGE);
  const list = $("#timeline");
  const frag = document.createDocumentFragment();
  for (const m of rows) {
    frag.append(messageRow(v, m));
    for (const memory of v.stitchesAt.get(m.id) ?? []) frag.append(stitchRow(memory));
  }
  list.replaceChildren(frag);
  if (rows.length === 0) list.append(h("li", { class: "empty-row" }, "No messages yet."));
  renderPager(v);
}

/** @param {View} v */
function pageCount(v) {
  return Math.max(1, Math.ceil(v.messages.length / ROWS_PER_PAGE));
}

/** @param {View} v */
export function renderPager(v) {
  if (view !== v) return;
  const start = v.page * ROWS_PER_PAGE;
  const end = Math.min(start + ROWS_PER_PAGE, v.messages.length);
  const total = v.exhausted ? `${fmt(v.messages.length)}` : `${fmt(v.messages.length)}+ (loading…)`;
  $("#page-info").textContent = v.messages.length ? `messages ${fmt(start + 1)}–${fmt(end)} of ${total}` : "";
  const hasNewer = end < v.messages.length || !v.exhausted;
  /** @param {string} sel @param {boolean} disabled */
  const setDisabled = (sel, disabled) => {
    /** @type {HTMLButtonElement} */ ($(sel)).disabled = disabled;
  };
  setDisabled("#page-first", v.page === 0);
  setDisabled("#page-prev", v.page === 0);
  setDisabled("#page-next", !hasNewer);
  setDisabled("#page-next-bottom", !hasNewer);
  setDisabled("#page-last", !hasNewer);
}

/** @param {View} v @param {number | "last"} page */
export async function goToPage(v, page) {
  if (page === "last") {
    showStatus("Loading the whole history…");
    while (!v.exhausted && !v.closed) await loadNextPage(v);
    showStatus("");
    page = pageCount(v) - 1;
  }
  v.page = Math.max(0, page);
  await renderTimeline(v);
  $("#timeline-panel").scrollIntoView({ block: "start" });
}

/**
 * Opens the timeline page holding a message (search hits), loading pages as needed.
 * @param {View} v
 * @param {string} id
 */
export async function showMessage(v, id) {
  while (!v.indexById.has(id) && !v.exhausted && !v.closed) await loadNextPage(v);
  const i = v.indexById.get(id);
  if (i === undefined) return showStatus(`Message ${id} is not in this process's history.`, "error");
  v.page = Math.floor(i / ROWS_PER_PAGE);
  await renderTimeline(v);
  const row = document.getElementById(`msg-${id}`);
  row?.classList.add("flash");
  row?.scrollIntoView({ block: "center" });
}
