/**
 * The inspector page (`web/`, plain static files, no build step) on S3 + CloudFront. The page finds
 * the API through `__VANCETOPE_API_URL__`, replaced in its .html/.js files at deploy time.
 */
import { StaticSite, use, type StackContext, type StaticSiteProps } from "sst/constructs";
import { Api } from "./api.js";
import { stageConfigOf } from "./config.js";

export const WEB_DIR = "web";
export const API_URL_PLACEHOLDER = "__VANCETOPE_API_URL__";
/** Files keep their names across deploys (no build, no content hashes): browsers must revalidate. */
export const NO_CACHE = "max-age=0,no-cache,no-store,must-revalidate";

export function inspectorSiteProps(apiUrl: string, dev: boolean): StaticSiteProps {
  return {
    path: WEB_DIR,
    replaceValues: ["**/*.html", "**/*.js"].map((files) => ({ files, search: API_URL_PLACEHOLDER, replace: apiUrl })),
    // SST marks .js/.css immutable for a year, which suits hashed build output only.
    assets: { fileOptions: [{ files: ["**/*.js", "**/*.css"], cacheControl: NO_CACHE }] },
    // Dev stages do not wait for the CloudFront invalidation to finish.
    waitForInvalidation: !dev,
  };
}

export function Web({ stack, app }: StackContext) {
  const config = stageConfigOf(app);
  const { api } = use(Api);
  const site = new StaticSite(stack, "Inspector", inspectorSiteProps(api.url, config.dev));
  stack.addOutputs({ InspectorUrl: site.url ?? "" });
  return { site };
}
