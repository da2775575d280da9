export { auditWorld } from './audit-world.js';
export type { AuditOptions, AuditReport } from './audit-world.js';
export type { AuditCode, AuditFinding, AuditSeverity } from './audit-finding.js';
export { findRunHolder, type ReadDistributedHolder } from './run-holder.js';
export { sampleItems } from './sample-commits.js';
