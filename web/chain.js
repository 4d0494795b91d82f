// @ts-check
// The summary chain: every compaction of the process, newest first, with its state, its figures,
// and on demand what it dropped and where each summary line came from.
import { api, enc } from "./api.js";
import { $, badge, fmt, h } from "./dom.js";
import { activeSummary, beforeAfterText, isBackgroundFold, modeOf } from "./compaction.js";
import { view } from "./state.js";
import { showMessage } from "./timeline.js";
import { sentenceAround } from "./sentence.js";

/**
 * @typedef {import("../client/types.js").Memory} Memory
 * @typedef {import("../client/types.js").MemoryDetail} MemoryDetail
 * @typedef {import("../client/types.js").LossUnit} LossUnit
 * @typedef {import("../client/types.js").Message} Message
 * @typedef {import("./state.js").View} View
 * @typedef {"queued" | "prepared" | "discarded" | "failed" | "reverted" | "superseded" | "active" | "not-replayed"} ChainState
 */

/** @param {Memory} m @param {ChainState} state */
function stateLabel(m, state) {
  if (state === "queued") return `queued for ${m.metadata.preparedFor ?? "?"} (the worker prepares it)`;
  if (state === "prepared") return `prepared for ${m.metadata.preparedFor ?? "?"}, not replayed (a turn commits it without a model call)`;
  if (state === "discarded") return `discarded: ${m.metadata.discardReason ?? "?"}`;
  if (state === "superseded") return `superseded${m.supersededByMemoryId ? ` by ${m.supersededByMemoryId}` : ""}`;
  if (state === "active") return "active (replayed)";
  if (state === "not-replayed") return "active, not replayed (a newer summary won a race)";
  if (state === "reverted") return `reverted${m.metadata.revertedAt ? ` ${new Date(m.metadata.revertedAt).toLocaleString()}` : ""} (never replayed)`;
  return state;
}

/**
 * @param {View} v
 * @param {(v: View, memory: Memory) => void} onUndo what the active summary's "undo" button does
 */
export function renderChain(v, onUndo) {
  if (view !== v) return;
  const list = $("#chain");
  const active = activeSummary(v);
  list.replaceChildren(
    ...v.memories.map((m) => {
      const md = m.metadata;
      /** @type {ChainState} */
      const state = isBackgroundFold(m)
        ? /** @type {"queued" | "prepared" | "discarded"} */ (m.status.toLowerCase())
        : m.status === "FAILED"
          ? "failed"
          : m.status === "REVERTED"
            ? "reverted"
            : m.supersededAt
              ? "superseded"
              : m === active
                ? "active"
                : "not-replayed";
      return h(
        "li",
        { class: `memory-row ${state}`, id: `mem-${m.id}`, "data-memory-id": m.id },
        h(
          "div",
          { class: "meta" },
          badge(`status status-${m.status.toLowerCase()}`, m.status),
          badge(`state state-${state}`, stateLabel(m, state)),
          badge("mode", modeOf(m)),
          h("time", { datetime: m.createdAt }, new Date(m.createdAt).toLocaleString()),
          state === "active"
            ? h("button", { type: "button", class: "undo", title: "undo this compaction (POST …/revert)", onclick: () => onUndo(v, m) }, "undo")
            : null,
        ),
        h(
          "div",
          { class: "facts" },
          [
            `${md.compactedMessages} messages ${m.status === "OK" ? "folded" : m.status === "PREPARED" ? "prepared" : m.status === "REVERTED" ? "restored" : "not folded"}`,
            isBackgroundFold(m) ? null : beforeAfterText(m),
            md.producedBy ? `produced ${md.producedBy}` : null,
            md.summarizerMs !== undefined ? `summarizer ${fmt(md.summarizerMs)} ms` : null,
            m.status === "OK" ? `summary ${fmt(m.tokens)} tok` : null,
            `${md.provider}/${md.model}`,
            md.topicLabel ? `topic "${md.topicLabel}"` : null,
            md.loss ? `kept ${fmt(md.loss.kept)} of ${fmt(md.loss.units)} units` : null,
          ]
            .filter(Boolean)
            .join(" · "),
        ),
        md.error ? h("div", { class: "error" }, `error: ${md.error}`) : null,
        m.content ? h("details", {}, h("summary", {}, `${m.id}: summary text`), h("div", { class: "content" }, m.content)) : h("div", { class: "id" }, m.id),
        m.status === "OK" && md.loss ? fidelityDetails(v, m, md.loss) : null,
      );
    }),
  );
  if (v.memories.length === 0) list.append(h("li", { class: "empty-row" }, "No compaction yet."));
}

/**
 * Links to the source messages of a dropped unit or a summary line.
 * @param {View} v
 * @param {string[]} ids
 */
function sourceLinks(v, ids) {
  if (ids.length === 0) return h("span", { class: "no-source" }, "(earlier summary)");
  return ids.map((id) => h("button", { type: "button", class: "link source-link", "data-id": id, onclick: () => showMessage(v, id) }, id));
}

/**
 * The sentence a dropped unit came from, in its first source message (read from the history
 * already loaded, else from the API), filled in when it is known.
 * @param {View} v
 * @param {LossUnit} unit
 */
function unitSentence(v, unit) {
  const quote = h("q", { class: "unit-sentence" });
  const id = unit.messageIds[0];
  if (!id) return quote;
  void (async () => {
    const i = v.indexById.get(id);
    /** @type {Message | undefined} */
    let message = i === undefined ? undefined : v.messages[i];
    if (!message) message = (/** @type {{ message: Message }} */ (await api(`/v1/processes/${enc(v.processId)}/messages/${enc(id)}`).catch(() => ({ message: undefined })))).message;
    const sentence = message ? sentenceAround(message.content, unit.text) : null;
    if (sentence) quote.textContent = sentence;
  })();
  return quote;
}

/**
 * What a compaction dropped and where each summary line came from, read on demand from
 * GET …/memories/{id} (the list carries only the first dropped units).
 * @param {View} v
 * @param {Memory} m
 * @param {{ units: number, kept: number }} loss
 */
function fidelityDetails(v, m, loss) {
  const dropped = loss.units - loss.kept;
  const body = h("div", { class: "fidelity-body" }, "Loading…");
  const details = /** @type {HTMLDetailsElement} */ (
    h("details", { class: "fidelity" }, h("summary", {}, `dropped ${fmt(dropped)} units · per-line sources`), body)
  );
  let loaded = false;
  details.addEventListener("toggle", async () => {
    if (!details.open || loaded) return;
    loaded = true;
    try {
      /** @type {MemoryDetail} */
      const detail = await api(`/v1/processes/${enc(v.processId)}/memories/${enc(m.id)}`);
      body.replaceChildren(
        h("h4", {}, `Dropped (${fmt(detail.loss?.dropped.length ?? 0)} of ${fmt(dropped)}, most salient first)`),
        h(
          "ul",
          { class: "dropped" },
          ...(detail.loss?.dropped ?? []).map((d) => h("li", {}, h("code", {}, d.text), " ", unitSentence(v, d), " ", sourceLinks(v, d.messageIds))),
        ),
        h("h4", {}, "Summary lines and their sources"),
        h(
          "ol",
          { class: "provenance" },
          ...detail.provenance.map((p) => h("li", {}, h("span", { class: "line" }, p.text), " ", p.messageIds.length ? sourceLinks(v, p.messageIds) : null)),
        ),
      );
    } catch (err) {
      loaded = false;
      body.replaceChildren(h("span", { class: "error" }, `could not load: ${/** @type {Error} */ (err).message}`));
    }
  });
  return details;
}
