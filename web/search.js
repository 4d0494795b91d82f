// @ts-check
// Search over the whole history of the open process (archived messages included).
import { api, enc } from "./api.js";
import { $, badge, h } from "./dom.js";
import { strengthOf } from "./compaction.js";
import { view } from "./state.js";
import { showMessage } from "./timeline.js";

/**
 * @typedef {import("../client/types.js").SearchHit} SearchHit
 * @typedef {import("./state.js").View} View
 */

/** @param {View} v @param {SubmitEvent} e */
export async function runSearch(v, e) {
  e.preventDefault();
  const q = /** @type {HTMLInputElement} */ ($("#search-q")).value.trim();
  const tag = /** @type {HTMLInputElement} */ ($("#search-tag")).value.trim();
  if (!q) return;
  const info = $("#search-info");
  info.textContent = "Searching…";
  try {
    /** @type {{ items: SearchHit[] }} */
    const res = await api(`/v1/processes/${enc(v.processId)}/history/search?q=${enc(q)}${tag ? `&tag=${enc(tag)}` : ""}&limit=20`);
    if (view !== v) return;
    info.textContent = `${res.items.length} hit${res.items.length === 1 ? "" : "s"} for “${q}”${tag ? ` tagged ${tag}` : ""}`;
    $("#search-results").replaceChildren(
      ...res.items.map(({ message: m, score }) => {
        const strength = strengthOf(m);
        return h(
          "li",
          { class: `hit${m.archivedInMemoryId ? " archived" : ""}`, "data-id": m.id },
          h(
            "div",
            { class: "meta" },
            h("span", { class: "score", title: "BM25 score" }, `score ${score >= 0.01 || score === 0 ? score.toFixed(2) : score.toPrecision(2)}`),
            badge(`role role-${m.role.toLowerCase()}`, m.role),
            strength ? badge(`strength strength-${strength}`, strength) : badge("strength untagged", "untagged"),
            m.archivedInMemoryId ? h("a", { class: "archived-badge", href: `#mem-${m.archivedInMemoryId}` }, "archived") : null,
            h("button", { type: "button", class: "link", onclick: () => showMessage(v, m.id) }, "show in timeline"),
          ),
          h("div", { class: "content" }, m.content.length > 300 ? `${m.content.slice(0, 300)}…` : m.content),
        );
      }),
    );
  } catch (err) {
    info.textContent = `Search failed: ${/** @type {Error} */ (err).message}`;
  }
}
