import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { CompactionModeName, Message, Role, ToolCall } from "../../core/domain/model.js";
import { chunkBySourceChars, selectForCompaction, sourceChars } from "../../core/domain/selector.js";
import { effectiveStrength, strengthTagOf } from "../../core/domain/strength.js";
import type { Tunables } from "../../core/domain/tunables.js";
import { DEFAULT_TUNABLES } from "../../core/domain/tunables.js";

// ---- generators -----------------------------------------------------------------------------

const tagsArb = fc.constantFrom<string[]>(
  [],
  [],
  ["STRENGTH:weak"],
  ["STRENGTH:normal"],
  ["STRENGTH:strong"],
  ["STRENGTH:pinned"],
  ["MODE:plan"],
  ["STRENGTH:weak", "STRENGTH:pinned"],
);
const contentArb = fc.oneof(
  fc.constantFrom("ok", "Thanks!", "ok, thanks 👍", "Let me check.", "One moment.", "Working on it...", "got it"),
  fc.constantFrom(
    "Use the eu-west-1 table for all writes.",
    "Let me check the logs: the error is X at line 42",
    "The migration failed on step 3.",
  ),
  fc.string({ maxLength: 80 }),
);

interface Draft {
  role: Role;
  content: string;
  tags: string[];
  toolCalls?: ToolCall[];
  toolCallId?: string;
}

const singleArb: fc.Arbitrary<Draft[]> = fc
  .record({ role: fc.constantFrom<Role>("USER", "ASSISTANT", "SYSTEM", "TOOL"), content: contentArb, tags: tagsArb })
  // A lone TOOL message answers a call that is not in the set (its group was archived earlier).
  .map((d) => [d.role === "TOOL" ? { ...d, toolCallId: "orphan" } : d]);

const groupArb: fc.Arbitrary<Draft[]> = fc
  .record({
    call: fc.record({ content: contentArb, tags: tagsArb }),
    results: fc.array(fc.record({ content: contentArb, tags: tagsArb }), { maxLength: 3 }),
    unanswered: fc.integer({ min: 0, max: 2 }),
    gap: fc.option(
      fc.record({ role: fc.constantFrom<Role>("USER", "ASSISTANT", "SYSTEM"), content: contentArb, tags: tagsArb }),
    ),
  })
  .map(({ call, results, unanswered, gap }) => {
    const n = Math.max(1, results.length + unanswered);
    const calls = Array.from({ length: n }, (_, k) => ({ id: `#${k}`, name: `tool${k}`, arguments: `{"k":${k}}` }));
    const answers = results.map((r, k) => ({ role: "TOOL" as const, ...r, toolCallId: `#${k}` }));
    return [{ role: "ASSISTANT" as const, ...call, toolCalls: calls }, ...(gap ? [gap] : []), ...answers];
  });

/** Flattens drafts into messages with unique ids and globally unique tool call ids. */
function build(items: Draft[][]): Message[] {
  const out: Message[] = [];
  items.forEach((item, g) =>
    item.forEach((d) => {
      const i = out.length;
      out.push({
        id: `m${i}`,
        processId: "p",
        role: d.role,
        content: d.content,
        tags: d.tags,
        createdAt: new Date(Date.UTC(2025, 0, 1, 0, 0, i)).toISOString(),
        archivedInMemoryId: null,
        tokens: 1,
        ...(d.toolCalls ? { toolCalls: d.toolCalls.map((c) => ({ ...c, id: `g${g}${c.id}` })) } : {}),
        ...(d.toolCallId ? { toolCallId: d.toolCallId === "orphan" ? `orphan${i}` : `g${g}${d.toolCallId}` } : {}),
      });
    }),
  );
  return out;
}

const messagesArb = fc.array(fc.oneof(singleArb, groupArb), { maxLength: 24 }).map(build);
const modeArb = fc.constantFrom<CompactionModeName>("NONE", "SOFT", "HARD", "EMERGENCY");
const tunablesArb: fc.Arbitrary<Tunables> = fc
  .record({
    keepRecent: fc.integer({ min: 0, max: 15 }),
    softAnchor: fc.integer({ min: 0, max: 12 }),
    hardAnchor: fc.integer({ min: 0, max: 12 }),
    emergencyAnchor: fc.integer({ min: 0, max: 12 }),
  })
  .map((t) => ({ ...DEFAULT_TUNABLES, ...t }));

// ---- oracles --------------------------------------------------------------------------------

/** The owning assistant call's index for each TOOL result (ids are unique in generated data). */
function ownerOf(messages: readonly Message[]): Map<number, number> {
  const owners = new Map<number, number>();
  messages.forEach((m, i) => {
    if (m.role !== "TOOL") return;
    const owner = messages.findIndex((a) => a.toolCalls?.some((c) => c.id === m.toolCallId));
    if (owner >= 0) owners.set(i, owner);
  });
  return owners;
}

