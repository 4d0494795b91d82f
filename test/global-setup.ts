/**
 * Starts one DynamoDB Local engine and one S3-compatible server (s3rver) for the whole test run;
 * each test file creates its own table (test/support/dynamo.ts) and bucket (test/support/s3.ts) in
 * them, so files can run in parallel without seeing each other.
 */
import type { TestProject } from "vitest/node";
import { startDynamoLocal, type DynamoLocal } from "../local/dynamodb-local.js";
import { startLocalS3, type LocalS3 } from "./support/s3rver.js";

let engine: DynamoLocal | undefined;
let s3: LocalS3 | undefined;

export async function setup(project: TestProject) {
  [engine, s3] = await Promise.all([startDynamoLocal(), startLocalS3()]);
  project.provide("dynamoEndpoint", engine.endpoint);
  project.provide("s3Endpoint", s3.endpoint);
}

export async function teardown() {
  await Promise.all([engine?.stop(), s3?.stop()]);
}

declare module "vitest" {
  export interface ProvidedContext {
    dynamoEndpoint: string;
    s3Endpoint: string;
  }
}
