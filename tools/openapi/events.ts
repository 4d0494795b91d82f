/**
 * The event catalogue (core/domain/events.ts) as one JSON Schema document (docs/events.schema.json):
 * each event's detail under `$defs`, and the EventBridge envelope of each (its `source` and
 * `detail-type` fixed) as one of the document's alternatives, so a consumer in any language can
 * validate an event it receives. Generated with zod's JSON Schema output, like the OpenAPI document.
 */
import * as z from "../../core/domain/zod.js";
import { EVENTS, type EventName } from "../../core/domain/events.js";

type Json = Record<string, unknown>;

/**
 * A schema as zod writes it, without what its place in a larger document supplies: the JSON
 * Schema dialect (an OpenAPI 3.1 document declares it once, `jsonSchemaDialect`) and an `$id`
 * (a component or a `$defs` entry is named by where it sits).
 */
export function bareSchema({ $schema: _dialect, $id: _id, ...rest }: Json): Json {
  return rest;
}

/** The JSON Schema document of every event of the catalogue. */
export function buildEventSchemas(): Json {
  const names = Object.keys(EVENTS) as EventName[];
  const registry = z.registry<{ id: string }>();
  for (const name of names) registry.add(EVENTS[name].detail, { id: name });
  // `input`: what a handler accepts when it parses an incoming detail (extra fields pass).
  const { schemas } = z.toJSONSchema(registry, { io: "input", uri: (id) => `#/$defs/${id}` });
  const defs = Object.fromEntries(
    names.map((name) => [name, { ...bareSchema(schemas[name] as Json), description: `The detail of ${name} (source ${EVENTS[name].source}).` }]),
  );
  return {
    $schema: "https://json-schema.org/draft/2020-12/schema",
    $id: "https://vancetope.dev/schemas/events.schema.json",
    title: "Vancetope Memory events",
    description:
      "The EventBridge events the service publishes and handles (docs/api.md, \"Events\"): one alternative per event, its detail under $defs. Generated from core/domain/events.ts by `npm run openapi`.",
    oneOf: names.map((name) => ({
      type: "object",
      required: ["source", "detail-type", "detail"],
      properties: {
        source: { const: EVENTS[name].source },
        "detail-type": { const: name },
        detail: { $ref: `#/$defs/${name}` },
      },
    })),
    $defs: defs,
  };
}