const anchorOf = (mode: CompactionModeName, t: Tunables) =>
  mode === "SOFT" ? t.softAnchor : mode === "HARD" ? t.hardAnchor : t.emergencyAnchor;

const lastUserIndex = (messages: readonly Message[]) => messages.map((m) => m.role).lastIndexOf("USER");

/** A tool call message or a tool result: what HARD and EMERGENCY may fold inside the current turn. */
const isToolExchange = (m: Message) => m.role === "TOOL" || (m.role === "ASSISTANT" && (m.toolCalls?.length ?? 0) > 0);

/** Positions of `sub`'s elements in `all`, asserting they are members. */
const positions = (sub: readonly Message[], all: readonly Message[]) => sub.map((m) => all.indexOf(m));

const runs = { numRuns: 400 };

describe("selectForCompaction properties", () => {
  it("fold and keep partition the input, both in input order", () => {
    fc.assert(
      fc.property(messagesArb, modeArb, tunablesArb, (messages, mode, t) => {
        const { fold, keep } = selectForCompaction(messages, mode, t);
        const f = positions(fold, messages);
        const k = positions(keep, messages);
        expect(f.every((p, i) => p >= 0 && (i === 0 || p > f[i - 1]!))).toBe(true);
        expect(k.every((p, i) => p >= 0 && (i === 0 || p > k[i - 1]!))).toBe(true);
        expect([...f, ...k].sort((a, b) => a - b)).toEqual(messages.map((_, i) => i));
      }),
      runs,
    );
  });

  it("never folds a pinned message", () => {
    fc.assert(
      fc.property(messagesArb, modeArb, tunablesArb, (messages, mode, t) => {
        const { fold } = selectForCompaction(messages, mode, t);
        expect(fold.filter((m) => strengthTagOf(m.tags) === "pinned")).toEqual([]);
      }),
      runs,
    );
  });

  it("never folds the anchor (the last K messages of the mode)", () => {
    fc.assert(
      fc.property(messagesArb, modeArb, tunablesArb, (messages, mode, t) => {
        const { fold } = selectForCompaction(messages, mode, t);
        if (mode === "NONE") return;
        const anchorStart = messages.length - Math.min(messages.length, anchorOf(mode, t));
        expect(positions(fold, messages).filter((p) => p >= anchorStart)).toEqual([]);
      }),
      runs,
    );
  });

  it("never folds the newest USER message, nor any message of the triggering turn outside its tool groups", () => {
    fc.assert(
      fc.property(messagesArb, modeArb, tunablesArb, (messages, mode, t) => {
        const { fold } = selectForCompaction(messages, mode, t);
        const trigger = lastUserIndex(messages);
        if (trigger < 0) return;
        const inTurn = positions(fold, messages).filter((p) => p >= trigger);
        expect(inTurn.filter((p) => p === trigger || !isToolExchange(messages[p]!))).toEqual([]);
        // SOFT keeps the whole turn; only HARD and EMERGENCY fold its older tool groups.
        if (mode === "SOFT") expect(inTurn).toEqual([]);
      }),
      runs,
    );
  });

  it("changes nothing for conversations without tool calls: the whole triggering turn stays", () => {
    const plainArb = fc
      .array(singleArb.filter((d) => d[0]!.role !== "TOOL"), { maxLength: 24 })
      .map(build);
    fc.assert(
      fc.property(plainArb, modeArb, tunablesArb, (messages, mode, t) => {
        const selection = selectForCompaction(messages, mode, t);
        const n = messages.length;
        if (mode === "NONE" || n <= t.keepRecent) return;
        const trigger = lastUserIndex(messages);
        // The rule before tool groups could fold inside the turn: everything from the earlier of
        // the anchor and the newest USER message stays, the rest follows the table.
        const limit = Math.min(n - Math.min(n, anchorOf(mode, t)), trigger < 0 ? n : trigger);
        const table: Record<string, string[]> = { SOFT: ["weak"], HARD: ["weak", "normal"], EMERGENCY: ["weak", "normal", "strong"] };
        const expected = messages.filter((m, i) => i < limit && table[mode]!.includes(effectiveStrength(m)));
        expect(selection.fold).toEqual(expected);
      }),
      runs,
    );
  });

  it("folds a tool call and its results together or not at all", () => {
    fc.assert(
      fc.property(messagesArb, modeArb, tunablesArb, (messages, mode, t) => {
        const folded = new Set(selectForCompaction(messages, mode, t).fold);
        for (const [result, call] of ownerOf(messages)) {
          expect(folded.has(messages[result]!)).toBe(folded.has(messages[call]!));
        }
      }),
      runs,
    );
  });

  it("never folds when there are keepRecent messages or fewer, nor in NONE", () => {
    fc.assert(
      fc.property(messagesArb, modeArb, tunablesArb, (messages, mode, t) => {
        const selection = selectForCompaction(messages, mode, t);
        if (messages.length <= t.keepRecent || mode === "NONE") {
          expect(selection.fold).toEqual([]);
          expect(selection.keep).toEqual(messages);
          expect(selection.reason).toBe(mode === "NONE" ? "mode_none" : "keep_recent");
        }
      }),
      runs,
    );
  });

  it("folds exactly what the selector table allows once anchor, trigger turn and groups are spared", () => {
    const folds: Record<string, Record<string, boolean>> = {
      SOFT: { weak: true, normal: false, strong: false, pinned: false },
      HARD: { weak: true, normal: true, strong: false, pinned: false },
      EMERGENCY: { weak: true, normal: true, strong: true, pinned: false },
    };
    fc.assert(
      fc.property(messagesArb, modeArb, tunablesArb, (messages, mode, t) => {
        const selection = selectForCompaction(messages, mode, t);
        const n = messages.length;
        if (mode === "NONE" || n <= t.keepRecent) return;
        const trigger = lastUserIndex(messages);
        const anchorStart = n - Math.min(n, anchorOf(mode, t));
        const turnKeeps = (i: number) =>
          trigger >= 0 && i >= trigger && (i === trigger || mode === "SOFT" || !isToolExchange(messages[i]!));
        const alone = messages.map((m, i) => i < anchorStart && !turnKeeps(i) && folds[mode]![effectiveStrength(m)]!);
        // Close over groups: a call folds only if all its results may, and vice versa.
        const owners = ownerOf(messages);
        const ok = [...alone];
        for (const [result, call] of owners) {
          if (!alone[result] || !alone[call]) ok[result] = ok[call] = false;
        }
        for (const [result, call] of owners) ok[result] = ok[call]!;
        const expected = messages.filter((_, i) => ok[i]);
        expect(selection.fold).toEqual(expected);
        expect(selection.reason).toBe(expected.length === 0 ? "nothing_eligible" : undefined);
      }),
      runs,
    );
  });
});

