/**
 * The evidence ledger's invariants (tools/ledger-invariants.ts, part of `findViolations`) on
 * hand-built snapshots of a fold, a second fold, a revert and an import: the head's ledger cites
 * only messages the process holds and its summary stands for, and its section is the ledger
 * rendered within its budget (docs/evidence-ledger.md, "The evidence ledger").
 */
import { describe, expect, it } from "vitest";
import { extendLedger, type LedgerSource } from "../../core/domain/ledger/build.js";
import { mapLedgerIds, type Ledger } from "../../core/domain/ledger/model.js";
import { renderLedger } from "../../core/domain/ledger/render.js";
import type { Memory, Message } from "../../core/domain/model.js";
import { findViolations } from "../../tools/invariants.js";
import { at, memory, message, snapshot } from "../support/snapshots.js";

const BUDGET = 400;
const rule = message("msg_1", "mem_a", { content: "Never push to main without asking me." });
const bash = message("msg_2", "mem_a", { role: "ASSISTANT", content: "", toolCalls: [{ id: "c1", name: "Bash", arguments: JSON.stringify({ command: "npm test" }) }] });
const failed = message("msg_3", "mem_a", { role: "TOOL", content: "TypeError: build is not a function\nExit code: 1", toolCallId: "c1" });
const rerun = message("msg_4", "mem_b", { role: "ASSISTANT", content: "", toolCalls: [{ id: "c2", name: "Bash", arguments: JSON.stringify({ command: "npm test" }) }] });
const passed = message("msg_5", "mem_b", { role: "TOOL", content: "all tests passed\nExit code: 0", toolCallId: "c2" });
const latest = message("msg_6", null, { content: "Thanks." });

/** The summary `m` keeping `ledger`, with the section a fold renders for it. */
const withLedger = (m: Memory, ledger: Ledger, budget = BUDGET): Memory => ({ ...m, ledger, metadata: { ...m.metadata, ledger: renderLedger(ledger, budget) } });
const first = extendLedger(null, [rule, bash, failed] as LedgerSource[]);
const second = extendLedger(first, [rerun, passed] as LedgerSource[]);
const ledgerFindings = (v: string[]) => v.filter((x) => /ledger/.test(x));

describe("findViolations: the evidence ledger", () => {
  it("holds after a fold: the ledger cites the fold's own messages", () => {
    expect(first.constraints[0]?.messageId).toBe("msg_1");
    const a = withLedger(memory("mem_a", ["msg_1", "msg_2", "msg_3"]), first);
    expect(findViolations(snapshot([rule, bash, failed, latest], [a], "mem_a"), { settled: true })).toEqual([]);
  });

  it("holds after a second fold that carries the prior ledger forward (its citations reach the first fold's sources)", () => {
    expect(second.errors[0]).toMatchObject({ messageId: "msg_3", resolvedBy: "msg_5" });
    const a = withLedger(memory("mem_a", ["msg_1", "msg_2", "msg_3"], { supersededAt: at, supersededByMemoryId: "mem_b" }), first);
    const b = withLedger(memory("mem_b", ["msg_4", "msg_5"], { prior: "mem_a" }), second);
    expect(findViolations(snapshot([rule, bash, failed, rerun, passed, latest], [a, b], "mem_b"), { settled: true })).toEqual([]);
  });

  it("holds after a revert, and flags a head whose ledger still cites the reverted fold's messages", () => {
    const a = withLedger(memory("mem_a", ["msg_1", "msg_2", "msg_3"]), first);
    const reverted = withLedger(memory("mem_b", ["msg_4", "msg_5"], { prior: "mem_a", status: "REVERTED", supersededAt: null }), second);
    const back = [rule, bash, failed, { ...rerun, archivedInMemoryId: null }, { ...passed, archivedInMemoryId: null }, latest];
    expect(findViolations(snapshot(back, [a, reverted], "mem_a"), { settled: true })).toEqual([]);
    // A revert that left the newer ledger on the prior summary: it cites msg_4 and msg_5, now active again.
    const stale = withLedger(memory("mem_a", ["msg_1", "msg_2", "msg_3"]), second);
    expect(ledgerFindings(findViolations(snapshot(back, [stale, reverted], "mem_a"), { settled: true }))).toEqual([
      "t/p: memory mem_a's ledger cites messages it does not stand for: msg_4, msg_5",
    ]);
  });

  it("holds after an import that moved the ids, and flags a ledger whose ids were not moved with the messages", () => {
    const moved = (id: string) => id.replace("msg_", "imp_");
    const copy = (m: Message) => ({ ...m, id: moved(m.id) });
    const messages = [rule, bash, failed, latest].map(copy);
    const imported = withLedger(memory("mem_a", ["imp_1", "imp_2", "imp_3"]), mapLedgerIds(first, moved));
    expect(findViolations(snapshot(messages, [imported], "mem_a"), { settled: true })).toEqual([]);
    const unmoved = withLedger(memory("mem_a", ["imp_1", "imp_2", "imp_3"]), first);
    expect(ledgerFindings(findViolations(snapshot(messages, [unmoved], "mem_a"), { settled: true }))).toEqual([
      "t/p: memory mem_a's ledger cites messages the process does not hold: msg_2, msg_3, msg_1",
      "t/p: memory mem_a's ledger cites messages it does not stand for: msg_2, msg_3, msg_1",
    ]);
  });

  it("holds once the retention removed the cited originals (the memory stays), and flags one removed otherwise", () => {
    const a = withLedger(memory("mem_a", ["msg_1", "msg_2", "msg_3"]), first);
    const swept = new Map([["msg_1", "mem_a"], ["msg_2", "mem_a"], ["msg_3", "mem_a"]]);
    expect(findViolations(snapshot([latest], [a], "mem_a"), { settled: true, expired: swept })).toEqual([]);
    swept.delete("msg_3");
    expect(ledgerFindings(findViolations(snapshot([latest], [a], "mem_a"), { settled: true, expired: swept }))).toEqual([
      "t/p: memory mem_a's ledger cites messages the process does not hold: msg_3",
    ]);
  });

  it("flags a section that is not the ledger rendered within its budget, one past its budget, and one without a ledger", () => {
    const a = withLedger(memory("mem_a", ["msg_1", "msg_2", "msg_3"]), first);
    const edited = { ...a, metadata: { ...a.metadata, ledger: { ...a.metadata.ledger!, text: `${a.metadata.ledger!.text}\n- (added)` } } };
    expect(ledgerFindings(findViolations(snapshot([rule, bash, failed, latest], [edited], "mem_a")))).toEqual([
      `t/p: memory mem_a's ledger section is not its ledger rendered within ${BUDGET} tokens`,
    ]);
    const section = a.metadata.ledger!;
    const over = { ...a, metadata: { ...a.metadata, ledger: { ...section, budgetTokens: section.tokens - 1 } } };
    expect(ledgerFindings(findViolations(snapshot([rule, bash, failed, latest], [over], "mem_a")))).toContain(
      `t/p: memory mem_a's ledger section takes ${section.tokens} tokens, past its budget of ${section.tokens - 1}`,
    );
    const { ledger: _dropped, ...bare } = a;
    expect(ledgerFindings(findViolations(snapshot([rule, bash, failed, latest], [bare], "mem_a")))).toEqual(["t/p: memory mem_a replays a ledger section but keeps no ledger"]);
  });
});
