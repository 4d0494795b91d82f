/**
 * API keys in the one table: a key is a random secret shown once; only its SHA-256 hex is stored,
 * under its own partition (`APIKEY#<hash>`), so the authorizer resolves a key with one GetItem and
 * an IAM condition can confine the authorizer to these items. gsi1 lists a tenant's keys.
 *
 * @example
 * const keys = createApiKeyStore({ client, tableName });
 * const { key } = await keys.create({ tenantId: "team-a", label: "engine prod" });
 * await keys.resolve(key); // { tenantId: "team-a", hash: "…" }
 */
import { createHash, randomBytes } from "node:crypto";
import { ConditionalCheckFailedException } from "@aws-sdk/client-dynamodb";
import {
  GetCommand,
  PutCommand,
  UpdateCommand,
  type DynamoDBDocumentClient,
  type GetCommandInput,
  type PutCommandInput,
  type QueryCommandInput,
  type UpdateCommandInput,
} from "@aws-sdk/lib-dynamodb";
import * as z from "../../domain/zod.js";
import { Id } from "../../domain/fields.js";
import type { Outcome } from "../../ports/store.js";
import { absent, guarded, itemExists, itemIsNew } from "./conditions.js";
import { readItem } from "./items.js";
import { queryAll } from "./paging.js";
import { tableIndexes } from "./table.js";

/** Keys look like `vtm_<43 base64url chars>` (256 random bits); the prefix helps secret scanners. */
export const API_KEY_PREFIX = "vtm_";
const API_KEY_SK = "KEY";
export const API_KEY_PK_PREFIX = "APIKEY#";

export const hashApiKey = (key: string): string => createHash("sha256").update(key, "utf8").digest("hex");
export const isApiKeyHash = (value: string): boolean => /^[0-9a-f]{64}$/.test(value);
/**
 * Whether a bearer token has the shape of a key this store creates: anything else is never
 * hashed or looked up, so random tokens cost the authorizer no read (docs/deploy.md, "API keys").
 */
const isApiKeyShaped = (value: string): boolean => /^vtm_[A-Za-z0-9_-]{43}$/.test(value);
export const generateApiKey = (random: (size: number) => Buffer = randomBytes): string =>
  `${API_KEY_PREFIX}${random(32).toString("base64url")}`;

export const apiKeyPk = (hash: string) => `${API_KEY_PK_PREFIX}${hash}`;
/** gsi1 partition listing one tenant's keys; distinct from the `#PROCS` / `#INBOX` listings. */
const apiKeysByTenant = (tenantId: string) => `T#${tenantId}#APIKEYS`;
const apiKeyListSk = (createdAt: string, hash: string) => `${createdAt}#${hash}`;

export const ApiKeyLabel = z.string().check(z.maxLength(200));

export const ApiKeyItem = z.object({
  pk: z.string(),
  sk: z.literal(API_KEY_SK),
  type: z.literal("APIKEY"),
  hash: z.string().check(z.regex(/^[0-9a-f]{64}$/)),
  tenantId: Id,
  label: z.string(),
  createdAt: z.string(),
  revokedAt: z.optional(z.string()),
  gsi1pk: z.string(),
  gsi1sk: z.string(),
});
export type ApiKeyItem = z.infer<typeof ApiKeyItem>;

/** What listings show: never the key, only its hash. */
export interface ApiKeyRecord {
  hash: string;
  tenantId: string;
  label: string;
  createdAt: string;
  revokedAt: string | null;
}

const toApiKeyRecord = (item: ApiKeyItem): ApiKeyRecord => ({
  hash: item.hash,
  tenantId: item.tenantId,
  label: item.label,
  createdAt: item.createdAt,
  revokedAt: item.revokedAt ?? null,
});

/** The stored item for a new key (pure). */
export function apiKeyItem(input: { hash: string; tenantId: string; label: string; createdAt: string }): ApiKeyItem {
  return {
    pk: apiKeyPk(input.hash),
    sk: API_KEY_SK,
    type: "APIKEY",
    hash: input.hash,
    tenantId: input.tenantId,
    label: input.label,
    createdAt: input.createdAt,
    gsi1pk: apiKeysByTenant(input.tenantId),
    gsi1sk: apiKeyListSk(input.createdAt, input.hash),
  };
}

