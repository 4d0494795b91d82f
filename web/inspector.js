// The inspector: what compaction did to one process, through the public API only. Plain ES module,
// no build step. Message text is untrusted: it only ever reaches the page through textContent.

const KEY_STORAGE = "vancetope.apiKey";
const WINDOW_STORAGE = "vancetope.contextWindow";
const DEFAULT_WINDOW = 128000;
/** Messages per API page, and rows per rendered timeline page (the DOM never holds more). */
const FETCH_PAGE = 500;
const ROWS_PER_PAGE = 200;
/** Longer content is clipped (a "show all" button expands it) so one pasted log cannot flood the page. */
const CONTENT_CHARS = 600;
const CONTENT_LINES = 8;

const API_BASE = (() => {
  const b = window.VANCETOPE_API_BASE;
  // An unreplaced deploy placeholder (it starts with "__") means "same origin".
  return typeof b === "string" && b !== "" && !b.startsWith("__") ? b.replace(/\/+$/, "") : "";
})();

const $ = (sel) => document.querySelector(sel);
const fmt = (n) => Math.round(n).toLocaleString("en-US");
const pct = (x) => `${(x * 100).toFixed(1)}%`;

/** A tiny DOM builder: h("span", { class: "badge" }, "text", child). Strings become text nodes. */
function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    if (k === "class") el.className = v;
    else if (k.startsWith("on")) el.addEventListener(k.slice(2), v);
    else el.setAttribute(k, v === true ? "" : String(v));
  }
  for (const c of children.flat()) {
    if (c === undefined || c === null || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return el;
}

// --- API key and requests -------------------------------------------------------------------

class ApiError extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

let keyPrompt = null;

/** Shows the key form once, however many requests are waiting for a key. */
function askKey(message) {
  if (keyPrompt) return keyPrompt;
  keyPrompt = new Promise((resolve) => {
    const dialog = $("#key-dialog");
    const input = $("#key-input");
    $("#key-message").textContent =
      message ?? "The inspector calls the API with your key. It is kept in this browser only.";
    input.value = "";
    $("#key-form").onsubmit = (e) => {
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

/** GET by default; `send` is { method, body } for the controls that change state (pin, undo). */
async function api(path, send) {
  for (;;) {
    const key = localStorage.getItem(KEY_STORAGE) || (await askKey());
    const headers = { authorization: `Bearer ${key}`, accept: "application/json" };
    if (send?.body !== undefined) headers["content-type"] = "application/json";
    const res = await fetch(API_BASE + path, {
      method: send?.method ?? "GET",
      headers,
      body: send?.body === undefined ? undefined : JSON.stringify(send.body),
    });
    if (res.status === 401) {
      if (localStorage.getItem(KEY_STORAGE) === key) localStorage.removeItem(KEY_STORAGE);
      await askKey("That key was rejected (401). Enter a valid API key.");
      continue;
    }
    const body = await res.json().catch(() => null);
    if (!res.ok) throw new ApiError(res.status, body?.error?.code, body?.error?.message ?? `${res.status} ${res.statusText}`);
    return body;
  }
}

const enc = encodeURIComponent;

// --- State ----------------------------------------------------------------------------------

/** Everything about the open process; replaced wholesale when another process is opened. */
let view = null;

function newView(processId) {
  return {
    processId,
    process: null,
    thresholds: null,
    memories: [],
    memoryById: new Map(),
    /** Stitches by the id of the last message each compaction folded. */
    stitchesAt: new Map(),
    messages: [],
    indexById: new Map(),
    cursor: undefined,
    exhausted: false,
    loading: null,
    page: 0,
    closed: false,
  };
}

function showStatus(text, kind = "info") {
  const el = $("#status");
  el.textContent = text;
  el.className = kind;
  el.hidden = !text;
}

// --- Loading the history --------------------------------------------------------------------

/** Fetches the next API page (one at a time; concurrent callers share it). */
function loadNextPage(v) {
  if (v.exhausted) return Promise.resolve();
  v.loading ??= (async () => {
    const q = `limit=${FETCH_PAGE}${v.cursor ? `&cursor=${enc(v.cursor)}` : ""}`;
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

async function ensureLoaded(v, count) {
  while (!v.closed && !v.exhausted && v.messages.length < count) await loadNextPage(v);
}

/** Reads the rest of the history behind the first page, for the gauge, the chain and the pager. */
async function loadRestInBackground(v) {
  while (!v.closed && !v.exhausted) {
    await loadNextPage(v);
    if (v.closed) return;
    renderPager(v);
    renderGauge(v);
  }
  if (v.closed) return;
  renderChain(v);
  renderPager(v);
  renderGauge(v);
}

// --- Compaction arithmetic ------------------------------------------------------------------

const maxId = (ids) => ids.reduce((a, b) => (b > a ? b : a), "");
const strengthOf = (m) => m.tags.find((t) => t.startsWith("STRENGTH:"))?.slice(9) ?? null;
const rangeTopicOf = (m) => m.tags.find((t) => t.startsWith("RECOMPACTION:"))?.slice(13) ?? null;

/** The newest active OK summary: the one the replay carries. */
function activeSummary(v) {
  return v.memories.filter((m) => m.status === "OK" && m.supersededAt === null).reduce((a, b) => (!a || b.id > a.id ? b : a), null);
}

/**
 * Tokens after a compaction: before, minus what it folded and the summary it replaced, plus its own
 * summary (and a range marker). The service computes the same at commit time but does not store it,
 * so metadata.tokensAfter wins when present. Null while a folded message is not loaded yet.
 */
function tokensAfter(v, memory) {
  const md = memory.metadata;
  if (typeof md.tokensAfter === "number") return md.tokensAfter;
  if (typeof md.tokensBefore !== "number" || memory.status !== "OK") return null;
  let folded = 0;
  for (const id of memory.sourceRefs) {
    const i = v.indexById.get(id);
    if (i === undefined) return null;
    folded += v.messages[i].tokens;
  }
  const prior = md.supersededMemoryId ? v.memoryById.get(md.supersededMemoryId)?.tokens ?? 0 : 0;
  let marker = 0;
  if (md.recompaction && md.topicLabel) {
    const anchor = maxId(memory.sourceRefs);
    const m = v.messages.find((x) => x.id.endsWith(".r") && x.id > anchor && rangeTopicOf(x) === md.topicLabel);
    marker = m?.tokens ?? 0;
  }
  return Math.max(0, md.tokensBefore - folded - prior + memory.tokens + marker);
}

function modeOf(memory) {
  return memory.metadata.mode ?? (memory.metadata.recompaction ? "RANGE" : "?");
}

function beforeAfterText(v, memory) {
  const before = memory.metadata.tokensBefore;
  if (typeof before !== "number") return null;
  const after = tokensAfter(v, memory);
  return `${fmt(before)} → ${after === null ? "…" : fmt(after)} tokens`;
}

// --- Rendering: timeline --------------------------------------------------------------------

function badge(cls, text, title) {
  return h("span", { class: `badge ${cls}`, title }, text);
}

function contentNode(text) {
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

function messageRow(v, m) {
  const strength = strengthOf(m);
  const topic = rangeTopicOf(m);
  const archived = m.archivedInMemoryId !== null;
  const otherTags = m.tags.filter((t) => !t.startsWith("STRENGTH:"));
  return h(
    "li",
    {
      class: ["msg-row", archived && "archived", topic !== null && m.role === "SYSTEM" && "range-marker"].filter(Boolean).join(" "),
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
    topic !== null && m.role === "SYSTEM" ? h("div", { class: "range-title" }, `Range recompaction: ${topic}`) : null,
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
 */
function pinToggle(v, m, strength) {
  const pinned = strength === "pinned";
  return h(
    "button",
    {
      type: "button",
      class: "link pin-toggle",
      title: pinned ? "remove the STRENGTH tag (the default rules apply again)" : "keep this message verbatim through every compaction",
      onclick: async (e) => {
        e.target.disabled = true;
        try {
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
          e.target.disabled = false;
          showStatus(`Could not ${pinned ? "unpin" : "pin"} ${m.id}: ${err.message}`, "error");
        }
      },
    },
    pinned ? "unpin" : "pin",
  );
}

/** Undoes the active summary's compaction after a confirmation, then reloads the process. */
async function undoCompaction(v, memory) {
  const ok = window.confirm(
    `Undo compaction ${memory.id}? Its ${memory.metadata.compactedMessages} folded messages become active again and the summary before it is replayed.`,
  );
  if (!ok) return;
  try {
    const res = await api(`/v1/processes/${enc(v.processId)}/memories/${enc(memory.id)}/revert`, { method: "POST" });
    if (view !== v) return;
    await openProcess(v.processId);
    showStatus(`Undone: ${fmt(res.restoredMessages)} messages are active again.`);
  } catch (err) {
    showStatus(`Could not undo ${memory.id}: ${err.message}`, "error");
  }
}

function stitchRow(v, memory) {
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
    beforeAfterText(v, memory),
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

async function renderTimeline(v) {
  const start = v.page * ROWS_PER_PAGE;
  await ensureLoaded(v, start + ROWS_PER_PAGE);
  if (v.closed || view !== v) return;
  const rows = v.messages.slice(start, start + ROWS_PER_PAGE);
  const list = $("#timeline");
  const frag = document.createDocumentFragment();
  for (const m of rows) {
    frag.append(messageRow(v, m));
    for (const memory of v.stitchesAt.get(m.id) ?? []) frag.append(stitchRow(v, memory));
  }
  list.replaceChildren(frag);
  if (rows.length === 0) list.append(h("li", { class: "empty-row" }, "No messages yet."));
  renderPager(v);
}

function pageCount(v) {
  return Math.max(1, Math.ceil(v.messages.length / ROWS_PER_PAGE));
}

function renderPager(v) {
  if (view !== v) return;
  const start = v.page * ROWS_PER_PAGE;
  const end = Math.min(start + ROWS_PER_PAGE, v.messages.length);
  const total = v.exhausted ? `${fmt(v.messages.length)}` : `${fmt(v.messages.length)}+ (loading…)`;
  $("#page-info").textContent = v.messages.length ? `messages ${fmt(start + 1)}–${fmt(end)} of ${total}` : "";
  const hasNewer = end < v.messages.length || !v.exhausted;
  $("#page-first").disabled = v.page === 0;
  $("#page-prev").disabled = v.page === 0;
  $("#page-next").disabled = !hasNewer;
  $("#page-next-bottom").disabled = !hasNewer;
  $("#page-last").disabled = !hasNewer;
}

async function goToPage(v, page) {
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

/** Opens the timeline page holding a message (search hits), loading pages as needed. */
async function showMessage(v, id) {
  while (!v.indexById.has(id) && !v.exhausted && !v.closed) await loadNextPage(v);
  const i = v.indexById.get(id);
  if (i === undefined) return showStatus(`Message ${id} is not in this process's history.`, "error");
  v.page = Math.floor(i / ROWS_PER_PAGE);
  await renderTimeline(v);
  const row = document.getElementById(`msg-${id}`);
  row?.classList.add("flash");
  row?.scrollIntoView({ block: "center" });
}

// --- Rendering: gauge, chain, search ---------------------------------------------------------

function contextWindow() {
  const n = Number(localStorage.getItem(WINDOW_STORAGE));
  return Number.isFinite(n) && n >= 1000 ? n : DEFAULT_WINDOW;
}

function renderGauge(v) {
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
  const window = contextWindow();
  const ratio = replay / window;
  const { softThreshold: soft, hardThreshold: hard, emergencyThreshold: emergency } = v.thresholds;
  const zone = ratio >= emergency ? "emergency" : ratio >= hard ? "hard" : ratio >= soft ? "soft" : "ok";
  const gauge = $("#gauge");
  gauge.dataset.zone = zone;
  gauge.querySelector(".gauge-fill").style.width = `${Math.min(100, ratio * 100)}%`;
  const bar = gauge.querySelector(".gauge-bar");
  bar.querySelectorAll(".mark").forEach((el) => el.remove());
  for (const [name, t] of [["soft", soft], ["hard", hard], ["emergency", emergency]]) {
    bar.append(h("span", { class: `mark mark-${name}`, style: `left:${t * 100}%`, title: `${name} ${pct(t)}` }, name));
  }
  const where =
    zone === "ok" ? `below soft (${pct(soft)})` : `past ${zone} (${pct(zone === "soft" ? soft : zone === "hard" ? hard : emergency)}): the next turn compacts ${zone.toUpperCase()}`;
  $("#gauge-text").textContent =
    `Replay ${fmt(replay)} tokens = ${pct(ratio)} of ${fmt(window)} — ${where}. ` +
    `Summary ${fmt(summaryTokens)} tokens + ${fmt(activeCount)} active messages ${fmt(activeTokens)} tokens` +
    `${v.exhausted ? "" : ` (counting: ${fmt(v.messages.length)} messages read so far)`}. ` +
    `Thresholds: soft ${fmt(soft * window)} · hard ${fmt(hard * window)} · emergency ${fmt(emergency * window)}.`;
}

/** Queued, prepared and discarded folds of the background worker (docs/compaction.md): never replayed. */
const isBackgroundFold = (m) => m.status === "QUEUED" || m.status === "PREPARED" || m.status === "DISCARDED";

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

function renderChain(v) {
  if (view !== v) return;
  const list = $("#chain");
  const active = activeSummary(v);
  list.replaceChildren(
    ...v.memories.map((m) => {
      const md = m.metadata;
      const state = isBackgroundFold(m)
        ? m.status.toLowerCase()
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
            ? h("button", { type: "button", class: "undo", title: "undo this compaction (POST …/revert)", onclick: () => undoCompaction(v, m) }, "undo")
            : null,
        ),
        h(
          "div",
          { class: "facts" },
          [
            `${md.compactedMessages} messages ${m.status === "OK" ? "folded" : m.status === "PREPARED" ? "prepared" : m.status === "REVERTED" ? "restored" : "not folded"}`,
            isBackgroundFold(m) ? null : beforeAfterText(v, m),
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
        m.status === "OK" && md.loss ? fidelityDetails(v, m) : null,
      );
    }),
  );
  if (v.memories.length === 0) list.append(h("li", { class: "empty-row" }, "No compaction yet."));
}

/** Links to the source messages of a dropped unit or a summary line. */
function sourceLinks(v, ids) {
  if (ids.length === 0) return h("span", { class: "no-source" }, "(earlier summary)");
  return ids.map((id) => h("button", { type: "button", class: "link source-link", "data-id": id, onclick: () => showMessage(v, id) }, id));
}

/**
 * What a compaction dropped and where each summary line came from, read on demand from
 * GET …/memories/{id} (the list carries only the first dropped units).
 */
function fidelityDetails(v, m) {
  const loss = m.metadata.loss;
  const dropped = loss.units - loss.kept;
  const body = h("div", { class: "fidelity-body" }, "Loading…");
  const details = h(
    "details",
    { class: "fidelity" },
    h("summary", {}, `dropped ${fmt(dropped)} units · per-line sources`),
    body,
  );
  let loaded = false;
  details.addEventListener("toggle", async () => {
    if (!details.open || loaded) return;
    loaded = true;
    try {
      const detail = await api(`/v1/processes/${enc(v.processId)}/memories/${enc(m.id)}`);
      body.replaceChildren(
        h("h4", {}, `Dropped (${fmt(detail.loss?.dropped.length ?? 0)} of ${fmt(dropped)}, most salient first)`),
        h(
          "ul",
          { class: "dropped" },
          ...(detail.loss?.dropped ?? []).map((d) => h("li", {}, h("code", {}, d.text), " ", sourceLinks(v, d.messageIds))),
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
      body.replaceChildren(h("span", { class: "error" }, `could not load: ${err.message}`));
    }
  });
  return details;
}

async function runSearch(v, e) {
  e.preventDefault();
  const q = $("#search-q").value.trim();
  const tag = $("#search-tag").value.trim();
  if (!q) return;
  const info = $("#search-info");
  info.textContent = "Searching…";
  try {
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
    info.textContent = `Search failed: ${err.message}`;
  }
}

// --- Opening a process ----------------------------------------------------------------------

async function openProcess(processId) {
  if (view) view.closed = true;
  showStatus("");
  $("#empty").hidden = Boolean(processId);
  $("#process-view").hidden = !processId;
  view = null;
  if (!processId) return;
  const v = newView(processId);
  view = v;
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
    const [{ process }, memories] = await Promise.all([
      api(`/v1/processes/${enc(processId)}`),
      api(`/v1/processes/${enc(processId)}/memories?includeFailed=true&includePrepared=true&includeReverted=true`),
    ]);
    if (view !== v) return;
    v.process = process;
    v.memories = memories.items;
    for (const m of v.memories) {
      v.memoryById.set(m.id, m);
      // A background fold archived nothing: it gets no stitch in the timeline.
      if (m.sourceRefs.length === 0 || isBackgroundFold(m)) continue;
      const anchor = maxId(m.sourceRefs);
      const list = v.stitchesAt.get(anchor) ?? [];
      list.push(m);
      list.sort((a, b) => (a.id < b.id ? -1 : 1));
      v.stitchesAt.set(anchor, list);
    }
    $("#process-title").replaceChildren(
      h("strong", {}, process.processId),
      ` · project ${process.projectId}`,
      process.name ? ` · ${process.name}` : "",
      process.title ? ` · ${process.title}` : "",
      ` · created ${new Date(process.createdAt).toLocaleString()}`,
    );
    await first;
    await renderTimeline(v);
    renderChain(v);
    const settings = await api(`/v1/settings?projectId=${enc(process.projectId)}`);
    if (view !== v) return;
    v.thresholds = settings.effective;
    renderGauge(v);
    await loadRestInBackground(v);
  } catch (err) {
    if (view !== v) return;
    if (err instanceof ApiError && err.status === 404) showStatus(`Process “${processId}” was not found (or belongs to another tenant).`, "error");
    else showStatus(`Could not load the process: ${err.message}`, "error");
    $("#process-view").hidden = true;
  }
}

// --- Process picker -------------------------------------------------------------------------

function selectProcessOption(processId) {
  const select = $("#process-select");
  if (![...select.options].some((o) => o.value === processId)) select.append(h("option", { value: processId }, processId));
  select.value = processId;
}

async function loadProcessList(cursor) {
  const select = $("#process-select");
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

function processFromUrl() {
  return new URLSearchParams(location.search).get("process") || "";
}

// --- Wiring ---------------------------------------------------------------------------------

function init() {
  const windowInput = $("#context-window");
  windowInput.value = String(contextWindow());
  windowInput.addEventListener("change", () => {
    const n = Number(windowInput.value);
    if (Number.isFinite(n) && n >= 1000) localStorage.setItem(WINDOW_STORAGE, String(Math.round(n)));
    windowInput.value = String(contextWindow());
    if (view) renderGauge(view);
  });

  $("#process-select").addEventListener("change", (e) => {
    const option = e.target.selectedOptions[0];
    if (option?.dataset.more) {
      void loadProcessList(option.dataset.more);
      return;
    }
    const id = e.target.value;
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

  $("#search-form").addEventListener("submit", (e) => view && runSearch(view, e));
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
