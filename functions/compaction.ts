/** Lambda: the HTTP routes that may summarize (compaction, range compaction, turns). */
import { handle } from "hono/aws-lambda";
import { createHttpApp } from "./http/app.js";
import { authorizerTenant } from "./http/auth.js";
import { compactionGroups } from "./http/groups.js";
import { createSummarizingDeps } from "./summarizing-deps.js";

const app = createHttpApp({ deps: createSummarizingDeps(), resolveTenant: authorizerTenant, groups: compactionGroups });

export const handler = handle(app);
