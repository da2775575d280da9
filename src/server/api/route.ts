import type { Context } from 'hono';
import type { z } from 'zod';

/** A query parameter: its schema in the document, and what it does. */
export interface QueryParam {
  schema: z.ZodType;
  description: string;
}

/**
 * One route of the API, declared once: what the document says of it (summary, parameters, the
 * body it takes, what it answers) and what it does. The OpenAPI document (openapi-document.ts) and
 * docs/reference/http-api.md are made from these declarations, and the server registers each
 * `handle` with its `body` parsed by the same schema the document shows.
 */
export interface Route<S, B extends z.ZodType | undefined = z.ZodType | undefined> {
  method: 'get' | 'post';
  /** As the document writes it, with `{id}` for a path parameter: `/api/tasks/{id}/retry`. */
  path: string;
  summary: string;
  /** Changes something: needs the token when the server has one, and a JSON body. */
  write?: boolean;
  /** Path parameters, by name, with what each names. */
  params?: Record<string, string>;
  query?: Record<string, QueryParam>;
  /** The body it takes, and how the error of a malformed one says it (`{"note": …}`). */
  body?: { schema: B; says: string };
  /** Its answer when it succeeds: JSON of `schema`, or a stream or text of `media`. */
  ok: { status: 200 | 201 | 202; description: string; schema?: z.ZodType; media?: 'text/event-stream' | 'text/plain' };
  /** The errors it answers, by status, each with when. */
  errors?: Record<number, string>;
  /** What it does; absent for a route the app serves outside the API (/metrics). */
  handle?: (state: S, c: Context, body: B extends z.ZodType ? z.output<B> : undefined) => Response | Promise<Response>;
}

/** Declares a route, with its handler's body typed by its body's schema. */
export function route<S, B extends z.ZodType | undefined = undefined>(declared: Route<S, B>): Route<S, z.ZodType | undefined> {
  return declared as unknown as Route<S, z.ZodType | undefined>;
}
