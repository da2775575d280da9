import { describe, expect, it } from 'vitest';
import { secretEnvNames, secretValues } from '../../../src/ledger/secret-env.js';
import { holdsSecret, REDACTED, scrubSecrets } from '../../../src/ledger/secret-scrubber.js';

// Built from parts, so this file holds no string a secret scanner would flag.
const key = (prefix: string, body: string) => prefix + body;
const A40 = 'aB3dE5gH7jK9mN1pQ3sT5vW7yZ9bC1dF3hJ5kL7';

describe('scrubSecrets', () => {
  it('replaces every occurrence of a passed value, as written and inside a JSON string', () => {
    const value = 'my "quoted" s3cret-value';
    const text = `echo ${value}; ${JSON.stringify({ env: value })}; again ${value}`;
    const out = scrubSecrets(text, [value]);
    expect(out).toBe(`echo ${REDACTED}; {"env":"${REDACTED}"}; again ${REDACTED}`);
  });

  it('leaves values too short to be secrets alone, so "1" or "true" do not blank a log', () => {
    expect(scrubSecrets('exit 1 true us-east-1', ['1', 'true', 'us-east-1'])).toBe(`exit 1 true ${REDACTED}`);
    expect(scrubSecrets('exit 1 true', ['1', 'true'])).toBe('exit 1 true');
  });

  it('scrubs the longer of two overlapping values whole', () => {
    expect(scrubSecrets('token=abcdefgh12345678', ['abcdefgh', 'abcdefgh12345678'])).toBe(`token=${REDACTED}`);
  });

  const formats: Array<[string, string]> = [
    ['an Anthropic key', key('sk-ant-api03-', A40)],
    ['an OpenAI project key', key('sk-proj-', A40)],
    ['an OpenAI key', key('sk-', A40)],
    ['a GitHub personal token', key('ghp_', A40)],
    ['a GitHub app token', key('ghs_', A40)],
    ['a fine-grained GitHub token', key('github_pat_', `11ABCDEFG0_${A40}`)],
    ['a GitLab token', key('glpat-', 'xYz12_abcDEF34567890')],
    ['an AWS access key id', key('AKIA', 'IOSFODNN7EXAMPLE')],
    ['a Slack bot token', key('xoxb-', '1234567890-abcdefghij')],
    ['a Google API key', key('AIza', 'SyA1234567890abcdefghijklmnopqrstuv')],
    ['a Hugging Face token', key('hf_', A40)],
    ['a Stripe secret key', key('sk_live_', A40)],
    ['a JSON web token', key('eyJ', 'hbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U')],
    ['a bearer credential', key('Authorization: Bearer ', 'abc.DEF_ghi-jkl~mno+pqr/stu=')],
  ];
  for (const [what, secret] of formats) {
    it(`scrubs ${what} nobody named`, () => {
      const out = scrubSecrets(`before ${secret} after`);
      expect(out).not.toContain(secret.slice(-12));
      expect(out).toContain(REDACTED);
      expect(out.startsWith('before ')).toBe(true);
      expect(out.endsWith(' after')).toBe(true);
    });
  }

  it('scrubs a whole private key block, and a truncated one to the end of the text', () => {
    const block = ['-----BEGIN OPENSSH PRIVATE KEY-----', 'b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ', '-----END OPENSSH PRIVATE KEY-----'].join('\n');
    expect(scrubSecrets(`key:\n${block}\ndone`)).toBe(`key:\n${REDACTED}\ndone`);
    expect(scrubSecrets('tail: -----BEGIN RSA PRIVATE KEY-----\nMIIEow')).toBe(`tail: ${REDACTED}`);
  });

  it('keeps JSON valid when a key sits in a string of it', () => {
    const json = JSON.stringify({ message: `saw -----BEGIN EC PRIVATE KEY-----\nMHcCAQ and ${key('sk-', A40)}`, next: 'kept' });
    const parsed = JSON.parse(scrubSecrets(json)) as { message: string; next: string };
    expect(parsed.next).toBe('kept');
    expect(holdsSecret(parsed.message)).toBe(false);
  });

  it('leaves ordinary text, hashes and paths alone', () => {
    const text = 'commit 3f2a9c1e8b7d6a5f4e3d2c1b0a9f8e7d6c5b4a39\nsk-learn is fine, task-keyboard too\n/usr/lib/node_modules/skeleton\n';
    expect(scrubSecrets(text)).toBe(text);
  });
});

