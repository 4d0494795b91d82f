/**
 * The inspector page (`web/`, plain static files, no build step) on S3 + CloudFront. The page finds
 * the API through `__VANCETOPE_API_URL__`, replaced in its .html/.js files at deploy time.
 */
import { NagSuppressions } from "cdk-nag";
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
    // The bucket refuses plain HTTP (CloudFront reaches it over HTTPS).
    cdk: { bucket: { enforceSSL: true } },
  };
}

export function Web({ stack, app }: StackContext) {
  const config = stageConfigOf(app);
  const { api } = use(Api);
  const site = new StaticSite(stack, "Inspector", inspectorSiteProps(api.url, config.dev));
  // The page is public static code with no data of its own (it calls the API with the user's key).
  const reasons: Record<string, string> = {
    "AwsSolutions-S1": "The bucket holds the inspector's static files only, uploaded by the deploy; reads reach it through CloudFront alone.",
    "AwsSolutions-CFR1": "The inspector is a static page whose every call needs an API key; where it is read from is not restricted.",
    "AwsSolutions-CFR2": "A WAF in front of static files that carry no data would cost more than it protects; the API it calls is throttled and key-checked.",
    "AwsSolutions-CFR3": "CloudFront access logs would need a logging bucket for requests of public static files; the API's own access log records every call the page makes.",
    "AwsSolutions-CFR4": "The distribution uses CloudFront's default certificate (no custom domain), which cannot pin a minimum TLS version; a stage with its own domain sets it there.",
    "AwsSolutions-CFR7": "SST v2's StaticSite reaches the bucket through an origin access identity; the bucket blocks all public access either way.",
  };
  NagSuppressions.addResourceSuppressions(site, Object.entries(reasons).map(([id, reason]) => ({ id, reason })), true);
  stack.addOutputs({ InspectorUrl: site.url ?? "" });
  return { site };
}
