/**
 * Reads a function's effective IAM permissions out of a synthesized template, with resources
 * named by what they are (`table`, `index:lsi1`, `stream`, `bus`, `dlq`, `worker`, `ssm:/path`, `bucket`, `bucket/blobs/*`) instead of CloudFormation
 * tokens, so tests can compare a function's whole policy against a literal list.
 */
import type { Template } from "aws-cdk-lib/assertions";
import type { CfnFunction } from "aws-cdk-lib/aws-lambda";
import { Stack } from "aws-cdk-lib";
import type { Function as SstFunction } from "sst/constructs";

type Json = Record<string, unknown>;

export function logicalId(fn: SstFunction): string {
  return Stack.of(fn).getLogicalId(fn.node.defaultChild as CfnFunction);
}

export function describeResource(resource: unknown): string {
  if (typeof resource === "string") return resource;
  const s = JSON.stringify(resource);
  const index = /\/index\/([A-Za-z0-9_-]+)"/.exec(s);
  if (index && /Table/.test(s)) return `index:${index[1]}`;
  if (/StreamArn/.test(s)) return "stream";
  if (/Table[0-9A-F]{8}/.test(s)) return "table";
  if (/Bus[0-9A-F]{8}/.test(s)) return "bus";
  if (/Blobs[0-9A-F]{8}/.test(s)) return /\/blobs\/\*"/.test(s) ? "bucket/blobs/*" : "bucket";
  if (/EventsDlq[0-9A-F]{8}/.test(s)) return "dlq";
  if (/CompactionWorker/.test(s)) return "worker";
  const param = /:parameter(\/[^"]+)"/.exec(s);
  if (param) return `ssm:${param[1]}`;
  return s;
}

const list = <T>(v: T | T[] | undefined): T[] => (v === undefined ? [] : Array.isArray(v) ? v : [v]);

export interface Grant {
  effect: string;
  action: string;
  resource: string;
  condition?: Json;
}

/** Every statement granted to the function's role (inline policies of the role and attached Policy resources). */
export function grantsOf(template: Template, functionLogicalId: string): Grant[] {
  const resources = template.toJSON().Resources as Record<string, { Type: string; Properties: Json }>;
  const fn = resources[functionLogicalId];
  if (!fn) throw new Error(`no resource ${functionLogicalId}`);
  const roleId = ((fn.Properties.Role as Json)["Fn::GetAtt"] as string[])[0]!;
  const documents: Json[] = [];
  const role = resources[roleId]!;
  for (const p of list(role.Properties.Policies as Json[] | undefined)) documents.push(p.PolicyDocument as Json);
  for (const r of Object.values(resources)) {
    if (r.Type !== "AWS::IAM::Policy") continue;
    const roles = list(r.Properties.Roles as Json[]).map((x) => x.Ref);
    if (roles.includes(roleId)) documents.push(r.Properties.PolicyDocument as Json);
  }
  const grants: Grant[] = [];
  for (const doc of documents) {
    for (const st of list(doc.Statement as Json[])) {
      for (const action of list(st.Action as string | string[])) {
        for (const resource of list(st.Resource as unknown)) {
          grants.push({
            effect: st.Effect as string,
            action,
            resource: describeResource(resource),
            ...(st.Condition ? { condition: st.Condition as Json } : {}),
          });
        }
      }
    }
  }
  return grants;
}

/** `action resource` lines, sorted: a compact, comparable view of a function's permissions. */
export const grantLines = (grants: Grant[]) =>
  [...new Set(grants.map((g) => `${g.effect === "Allow" ? "" : `${g.effect} `}${g.action} ${g.resource}`))].sort();

export const managedPolicies = (template: Template, functionLogicalId: string): string[] => {
  const resources = template.toJSON().Resources as Record<string, { Properties: Json }>;
  const roleId = ((resources[functionLogicalId]!.Properties.Role as Json)["Fn::GetAtt"] as string[])[0]!;
  return list(resources[roleId]!.Properties.ManagedPolicyArns as unknown[]).map((a) =>
    JSON.stringify(a).replace(/.*:iam::aws:policy\/([^"]+)".*/, "$1"),
  );
};
