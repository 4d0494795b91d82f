// @ts-check
// DOM helpers of the inspector. Message text is untrusted: it only ever reaches the page as text
// nodes (h() turns strings into text nodes, contentNode() sets textContent).

/** Longer content is clipped (a "show all" button expands it) so one pasted log cannot flood the page. */
const CONTENT_CHARS = 600;
const CONTENT_LINES = 8;

/**
 * The element matching `sel`; the page's own markup (index.html) guarantees it exists.
 * @template {Element} [T=HTMLElement]
 * @param {string} sel
 * @returns {T}
 */
export const $ = (sel) => /** @type {T} */ (document.querySelector(sel));

/** @param {number} n */
export const fmt = (n) => Math.round(n).toLocaleString("en-US");

/** @param {number} x */
export const pct = (x) => `${(x * 100).toFixed(1)}%`;

/** @typedef {Node | string | number | null | undefined | false} Child */

/**
 * A tiny DOM builder: h("span", { class: "badge" }, "text", child). Strings become text nodes.
 * @param {string} tag
 * @param {Record<string, unknown>} [attrs] `class`, `on<event>` handlers, or attributes (true: present, empty)
 * @param {...(Child | Child[])} children
 * @returns {HTMLElement}
 */
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    if (k === "class") el.className = String(v);
    else if (k.startsWith("on")) el.addEventListener(k.slice(2), /** @type {EventListener} */ (v));
    else el.setAttribute(k, v === true ? "" : String(v));
  }
  for (const c of children.flat()) {
    if (c === undefined || c === null || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return el;
}

/**
 * @param {string} cls
 * @param {string} text
 * @param {string} [title]
 */
export function badge(cls, text, title) {
  return h("span", { class: `badge ${cls}`, title }, text);
}

/** A message's content, clipped to a few lines with a button that shows all of it. @param {string} text */
export function contentNode(text) {
  const lines = text.split("\n");
  let clipped = text.length > CONTENT_CHARS ? text.slice(0, CONTENT_CHARS) : text;
  if (lines.length > CONTENT_LINES) clipped = lines.slice(0, CONTENT_LINES).join("\n").slice(0, CONTENT_CHARS);
  if (clipped === text) return h("div", { class: "content" }, text);
  const body = h("span", {}, `${clipped}…`);
  const more = h(
    "button",
    {
      type: "button",
      class: "link more",
      onclick: () => {
        body.textContent = text;
        more.remove();
      },
    },
    `show all (${fmt(text.length)} characters)`,
  );
  return h("div", { class: "content" }, body, " ", more);
}

/** @param {string} text @param {"info" | "error"} [kind] */
export function showStatus(text, kind = "info") {
  const el = $("#status");
  el.textContent = text;
  el.className = kind;
  el.hidden = !text;
}
