import { describe, expect, it } from 'vitest';
import { LastJsonObject } from '../../../src/agents/command/presets/last-json-object.js';

/** The last object of `text`, fed in pieces of `size` characters. */
function lastOf(text: string, size = text.length || 1): unknown {
  const reader = new LastJsonObject(1000);
  for (let i = 0; i < text.length; i += size) reader.push(text.slice(i, i + size));
  return reader.value;
}

describe('the last JSON object of a stream', () => {
  const result = JSON.stringify({ response: 'a } { " \\ [', stats: { n: [1, { m: 2 }] } }, null, 2);

  it('is the pretty-printed object that ends the output, however the output is cut', () => {
    for (const size of [1, 2, 7, 1000]) {
      expect(lastOf(`progress {\nwarning: x\n${result}\n`, size)).toEqual(JSON.parse(result));
      expect(lastOf(`{"a":1}\n${result}`, size)).toEqual(JSON.parse(result));
    }
  });

  it('is none when anything but white space follows it, or it does not parse, or it is too long', () => {
    expect(lastOf(`${result}\ndone`)).toBeNull();
    expect(lastOf(`${result}{"b":2}`)).toBeNull();
    expect(lastOf('{ not json }')).toBeNull();
    expect(lastOf(`{"a":"${'x'.repeat(2000)}"}`)).toBeNull();
  });

  it('drops an object cut by a raw line break in a string, or by a brace at the start of a line, and takes the next', () => {
    expect(lastOf('{"a":"b\n{"c":1}\n')).toEqual({ c: 1 });
    expect(lastOf('{"a":\n{"c":1}')).toEqual({ c: 1 });
  });
});
