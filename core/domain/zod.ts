/**
 * The schema library every module of the service builds on: zod's light build (`zod/mini`), whose
 * schemas are plain functions instead of objects carrying dozens of methods each. It keeps the
 * Lambda bundles small and their cold start short (docs/benchmarks.md, "Cold start"). Unlike the
 * full build it loads no messages by itself: the English ones are set here, once, before any
 * schema is used, so a 400 names the problem the same way everywhere. Import it as a namespace
 * (`import * as z from "./zod.js"`) so that bundles keep only the parts they use.
 */
import { config } from "zod/mini";
import en from "zod/v4/locales/en.js";

config(en());

export * from "zod/mini";
/** What a failed `parse` throws (a named import: `z.core` as a value would pull all of zod in). */
export { $ZodError as ZodError } from "zod/v4/core";
