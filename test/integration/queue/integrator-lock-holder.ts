// Holds a world's integrator lock in a process of its own, for tests that kill or pause it.
// Usage: node --import tsx integrator-lock-holder.ts <redis-url> <world> <ttl-ms>
// Prints one JSON line per event: {"event":"acquired","token":n}, {"event":"lost","loss":{...}}.
import { IntegratorLock } from '../../../src/queue/redis/integrator-lock.js';
import { connectRedis } from '../../../src/queue/redis/connection.js';

const [url = '', world = '', ttl = ''] = process.argv.slice(2);
const redis = await connectRedis(url);
const lock = await IntegratorLock.acquire(redis, world, { ttlMs: Number(ttl) });
lock.onLost((loss) => console.log(JSON.stringify({ event: 'lost', loss })));
console.log(JSON.stringify({ event: 'acquired', token: lock.token }));
// The lock's refresh timer does not keep a process alive; this does, until the test kills it.
setInterval(() => undefined, 60_000);
