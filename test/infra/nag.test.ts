/**
 * AWS's own rules over the deployed system (docs/deploy.md, "AWS Solutions checks"): cdk-nag's
 * AwsSolutions pack runs over every stack (storage, events, API, monitoring, the inspector) of a
 * team stage, a dev stage and a customer-KMS stage
 * while SST synthesizes them, and no finding, error or warning, is left but the ones the stacks
 * suppress, each with its reason in the code.
 */
import { existsSync } from "node:fs";
import { App, Aspects, Stack } from "aws-cdk-lib";
import { Annotations, Match, type Template } from "aws-cdk-lib/assertions";
import { Queue } from "aws-cdk-lib/aws-sqs";
import { AwsSolutionsChecks } from "cdk-nag";
import { beforeAll, describe, expect, it } from "vitest";
import { BLOB_OBJECTS_FINDING } from "../../stacks/service-function.js";
import { WEB_DIR } from "../../stacks/web.js";
import { REGION, ACCOUNT, synthStage, type Synthesized } from "./synth.js";

const CLEAN_ENV = { SUMMARIZER: undefined, VANCETOPE_SECRETS_KMS_KEY_ARN: undefined, VANCETOPE_EVENT_PUBLISHERS: undefined, ALARM_TOPIC_ARN: undefined, ALARM_EMAIL: undefined };
const KMS_KEY = `arn:aws:kms:${REGION}:${ACCOUNT}:key/1234abcd-12ab-34cd-56ef-1234567890ab`;

const stages: Record<string, Synthesized> = {};

beforeAll(async () => {
  stages["team-a"] = await synthStage("team-a", { env: { ...CLEAN_ENV, VANCETOPE_EVENT_PUBLISHERS: "210987654321=team-a-engine", ALARM_EMAIL: "oncall@example.com" }, checks: true, web: existsSync(WEB_DIR) });
  stages["dev-alice"] = await synthStage("dev-alice", { env: CLEAN_ENV, checks: true, web: false });
  stages["team-kms"] = await synthStage("team-kms", { env: { ...CLEAN_ENV, VANCETOPE_SECRETS_KMS_KEY_ARN: KMS_KEY }, checks: true, web: false });
}, 240_000);

const RULE = Match.stringLikeRegexp("AwsSolutions-.*");

/** `path: rule message` of every unsuppressed AwsSolutions error and warning of a stack. */
function findings(stack: Stack): string[] {
  const annotations = Annotations.fromStack(stack);
  return [...annotations.findError("*", RULE), ...annotations.findWarning("*", RULE)].map(
    (m) => `${m.id}: ${/^AwsSolutions-[A-Za-z]+\d+(\[[^\]]*\])?/.exec(String(m.entry.data))?.[0] ?? String(m.entry.data)}`,
  );
}

interface Suppression {
  id: string;
  reason: string;
  applies_to?: unknown[];
}

/** Every suppression recorded in a template (cdk-nag keeps them in each resource's metadata). */
function suppressions(template: Template): Suppression[] {
  const resources = Object.values((template.toJSON().Resources ?? {}) as Record<string, { Metadata?: { cdk_nag?: { rules_to_suppress?: Suppression[] } } }>);
  return resources.flatMap((r) => r.Metadata?.cdk_nag?.rules_to_suppress ?? []);
}

describe.each(["team-a", "dev-alice", "team-kms"])("the AwsSolutions pack over stage %s", (stage) => {
  it("leaves no unsuppressed error or warning in any stack", () => {
    const s = stages[stage]!;
    const all = Object.values(s.stacks).filter((st): st is NonNullable<typeof st> => st !== undefined);
    expect(all.map((st) => st.stackName.replace(`${stage}-vancetope-memory-`, "")).sort()).toEqual(
      ["Api", "Events", "Monitoring", "Storage", ...(s.stacks.web ? ["Web"] : [])].sort(),
    );
    for (const stack of all) expect(findings(stack), stack.stackName).toEqual([]);
  });

  it("suppresses only the accepted rules, each with its reason", () => {
    const s = stages[stage]!;
    const all = Object.values(s.templates).flatMap((t) => (t ? suppressions(t) : []));
    const ids = [...new Set(all.map((x) => x.id))].sort();
    // S1: the blobs bucket keeps no server access log (stacks/storage.ts says why).
    const accepted = ["AwsSolutions-APIG4", "AwsSolutions-IAM4", "AwsSolutions-IAM5", "AwsSolutions-L1", "AwsSolutions-S1", "AwsSolutions-SQS3"];
    const web = ["AwsSolutions-CFR1", "AwsSolutions-CFR2", "AwsSolutions-CFR3", "AwsSolutions-CFR4", "AwsSolutions-CFR7", "AwsSolutions-S1"];
    expect(ids).toEqual([...new Set([...accepted, ...(s.stacks.web ? web : [])])].sort());
    for (const x of all) expect(x.reason.length, x.id).toBeGreaterThan(40);
    // Wildcards are accepted for X-Ray's two actions and the blob objects' prefix only, never as a blanket rule.
    const iam5 = all.filter((x) => x.id === "AwsSolutions-IAM5");
    for (const x of iam5) expect([["Resource::*"], [{ regex: BLOB_OBJECTS_FINDING }]]).toContainEqual(x.applies_to);
    expect(iam5.some((x) => JSON.stringify(x.applies_to).includes("blobs"))).toBe(true);
    // Outside the inspector's stack, S1 is the blobs bucket's alone.
    expect(suppressions(s.templates.storage).filter((x) => x.id === "AwsSolutions-S1")).toHaveLength(1);
    for (const t of [s.templates.events, s.templates.api, s.templates.monitoring]) expect(suppressions(t).filter((x) => x.id === "AwsSolutions-S1")).toEqual([]);
  });
});

describe("the checks themselves", () => {
  it("report a queue that breaks the rules (no SSL requirement, no dead-letter queue)", () => {
    const app = new App();
    const stack = new Stack(app, "Probe", { env: { account: ACCOUNT, region: REGION } });
    new Queue(stack, "Plain");
    Aspects.of(app).add(new AwsSolutionsChecks());
    const rules = findings(stack).map((f) => /AwsSolutions-[A-Z]+\d+/.exec(f)?.[0]);
    expect(rules).toContain("AwsSolutions-SQS3");
    expect(rules).toContain("AwsSolutions-SQS4");
  });
});
