/**
 * Starts one DynamoDB Local engine for the whole test run; each test file creates its own table
 * in it (test/support/dynamo.ts), so files can run in parallel without seeing each other.
 */
import type { TestProject } from "vitest/node";
import { startDynamoLocal, type DynamoLocal } from "../local/dynamodb-local.js";

let engine: DynamoLocal | undefined;

export async function setup(project: TestProject) {
  engine = await startDynamoLocal();
  project.provide("dynamoEndpoint", engine.endpoint);
}

export async function teardown() {
  await engine?.stop();
}

declare module "vitest" {
  export interface ProvidedContext {
    dynamoEndpoint: string;
  }
}
