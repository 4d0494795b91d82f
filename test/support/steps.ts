/**
 * The numbered histories integration tests fold, appended through the service: crates to docks
 * (the export, import and retention tests), a warehouse move ending on its triggering USER turn
 * (the compaction tests); a forced HARD fold; and an export read page by page.
 */
import type { Message, Role } from "../../core/domain/model.js";
import type { ProcessKey } from "../../core/ports/store.js";
import type { ServiceDeps } from "../../core/services/deps.js";
import { compactManually } from "../../core/services/compaction/manual-compaction.js";
import { appendMessage } from "../../core/services/messages.js";
import { exportPage, type ExportCursor } from "../../core/services/process-export.js";

/** Appends steps `from` to `from + n - 1`; `word` names what each step moves. */
export async function appendSteps(deps: ServiceDeps, key: ProcessKey, n: number, from = 0, word = "crate") {
  for (let i = from; i < from + n; i++) {
    const role: Role = i % 2 === 0 ? "USER" : "ASSISTANT";
    await appendMessage(deps, key, { role, content: `step ${i}: ${word} ${i} goes to dock ${i % 4} on day ${i % 6}.` });
  }
}

/** The task (auto-pinned on a new process), then `n` steps, the last one USER; the messages as stored. */
export async function appendWarehouseMove(deps: ServiceDeps, key: ProcessKey, n: number): Promise<Message[]> {
  const messages = [(await appendMessage(deps, key, { role: "USER", content: "Plan the warehouse move." })).message];
  for (let i = 0; i < n; i++) {
    const role: Role = (n - 1 - i) % 2 === 0 ? "USER" : "ASSISTANT";
    messages.push((await appendMessage(deps, key, { role, content: `step ${i}: shelf ${i} goes to aisle ${i % 7} on day ${i % 5}.` })).message);
  }
  return messages;
}

/** A manual HARD fold that must fold something; the new memory's id. */
export async function foldHard(deps: ServiceDeps, key: ProcessKey, contextWindow = 10_000): Promise<string> {
  const out = await compactManually(deps, key, { model: { contextWindow }, force: "HARD" });
  if (!out.result.compacted) throw new Error(`nothing folded: ${out.result.reason}`);
  return out.result.memoryId!;
}

export interface ExportOptions {
  limits?: { pageBytes: number; readMessages: number };
  /** Runs after page `page` (1-based) when another follows: a change between pages. */
  between?: (page: number) => Promise<void>;
}

/** Every page of an export: their texts, the whole text and its lines. */
export async function exportAll(deps: ServiceDeps, key: ProcessKey, options: ExportOptions = {}) {
  const pages: string[] = [];
  let cursor: ExportCursor | undefined;
  do {
    const page = await exportPage(deps, key, cursor, options.limits);
    pages.push(page.text);
    cursor = page.next;
    if (cursor && options.between) await options.between(pages.length);
  } while (cursor);
  const text = pages.join("");
  return { pages, text, lines: text.split("\n").filter((l) => l !== "") };
}
