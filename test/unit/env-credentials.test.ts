/** The credential provider the Lambda bundles use: the role's keys from the environment. */
import { afterEach, describe, expect, it, vi } from "vitest";
import { defaultProvider } from "../../core/adapters/aws/env-credentials.js";

afterEach(() => vi.unstubAllEnvs());

describe("env credentials", () => {
  it("answers with the keys Lambda puts in the environment", async () => {
    vi.stubEnv("AWS_ACCESS_KEY_ID", "AKIDEXAMPLE");
    vi.stubEnv("AWS_SECRET_ACCESS_KEY", "secret");
    vi.stubEnv("AWS_SESSION_TOKEN", "token");
    await expect(defaultProvider()()).resolves.toMatchObject({ accessKeyId: "AKIDEXAMPLE", secretAccessKey: "secret", sessionToken: "token" });
  });

  it("fails, naming the variables, when they are not set", async () => {
    vi.stubEnv("AWS_ACCESS_KEY_ID", undefined);
    vi.stubEnv("AWS_SECRET_ACCESS_KEY", undefined);
    await expect(defaultProvider()()).rejects.toThrow(/AWS_ACCESS_KEY_ID|environment/);
  });
});
