/**
 * API keys against the real DynamoDB Local engine: create -> resolve -> revoke -> list, the item
 * as stored (hash only), the authorizer over it, and the `keys` CLI end to end.
 */
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { GetCommand } from "@aws-sdk/lib-dynamodb";
import { beforeAll, describe, expect, it } from "vitest";
import {
  API_KEY_PREFIX,
  apiKeyItem,
  apiKeyPk,
  createApiKeyStore,
  createKeyParams,
  generateApiKey,
  hashApiKey,
  listKeysParams,
  resolveKeyParams,
  revokeKeyParams,
  type ApiKeyStore,
} from "../../core/adapters/dynamodb/api-keys.js";
import { tableIndexes } from "../../core/adapters/dynamodb/table.js";
import { silentLog } from "../../core/adapters/log.js";
import { createAuthorizer } from "../../functions/authorizer.js";
import { runKeysCli } from "../../scripts/api-keys.js";
import { freshTable } from "../support/dynamo.js";

const run = promisify(execFile);

describe("api key builders (pure)", () => {
  const hash = hashApiKey("vtm_example");

  it("hash is the SHA-256 hex of the whole key", () => {
    // FIPS 180-2 test vector.
    expect(hashApiKey("abc")).toBe("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    expect(hash).toMatch(/^[0-9a-f]{64}$/);
    expect(hashApiKey("vtm_example")).toBe(hash);
    expect(hashApiKey("vtm_example2")).not.toBe(hash);
  });

  it("keys the item by its hash and lists it under the tenant in gsi1, newest first", () => {
    const item = apiKeyItem({ hash, tenantId: "team-a", label: "ci", createdAt: "2026-01-02T03:04:05.000Z" });
    expect(item).toEqual({
      pk: `APIKEY#${hash}`,
      sk: "KEY",
      type: "APIKEY",
      hash,
      tenantId: "team-a",
      label: "ci",
      createdAt: "2026-01-02T03:04:05.000Z",
      gsi1pk: "T#team-a#APIKEYS",
      gsi1sk: `2026-01-02T03:04:05.000Z#${hash}`,
    });
    expect(item).toHaveProperty(tableIndexes.gsi1.partitionKey);
    expect(item).toHaveProperty(tableIndexes.gsi1.sortKey);
    expect(listKeysParams("t", "team-a")).toMatchObject({
      IndexName: "gsi1",
      ExpressionAttributeValues: { ":pk": "T#team-a#APIKEYS" },
      ScanIndexForward: false,
    });
  });

  it("never overwrites a key, reads consistently, and revokes only once", () => {
    const item = apiKeyItem({ hash, tenantId: "team-a", label: "", createdAt: "2026-01-01T00:00:00.000Z" });
    expect(createKeyParams("t", item).ConditionExpression).toBe("attribute_not_exists(pk)");
    expect(resolveKeyParams("t", hash)).toEqual({ TableName: "t", Key: { pk: apiKeyPk(hash), sk: "KEY" }, ConsistentRead: true });
    expect(revokeKeyParams("t", hash, "now").ConditionExpression).toBe("attribute_exists(pk) AND attribute_not_exists(revokedAt)");
  });
});

describe("api key store on DynamoDB Local", () => {
  let keys: ApiKeyStore;
  let table: Awaited<ReturnType<typeof freshTable>>;

  beforeAll(async () => {
    table = await freshTable("keys");
    keys = createApiKeyStore({ client: table.client, tableName: table.tableName });
  });

  it("creates a random prefixed key, stores only its hash, and resolves it to the tenant", async () => {
    const { key, record } = await keys.create({ tenantId: "team-a", label: "engine" });
    expect(key.startsWith(API_KEY_PREFIX)).toBe(true);
    expect(key.length).toBeGreaterThanOrEqual(API_KEY_PREFIX.length + 43);
    expect(record).toMatchObject({ hash: hashApiKey(key), tenantId: "team-a", label: "engine", revokedAt: null });

    const stored = await table.client.send(new GetCommand({ TableName: table.tableName, Key: { pk: apiKeyPk(record.hash), sk: "KEY" } }));
    expect(JSON.stringify(stored.Item)).not.toContain(key);
    expect(stored.Item?.revokedAt).toBeUndefined();

    expect(await keys.resolve(key)).toEqual({ tenantId: "team-a", hash: record.hash });
    const second = await keys.create({ tenantId: "team-a" });
    expect(second.key).not.toBe(key);
  });

  it("resolves nothing for unknown, empty or oversized keys", async () => {
    expect(await keys.resolve("vtm_not-a-key")).toBeNull();
    expect(await keys.resolve("")).toBeNull();
    expect(await keys.resolve("x".repeat(10_000))).toBeNull();
  });

  it("revokes once: the key stops resolving, the item stays, a second revoke is refused", async () => {
    const { key, record } = await keys.create({ tenantId: "team-b", label: "old" });
    const out = await keys.revoke(record.hash);
    expect(out.ok && out.record.revokedAt).toBeTruthy();
    expect(await keys.resolve(key)).toBeNull();
    expect((await keys.get(record.hash))?.revokedAt).toBeTruthy();
    expect(await keys.revoke(record.hash)).toEqual({ ok: false, reason: "already_revoked" });
    expect(await keys.revoke(hashApiKey("vtm_never-created"))).toEqual({ ok: false, reason: "not_found" });
  });

  it("lists one tenant's keys newest first, revoked included, and never another tenant's", async () => {
    let t = Date.parse("2026-03-01T00:00:00.000Z");
    const clocked = createApiKeyStore({ client: table.client, tableName: table.tableName, now: () => new Date((t += 1000)) });
    const first = await clocked.create({ tenantId: "team-c", label: "first" });
    const second = await clocked.create({ tenantId: "team-c", label: "second" });
    await clocked.create({ tenantId: "team-d", label: "other tenant" });
    await clocked.revoke(first.record.hash);

    const listed = await clocked.list("team-c");
    expect(listed.map((r) => r.label)).toEqual(["second", "first"]);
    expect(listed[0]).toEqual(second.record);
    expect(listed[1]?.revokedAt).toBeTruthy();
    expect(await clocked.list("team-none")).toEqual([]);
  });

  it("rejects tenant ids that could break the key layout", async () => {
    await expect(keys.create({ tenantId: "a#b" })).rejects.toThrow();
    await expect(keys.create({ tenantId: "" })).rejects.toThrow();
  });

  it("feeds the authorizer: live key -> tenant context; revoked, unknown or malformed -> denied", async () => {
    const authorize = createAuthorizer({ keys, log: silentLog });
    const live = await keys.create({ tenantId: "team-e" });
    const dead = await keys.create({ tenantId: "team-e" });
    await keys.revoke(dead.record.hash);
    const event = (authorization: string) => ({ type: "REQUEST", identitySource: [authorization], headers: { authorization } });

    expect(await authorize(event(`Bearer ${live.key}`))).toEqual({ isAuthorized: true, context: { tenantId: "team-e" } });
    expect(await authorize(event(`bearer   ${live.key} `))).toEqual({ isAuthorized: true, context: { tenantId: "team-e" } });
    expect(await authorize(event(`Bearer ${dead.key}`))).toEqual({ isAuthorized: false });
    expect(await authorize(event("Bearer vtm_unknown"))).toEqual({ isAuthorized: false });
    expect(await authorize(event(`Bearer ${generateApiKey()}`))).toEqual({ isAuthorized: false });
    expect(await authorize(event(live.key))).toEqual({ isAuthorized: false });
  });

  it("denies tokens that cannot be a key without reading the table", async () => {
    const sent: string[] = [];
    const counting = { send: (command: { constructor: { name: string } }) => (sent.push(command.constructor.name), table.client.send(command as never)) };
    const countingKeys = createApiKeyStore({ client: counting as unknown as typeof table.client, tableName: table.tableName });
    const authorize = createAuthorizer({ keys: countingKeys, log: silentLog });
    const event = (authorization: string) => ({ type: "REQUEST", identitySource: [authorization], headers: { authorization } });
    for (const token of ["Bearer random-token", "Bearer vtm_short", `Bearer vtm_${"a".repeat(44)}`, `Bearer vtm_${"a".repeat(42)}!`, "Basic abc"]) {
      expect(await authorize(event(token)), token).toEqual({ isAuthorized: false });
    }
    expect(sent).toEqual([]);
    // A token shaped like a key costs exactly one read.
    expect(await authorize(event(`Bearer ${generateApiKey()}`))).toEqual({ isAuthorized: false });
    expect(sent).toEqual(["GetCommand"]);
  });
});

describe("keys CLI on DynamoDB Local", () => {
  it("create prints the key once, list shows only its hash, revoke by key then by hash", async () => {
    const table = await freshTable("cli");
    const env = { TABLE_NAME: table.tableName, DYNAMODB_ENDPOINT: table.endpoint };
    const cli = async (...argv: string[]) => {
      const out: string[] = [];
      const err: string[] = [];
      const code = await runKeysCli(argv, { env, out: (l) => out.push(l), err: (l) => err.push(l) });
      return { code, out: out.join("\n"), err: err.join("\n") };
    };

    const created = await cli("create", "--tenant", "team-a", "--label", "engine prod");
    expect(created.code).toBe(0);
    const key = created.out.trim();
    expect(key).toMatch(/^vtm_[A-Za-z0-9_-]{43}$/);
    expect(created.err).toContain("shown only this once");

    const listed = await cli("list", "--tenant", "team-a");
    expect(listed.out).toContain(hashApiKey(key));
    expect(listed.out).toContain("active");
    expect(listed.out).toContain("engine prod");
    expect(listed.out).not.toContain(key);

    expect((await cli("revoke", "--key", key)).code).toBe(0);
    expect((await cli("revoke", "--hash", hashApiKey(key))).code).toBe(1);
    const json = JSON.parse((await cli("list", "--tenant", "team-a", "--json")).out);
    expect(json).toEqual([expect.objectContaining({ hash: hashApiKey(key), revokedAt: expect.any(String) })]);

    const second = JSON.parse((await cli("create", "--tenant", "team-a", "--json")).out);
    expect((await cli("revoke", "--hash", second.hash)).code).toBe(0);
  });

  it("refuses bad usage with exit code 2 and the usage text", async () => {
    const io = { env: {}, out: () => {}, err: () => {} };
    expect(await runKeysCli(["create"], io)).toBe(2);
    expect(await runKeysCli(["create", "--tenant", "bad#tenant"], io)).toBe(2);
    expect(await runKeysCli(["revoke"], io)).toBe(2);
    expect(await runKeysCli(["revoke", "--key", "a", "--hash", "b"], io)).toBe(2);
    expect(await runKeysCli(["revoke", "--hash", "xyz"], io)).toBe(2);
    expect(await runKeysCli(["rotate"], io)).toBe(2);
    expect(await runKeysCli(["create", "--tenant", "t"], io)).toBe(2); // no TABLE_NAME
    expect(await runKeysCli(["list", "--tenant", "t", "--bogus"], io)).toBe(2);
  });

  it("runs as the npm script's command line (tsx scripts/api-keys.ts)", async () => {
    const table = await freshTable("cli-proc");
    const env = { ...process.env, TABLE_NAME: table.tableName, DYNAMODB_ENDPOINT: table.endpoint, AWS_REGION: "us-east-1" };
    const created = await run(process.execPath, ["--import", "tsx", "scripts/api-keys.ts", "create", "--tenant", "team-z"], { env });
    const key = created.stdout.trim();
    expect(key).toMatch(/^vtm_/);
    const listed = await run(process.execPath, ["--import", "tsx", "scripts/api-keys.ts", "list", "--tenant", "team-z", "--json"], { env });
    expect(JSON.parse(listed.stdout)).toEqual([expect.objectContaining({ hash: hashApiKey(key), tenantId: "team-z" })]);
  }, 30_000);
});
