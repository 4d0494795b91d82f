/**
 * Appending and listing messages. Append applies the auto-pin rule (docs/features.md "Auto-pin") and the
 * idempotency key; listing serves the full history or the active (replay) view.
 */
import { AppError, conflict, isItemTooLarge, notFound } from "../domain/errors.js";
import { setStoredNative, type Message, type Page } from "../domain/model.js";
import { MAX_MESSAGE_BYTES, messageBytes, type MessageInput } from "../domain/fields.js";
import { clearsAt, replayMessages } from "../domain/replay.js";
import { isExpired, keptAt } from "../domain/retention.js";
import { ratesMessage, sideChannelTags } from "../domain/strength-analyzer.js";
import { hasStrengthTag, withStrength, type Strength } from "../domain/strength.js";
import { messageTokens } from "../domain/tokens.js";
import type { ProcessKey, ProcessState } from "../ports/store.js";
import type { LastTurn } from "../domain/last-turn.js";
import type { CoreDeps } from "./deps.js";
import { requireProcess } from "./processes.js";
import type { TunablesResolver } from "./tunables.js";
import { keepNative, withNative } from "./native-content.js";
import { sha256Hex } from "../domain/native/blob-parts.js";
import { AGAIN_NOW, AT_ONCE, retrying } from "./compaction/lease.js";
import { settledView } from "./compaction/settle.js";

const PINNED_TAG = "STRENGTH:pinned";

/**
 * The auto-pin rule (docs/features.md "Auto-pin"), in its short-circuit order: role, then tags, and only then the existence check, so
 * ASSISTANT/SYSTEM/TOOL messages and explicitly rated ones cost no read. The check asks for an
 * earlier USER message (api.md: SYSTEM messages before the first USER message do not count). Two parallel first
 * messages may both see an empty history and both be pinned: harmless, both stay verbatim.
 */
async function shouldAutoPin(
  body: Pick<MessageInput, "role" | "tags">,
  hasUserMessage: () => Promise<boolean>,
): Promise<boolean> {
  if (body.role !== "USER") return false;
  if (hasStrengthTag(body.tags ?? [])) return false;
  return !(await hasUserMessage());
}

const tooLarge = (message: string, cause?: unknown) =>
  new AppError("too_large", "message.too_large", message, { fields: ["content"], limit: MAX_MESSAGE_BYTES }, cause === undefined ? undefined : { cause });

/**
 * The message limit (docs/configuration.md, "Limits"): what the store holds of one message, in
 * UTF-8 bytes; answers the bytes the message takes, so the rest is the room native content has.
 */
function checkMessageSize(body: Pick<MessageInput, "content" | "tags" | "toolCallId" | "toolCalls">): number {
  const bytes = messageBytes(body);
  if (bytes > MAX_MESSAGE_BYTES) throw tooLarge(`message is ${bytes} bytes of content, tags and tool fields (UTF-8); the limit is ${MAX_MESSAGE_BYTES}`);
  return bytes;
}

/** A write the store refused for its size is the caller's 413, with the message's own code. */
async function withinStore<T>(write: () => Promise<T>, what: string): Promise<T> {
  try {
    return await write();
  } catch (e) {
    throw isItemTooLarge(e) ? tooLarge(`${what} is larger than the store holds`, e) : e;
  }
}

export interface AppendOptions {
  /** The turn path already knows whether the process has a USER message (its active view's META). */
  hasUserMessage?: () => Promise<boolean>;
  /**
   * Whether the strength analyzer's side channel is on; asked only for a message it would rate
   * (the turn path knows the process's project, so it resolves the tunables without a read).
   */
  sideChannel?: () => Promise<boolean>;
  /** A turn's record, written with the message (docs/turns.md, "The last turn's record"). */
  lastTurn?: LastTurn;
}

/**
 * Appends one message. With the side channel on (`sideChannelEnabled`), a message still without a
 * strength tag after auto-pin gets the offline analyzer's rating in the same write
 * (docs/compaction.md, "Strength analyzer"). Without `options.sideChannel`, finding the process's
 * project settings costs one META read for a message the analyzer would rate; a USER message's
 * auto-pin check shares it.
 */
