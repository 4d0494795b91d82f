// @ts-check
// Deleting the open process (docs/api.md, "Deleting a process"; docs/inspector.md, "What it shows"):
// a confirmation that names the process and takes effect only once its id is typed, then
// DELETE. A 204 means every item is erased; a 202 means the service erases the rest in the
// background, and the page repeats the DELETE (as the API says to follow it) until it answers 204.
import { api, enc } from "./api.js";
import { $, showStatus } from "./dom.js";

/** How long the page waits between two repeats of a DELETE that answered 202, and how many it makes. */
const POLL_MS = 2_000;
const MAX_POLLS = 30;

/**
 * Resolves true once the person typed `processId` and pressed Delete, false on Cancel or Escape.
 * @param {string} processId
 * @returns {Promise<boolean>}
 */
function confirmDelete(processId) {
  return new Promise((resolve) => {
    const dialog = /** @type {HTMLDialogElement} */ ($("#delete-dialog"));
    const input = /** @type {HTMLInputElement} */ ($("#delete-input"));
    const confirm = /** @type {HTMLButtonElement} */ ($("#delete-confirm"));
    const form = /** @type {HTMLFormElement} */ ($("#delete-form"));
    $("#delete-message").textContent =
      `Delete process “${processId}”? Every message (archived ones too), summary, idempotency record and inbox item of it is erased, and the id can never be used again. This cannot be undone.`;
    input.value = "";
    confirm.disabled = true;
    input.oninput = () => (confirm.disabled = input.value !== processId);
    /** @param {boolean} answer */
    const done = (answer) => {
      if (dialog.open) dialog.close();
      resolve(answer);
    };
    form.onsubmit = (e) => {
      e.preventDefault();
      if (input.value === processId) done(true);
    };
    $("#delete-cancel").onclick = () => done(false);
    dialog.oncancel = () => done(false);
    dialog.showModal();
    input.focus();
  });
}

/**
 * Deletes `processId` after the confirmation. `onGone` runs once the service answered (204 or
 * 202): from then on the process reads as not found, so the page closes it.
 * @param {string} processId
 * @param {(processId: string) => void | Promise<void>} onGone
 */
export async function deleteProcess(processId, onGone) {
  if (!(await confirmDelete(processId))) return;
  showStatus(`Deleting ${processId}…`);
  try {
    for (let polls = 0; ; polls++) {
      /** @type {{ status: "deleting" } | null} */
      const res = await api(`/v1/processes/${enc(processId)}`, { method: "DELETE" });
      if (polls === 0) await onGone(processId);
      // 204 has no body.
      if (res === null) {
        showStatus(`Deleted ${processId}: every item of it is erased.`);
        return;
      }
      if (polls >= MAX_POLLS) {
        showStatus(`${processId} is still being erased in the background. Delete it again later to see when it is done.`);
        return;
      }
      showStatus(`Deleting ${processId} (202): the rest is erased in the background; checking again…`);
      await new Promise((r) => setTimeout(r, POLL_MS));
    }
  } catch (err) {
    showStatus(`Could not delete ${processId}: ${/** @type {Error} */ (err).message}`, "error");
  }
}
