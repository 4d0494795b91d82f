/**
 * `npm run processes -- <export|import>`: a process's export written to a file, and a file of any
 * size imported into a new process id, through the same services as the HTTP routes but straight
 * to a stage's table (TABLE_NAME; DYNAMODB_ENDPOINT for DynamoDB Local), past the 400 KB body
 * limit of `POST .../import` (docs/api.md, "Export and import").
 *
 * @example
 * TABLE_NAME=team-a-vancetope-memory-table npm run processes -- export --tenant team-a --process chat-1 --file chat-1.ndjson
 * npm run processes -- import --tenant team-b --process chat-1-copy --file chat-1.ndjson [--remap-ids] [--json]
 */
import { once } from "node:events";
import { createBlobStore } from "../core/composition/local-blob-store.js";
import { createCachedBlobReader } from "../core/services/blob-reader.js";
import { createReadStream, createWriteStream, type WriteStream } from "node:fs";
import { rm, stat } from "node:fs/promises";
import { createInterface } from "node:readline";
import { createDynamoStore } from "../core/adapters/dynamodb/store.js";
import { silentLog } from "../core/adapters/log.js";
import { createRecordingMetrics } from "../core/adapters/metrics/emf-metrics.js";
import { createDeps } from "../core/composition/create-deps.js";
import { AppError } from "../core/domain/errors.js";
import { Id } from "../core/domain/fields.js";
import type { BlobStore } from "../core/ports/blob-store.js";
import type { Store } from "../core/ports/store.js";
import { exportPage, type ExportCursor } from "../core/services/process-export.js";
import { importExport } from "../core/services/process-import.js";
import { runAsScript, runCommandLine, TABLE_ENVIRONMENT, tableFrom, type TableCliIo, tenantArg, UsageError } from "./cli.js";

export const USAGE = `usage:
  processes export --tenant <tenantId> --process <processId> --file <path>
      writes the process's export (NDJSON, every page) to the file
  processes import --tenant <tenantId> --process <new processId> --file <path> [--remap-ids] [--json]
      validates every line of the file, then writes it into the new process id
${TABLE_ENVIRONMENT}`;

export interface ProcessesCliIo extends TableCliIo {
  /** Injected by tests; built from env otherwise. */
  store?: Store;
  /** Where the large parts of native content are read (export) and put (import); injected by tests. */
  blobs?: BlobStore;
}

function processArg(value: string | undefined): string {
  if (!value) throw new UsageError("--process is required");
  const parsed = Id.safeParse(value);
  if (!parsed.success) throw new UsageError(`--process '${value}': ${parsed.error.issues[0]?.message}`);
  return parsed.data;
}

/**
 * The file's lines, from the first on each call; refused when the file's size or modification
 * time is not what the first call saw (the import reads it twice: to validate, then to write).
 */
export function fileLines(path: string): () => AsyncIterable<string> {
  let first: { size: number; mtimeMs: number } | undefined;
  return async function* lines() {
    const { size, mtimeMs } = await stat(path);
    first ??= { size, mtimeMs };
    if (size !== first.size || mtimeMs !== first.mtimeMs) throw new Error(`${path} changed while it was imported`);
    // Only one line at a time is held; a final "\n" ends the last line and starts none.
    const input = createReadStream(path, { encoding: "utf8" });
    try {
      yield* createInterface({ input, crlfDelay: Infinity });
    } finally {
      // A refused line ends the reading early: the file is closed then too.
      input.destroy();
    }
  };
}

/** An input or conflict error of the services, as the HTTP API would name it. */
function refusal(e: unknown, io: ProcessesCliIo): number {
  if (!(e instanceof AppError) || e.kind === "internal") throw e;
  io.err(`refused (${e.code}): ${e.message}`);
  return 1;
}

/** Runs one command; resolves to the process exit code (0 ok, 1 refused, 2 usage). */
export async function runProcessesCli(argv: string[], io: ProcessesCliIo): Promise<number> {
  const options = {
    tenant: { type: "string" },
    process: { type: "string" },
    file: { type: "string" },
    "remap-ids": { type: "boolean", default: false },
    json: { type: "boolean", default: false },
  } as const;
  return runCommandLine(argv, USAGE, io, options, async (command, values) => {
    if (command !== "export" && command !== "import") throw new UsageError(`unknown command '${command}'`);
    const key = { tenantId: tenantArg(values.tenant), processId: processArg(values.process) };
    if (!values.file) throw new UsageError("--file is required");
    const file = values.file;
    const deps = createDeps({
      env: {},
      store: io.store ?? createDynamoStore(tableFrom(io.env)),
      log: silentLog,
      metrics: createRecordingMetrics(),
      events: { publish: async () => {} },
    });
    // The stage's blob store (BLOB_BUCKET, or BLOB_DIR locally) holds the large parts of native content.
    const blobs = io.blobs ?? createBlobStore(io.env);
    if (blobs) Object.assign(deps, { blobs, blobReader: createCachedBlobReader(blobs) });

    if (command === "export") {
      // Opened once the first page is read: an unknown process leaves no file behind.
      let out: WriteStream | undefined;
      let bytes = 0;
      let pages = 0;
      try {
        let cursor: ExportCursor | undefined;
        do {
          const page = await exportPage(deps, key, cursor);
          out ??= createWriteStream(file, { encoding: "utf8" });
          bytes += Buffer.byteLength(page.text);
          pages++;
          if (!out.write(page.text)) await once(out, "drain");
          cursor = page.next;
        } while (cursor);
      } catch (e) {
        // Deleted between two pages: no file rather than a part of one.
        if (out) {
          out.destroy();
          await once(out, "close");
          await rm(file, { force: true });
        }
        return refusal(e, io);
      }
      out.end();
      await once(out, "finish");
      const summary = { tenantId: key.tenantId, processId: key.processId, file, bytes, pages };
      io.out(values.json ? JSON.stringify(summary) : `exported process '${key.processId}' to ${file}: ${bytes} bytes in ${pages} pages`);
      return 0;
    }

    await stat(file).catch((e: Error) => {
      throw new UsageError(`--file ${file}: ${e.message}`);
    });
    try {
      const result = await importExport(deps, key, fileLines(file), { remapIds: values["remap-ids"] });
      const { messages, memories, settings } = result;
      const summary = { tenantId: key.tenantId, processId: key.processId, messages, memories, settings };
      io.out(
        values.json
          ? JSON.stringify(summary)
          : `imported ${messages} messages and ${memories} memories into process '${key.processId}' (tenant '${key.tenantId}'); project settings: ${settings}`,
      );
      return 0;
    } catch (e) {
      return refusal(e, io);
    }
  });
}

await runAsScript(import.meta.url, runProcessesCli);
