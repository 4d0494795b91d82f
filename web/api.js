// @ts-check
// The inspector's only way to the service: the public HTTP API (docs/api.md), with the key the
// person enters, kept in this browser's localStorage.

export const KEY_STORAGE = "vancetope.apiKey";

export const API_BASE = (() => {
  const b = /** @type {{ VANCETOPE_API_BASE?: unknown }} */ (/** @type {unknown} */ (window)).VANCETOPE_API_BASE;
  // An unreplaced deploy placeholder (it starts with "__") means "same origin".
  return typeof b === "string" && b !== "" && !b.startsWith("__") ? b.replace(/\/+$/, "") : "";
})();

export const enc = encodeURIComponent;

export class ApiError extends Error {
  /**
   * @param {number} status
   * @param {string | undefined} code
   * @param {string} message
   */
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

/** @type {Promise<string> | null} */
let keyPrompt = null;

/** On the local runner (its config.js sets VANCETOPE_LOCAL): which key it takes. @returns {string | null} */
function localKeyHint() {
  const local = /** @type {{ VANCETOPE_LOCAL?: { defaultKey: string | null } }} */ (/** @type {unknown} */ (window)).VANCETOPE_LOCAL;
  if (!local) return null;
  return local.defaultKey
    ? `Local runner: its default key is ${local.defaultKey} (the npm start banner prints it).`
    : "Local runner: use a key from MEMORY_API_KEYS (the npm start banner prints the first).";
}

/**
 * Shows the key form once, however many requests are waiting for a key.
 * @param {string} [message]
 * @returns {Promise<string>}
 */
export function askKey(message) {
  if (keyPrompt) return keyPrompt;
  keyPrompt = new Promise((resolve) => {
    const dialog = /** @type {HTMLDialogElement} */ (document.querySelector("#key-dialog"));
    const input = /** @type {HTMLInputElement} */ (document.querySelector("#key-input"));
    const form = /** @type {HTMLFormElement} */ (document.querySelector("#key-form"));
    /** @type {HTMLElement} */ (document.querySelector("#key-message")).textContent =
      message ?? "The inspector calls the API with your key. It is kept in this browser only.";
    const hint = /** @type {HTMLElement} */ (document.querySelector("#key-hint"));
    hint.textContent = localKeyHint() ?? "";
    hint.hidden = !hint.textContent;
    input.value = "";
    form.onsubmit = (e) => {
      e.preventDefault();
      const key = input.value.trim();
      if (!key) return;
      localStorage.setItem(KEY_STORAGE, key);
      dialog.close();
      keyPrompt = null;
      resolve(key);
    };
    // Escape must not leave the page without a key.
    dialog.oncancel = (e) => e.preventDefault();
    if (!dialog.open) dialog.showModal();
    input.focus();
  });
  return keyPrompt;
}

/**
 * GET by default; `send` is { method, body } for the controls that change state (pin, undo).
 * The answer's type is the caller's to name (from client/types.ts): the API is the contract.
 * @template T
 * @param {string} path
 * @param {{ method: string, body?: unknown }} [send]
 * @returns {Promise<T>}
 */
export async function api(path, send) {
  for (;;) {
    const key = localStorage.getItem(KEY_STORAGE) || (await askKey());
    /** @type {Record<string, string>} */
    const headers = { authorization: `Bearer ${key}`, accept: "application/json" };
    if (send?.body !== undefined) headers["content-type"] = "application/json";
    const res = await fetch(API_BASE + path, {
      method: send?.method ?? "GET",
      headers,
      body: send?.body === undefined ? undefined : JSON.stringify(send.body),
    });
    // 401 from the service (or a missing header at API Gateway), 403 from API Gateway when the
    // authorizer denies the key (docs/deploy.md, "API keys").
    if (res.status === 401 || res.status === 403) {
      if (localStorage.getItem(KEY_STORAGE) === key) localStorage.removeItem(KEY_STORAGE);
      await askKey(`That key was rejected (${res.status}). Enter a valid API key.`);
      continue;
    }
    const body = await res.json().catch(() => null);
    if (!res.ok) throw new ApiError(res.status, body?.error?.code, body?.error?.message ?? `${res.status} ${res.statusText}`);
    return body;
  }
}
