import { isDeepStrictEqual } from 'node:util';
import { Document, isSeq, parseDocument } from 'yaml';

/**
 * world.yaml with `item` appended to its top-level list `key`, edited as text where the list is a
 * block sequence (or absent): the new item is written at the list's end with its items'
 * indentation, and every other byte (comments, quotes, folded strings, blank lines) is left as the
 * person wrote it. Anything else (a flow list, an odd layout) goes through yaml's Document, which
 * keeps comments but may re-lay lines. Either way the result must read as the document plus the
 * item, or the Document's rendering is used.
 */
export function appendToYamlList(text: string, key: string, item: unknown): string {
  const doc = parseDocument(text);
  const expected = parseDocument(text);
  if (!expected.has(key)) expected.set(key, expected.createNode([]));
  expected.addIn([key], expected.createNode(item));
  const edited = editAsText(text, doc, key, item);
  if (edited !== null && isDeepStrictEqual(parseDocument(edited).toJS(), expected.toJS())) return edited;
  return expected.toString();
}

function editAsText(text: string, doc: Document, key: string, item: unknown): string | null {
  const body = new Document([item]).toString({ lineWidth: 0 });
  const node = doc.get(key, true);
  if (node === undefined) {
    const sep = text.length === 0 || text.endsWith('\n') ? '' : '\n';
    return `${text}${sep}${key}:\n${indent(body, '  ')}`;
  }
  if (!isSeq(node) || node.flow || node.items.length === 0) return null;
  const last = node.items.at(-1) as { range?: [number, number, number] } | undefined;
  const first = node.items[0] as { range?: [number, number, number] } | undefined;
  if (!last?.range || !first?.range) return null;
  // The items' indentation: what precedes the first item's "- " on its line.
  const lineStart = text.lastIndexOf('\n', first.range[0] - 1) + 1;
  const dash = /^(\s*)- /.exec(text.slice(lineStart, first.range[0]));
  if (!dash) return null;
  const end = last.range[1];
  const at = text[end - 1] === '\n' ? end : text.indexOf('\n', end) === -1 ? text.length : text.indexOf('\n', end) + 1;
  const before = text.slice(0, at);
  return `${before}${before.endsWith('\n') ? '' : '\n'}${indent(body, dash[1]!)}${text.slice(at)}`;
}

function indent(block: string, prefix: string): string {
  return block
    .split('\n')
    .map((line) => (line ? `${prefix}${line}` : line))
    .join('\n');
}
