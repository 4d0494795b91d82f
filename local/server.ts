/**
 * The local runner as a library: DynamoDB Local, the table, the in-process event bus and every
 * route on one port. `npm start`, the end-to-end tests, the demo and the benchmarks all use it.
 */
import { serve, type ServerType } from "@hono/node-server";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import type { Context } from "hono";
import { createDocumentClient } from "../core/adapters/dynamodb/client.js";
import { createTable } from "../core/adapters/dynamodb/create-table.js";
import { createDynamoStore } from "../core/adapters/dynamodb/store.js";
import { createLocalBus, type LocalBus } from "../core/adapters/events/local-bus.js";
import { createPowertoolsLog, silentLog } from "../core/adapters/log.js";
import { cursorSecretOf, readBlobEnv, readLocalEnv, readRateLimits, readTableEnv, serviceNameOf } from "../core/composition/env.js";
import { createRecordingMetrics } from "../core/adapters/metrics/emf-metrics.js";
import type { Log } from "../core/ports/logger.js";
import type { ServiceDeps } from "../core/services/deps.js";
import { EVENTS } from "../core/domain/events.js";
import { createHttpApp } from "../core/adapters/http/app.js";
import { createApiKeyStore } from "../core/adapters/dynamodb/api-keys.js";
import { bearerKey, DEFAULT_LOCAL_KEYS, parseApiKeys } from "../core/adapters/http/auth.js";
import { allRouteGroups } from "../core/adapters/http/groups.js";
import { openApiRoute } from "../core/adapters/http/openapi-route.js";
import { createDeps } from "../core/composition/create-deps.js";
import { withBlobStore } from "../core/composition/local-blob-store.js";
import { createCachedBlobReader } from "../core/services/blob-reader.js";
import { createDynamoRateLimiter } from "../core/adapters/dynamodb/rate-limiter.js";
import { inspectorRoutes, OPENAPI_DOCUMENT } from "./inspector-routes.js";
import { localPublishers, localRoutes } from "./local-routes.js";
import { startDynamoLocal, type DynamoLocal } from "./dynamodb-local.js";
import { receivePlanCompleted, receiveInboxAnswered, handleCompactionRequested, handleProcessEraseRequested } from "../core/adapters/events/handlers.js";

/** How long an idle keep-alive connection stays open (Node's default is 5 s). */
const IDLE_CONNECTION_MS = 65_000;

export interface LocalServiceOptions {
  port?: number;
  host?: string;
  env?: NodeJS.ProcessEnv;
  /** Use a running engine instead of starting one (tests share one per run). */
  dynamoEndpoint?: string;
  tableName?: string;
  dataDir?: string;
  quiet?: boolean;
  /** Replace parts of the composition (tests inject fakes for the summarizer, a blob store). */
  overrides?: Partial<Pick<ServiceDeps, "summarizer" | "store" | "metrics" | "blobs" | "importsPerMinute">>;
}

export interface LocalService {
  url: string;
  port: number;
  apiKeys: Map<string, string>;
  deps: ServiceDeps;
  bus: LocalBus;
  dynamoEndpoint: string;
  tableName: string;
  /** Where blobs are stored: `s3://<bucket>` (BLOB_BUCKET) or a folder; `temporary`: removed on stop. */
  blobStorage: { location: string; temporary: boolean };
  stop(): Promise<void>;
}

/**
 * Where the local runner keeps blobs (docs/configuration.md, "Blob storage"): BLOB_BUCKET or
 * BLOB_DIR when set; else next to DynamoDB Local's data (MEMORY_DATA_DIR), or, with the table in
 * memory, a temporary folder removed on stop.
 */
async function localBlobs(env: NodeJS.ProcessEnv, dataDir: string | undefined) {
  const config = readBlobEnv(env);
  if (config.bucket) return { location: `s3://${config.bucket}${config.s3Endpoint ? ` at ${config.s3Endpoint}` : ""}` };
  if (config.dir) return { location: path.resolve(config.dir) };
  if (dataDir) return { localDir: dataDir, location: path.resolve(dataDir, "blobs") };
  const temp = await mkdtemp(path.join(tmpdir(), "vtm-local-blobs-"));
  return { localDir: temp, location: path.join(temp, "blobs"), temp };
}

