import { Hono, type Context } from 'hono';
import type { z } from 'zod';
import { GenesisError, type ErrorCode } from '../../errors/genesis-error.js';
import { errorResponse, jsonResponse } from '../http/json.js';
import { OPENAPI_DOCUMENT } from './openapi-document.js';
import { API_ROUTES, type ApiContext, type ApiState } from './routes.js';

/**
 * The JSON API under /api: each route of the table (routes.ts) registered with its body parsed by
 * the schema the OpenAPI document shows, so what the server takes is what the document says.
 */
export function createApiRoutes(ctx: ApiContext): Hono {
  const api = new Hono();
  const state: ApiState = { ctx, reliability: null, document: OPENAPI_DOCUMENT };
  api.onError((error) => errorResponse(error));
  api.notFound((c) =>
    jsonResponse(
      {
        error: {
          code: 'not-found' satisfies ErrorCode,
          message: `no API route ${c.req.method} ${c.req.path}`,
          hint: 'GET /api/openapi.json lists the routes',
        },
      },
      404,
    ),
  );
  for (const route of API_ROUTES) {
    const { handle, body } = route;
    // Routes outside /api (/metrics) are the app's own.
    if (!handle || !route.path.startsWith('/api/')) continue;
    const path = route.path.slice('/api'.length).replace(/\{(\w+)\}/g, ':$1');
    api[route.method](path, async (c) => handle(state, c, body ? await parseBody(c, body.schema!, body.says) : undefined));
  }
  return api;
}

async function parseBody<T extends z.ZodType>(c: Context, schema: T, shape: string): Promise<z.output<T>> {
  const parsed = schema.safeParse(await c.req.json().catch(() => undefined));
  if (!parsed.success) {
    throw new GenesisError('bad-request', `the body must be ${shape}`, {
      hint: parsed.error.issues.map((i) => `${i.path.join('.') || 'body'}: ${i.message}`).join('; '),
    });
  }
  return parsed.data;
}
