/** Stage naming and the stage settings read from the deploying shell. */
import { describe, expect, it } from "vitest";
import { isDevStage, readStageConfig } from "../../stacks/stage.js";

describe("stages", () => {
  it.each(["dev", "local", "dev-alice", "pr-123"])("%s is a disposable dev stage", (stage) => {
    expect(isDevStage(stage)).toBe(true);
  });

  it.each(["team-a", "prod", "develop", "devops", "pr", "preview", "localhost"])("%s keeps its data", (stage) => {
    expect(isDevStage(stage)).toBe(false);
  });

  it("reads the summarizer choice and names the key parameters per stage, never reading a key", () => {
    const config = readStageConfig("team-a", {
      SUMMARIZER: "openai",
      SUMMARIZER_MODEL: "gpt-4.1-mini",
      OPENAI_BASE_URL: "https://vllm.internal/v1",
      OPENAI_API_KEY: "sk-must-not-be-read",
      VANCETOPE_EVENT_PUBLISHER_ACCOUNTS: " 111111111111, 222222222222 ",
    });
    expect(config).toEqual({
      stage: "team-a",
      dev: false,
      summarizer: "openai",
      summarizerModel: "gpt-4.1-mini",
      openaiBaseUrl: "https://vllm.internal/v1",
      anthropicBaseUrl: undefined,
      secretParams: {
        openai: "/vancetope-memory/team-a/openai-api-key",
        anthropic: "/vancetope-memory/team-a/anthropic-api-key",
      },
      secretsKmsKeyArn: undefined,
      eventPublisherAccounts: ["111111111111", "222222222222"],
      workerReservedConcurrency: 10,
      tenantDailyTokenBudget: undefined,
    });
    expect(JSON.stringify(config)).not.toContain("sk-must-not-be-read");
  });

  it("defaults to no explicit summarizer, so the function picks by which key parameter exists", () => {
    expect(readStageConfig("dev", {})).toMatchObject({ summarizer: undefined, summarizerModel: undefined, eventPublisherAccounts: [] });
  });

  it("reserves 10 concurrent workers unless the shell says otherwise (or none), and passes a daily token budget on", () => {
    expect(readStageConfig("team-a", { VANCETOPE_WORKER_CONCURRENCY: " 25 " }).workerReservedConcurrency).toBe(25);
    expect(readStageConfig("team-a", { VANCETOPE_WORKER_CONCURRENCY: "none" }).workerReservedConcurrency).toBeUndefined();
    expect(readStageConfig("team-a", { TENANT_DAILY_TOKEN_BUDGET: "2000000" }).tenantDailyTokenBudget).toBe("2000000");
    expect(readStageConfig("team-a", { TENANT_DAILY_TOKEN_BUDGET: "unlimited" }).tenantDailyTokenBudget).toBe("unlimited");
  });

  it.each([
    [{ VANCETOPE_WORKER_CONCURRENCY: "0" }, /VANCETOPE_WORKER_CONCURRENCY/],
    [{ VANCETOPE_WORKER_CONCURRENCY: "2.5" }, /VANCETOPE_WORKER_CONCURRENCY/],
    [{ TENANT_DAILY_TOKEN_BUDGET: "lots" }, /TENANT_DAILY_TOKEN_BUDGET/],
    [{ SUMMARIZER: "gpt" }, /SUMMARIZER must be one of/],
    [{ VANCETOPE_EVENT_PUBLISHER_ACCOUNTS: "12345" }, /12-digit/],
    [{ VANCETOPE_SECRETS_KMS_KEY_ARN: "alias/aws/ssm" }, /KMS key ARN/],
  ])("refuses to synthesize with %j", (env, message) => {
    expect(() => readStageConfig("team-a", env)).toThrow(message);
  });

  it("refuses stage names SST cannot deploy", () => {
    expect(() => readStageConfig("1team", {})).toThrow(/invalid stage/);
    expect(() => readStageConfig("team_a", {})).toThrow(/invalid stage/);
  });
});