/** The runner's port is taken: nothing was started (or all that was is stopped again). */
export class PortInUseError extends Error {
  override readonly name = "PortInUseError";
  constructor(
    readonly port: number,
    readonly host: string,
    options?: { cause?: unknown },
  ) {
    super(
      `port ${port} on ${host} is in use (another \`npm start\`?); stop that process, or pick another port: PORT=${port === 3000 ? 3001 : port + 1} npm start`,
      options,
    );
  }
}

/** Rejects with PortInUseError when `port` cannot be listened on; 0 (any free port) always can. */
export async function checkPortFree(port: number, host: string): Promise<void> {
  if (port === 0) return;
  await new Promise<void>((resolve, reject) => {
    const probe = createServer();
    probe.once("error", (e: NodeJS.ErrnoException) => reject(e.code === "EADDRINUSE" ? new PortInUseError(port, host, { cause: e }) : e));
    probe.listen(port, host, () => probe.close(() => resolve()));
  });
}

/** The names the runner answers to, besides the address it listens on. */
const LOOPBACK_NAMES = new Set(["localhost", "127.0.0.1", "[::1]"]);

/**
 * Whether a request's `Host` names this runner: a loopback name or its own address, any port. A
 * page that rebinds its domain to 127.0.0.1 reaches the port with its own name as `Host`, and is
 * refused before any route (or the key check) runs.
 */
export function hostAllowed(host: string | null, listening: string): boolean {
  if (!host) return false;
  const name = host.replace(/:\d+$/, "").toLowerCase();
  return LOOPBACK_NAMES.has(name) || name === listening;
}

const misdirected = () =>
  new Response(JSON.stringify({ error: { code: "request.misdirected", message: "this runner answers only localhost, 127.0.0.1 and [::1] as Host" } }), {
    status: 421,
    headers: { "content-type": "application/json" },
  });

