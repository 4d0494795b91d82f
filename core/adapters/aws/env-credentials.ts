/**
 * The AWS SDK's credential provider inside the Lambda bundles (stacks/bundling.ts aliases
 * `@aws-sdk/credential-provider-node` to this module). Lambda hands a function its role's keys in
 * the environment (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN), which is the
 * first link of the SDK's default chain and the one that answers there; the other links (profile
 * files, SSO, web identity, container and instance metadata, with the STS and SSO clients they
 * carry) can never be reached in a function and cost about 100 kB of every bundle
 * (docs/deploy.md, "Bundles"). Outside the bundles (local runner, tests) the SDK's own chain runs.
 */
import { fromEnv, type FromEnvInit } from "@aws-sdk/credential-provider-env";

/** Same name and shape as `defaultProvider` of `@aws-sdk/credential-provider-node`. */
export const defaultProvider = (init: FromEnvInit = {}) => fromEnv(init);