/** A key is written once: a hash collision (or a replayed create) never overwrites a tenant. */
export const createKeyParams = (tableName: string, item: ApiKeyItem): PutCommandInput =>
  guarded({ TableName: tableName, Item: item }, undefined, itemIsNew("pk"));

/** Consistent read: a key works the moment `keys create` returns, and stops when revoked. */
export const resolveKeyParams = (tableName: string, hash: string): GetCommandInput => ({
  TableName: tableName,
  Key: { pk: apiKeyPk(hash), sk: API_KEY_SK },
  ConsistentRead: true,
});

/** Revocation keeps the item (audit) and stamps it once. */
export const revokeKeyParams = (tableName: string, hash: string, at: string): UpdateCommandInput =>
  guarded(
    {
      TableName: tableName,
      Key: { pk: apiKeyPk(hash), sk: API_KEY_SK },
      ReturnValues: "ALL_NEW",
      ReturnValuesOnConditionCheckFailure: "ALL_OLD",
    },
    { expression: "SET revokedAt = :at", values: { ":at": at } },
    itemExists("pk"),
    absent("revokedAt"),
  );

/** Newest first. */
export const listKeysParams = (tableName: string, tenantId: string): QueryCommandInput => ({
  TableName: tableName,
  IndexName: tableIndexes.gsi1.name,
  KeyConditionExpression: "#pk = :pk",
  ExpressionAttributeNames: { "#pk": tableIndexes.gsi1.partitionKey },
  ExpressionAttributeValues: { ":pk": apiKeysByTenant(tenantId) },
  ScanIndexForward: false,
});

export interface ApiKeyStoreOptions {
  client: DynamoDBDocumentClient;
  tableName: string;
  now?: () => Date;
  random?: (size: number) => Buffer;
}

export interface ApiKeyStore {
  /** Creates a key for the tenant; the returned `key` is the only copy that will ever exist. */
  create(input: { tenantId: string; label?: string }): Promise<{ key: string; record: ApiKeyRecord }>;
  /** The tenant of a live key, or null for unknown, revoked or malformed keys. */
  resolve(key: string): Promise<{ tenantId: string; hash: string } | null>;
  get(hash: string): Promise<ApiKeyRecord | null>;
  revoke(hash: string): Promise<Outcome<"not_found" | "already_revoked", { record: ApiKeyRecord }>>;
  /** Every key of the tenant, revoked included, newest first. */
  list(tenantId: string): Promise<ApiKeyRecord[]>;
}

export function createApiKeyStore(options: ApiKeyStoreOptions): ApiKeyStore {
  const { client, tableName } = options;
  const now = options.now ?? (() => new Date());
  const random = options.random ?? randomBytes;

  const get = async (hash: string): Promise<ApiKeyItem | null> => {
    const out = await client.send(new GetCommand(resolveKeyParams(tableName, hash)));
    return out.Item ? readItem(ApiKeyItem, out.Item) : null;
  };

  return {
    async create({ tenantId, label = "" }) {
      Id.parse(tenantId);
      ApiKeyLabel.parse(label);
      const key = generateApiKey(random);
      const item = apiKeyItem({ hash: hashApiKey(key), tenantId, label, createdAt: now().toISOString() });
      await client.send(new PutCommand(createKeyParams(tableName, item)));
      return { key, record: toApiKeyRecord(item) };
    },

    async resolve(key) {
      if (!isApiKeyShaped(key)) return null;
      const hash = hashApiKey(key);
      const item = await get(hash);
      if (!item || item.revokedAt) return null;
      return { tenantId: item.tenantId, hash };
    },

    async get(hash) {
      if (!isApiKeyHash(hash)) return null;
      const item = await get(hash);
      return item ? toApiKeyRecord(item) : null;
    },

    async revoke(hash) {
      if (!isApiKeyHash(hash)) return { ok: false, reason: "not_found" };
      try {
        const out = await client.send(new UpdateCommand(revokeKeyParams(tableName, hash, now().toISOString())));
        return { ok: true, record: toApiKeyRecord(readItem(ApiKeyItem, out.Attributes)) };
      } catch (e) {
        if (e instanceof ConditionalCheckFailedException) {
          return { ok: false, reason: e.Item ? "already_revoked" : "not_found" };
        }
        throw e;
      }
    },

    async list(tenantId) {
      Id.parse(tenantId);
      const { items } = await queryAll(client, listKeysParams(tableName, tenantId));
      return items.map((item) => toApiKeyRecord(readItem(ApiKeyItem, item)));
    },
  };
}
