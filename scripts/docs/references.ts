import { AUDIT_EXIT } from '../../src/cli/commands/audit/exit.js';
import { EXIT, EXIT_MEANINGS } from '../../src/cli/exit-codes.js';
import { createProgram } from '../../src/cli/program.js';
import { ERROR_CODES } from '../../src/errors/error-codes.js';
import { REJECTION_REASONS } from '../../src/errors/rejection-reasons.js';
import { manifestSchema } from '../../src/manifest/schema.js';
import { renderCliPage } from './cli-page.js';
import { renderErrorsPage } from './errors-page.js';
import { renderExitCodesPage } from './exit-codes-page.js';
import { renderHttpApiPage } from './http-api-page.js';
import { DEFAULT_PRICES } from '../../src/agents/usage/prices.js';
import { renderPricesPage } from './prices-page.js';
import { OPENAPI_DOCUMENT } from '../../src/server/api/openapi-document.js';
import { renderWorldYamlPage } from './world-yaml-page.js';
import { readFileSync } from 'node:fs';
import { type LayerTable, renderLayersPage } from '../layers/render-layers.js';

/** Every page of docs/reference/ made from the code, by its path from the repository root. */
export async function renderReferences(): Promise<Array<{ path: string; text: string }>> {
  return [
    { path: 'docs/reference/world-yaml.md', text: renderWorldYamlPage(manifestSchema) },
    { path: 'docs/reference/cli.md', text: renderCliPage(await createProgram()) },
    { path: 'docs/reference/errors.md', text: renderErrorsPage(ERROR_CODES, REJECTION_REASONS) },
    { path: 'docs/reference/exit-codes.md', text: renderExitCodesPage(EXIT, EXIT_MEANINGS, AUDIT_EXIT) },
    { path: 'docs/reference/http-api.md', text: renderHttpApiPage(OPENAPI_DOCUMENT as never) },
    { path: 'docs/reference/prices.md', text: renderPricesPage(DEFAULT_PRICES) },
    {
      path: 'docs/reference/layers.md',
      text: renderLayersPage(JSON.parse(readFileSync(new URL('../../lint/layers.json', import.meta.url), 'utf8')) as LayerTable),
    },
  ];
}
