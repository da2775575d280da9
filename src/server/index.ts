/**
 * `genesis serve`: the dashboard, its JSON API (the route table in api/routes.ts), the retry of
 * blocked tasks, and the hook that mounts the BullMQ board.
 */
export { createServerApp, type ServerApp, type ServerAppOptions } from './create-app.js';
export { startServer, type RunningServer, type StartServerOptions } from './start-server.js';
export { mountQueueBoard, type MountedQueueBoard, type QueueBoardOptions } from './queue-board.js';
export { isLoopbackHost, resolveServeSecurity, MIN_TOKEN_LENGTH, type ServeSecurity } from './http/security.js';
export { retryTask, MAX_RETRY_NOTE, type RetryTaskInput } from './retry-task.js';
export { buildTaskBoard, type BoardTask, type TaskBoard } from './projections/task-board.js';
export { buildOverview, type Overview, type RunState } from './projections/overview.js';
export { buildReliabilityReport, type ReliabilityReport } from './projections/reliability-report.js';
export { WorldSnapshots, type WorldSnapshot } from './projections/world-snapshot.js';
export type { WorldControl } from './world-control.js';
export { OPENAPI_DOCUMENT } from './api/openapi-document.js';
