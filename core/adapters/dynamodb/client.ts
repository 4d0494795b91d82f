/** Builds the DynamoDB document client; an endpoint means DynamoDB Local with fake credentials. */
import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { DynamoDBDocumentClient } from "@aws-sdk/lib-dynamodb";

export interface DynamoClientOptions {
  endpoint?: string;
  region?: string;
  /** Wraps the low-level client before the document client shares its middleware (tracing). */
  capture?: <C extends object>(client: C) => C;
}

export function createDocumentClient(options: DynamoClientOptions = {}): DynamoDBDocumentClient {
  const client = new DynamoDBClient({
    region: options.region ?? process.env.AWS_REGION ?? "us-east-1",
    ...(options.endpoint
      ? {
          endpoint: options.endpoint,
          // DynamoDB Local accepts any credentials, but they must be alphanumeric.
          credentials: { accessKeyId: "local", secretAccessKey: "local" },
        }
      : {}),
  });
  return DynamoDBDocumentClient.from(options.capture ? options.capture(client) : client, {
    marshallOptions: { removeUndefinedValues: true },
  });
}
