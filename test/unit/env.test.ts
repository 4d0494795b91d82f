/**
 * The reader of the service's environment variables (core/composition/env.ts): defaults when a variable is unset
 * or blank, and a start-up error that names the variable when a value is malformed.
 */
import { describe, expect, it } from "vitest";
import { readLocalEnv, readRateLimits, readServiceEnv, readTableEnv, serviceNameOf, workerFunctionOf } from "../../core/composition/env.js";
import { AppError } from "../../core/domain/errors.js";
import { SERVICE_NAME } from "../../core/domain/service.js";
import { DEFAULT_TUNABLES } from "../../core/domain/tunables.js";
import { DEFAULT_COMPACTION_CONFIG } from "../../core/services/deps.js";

const read = (env: Record<string, string>) => readServiceEnv(env, DEFAULT_COMPACTION_CONFIG);

describe("readServiceEnv", () => {
  it("falls back to the defaults for unset and blank variables", () => {
    const config = read({ TABLE_NAME: " ", EVENT_BUS_NAME: "" });
    expect(config).toEqual({
      tableName: SERVICE_NAME,
      dynamoEndpoint: undefined,
      serviceName: SERVICE_NAME,
      eventBusName: undefined,
      tunables: DEFAULT_TUNABLES,
      leaseMs: 60_000,
      compaction: DEFAULT_COMPACTION_CONFIG,
      dailyTokenBudget: null,
    });
  });

  it("reads TENANT_DAILY_TOKEN_BUDGET: unlimited by default, else whole tokens from 1, naming the variable when malformed", () => {
    expect(read({ TENANT_DAILY_TOKEN_BUDGET: "Unlimited" }).dailyTokenBudget).toBeNull();
    expect(read({ TENANT_DAILY_TOKEN_BUDGET: " 2000000 " }).dailyTokenBudget).toBe(2_000_000);
    expect(read({ TENANT_DAILY_TOKEN_BUDGET: "1" }).dailyTokenBudget).toBe(1);
    for (const bad of ["0", "-5", "1.5", "lots", "1e400"]) {
      expect(() => read({ TENANT_DAILY_TOKEN_BUDGET: bad }), bad).toThrow(/TENANT_DAILY_TOKEN_BUDGET/);
    }
  });

  it("reads the table, endpoint, bus, service name, lease and compaction configuration", () => {
    const config = read({
      TABLE_NAME: "t1",
      DYNAMODB_ENDPOINT: "http://127.0.0.1:8000",
      EVENT_BUS_NAME: "bus",
      POWERTOOLS_SERVICE_NAME: "svc",
      COMPACTION_LEASE_MS: "330000",
      COMPACTION_EXECUTION: "inline",
      COMPACTION_MANUAL_BUDGET_MS: "2500",
    });
    expect(config).toMatchObject({
      tableName: "t1",
      dynamoEndpoint: "http://127.0.0.1:8000",
      eventBusName: "bus",
      serviceName: "svc",
      leaseMs: 330_000,
      compaction: { ...DEFAULT_COMPACTION_CONFIG, execution: "inline", manualBudgetMs: 2500 },
    });
  });

  it("refuses at startup a summary minimum above the maximum, naming the variable", () => {
    expect(() => read({ SUMMARY_MIN_TOKENS: "1000", SUMMARY_MAX_TOKENS: "500" })).toThrow(/SUMMARY_MIN_TOKENS \(summaryMinTokens\): summaryMinTokens must be at most summaryMaxTokens/);
    expect(read({ SUMMARY_MAX_TOKENS: "300" }).tunables).toMatchObject({ summaryMinTokens: 300, summaryMaxTokens: 300 });
  });

  it("fails with the variable's name for a malformed value", () => {
    expect(() => read({ COMPACTION_LEASE_MS: "5s" })).toThrow(/COMPACTION_LEASE_MS must be a whole number of milliseconds from 100 to 900000, got '5s'/);
    expect(() => read({ COMPACTION_EXECUTION: "later" })).toThrow(/COMPACTION_EXECUTION must be 'background' or 'inline'/);
    expect(() => read({ COMPACTION_QUEUE_TIMEOUT_MS: "10" })).toThrow(/COMPACTION_QUEUE_TIMEOUT_MS/);
    expect(() => read({ COMPACTION_SOFT_THRESHOLD: "lots" })).toThrow(/expected a number, got 'lots'/);
  });
});