export async function appendMessage(
  deps: CoreDeps & { tunables?: TunablesResolver },
  key: ProcessKey,
  body: MessageInput,
  options: AppendOptions = {},
): Promise<{ message: Message; created: boolean }> {
  const room = MAX_MESSAGE_BYTES - checkMessageSize(body);
  let meta: Promise<ProcessState | null> | undefined;
  const state = () => (meta ??= deps.store.getProcess(key));
  const tunables = deps.tunables;
  const hasUserMessage =
    options.hasUserMessage ?? (tunables ? async () => (await state())?.hasUserMessage ?? false : () => deps.store.hasUserMessage(key));
  const sideChannel =
    options.sideChannel ??
    (tunables
      ? async () => {
          const process = (await state())?.process;
          return process !== undefined && (await tunables.forProcess(key.tenantId, process.projectId)).sideChannelEnabled;
        }
      : async () => false);
  const pin = await shouldAutoPin(body, hasUserMessage);
  let tags = [...(body.tags ?? [])];
  if (pin) tags.push(PINNED_TAG);
  if (ratesMessage(body) && !hasStrengthTag(tags) && (await sideChannel())) tags = sideChannelTags(tags, body);
  // The time and the id are taken together, after the last await: the container's id factory is
  // monotonic, so a time read before another append's id would sort that message after a newer
  // one, and the history (id order) would disagree with createdAt (what a range selects by).
  const stored = body.native ? await keepNative(deps, key, body.native, room) : undefined;
  const now = deps.clock.now();
  const draft = {
    id: deps.ids.message(now),
    processId: key.processId,
    role: body.role,
    content: body.content,
    tags,
    createdAt: now.toISOString(),
    archivedInMemoryId: null,
    ...(body.toolCallId !== undefined ? { toolCallId: body.toolCallId } : {}),
    ...(body.toolCalls !== undefined ? { toolCalls: body.toolCalls } : {}),
    ...(body.toolCallIds !== undefined ? { toolCallIds: body.toolCallIds } : {}),
  };
  const message: Message = { ...draft, tokens: body.tokens ?? messageTokens(draft) };
  if (stored) setStoredNative(message, stored);
  // The body's hash goes with the key, so that the key sent again with another body is refused.
  const { idempotencyKey, ...sent } = body;
  const bodyHash = idempotencyKey ? sha256Hex(JSON.stringify(sent)) : undefined;
  const out = await withinStore(() => deps.store.appendMessage(key, message, idempotencyKey, bodyHash, options.lastTurn), "the message");
  if (!out.ok) {
    if (out.reason === "process_not_found") throw notFound("process", key.processId);
    throw conflict("idempotency.key_reused", `idempotencyKey '${idempotencyKey}' was used for another message`, { fields: ["idempotencyKey"] });
  }
  if (stored?.blobs) await keepNative(deps, key, body.native!, room, true);
  // A new message answers the native content it was sent; a repeated idempotency key, the one stored.
  const [answer] = await withNative(deps, key, [out.created && body.native ? { ...out.message, native: body.native } : out.message]);
  return { message: answer!, created: out.created };
}

/**
 * One message in full, active or archived; 404 for an unknown process or message alike, and for an
 * original past its retention (docs/configuration.md, "Retention").
 */
export async function getMessage(deps: CoreDeps, key: ProcessKey, messageId: string): Promise<Message> {
  const message = await deps.store.getMessage(key, messageId);
  if (message && !isExpired(message, deps.clock.now())) return (await withNative(deps, key, [message]))[0]!;
  await requireProcess(deps, key);
  throw notFound("message", messageId);
}

/**
 * Sets the message's one STRENGTH tag (null removes it). Only an active message changes: the write
 * is conditional on the message being unarchived and its tags unchanged since read, and it bumps
 * META.version, so a compaction that selected the message under its old strength cannot commit
 * (docs/compaction.md, "Changing a message's strength after the fact"). An unfinished roll-forward is finished
 * first, so a message that a committed fold still has to archive answers 409, never gets pinned.
 */
export async function setMessageStrength(deps: CoreDeps, key: ProcessKey, messageId: string, strength: Strength | null): Promise<Message> {
  return retrying(deps, AT_ONCE, async () => {
    await settledView(deps, key);
    const current = await getMessage(deps, key, messageId);
    if (current.archivedInMemoryId !== null) throw archivedConflict(current);
    const tags = withStrength(current.tags, strength);
    if (sameTags(tags, current.tags)) return current;
    const out = await withinStore(
      () => deps.store.updateMessageTags(key, messageId, { tags, expectedTags: current.tags }),
      `message '${messageId}' with its new strength`,
    );
    if (out.ok) return { ...current, tags };
    if (out.reason === "not_found") throw notFound("message", messageId);
    if (out.reason === "archived") throw archivedConflict(current);
    // tags_changed (a concurrent PATCH) or pending_archive (a fold just committed): read again.
    return AGAIN_NOW;
  }, () => conflict("message.busy", `message '${messageId}' kept changing; try again`));
}

const sameTags = (a: readonly string[], b: readonly string[]) => a.length === b.length && a.every((t, i) => t === b[i]);

const archivedConflict = (m: Message) =>
  conflict("message.archived", `message '${m.id}' is archived${m.archivedInMemoryId ? ` in memory '${m.archivedInMemoryId}'` : ""}; only an active message can change`, {
    archivedInMemoryId: m.archivedInMemoryId,
  });

/** Active view pages by message id over the one Query's result; the full history pages in DynamoDB. */
export async function listMessages(
  deps: CoreDeps,
  key: ProcessKey,
  options: { view: "active" | "all"; limit: number; cursor?: string },
): Promise<Page<Message>> {
  if (options.view === "all") {
    const page = await deps.store.listMessages(key, options);
    if (page.items.length === 0 && !options.cursor && !(await deps.store.getProcess(key))) {
      throw notFound("process", key.processId);
    }
    // Originals past their retention are left out; the page may then hold fewer than `limit`.
    return { ...page, items: await withNative(deps, key, keptAt(page.items, deps.clock.now())) };
  }
  const view = await deps.store.activeView(key);
  if (!view) throw notFound("process", key.processId);
  const after = options.cursor ? decodeActiveCursor(options.cursor) : undefined;
  // The active view is the replay: placeholders for cleared and missing results (ids sort in place).
  const replay = replayMessages(clearsAt(view.messages, view.state.replayEpoch).messages);
  const rest = after ? replay.filter((m) => m.id > after) : replay;
  const items = rest.slice(0, options.limit);
  const last = items[items.length - 1];
  return {
    items: await withNative(deps, key, items),
    ...(rest.length > items.length && last ? { nextCursor: Buffer.from(`a:${last.id}`).toString("base64url") } : {}),
  };
}

function decodeActiveCursor(cursor: string): string {
  const text = Buffer.from(cursor, "base64url").toString("utf8");
  if (!text.startsWith("a:") || text.length < 3) {
    throw new AppError("input", "cursor.invalid", "cursor is not valid for this listing", { fields: ["query.cursor"] });
  }
  return text.slice(2);
}
