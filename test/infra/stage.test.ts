/** Stage naming and the stage settings read from the deploying shell. */
import { describe, expect, it } from "vitest";
import { HANDLERS } from "../../stacks/handlers.js";
import { functionEnvironment } from "../../stacks/service-function.js";
import { readAlarmSettings } from "../../stacks/alarm-settings.js";
import { isDevStage, readStageConfig } from "../../stacks/stage.js";

/** A key for the cursors, which a stage other than a dev one needs. */
const KEYED = { VANCETOPE_CURSOR_SECRET: "k".repeat(40) };

describe("stages", () => {
  it.each(["dev", "local", "dev-alice", "pr-123"])("%s is a disposable dev stage", (stage) => {
    expect(isDevStage(stage)).toBe(true);
  });

  it.each(["team-a", "prod", "develop", "devops", "pr", "preview", "localhost"])("%s keeps its data", (stage) => {
    expect(isDevStage(stage)).toBe(false);
  });

  it("reads the summarizer choice and names the key parameters per stage, never reading a key", () => {
    const config = readStageConfig("team-a", {
      ...KEYED,
      SUMMARIZER: "openai",
      SUMMARIZER_MODEL: "gpt-4.1-mini",
      OPENAI_BASE_URL: "https://vllm.internal/v1",
      OPENAI_API_KEY: "sk-must-not-be-read",
      VANCETOPE_EVENT_PUBLISHERS: " 111111111111=team-a, 222222222222=* ,111111111111=team-b",
    });
    expect(config).toEqual({
      stage: "team-a",
      dev: false,
      summarizer: "openai",
      summarizerModel: "gpt-4.1-mini",
      baseUrls: { openai: "https://vllm.internal/v1" },
      secretParams: {
        openai: "/vancetope-memory/team-a/openai-api-key",
        anthropic: "/vancetope-memory/team-a/anthropic-api-key",
      },
      secretsKmsKeyArn: undefined,
      eventPublishers: "111111111111=team-a,111111111111=team-b,222222222222=*",
      eventPublisherAccounts: ["111111111111", "222222222222"],
      tenantRateLimit: 20,
      tenantRateLimits: "",
      cursorSecret: "k".repeat(40),
      workerReservedConcurrency: 10,
      tenantDailyTokenBudget: undefined,
      alarms: readAlarmSettings({}),
    });
    expect(JSON.stringify(config)).not.toContain("sk-must-not-be-read");
  });

  it("reads the cursors' signing key for the functions that serve paged listings, and requires one outside dev stages", () => {
    expect(readStageConfig("team-a", { VANCETOPE_CURSOR_SECRET: ` ${"k".repeat(40)} ` }).cursorSecret).toBe("k".repeat(40));
    expect(() => readStageConfig("team-a", {})).toThrow(/VANCETOPE_CURSOR_SECRET is required for stage 'team-a'/);
    expect(readStageConfig("dev-a", {}).cursorSecret).toBeUndefined();
    const config = readStageConfig("team-a", { VANCETOPE_CURSOR_SECRET: "k".repeat(40) });
    for (const [name, spec] of Object.entries(HANDLERS)) {
      const env = functionEnvironment(spec, { config, tableName: "t" });
      // The plain routes page listings; the summarizing routes page exports.
      expect(env.CURSOR_SECRET, name).toBe(name === "plainRoutes" || name === "summarizingRoutes" ? "k".repeat(40) : undefined);
    }
    expect(functionEnvironment(HANDLERS.plainRoutes, { config: readStageConfig("dev-a", {}), tableName: "t" }).CURSOR_SECRET).toBeUndefined();
  });

  it("defaults to no explicit summarizer, so the function picks by which key parameter exists", () => {
    expect(readStageConfig("dev", {})).toMatchObject({
      summarizer: undefined,
      summarizerModel: undefined,
      eventPublishers: "",
      eventPublisherAccounts: [],
    });
  });

  it("reads the per-tenant request rate: 20 per second by default, the operator's limits per tenant", () => {
    expect(readStageConfig("team-a", KEYED)).toMatchObject({ tenantRateLimit: 20, tenantRateLimits: "" });
    expect(readStageConfig("team-a", { ...KEYED, TENANT_RATE_LIMIT: "50", TENANT_RATE_LIMITS: " batch=5, ui=100 " })).toMatchObject({
      tenantRateLimit: 50,
      tenantRateLimits: "batch=5,ui=100",
    });
    expect(readStageConfig("team-a", { ...KEYED, TENANT_RATE_LIMIT: "0" })).toMatchObject({ tenantRateLimit: 0 });
  });

  it("reserves 10 concurrent workers unless the shell says otherwise (or none), and passes a daily token budget on", () => {
    expect(readStageConfig("team-a", { ...KEYED, VANCETOPE_WORKER_CONCURRENCY: " 25 " }).workerReservedConcurrency).toBe(25);
    expect(readStageConfig("team-a", { ...KEYED, VANCETOPE_WORKER_CONCURRENCY: "none" }).workerReservedConcurrency).toBeUndefined();
    expect(readStageConfig("team-a", { ...KEYED, TENANT_DAILY_TOKEN_BUDGET: "2000000" }).tenantDailyTokenBudget).toBe("2000000");
    expect(readStageConfig("team-a", { ...KEYED, TENANT_DAILY_TOKEN_BUDGET: "unlimited" }).tenantDailyTokenBudget).toBe("unlimited");
  });

  it.each([
    [{ TENANT_RATE_LIMIT: "lots" }, /TENANT_RATE_LIMIT must be a whole number/],
    [{ TENANT_RATE_LIMITS: "a=b" }, /TENANT_RATE_LIMITS must be a whole number/],
    [{ VANCETOPE_WORKER_CONCURRENCY: "0" }, /VANCETOPE_WORKER_CONCURRENCY/],
    [{ VANCETOPE_WORKER_CONCURRENCY: "2.5" }, /VANCETOPE_WORKER_CONCURRENCY/],
    [{ TENANT_DAILY_TOKEN_BUDGET: "lots" }, /TENANT_DAILY_TOKEN_BUDGET/],
    [{ SUMMARIZER: "gpt" }, /SUMMARIZER must be one of/],
    [{ VANCETOPE_EVENT_PUBLISHERS: "12345=team-a" }, /12-digit/],
    [{ VANCETOPE_EVENT_PUBLISHERS: "111111111111" }, /VANCETOPE_EVENT_PUBLISHERS: '111111111111' is not/],
    // An account list without tenants would let each account act for every tenant.
    [{ VANCETOPE_EVENT_PUBLISHER_ACCOUNTS: "111111111111" }, /replaced by VANCETOPE_EVENT_PUBLISHERS/],
    [{ VANCETOPE_SECRETS_KMS_KEY_ARN: "alias/aws/ssm" }, /KMS key ARN/],
    [{ VANCETOPE_CURSOR_SECRET: "too-short" }, /at least 32 characters/],
  ])("refuses to synthesize with %j", (env, message) => {
    expect(() => readStageConfig("team-a", { ...KEYED, ...KEYED, ...env })).toThrow(message);
  });

  it("refuses stage names SST cannot deploy", () => {
    expect(() => readStageConfig("1team", {})).toThrow(/invalid stage/);
    expect(() => readStageConfig("team_a", {})).toThrow(/invalid stage/);
  });
});