// ---- chunking -------------------------------------------------------------------------------

const bigContentArb = fc.oneof(
  contentArb,
  fc.integer({ min: 200, max: 20_000 }).map((n) => `${"z".repeat(n)}!`),
);
const chunkMessagesArb = fc
  .array(
    fc.oneof(
      singleArb,
      groupArb,
      fc.record({ content: bigContentArb }).map(({ content }) => [{ role: "TOOL" as Role, content, tags: [], toolCallId: "orphan" }]),
      fc
        .tuple(bigContentArb, bigContentArb)
        .map(([args, result]) => [
          { role: "ASSISTANT" as Role, content: "", tags: [], toolCalls: [{ id: "#0", name: "write", arguments: args }] },
          { role: "TOOL" as Role, content: result, tags: [], toolCallId: "#0" },
        ]),
    ),
    { maxLength: 20 },
  )
  .map(build);

describe("chunkBySourceChars properties", () => {
  // Generated groups have at most 5 members (call, gap, 3 results), so any cap >= 5 * 128 lets a
  // group share one chunk; the split fallback is covered by a unit test.
  const capArb = fc.integer({ min: 640, max: 6000 });

  it("keeps every chunk within the cap and reports its size truthfully", () => {
    fc.assert(
      fc.property(chunkMessagesArb, capArb, (messages, cap) => {
        for (const chunk of chunkBySourceChars(messages, cap)) {
          expect(chunk.messages.length).toBeGreaterThan(0);
          expect(chunk.chars).toBe(chunk.source.reduce((s, m) => s + sourceChars(m), 0));
          expect(chunk.chars).toBeLessThanOrEqual(cap);
        }
      }),
      runs,
    );
  });

  it("concatenates back to the input, and each source message stands for its original", () => {
    fc.assert(
      fc.property(chunkMessagesArb, capArb, (messages, cap) => {
        const chunks = chunkBySourceChars(messages, cap);
        expect(chunks.flatMap((c) => c.messages)).toEqual(messages);
        for (const chunk of chunks) {
          expect(chunk.source.map((m) => m.id)).toEqual(chunk.messages.map((m) => m.id));
          expect(chunk.truncated).toBe(chunk.source.some((s, i) => s !== chunk.messages[i]));
          chunk.source.forEach((s, i) => {
            const original = chunk.messages[i]!;
            if (s === original) return;
            // A cut keeps the head of the original and says so.
            const kept = s.content.replace(/…\[truncated \d+ chars\]$/, "");
            expect(original.content.startsWith(kept) || s.content.startsWith(`[${original.role} message`)).toBe(true);
          });
        }
      }),
      runs,
    );
  });

  it("never splits a tool call from its results", () => {
    fc.assert(
      fc.property(chunkMessagesArb, capArb, (messages, cap) => {
        const chunkOf = new Map<Message, number>();
        chunkBySourceChars(messages, cap).forEach((c, k) => c.messages.forEach((m) => chunkOf.set(m, k)));
        for (const [result, call] of ownerOf(messages)) {
          expect(chunkOf.get(messages[result]!)).toBe(chunkOf.get(messages[call]!));
        }
      }),
      runs,
    );
  });
});
