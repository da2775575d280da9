/**
 * The prompt template language: a small, logic-less subset of Mustache, enough to lay out a
 * prompt without a template engine dependency.
 *
 * - `{{name}}` is replaced by the value (a list is joined with ", "); values are never re-read as
 *   template text, so a task description holding `{{x}}` is printed as it is.
 * - `{{#name}}…{{/name}}` is kept when the value is a non-empty string, `true` or a non-empty list;
 *   for a list it is repeated per item, with `{{.}}` standing for the item.
 * - `{{^name}}…{{/name}}` is kept when the value is empty, `false` or an empty list.
 * - A line holding nothing but one section tag disappears with its line break (Mustache's
 *   "standalone" rule), so sections can sit on lines of their own without leaving blank lines.
 */
export type TemplateValue = string | boolean | readonly string[];
export type TemplateValues = Readonly<Record<string, TemplateValue>>;

type Node = { type: 'text'; text: string } | { type: 'var'; name: string } | { type: 'section'; name: string; inverted: boolean; children: Node[] };

const TAG = /\{\{\s*([#^/]?)\s*([A-Za-z][\w]*|\.)\s*\}\}/g;
const STANDALONE = /^[ \t]*(\{\{\s*[#^/]\s*[A-Za-z][\w]*\s*\}\})[ \t]*$/;

/** Thrown for a template that cannot be read; the message names what is wrong. */
export class PromptTemplateError extends Error {}

/**
 * Parses `template`, checking that every placeholder is one of `names`. Returns the problems (an
 * empty list for a good template), for the manifest's cross-field rules.
 */
export function checkPromptTemplate(template: string, names: readonly string[]): string[] {
  try {
    parse(template, new Set(names));
    return [];
  } catch (error) {
    return [(error as Error).message];
  }
}

/** Renders `template` with `values`; throws PromptTemplateError for a malformed template or an unknown name. */
export function renderPromptTemplate(template: string, values: TemplateValues): string {
  return render(parse(template, new Set(Object.keys(values))), values, undefined);
}

function parse(template: string, names: ReadonlySet<string>): Node[] {
  // Standalone section tags lose their line: "  {{#x}}\n" becomes "{{#x}}".
  const source = template
    .split(/(?<=\n)/)
    .map((line) => {
      const match = STANDALONE.exec(line.replace(/\r?\n$/, ''));
      return match ? match[1]! : line;
    })
    .join('');
  const root: Node[] = [];
  const stack: Array<{ name: string; children: Node[] }> = [{ name: '', children: root }];
  let last = 0;
  for (const match of source.matchAll(TAG)) {
    const [whole, sigil, name] = match as unknown as [string, string, string];
    const top = stack.at(-1)!;
    if (match.index > last) top.children.push({ type: 'text', text: source.slice(last, match.index) });
    last = match.index + whole.length;
    if (name === '.') {
      if (sigil || stack.length === 1) throw new PromptTemplateError('{{.}} may only stand inside a {{#list}}…{{/list}} section');
      top.children.push({ type: 'var', name });
      continue;
    }
    if (!names.has(name)) throw new PromptTemplateError(`unknown placeholder {{${sigil}${name}}}; known: ${[...names].sort().join(', ')}`);
    if (sigil === '/') {
      if (top.name !== name) throw new PromptTemplateError(`{{/${name}}} closes a section that is not open${top.name ? ` (open: {{#${top.name}}})` : ''}`);
      stack.pop();
    } else if (sigil === '#' || sigil === '^') {
      const section: Node = { type: 'section', name, inverted: sigil === '^', children: [] };
      top.children.push(section);
      stack.push({ name, children: section.children });
    } else {
      top.children.push({ type: 'var', name });
    }
  }
  if (stack.length > 1) throw new PromptTemplateError(`section {{#${stack.at(-1)!.name}}} is never closed with {{/${stack.at(-1)!.name}}}`);
  if (last < source.length) root.push({ type: 'text', text: source.slice(last) });
  return root;
}

function render(nodes: readonly Node[], values: TemplateValues, item: string | undefined): string {
  let out = '';
  for (const node of nodes) {
    if (node.type === 'text') out += node.text;
    else if (node.type === 'var') out += node.name === '.' ? (item ?? '') : show(values[node.name]);
    else {
      const value = values[node.name];
      const items = Array.isArray(value) ? (value as readonly string[]) : null;
      const truthy = items ? items.length > 0 : Boolean(value);
      if (node.inverted) out += truthy ? '' : render(node.children, values, item);
      else if (items) out += items.map((each) => render(node.children, values, each)).join('');
      else if (truthy) out += render(node.children, values, item);
    }
  }
  return out;
}

function show(value: TemplateValue | undefined): string {
  if (value === undefined || value === false) return '';
  if (value === true) return 'true';
  return typeof value === 'string' ? value : value.join(', ');
}