describe('secretEnvNames', () => {
  it("names the manifest's variables, the presets' credentials and anything named like a key", () => {
    const names = secretEnvNames({ env: ['MY_SERVICE_URL'], apiKeyEnv: 'LLM_KEY', rotation: [{ env: ['OTHER'] }] } as never, {
      DEPLOY_TOKEN: 'x',
      GIT_AUTHOR_NAME: 'Dev',
      SSH_PASSWORD: 'y',
      PATH: '/bin',
    });
    expect(names).toEqual(
      expect.arrayContaining(['MY_SERVICE_URL', 'LLM_KEY', 'OTHER', 'ANTHROPIC_API_KEY', 'OPENAI_API_KEY', 'DEPLOY_TOKEN', 'SSH_PASSWORD']),
    );
    expect(names).not.toContain('GIT_AUTHOR_NAME');
    expect(names).not.toContain('PATH');
  });

  it('keeps base URLs and settings readable, and still scrubs keys', () => {
    const names = secretEnvNames({ env: ['OPENAI_BASE_URL', 'MY_GATEWAY_KEY'], rotation: [] } as never, { ANTHROPIC_BASE_URL: 'http://127.0.0.1:8080' });
    for (const setting of ['ANTHROPIC_BASE_URL', 'OPENAI_BASE_URL', 'OPENAI_API_BASE', 'OLLAMA_API_BASE', 'IS_SANDBOX', 'AWS_REGION'])
      expect(names).not.toContain(setting);
    expect(names).toEqual(expect.arrayContaining(['MY_GATEWAY_KEY', 'ANTHROPIC_API_KEY', 'AWS_SECRET_ACCESS_KEY', 'GOOGLE_APPLICATION_CREDENTIALS']));
  });

  it("scrubs the Copilot CLI's and Qwen Code's keys and keeps their settings readable", () => {
    const names = secretEnvNames(undefined, { COPILOT_GITHUB_TOKEN: 'gho_x' });
    expect(names).toEqual(expect.arrayContaining(['COPILOT_PROVIDER_API_KEY', 'COPILOT_PROVIDER_BEARER_TOKEN', 'COPILOT_GITHUB_TOKEN', 'OPENAI_API_KEY']));
    for (const setting of ['COPILOT_PROVIDER_TYPE', 'COPILOT_PROVIDER_WIRE_API', 'OPENAI_BASE_URL', 'OPENAI_MODEL']) expect(names).not.toContain(setting);
  });

  it('reads the values of the names that are set', () => {
    expect(secretValues(['A', 'B', 'C'], { A: 'one', C: '' })).toEqual(['one']);
  });
});

describe('scrubForStorage', () => {
  it("scrubs this process's secret variables, the named ones and key formats", async () => {
    const { scrubForStorage } = await import('../../../src/ledger/secret-env.js');
    process.env.GENESIS_TEST_SERVICE_TOKEN = 'tok-value-1234567';
    process.env.GENESIS_TEST_NAMED = 'named-value-7654321';
    try {
      expect(scrubForStorage('a tok-value-1234567 b named-value-7654321 c', ['GENESIS_TEST_NAMED'])).toBe(`a ${REDACTED} b ${REDACTED} c`);
      expect(scrubForStorage('named-value-7654321')).toBe('named-value-7654321');
    } finally {
      delete process.env.GENESIS_TEST_SERVICE_TOKEN;
      delete process.env.GENESIS_TEST_NAMED;
    }
  });
});
