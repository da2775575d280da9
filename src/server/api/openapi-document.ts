import { z } from 'zod';
import type { Route } from './route.js';
import { API_ROUTES } from './routes.js';
import { components } from './schemas.js';

type JsonSchema = Record<string, unknown>;

const DESCRIPTION =
  'The API of `genesis serve`: read a world, steer it, start and stop its run. Reads are open to whoever reaches the server; ' +
  'every request that changes anything needs `Authorization: Bearer $GENESIS_TOKEN` when the server has a token (required when it listens beyond loopback) ' +
  'and a JSON body.';

/** What the server's guards answer before any route that changes something is reached (src/server/http). */
const REFUSED: Record<number, string> = {
  401: 'a token is set and the request did not send it',
  403: 'a page of another origin',
  415: 'the body is not JSON',
};

const COMPONENT_PREFIX = '#/components/schemas/';

/**
 * The OpenAPI 3.1 document of the API, made from the route table and its zod schemas through zod's
 * own JSON Schema export (`z.toJSONSchema`): a schema named a component is referenced by `$ref`,
 * every other one is written where it is used. Served at /api/openapi.json; `npm run docs` writes
 * docs/reference/http-api.md from it.
 */
export function openApiDocument<S>(routes: ReadonlyArray<Route<S>>): JsonSchema {
  // One registry holds the components and, under ids of their own, the schemas of each route, so
  // one export gives every schema with its references between them resolved to components.
  const registry = z.registry<{ id: string; description?: string }>();
  for (const { schema, id, description } of components) schema.register(registry, { id, description });
  const inline = new Map<z.ZodType, string>();
  const idOf = (schema: z.ZodType): string => {
    const named = registry.get(schema)?.id;
    if (named) return named;
    const known = inline.get(schema);
    if (known) return known;
    const id = `route-${inline.size}`;
    inline.set(schema, id);
    schema.register(registry, { id });
    return id;
  };
  const used = routes.map((r) => ({
    route: r,
    body: r.body?.schema ? idOf(r.body.schema) : null,
    answer: r.ok.schema ? idOf(r.ok.schema) : null,
    query: Object.entries(r.query ?? {}).map(([name, q]) => ({ name, description: q.description, id: idOf(q.schema) })),
  }));
  const exported = z.toJSONSchema(registry, {
    metadata: registry,
    uri: (id) => `${COMPONENT_PREFIX}${id}`,
    unrepresentable: 'any',
    override: ({ jsonSchema }) => dropSafeIntegerBounds(jsonSchema as JsonSchema),
  }).schemas as Record<string, JsonSchema>;
  const inlined = new Set(inline.values());
  const schemaOf = (id: string): JsonSchema => (inlined.has(id) ? clean(exported[id]!) : { $ref: `${COMPONENT_PREFIX}${id}` });
  const paths: Record<string, Record<string, JsonSchema>> = {};
  for (const { route, body, answer, query } of used) {
    const parameters = [
      ...Object.entries(route.params ?? {}).map(([name, description]) => ({ name, in: 'path', required: true, schema: { type: 'string' }, description })),
      ...query.map((q) => ({ name: q.name, in: 'query', required: false, schema: schemaOf(q.id), description: q.description })),
    ];
    const errors = { ...(route.errors ?? {}), ...(route.write ? REFUSED : {}) };
    const media = route.ok.media ?? 'application/json';
    paths[route.path] ??= {};
    paths[route.path]![route.method] = {
      summary: route.summary,
      ...(route.write ? { security: [{ bearer: [] }] } : {}),
      ...(parameters.length > 0 ? { parameters } : {}),
      ...(body ? { requestBody: { required: true, content: { 'application/json': { schema: schemaOf(body) } } } } : {}),
      responses: {
        [String(route.ok.status)]: { description: route.ok.description, content: { [media]: { schema: answer ? schemaOf(answer) : { type: 'string' } } } },
        ...Object.fromEntries(
          Object.entries(errors).map(([status, description]) => [
            status,
            { description, content: { 'application/json': { schema: { $ref: `${COMPONENT_PREFIX}Error` } } } },
          ]),
        ),
      },
    };
  }
  const schemas = Object.fromEntries(components.map(({ id }) => [id, clean(exported[id]!)]));
  return {
    openapi: '3.1.0',
    info: { title: 'Genesis', version: '1', description: DESCRIPTION },
    components: { schemas, securitySchemes: { bearer: { type: 'http', scheme: 'bearer', description: 'GENESIS_TOKEN' } } },
    paths,
  };
}

/** A schema as the document holds it: without the `$schema` and `$id` of a standalone one. */
function clean(schema: JsonSchema): JsonSchema {
  const { $schema: _s, $id: _i, ...rest } = schema;
  return rest;
}

/** zod writes the safe-integer range on every integer: a reader learns nothing from it. */
function dropSafeIntegerBounds(schema: JsonSchema): void {
  if (schema.type !== 'integer') return;
  if (schema.minimum === Number.MIN_SAFE_INTEGER) delete schema.minimum;
  if (schema.maximum === Number.MAX_SAFE_INTEGER) delete schema.maximum;
}

/** The document, as served. */
export const OPENAPI_DOCUMENT = openApiDocument(API_ROUTES);