export async function startLocalService(options: LocalServiceOptions = {}): Promise<LocalService> {
  const env = options.env ?? process.env;
  const local = readLocalEnv(env);
  const log: Log = options.quiet ? silentLog : createPowertoolsLog(serviceNameOf(env));
  const apiKeys = parseApiKeys(local.apiKeys ?? DEFAULT_LOCAL_KEYS);
  const host = options.host ?? "127.0.0.1";
  const wantedPort = options.port ?? local.port;
  // Before anything starts: a busy port must not leave a DynamoDB Local behind.
  await checkPortFree(wantedPort, host);
  let engine: DynamoLocal | undefined;
  let blobs: Awaited<ReturnType<typeof localBlobs>> | undefined;
  try {
    const endpoint =
      options.dynamoEndpoint ?? (engine = await startDynamoLocal({ dataDir: options.dataDir ?? local.dataDir })).endpoint;
    blobs = await localBlobs(env, options.dataDir ?? local.dataDir);
    const tableName = options.tableName ?? readTableEnv(env).tableName;
    const client = createDocumentClient({ endpoint });
    await createTable(client, tableName);
    const bus = createLocalBus(log);
    const deps = withBlobStore(createDeps({
      env,
      log,
      store: options.overrides?.store ?? createDynamoStore({ client, tableName }),
      events: bus,
      metrics: options.overrides?.metrics ?? createRecordingMetrics(),
      // Chosen from the environment once, loaded on first use: no LLM SDK is imported at start.
      summarizerFactory: async () => (await import("../core/adapters/llm/create-summarizer.js")).createSummarizerFromEnv(env),
    }), env, { localDir: blobs.localDir });
    if (options.overrides?.summarizer) deps.summarizer = options.overrides.summarizer;
    if (options.overrides?.importsPerMinute) deps.importsPerMinute = options.overrides.importsPerMinute;
    // A given store replaces the folder, and reads go through a cache over it.
    if (options.overrides?.blobs) Object.assign(deps, { blobs: options.overrides.blobs, blobReader: createCachedBlobReader(options.overrides.blobs) });
    // Keys from MEMORY_API_KEYS, then keys created with `npm run keys` (hashed in the table).
    const tableKeys = createApiKeyStore({ client, tableName });
    const tenantOfKey = async (key: string) => apiKeys.get(key) ?? (await tableKeys.resolve(key))?.tenantId ?? null;
    const resolveTenant = (c: Context) => {
      const key = bearerKey(c);
      return key ? tenantOfKey(key) : null;
    };
    // Off unless TENANT_RATE_LIMIT or TENANT_RATE_LIMITS is set (docs/configuration.md, "Environment").
    const limits = readRateLimits(env);
    const rateLimiter = limits ? createDynamoRateLimiter({ client, tableName, limits, log }) : undefined;
    const app = createHttpApp({
      deps,
      resolveTenant,
      groups: [...allRouteGroups, openApiRoute(() => readFile(OPENAPI_DOCUMENT, "utf8"))],
      cursorSecret: cursorSecretOf(env),
      rateLimiter,
    });
    // The same handlers the EventBridge rules reach in AWS, bound to the publisher the same way:
    // an event put through /local/eventbridge acts only for its key's tenant.
    bus.subscribe(EVENTS.PlanCompleted, async (e) => void (await receivePlanCompleted(deps, localPublishers, e)));
    bus.subscribe(EVENTS.InboxItemAnswered, async (e) => void (await receiveInboxAnswered(deps, localPublishers, e)));
    // The compaction worker, in process: the bus delivers at least once, like the EventBridge rule.
    bus.subscribe(EVENTS.CompactionRequested, async (e) => void (await handleCompactionRequested(deps, e.detail)));
    bus.subscribe(EVENTS.ProcessEraseRequested, async (e) => void (await handleProcessEraseRequested(deps, e.detail)));
    localRoutes(app, { bus, tenantOfKey });
    inspectorRoutes(app, { defaultKey: local.apiKeys === undefined ? [...apiKeys.keys()][0] : undefined });
    const server: ServerType = await new Promise((resolve, reject) => {
      const fetch: typeof app.fetch = (req, ...rest) => (hostAllowed(req.headers.get("host"), host) ? app.fetch(req, ...rest) : misdirected());
      const s = serve({ fetch, port: wantedPort, hostname: host }, () => resolve(s));
      // Longer than a client keeps an idle pooled socket (it reads this from `Keep-Alive`), so
      // the client closes first: with Node's 5 s, a request on a socket idle about that long
      // could meet the runner closing it and fail with ECONNRESET.
      Object.assign(s, { keepAliveTimeout: IDLE_CONNECTION_MS, headersTimeout: IDLE_CONNECTION_MS + 1_000 });
      // Taken since the check (another runner starting at the same time): the same answer.
      s.once("error", (e: NodeJS.ErrnoException) => reject(e.code === "EADDRINUSE" ? new PortInUseError(wantedPort, host, { cause: e }) : e));
    });
    const temp = blobs.temp;
    const address = server.address();
    const port = typeof address === "object" && address ? address.port : 0;
    let stopping: Promise<void> | undefined;
    return {
      url: `http://${host}:${port}`,
      port,
      apiKeys,
      deps,
      bus,
      dynamoEndpoint: endpoint,
      tableName,
      blobStorage: { location: blobs.location, temporary: temp !== undefined },
      stop: () =>
        (stopping ??= (async () => {
          await new Promise<void>((r) => server.close(() => r()));
          await bus.drain();
          await engine?.stop();
          if (temp) await rm(temp, { recursive: true, force: true });
        })()),
    };
  } catch (e) {
    await engine?.stop();
    if (blobs?.temp) await rm(blobs.temp, { recursive: true, force: true });
    throw e;
  }
}
