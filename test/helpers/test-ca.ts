import { execFileSync } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { tempDir } from './temp-dir.js';

/** A certificate authority made for one test, and a certificate it signed for 127.0.0.1. */
export interface TestCa {
  /** The CA's certificate, PEM, in a file (what GENESIS_MODEL_CA names). */
  caFile: string;
  /** The server's key and certificate, PEM. */
  key: string;
  cert: string;
}

/** Made with openssl, as a company's CA would be: nothing here is trusted by default. */
export async function makeTestCa(): Promise<TestCa> {
  const dir = await tempDir('genesis-test-ca-');
  const at = (name: string) => join(dir, name);
  const openssl = (...args: string[]) => execFileSync('openssl', args, { stdio: 'pipe' });
  openssl('req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', at('ca.key'), '-out', at('ca.pem'), '-days', '2', '-subj', '/CN=Genesis test CA');
  openssl('req', '-newkey', 'rsa:2048', '-nodes', '-keyout', at('server.key'), '-out', at('server.csr'), '-subj', '/CN=127.0.0.1');
  await writeFile(at('san.ext'), 'subjectAltName=IP:127.0.0.1\n');
  openssl(
    'x509',
    '-req',
    '-in',
    at('server.csr'),
    '-CA',
    at('ca.pem'),
    '-CAkey',
    at('ca.key'),
    '-CAcreateserial',
    '-out',
    at('server.pem'),
    '-days',
    '2',
    '-extfile',
    at('san.ext'),
  );
  return { caFile: at('ca.pem'), key: await readFile(at('server.key'), 'utf8'), cert: await readFile(at('server.pem'), 'utf8') };
}
