export type { Sandbox, SandboxKind, SandboxLimits, SandboxMount, SandboxRunResult, SandboxRunSpec } from './sandbox.js';
export { prepareMountPoints } from './mount-points.js';
export { createSandbox } from './create-sandbox.js';
export type { CreateSandboxOptions } from './create-sandbox.js';
export { DockerSandbox, SANDBOX_CONTAINER_LABEL, BIND_HOST_USR_LABEL } from './docker-sandbox.js';
export type { DockerSandboxOptions } from './docker-sandbox.js';
export { BwrapSandbox } from './bwrap-sandbox.js';
export { NoneSandbox, NONE_SANDBOX_WARNING } from './none-sandbox.js';
export { OutputTail, DEFAULT_MAX_OUTPUT_BYTES } from './output-tail.js';
