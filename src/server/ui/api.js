// Talks to the JSON API. Changes carry the server's token when it has one: the dashboard asks for
// it the first time the server answers 401 and keeps it for this browser tab only.

const TOKEN_KEY = 'genesis-token';

export class ApiError extends Error {
  constructor(status, body) {
    super(body?.error?.message ?? `HTTP ${status}`);
    this.status = status;
    this.code = body?.error?.code ?? 'http';
    this.hint = body?.error?.hint ?? null;
  }
}

async function readBody(response) {
  const body = await response.json().catch(() => null);
  if (!response.ok) throw new ApiError(response.status, body);
  return body;
}

export async function getJson(path) {
  return readBody(await fetch(path, { headers: { accept: 'application/json' } }));
}

export async function postJson(path, body) {
  for (let attempt = 0; ; attempt++) {
    const token = sessionStorage.getItem(TOKEN_KEY);
    const response = await fetch(path, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
      body: JSON.stringify(body ?? {}),
    });
    if (response.status === 401 && attempt === 0) {
      const given = window.prompt('This server needs its token (GENESIS_TOKEN) to change anything. Token:');
      if (!given) return readBody(response);
      sessionStorage.setItem(TOKEN_KEY, given.trim());
      continue;
    }
    if (response.status === 401) sessionStorage.removeItem(TOKEN_KEY);
    return readBody(response);
  }
}
