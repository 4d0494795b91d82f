/** Lambda: the HTTP routes that never summarize (no LLM SDK in this bundle). */
import { handle } from "hono/aws-lambda";
import { createHttpApp } from "./http/app.js";
import { authorizerTenant } from "./http/auth.js";
import { apiGroups } from "./http/groups.js";
import { createDeps } from "./root.js";

const app = createHttpApp({ deps: createDeps(), resolveTenant: authorizerTenant, groups: apiGroups });

export const handler = handle(app);
