import { defineConfig } from "vitest/config";

// `npm run test:unit`: the pure tests of test/unit without DynamoDB Local or s3rver (no
// test/global-setup.ts). Two slow checks stay in `npm test` only: the linear-time property test
// (it times growth on inputs up to 256 KiB) and the type checks (a whole TypeScript program).
export default defineConfig({
  test: {
    include: ["test/unit/**/*.test.ts"],
    exclude: ["test/unit/linear-time.property.test.ts", "test/unit/type-checks.test.ts"],
    testTimeout: 30_000,
    pool: "forks",
    maxWorkers: 2,
    env: { AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: "true" },
  },
});
