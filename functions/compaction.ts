/** Lambda: the HTTP routes that may summarize (compaction, range compaction, turns). */
import { handle } from "hono/aws-lambda";
import { createHttpApp } from "../core/adapters/http/app.js";
import { authorizerTenant } from "../core/adapters/http/auth.js";
import { compactionGroups } from "../core/adapters/http/groups.js";
import { createSummarizingDeps } from "../core/composition/summarizing-deps.js";

const app = createHttpApp({ deps: createSummarizingDeps(), resolveTenant: authorizerTenant, groups: compactionGroups });

export const handler = handle(app);
