import { writeFile } from 'node:fs/promises';
import { createServer, connect, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import type { AgentEndpoint } from './endpoints.js';

/**
 * The way from an agent's network namespace to the model endpoints on this host's loopback (a
 * local model server: Ollama, vLLM, llama.cpp, a gateway). Inside the namespace 127.0.0.1 is the
 * agent's own, so the namespace cannot route there; instead ENDPOINT_BRIDGE, started in the
 * namespace by the launcher (agent-netns.ts), listens on each endpoint's address and port and
 * hands each connection to a Unix socket of this process, which opens the same connection on this
 * host. Exactly those ports lead out; every other port of the agent's 127.0.0.1 is its own, with
 * nothing listening. No proxy is involved, so a client that never proxies loopback still works.
 */
export interface EndpointBridge {
  /** Connections to an endpoint this host refused or could not open (the model server is down). */
  failedConnects(): number;
  /** Connections the bridge carried to an endpoint. */
  carried(): number;
  /** Ends every connection and listener; the agent's side dies with its namespace. */
  close(): Promise<void>;
}

/**
 * The program the launcher runs in the namespace (CommonJS, for `node file`): reads its
 * listeners from the JSON file it is given, listens, writes `ok` on fd 4 when all are up (the
 * launcher waits for it), and forwards. `localhost` listens on 127.0.0.1 and, where the
 * namespace has it, ::1.
 */
const ENDPOINT_BRIDGE = `'use strict';
const fs = require('node:fs');
const net = require('node:net');
const listeners = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
const pipe = (client, path) => {
  const upstream = net.connect(path);
  client.pipe(upstream);
  upstream.pipe(client);
  const end = () => { client.destroy(); upstream.destroy(); };
  client.on('error', end); upstream.on('error', end); client.on('close', end); upstream.on('close', end);
};
const listen = (host, port, path, optional) => new Promise((resolve, reject) => {
  const server = net.createServer((client) => pipe(client, path));
  server.on('error', (e) => (optional ? resolve() : reject(e)));
  server.listen({ host, port, exclusive: true }, resolve);
});
Promise.all(listeners.flatMap((l) => l.host === 'localhost'
  ? [listen('127.0.0.1', l.port, l.path, false), listen('::1', l.port, l.path, true)]
  : [listen(l.host, l.port, l.path, false)]))
  .then(() => { fs.writeSync(4, 'ok\\n'); fs.closeSync(4); })
  .catch((e) => { process.stderr.write('genesis bridge: ' + e.message + '\\n'); process.exit(125); });
`;

/**
 * Starts the host side of the bridge for `endpoints` (each on this host's loopback, or all to
 * `modelPort`, the episode's model gateway) and writes the
 * namespace's side into `dir` (the launch's private directory: bridge.cjs and bridge.json, which
 * the launcher reads).
 */
export async function startEndpointBridge(dir: string, endpoints: readonly AgentEndpoint[], modelPort?: number): Promise<EndpointBridge> {
  const sockets = new Set<Socket>();
  const servers: Server[] = [];
  let failed = 0;
  let carried = 0;
  const track = (socket: Socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  };
  const listeners: { host: string; port: number; path: string }[] = [];
  try {
    for (const [i, endpoint] of endpoints.entries()) {
      const path = join(dir, `bridge-${i}.sock`);
      const server = createServer((client) => {
        track(client);
        // With the model gateway, every endpoint leads to the episode's own listener, which forwards to the real one.
        const upstream =
          modelPort === undefined ? connect(endpoint.port, endpoint.host === 'localhost' ? '127.0.0.1' : endpoint.host) : connect(modelPort, '127.0.0.1');
        track(upstream);
        let connected = false;
        upstream.once('connect', () => {
          connected = true;
          carried++;
          client.pipe(upstream);
          upstream.pipe(client);
        });
        upstream.once('error', () => {
          if (!connected) failed++;
        });
        const end = () => {
          client.destroy();
          upstream.destroy();
        };
        client.on('error', end);
        upstream.on('error', end);
        client.on('close', end);
        upstream.on('close', end);
      });
      servers.push(server);
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(path, resolve);
      });
      listeners.push({ host: endpoint.host, port: endpoint.port, path });
    }
    await writeFile(join(dir, 'bridge.json'), JSON.stringify(listeners));
    await writeFile(join(dir, 'bridge.cjs'), ENDPOINT_BRIDGE);
  } catch (error) {
    for (const server of servers) server.close();
    throw error;
  }
  return {
    failedConnects: () => failed,
    carried: () => carried,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await Promise.all(servers.map((server) => new Promise<void>((resolve) => server.close(() => resolve()))));
    },
  };
}
