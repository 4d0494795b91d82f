/**
 * `npm run data:locomo` (scripts/data-locomo.ts): download locomo10.json and split it into one
 * file per conversation that the benchmarks' loader reads. There is no internet here, so the URL
 * points at a server on 127.0.0.1 serving a small file generated in the same shape.
 */
import { execFile } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { generateLocomoSample } from "../../bench/support/generated-conversation.js";
import { loadConversations, LOCOMO_URL, parseConversation, splitLocomo10 } from "../../bench/support/locomo.js";

const run = promisify(execFile);

const samples = [
  generateLocomoSample({ seed: 1, sampleId: "conv-901", speakers: ["Ada", "Ben"], start: new Date(Date.UTC(2024, 1, 3, 9, 15)), sessions: 3, turnsPerSession: [4, 6] }),
  generateLocomoSample({ seed: 2, sampleId: "conv-902", speakers: ["Cleo", "Dan"], start: new Date(Date.UTC(2024, 5, 30, 18, 0)), sessions: 2, turnsPerSession: [5, 5] }),
].map((s, i) => ({ ...s, observation: { session_1_observation: { [s.conversation.speaker_a as string]: [[`note ${i}`, "D1:1"]] } }, session_summary: { session_1_summary: `summary ${i}` } }));

/** What each path answers: [status, body]. */
const routes: Record<string, [number, string]> = {
  "/data/locomo10.json": [200, JSON.stringify(samples)],
  "/not-json": [200, "<html>rate limited</html>"],
  "/wrong-shape": [200, JSON.stringify({ conversations: [] })],
};
const requests: string[] = [];
let server: Server;
let base: string;

beforeAll(async () => {
  server = createServer((req, res) => {
    requests.push(req.url ?? "");
    const [status, body] = routes[req.url ?? ""] ?? [404, "not found"];
    res.writeHead(status, { "content-type": "application/json" }).end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
});

/** Runs the script as `npm run data:locomo` does (tsx), into a fresh folder. */
async function dataLocomo(url: string) {
  const dir = path.join(mkdtempSync(path.join(tmpdir(), "vtm-locomo-")), "locomo");
  const env = { ...process.env, LOCOMO_URL: url, LOCOMO_DIR: dir };
  try {
    const { stdout, stderr } = await run(process.execPath, ["--import", "tsx", "scripts/data-locomo.ts"], { env, timeout: 60_000 });
    return { code: 0, stdout, stderr, dir };
  } catch (e) {
    const err = e as { code: number; stdout: string; stderr: string };
    return { code: err.code, stdout: err.stdout, stderr: err.stderr, dir };
  }
}

describe("npm run data:locomo", () => {
  it("downloads from the data set's own repository by default", () => {
    expect(LOCOMO_URL).toBe("https://raw.githubusercontent.com/snap-research/locomo/main/data/locomo10.json");
    const pkg = JSON.parse(readFileSync("package.json", "utf8")) as { scripts: Record<string, string> };
    expect(pkg.scripts["data:locomo"]).toBe("tsx scripts/data-locomo.ts");
    expect(readFileSync(".gitignore", "utf8").split("\n")).toContain("data/locomo/");
  });

  it("splits the download into one file per conversation that the loader reads back", async () => {
    const r = await dataLocomo(`${base}/data/locomo10.json`);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("Wrote 2 conversations (conv-901, conv-902)");
    expect(r.stdout).toContain("CC BY-NC 4.0");
    expect(requests).toContain("/data/locomo10.json");
    expect(readdirSync(r.dir).sort()).toEqual(["conv-901.json", "conv-902.json"]);

    // The file shape: the conversation's fields at the top level, next to qa and the annotations.
    const file = JSON.parse(readFileSync(path.join(r.dir, "conv-901.json"), "utf8")) as Record<string, unknown>;
    expect(file).toMatchObject({ speaker_a: "Ada", speaker_b: "Ben", session_1_summary: "summary 0" });
    expect(Object.keys(file)).toEqual(expect.arrayContaining(["session_1", "session_1_date_time", "session_3", "qa", "session_1_observation"]));

    const loaded = loadConversations(r.dir);
    expect(loaded.map((c) => c.id)).toEqual(["conv-901", "conv-902"]);
    const expected = samples.map((s) => parseConversation(s.sample_id, { ...s.conversation, qa: s.qa }));
    expect(loaded).toEqual(expected);
    expect(loaded[0]!.turns[0]).toMatchObject({ speaker: "Ada", diaId: "D1:1", session: 1, at: new Date(Date.UTC(2024, 1, 3, 9, 15)) });
    expect(loaded[0]!.turns.at(-1)!.session).toBe(3);
    expect(loaded[1]!.turns).toHaveLength(10);
  });

  it.each([
    ["/missing", /HTTP 404/],
    ["/not-json", /is not JSON/],
    ["/wrong-shape", /expected a non-empty JSON array/],
  ])("fails on %s, says why, and writes nothing", async (route, message) => {
    const r = await dataLocomo(`${base}${route}`);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(message);
    expect(existsSync(r.dir)).toBe(false);
  });

  it("refuses samples it could not read back, naming the sample", () => {
    expect(() => splitLocomo10([{ sample_id: "conv-1", conversation: { speaker_a: "A" }, qa: [] }])).toThrow(/sample conv-1: no conversation with session_1/);
    expect(() => splitLocomo10([{ conversation: {}, qa: [] }])).toThrow(/sample 0: missing or unusable sample_id/);
    expect(() => splitLocomo10([{ sample_id: "../evil", conversation: {}, qa: [] }])).toThrow(/sample 0: missing or unusable sample_id/);
    const badTime = { sample_id: "conv-2", conversation: { speaker_a: "A", speaker_b: "B", session_1: [], session_1_date_time: "yesterday" }, qa: [] };
    expect(() => splitLocomo10([badTime])).toThrow(/unrecognised LoCoMo session time/);
  });
});
