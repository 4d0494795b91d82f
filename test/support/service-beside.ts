/**
 * The local service (./service.ts) beside a stand-in for a model provider (the provider emulator of
 * tools/provider-emulator, or tools/llm-wire-server.ts) for the tests of one file or describe:
 * started before them, stopped after them. The provider starts first, so the service's
 * environment can name its url (a summarizer calling it).
 */
import { afterAll, beforeAll } from "vitest";
import { createMemoryClient, type MemoryClient } from "../../client/index.js";
import { KEY_A, startTestService } from "./service.js";

interface Provider {
  readonly url: string;
  close(): Promise<void>;
}

export function serviceBeside<P extends Provider>(startProvider: () => Promise<P>, env?: (providerUrl: string) => Record<string, string>) {
  let ctx: Awaited<ReturnType<typeof startTestService>> | undefined;
  let provider: P | undefined;
  let memory: MemoryClient | undefined;
  beforeAll(async () => {
    provider = await startProvider();
    ctx = await startTestService(env ? { env: env(provider.url) } : {});
    memory = createMemoryClient({ baseUrl: ctx.service.url, apiKey: KEY_A });
  });
  afterAll(async () => {
    await provider?.close();
    await ctx?.service.stop();
  });
  const started = <T>(value: T | undefined): T => {
    if (value === undefined) throw new Error("the service and its provider start in beforeAll");
    return value;
  };
  return {
    get ctx() {
      return started(ctx);
    },
    get provider() {
      return started(provider);
    },
    /** The npm client over the service, with tenant A's key. */
    get memory() {
      return started(memory);
    },
  };
}
