// @ts-check
// The open process and its history, read from the API a page at a time.
import { api, enc } from "./api.js";

/**
 * @typedef {import("../client/types.js").Message} Message
 * @typedef {import("../client/types.js").Memory} Memory
 * @typedef {import("../client/types.js").Process} Process
 * @typedef {import("../client/types.js").LastTurn} LastTurn
 * @typedef {import("../client/types.js").Page<Message>} MessagePage
 * @typedef {{ softThreshold: number, hardThreshold: number, emergencyThreshold: number }} Thresholds the part of `GET /v1/settings`'s `effective` the gauge uses
 */

/**
 * Everything about the open process; replaced wholesale when another process is opened.
 * @typedef {object} View
 * @property {string} processId
 * @property {Process | null} process
 * @property {LastTurn | null} lastTurn the service's record of the process's last turn (its window is the gauge's)
 * @property {number | null} windowOverride a window the person typed for this process, over the recorded one
 * @property {Thresholds | null} thresholds
 * @property {Memory[]} memories newest first, as the API lists them
 * @property {Map<string, Memory[]>} stitchesAt compactions by the id of the last message each folded
 * @property {Map<string, Memory>} markers range compactions by the id of the marker message they inserted
 * @property {Message[]} messages the history read so far, oldest first
 * @property {Map<string, number>} indexById
 * @property {string | undefined} cursor
 * @property {boolean} exhausted
 * @property {Promise<void> | null} loading
 * @property {number} page
 * @property {boolean} closed
 */

/** Messages per API page, and rows per rendered timeline page (the DOM never holds more). */
const FETCH_PAGE = 500;
export const ROWS_PER_PAGE = 200;

/** The open process, or null. @type {View | null} */
export let view = null;

/** @param {View | null} v */
export function setView(v) {
  view = v;
}

/** @param {string} processId @returns {View} */
export function newView(processId) {
  return {
    processId,
    process: null,
    lastTurn: null,
    windowOverride: null,
    thresholds: null,
    memories: [],
    stitchesAt: new Map(),
    markers: new Map(),
    messages: [],
    indexById: new Map(),
    cursor: undefined,
    exhausted: false,
    loading: null,
    page: 0,
    closed: false,
  };
}

/**
 * Fetches the next API page (one at a time; concurrent callers share it).
 * @param {View} v
 * @returns {Promise<void>}
 */
export function loadNextPage(v) {
  if (v.exhausted) return Promise.resolve();
  v.loading ??= (async () => {
    const q = `limit=${FETCH_PAGE}${v.cursor ? `&cursor=${enc(v.cursor)}` : ""}`;
    /** @type {MessagePage} */
    const page = await api(`/v1/processes/${enc(v.processId)}/messages?${q}`);
    if (v.closed) return;
    for (const m of page.items) {
      v.indexById.set(m.id, v.messages.length);
      v.messages.push(m);
    }
    v.cursor = page.nextCursor;
    v.exhausted = !page.nextCursor;
  })().finally(() => {
    v.loading = null;
  });
  return v.loading;
}

/** @param {View} v @param {number} count */
export async function ensureLoaded(v, count) {
  while (!v.closed && !v.exhausted && v.messages.length < count) await loadNextPage(v);
}