describe("the smaller readers", () => {
  it("reads what the authorizer and the summarizing functions need, and nothing more", () => {
    expect(readTableEnv({ TABLE_NAME: "keys", COMPACTION_LEASE_MS: "bad" })).toEqual({ tableName: "keys", dynamoEndpoint: undefined });
    expect(serviceNameOf({})).toBe(SERVICE_NAME);
    expect(workerFunctionOf({ COMPACTION_WORKER_FUNCTION: " worker-fn " })).toBe("worker-fn");
    expect(workerFunctionOf({})).toBeUndefined();
  });

  it("reads the local runner's port, keys and data folder", () => {
    expect(readLocalEnv({})).toEqual({ apiKeys: undefined, port: 3000, dataDir: undefined });
    expect(readLocalEnv({ PORT: "0", MEMORY_API_KEYS: "k=t", MEMORY_DATA_DIR: "data" })).toEqual({ apiKeys: "k=t", port: 0, dataDir: "data" });
    expect(() => readLocalEnv({ PORT: "eighty" })).toThrow(/PORT must be a whole number from 0 to 65535, got 'eighty'/);
  });
});

describe("readRateLimits", () => {
  it("counts nothing when neither variable is set", () => {
    expect(readRateLimits({})).toBeUndefined();
    expect(readRateLimits({ TENANT_RATE_LIMIT: " ", TENANT_RATE_LIMITS: "" })).toBeUndefined();
  });

  it("reads the stage limit and the operator's per-tenant limits (the default applies to the others)", () => {
    expect(readRateLimits({ TENANT_RATE_LIMIT: "30" })).toEqual({ perSecond: 30, perTenant: new Map() });
    expect(readRateLimits({ TENANT_RATE_LIMITS: " team-a=50 , team-b=5" })).toEqual({
      perSecond: 20,
      perTenant: new Map([["team-a", 50], ["team-b", 5]]),
    });
    expect(readRateLimits({ TENANT_RATE_LIMIT: "0", TENANT_RATE_LIMITS: "noisy=2" })).toEqual({ perSecond: 0, perTenant: new Map([["noisy", 2]]) });
  });

  it("fails with the variable's name for a malformed value", () => {
    expect(() => readRateLimits({ TENANT_RATE_LIMIT: "fast" })).toThrow(/TENANT_RATE_LIMIT must be a whole number of requests per second from 0 to 500, got 'fast'/);
    expect(() => readRateLimits({ TENANT_RATE_LIMIT: "501" })).toThrow(/TENANT_RATE_LIMIT/);
    expect(() => readRateLimits({ TENANT_RATE_LIMIT: "2.5" })).toThrow(/TENANT_RATE_LIMIT/);
    expect(() => readRateLimits({ TENANT_RATE_LIMITS: "team-a=0" })).toThrow(/TENANT_RATE_LIMITS must be a whole number of requests per second from 1 to 500, got '0'/);
    expect(() => readRateLimits({ TENANT_RATE_LIMITS: "team-a" })).toThrow(/not tenant=requests-per-second/);
    expect(() => readRateLimits({ TENANT_RATE_LIMITS: "a#b=3" })).toThrow(/not tenant=requests-per-second/);
    expect(() => readRateLimits({ TENANT_RATE_LIMITS: "a=3,a=4" })).toThrow(/listed twice/);
  });

  it("reads every variable one way: trimmed, blank as unset, whole numbers in digits only", () => {
    expect(readLocalEnv({ PORT: " 8080 ", MEMORY_API_KEYS: "  " })).toEqual({ apiKeys: undefined, port: 8080, dataDir: undefined });
    expect(() => read({ COMPACTION_LEASE_MS: "1e3" })).toThrow(/COMPACTION_LEASE_MS must be a whole number of milliseconds/);
    expect(() => readLocalEnv({ PORT: "8080.0" })).toThrow(/PORT must be a whole number/);
  });

  it("names a malformed tunable in details.fields by path, like every other input error", () => {
    const caught = (() => {
      try {
        read({ COMPACTION_SOFT_THRESHOLD: "lots" });
      } catch (e) {
        return e;
      }
    })();
    expect(caught).toBeInstanceOf(AppError);
    expect((caught as AppError).details).toEqual({ fields: ["softThreshold"], issues: [{ field: "softThreshold", message: "expected a number" }] });
  });
});
