import { describe, expect, it } from 'vitest';
import { isContextLengthError, readErrorBody, retryAfterMs } from '../../../src/agents/openai/chat/errors.js';

describe('reading errors of OpenAI-compatible servers', () => {
  it('reads OpenAI, llama.cpp and plain-text error bodies', () => {
    expect(readErrorBody('{"error":{"message":"m","type":"t","code":"c"}}')).toEqual({ message: 'm', type: 't', code: 'c' });
    expect(readErrorBody('{"error":{"code":400,"message":"m","type":"exceed_context_size_error"}}')).toEqual({
      message: 'm',
      type: 'exceed_context_size_error',
      code: '400',
    });
    expect(readErrorBody('{"error":"model not found"}').message).toBe('model not found');
    expect(readErrorBody('Bad Gateway\n')).toEqual({ message: 'Bad Gateway', type: '', code: '' });
  });

  it('recognises a context-length refusal however the server words it', () => {
    const body = (message: string, code = '', type = '') => ({ message, code, type });
    expect(isContextLengthError(400, body('x', 'context_length_exceeded'))).toBe(true);
    expect(isContextLengthError(400, body('x', '400', 'exceed_context_size_error'))).toBe(true);
    expect(isContextLengthError(400, body("This model's maximum context length is 4096 tokens. However, you requested 5000 tokens"))).toBe(true);
    expect(isContextLengthError(413, body('Payload Too Large'))).toBe(true);
    expect(isContextLengthError(400, body('Invalid value for tool_choice'))).toBe(false);
  });

  it('reads retry-after-ms, retry-after in seconds and as a date', () => {
    expect(retryAfterMs(new Headers({ 'retry-after-ms': '1500', 'retry-after': '9' }))).toBe(1500);
    expect(retryAfterMs(new Headers({ 'retry-after': '2' }))).toBe(2000);
    const now = Date.parse('2026-01-01T00:00:00Z');
    expect(retryAfterMs(new Headers({ 'retry-after': 'Thu, 01 Jan 2026 00:00:03 GMT' }), now)).toBe(3000);
    expect(retryAfterMs(new Headers())).toBeNull();
  });
});
