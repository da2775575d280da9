// One episode in full: why it ended the way it did, then the prompt, agent log, diff and gate log.
import { getJson } from '../api.js';
import { badge, fmtCost, fmtDuration, fmtTime, h, kv, link, panel, shortSha, table } from '../dom.js';

export const name = 'episode';
export const title = ({ match }) => `Episode ${decodeURIComponent(match[1])}`;

const TONE = { accepted: 'ok', rejected: 'warn', failed: 'bad' };

export async function render({ match }) {
  const id = decodeURIComponent(match[1]);
  const { record: r, task, artifacts, reflection } = await getJson(`/api/episodes/${encodeURIComponent(id)}`);
  const outcome = r.outcome ?? 'running';
  const duration = r.endedAt ? Date.parse(r.endedAt) - Date.parse(r.startedAt) : null;
  return h(
    'div',
    null,
    h(
      'div',
      { class: 'page-head' },
      h('h1', null, `Episode `, h('span', { class: 'mono' }, r.id)),
      badge(outcome),
      h(
        'p',
        { class: 'muted' },
        'task ',
        link(`#/episodes?task=${encodeURIComponent(r.task)}`, r.task),
        task ? ` (${task.title})` : '',
        ` · attempt ${r.attempt}`,
      ),
    ),
    reasonBox(r, outcome),
    h(
      'div',
      { class: 'two' },
      panel(
        'Record',
        kv([
          ['agent', r.agent],
          ['worker', r.worker],
          ['started', fmtTime(r.startedAt)],
          ['duration', fmtDuration(duration)],
          ['base', h('span', { class: 'mono' }, shortSha(r.base))],
          ['candidate', h('span', { class: 'mono' }, shortSha(r.candidate))],
          ['commit', r.commit ? h('span', { class: 'mono' }, shortSha(r.commit)) : 'not accepted'],
          ['changed files', r.changedFiles.length ? r.changedFiles.join(', ') : 'none'],
          ['cost', fmtCost(r.usage?.costUsd ?? null)],
        ]),
      ),
      panel(
        'Phases',
        table(
          ['Phase', { label: 'Time', class: 'num' }],
          Object.entries(r.phases).map(([phase, ms]) => [phase, fmtDuration(ms)]),
          'No phase finished.',
        ),
      ),
    ),
    r.gate
      ? panel(
          `Gate (${r.gate.sandbox}): ${r.gate.ok ? 'passed' : 'failed'}`,
          table(
            ['Step', 'Why it ran', 'Command', { label: 'Exit', class: 'num' }, 'Tests', { label: 'Time', class: 'num' }],
            r.gate.steps.map((st) => [
              st.name,
              st.why ?? '–',
              h('code', null, st.command),
              [String(st.exitCode), st.timedOut ? ' (timed out)' : '', st.oomKilled ? ' (out of memory)' : ''].join(''),
              st.tests ? `${st.tests.passed} passed, ${st.tests.failed} failed${st.tests.skipped ? `, ${st.tests.skipped} skipped` : ''}` : '–',
              fmtDuration(st.durationMs),
            ]),
          ),
        )
      : null,
    reflection ? logSection('Reflection it left', reflection, 'what the next attempt at this task is told about this one') : null,
    logSection('Prompt', artifacts.prompt, 'what the agent was told'),
    logSection('Agent log', artifacts.agentLog, 'what the agent printed'),
    logSection('Diff', artifacts.diff, 'the change against its base', true),
    logSection('Gate log', artifacts.gateLog, 'output of the gate commands'),
  );
}

function reasonBox(r, outcome) {
  const tone = TONE[outcome] ?? '';
  const headline =
    outcome === 'accepted'
      ? r.reason === 'replayed'
        ? 'Accepted after a replay on a newer head'
        : 'Accepted'
      : outcome === 'running'
        ? 'Still running'
        : `${outcome[0].toUpperCase()}${outcome.slice(1)}`;
  return h(
    'div',
    { class: `reason-box ${tone}`, 'data-reason': r.reason ?? '' },
    h('div', null, h('strong', null, headline), r.reason ? [': ', h('span', { class: 'code' }, r.reason)] : null),
    r.message ? h('div', null, r.message) : null,
    r.signature ? h('div', { class: 'small' }, 'failure signature: ', h('code', null, r.signature)) : null,
  );
}

function logSection(label, text, hint, diff = false) {
  const body = text?.trim() ? text : null;
  const lines = body ? body.split('\n').length : 0;
  return h(
    'details',
    { class: 'log', open: body !== null && lines < 400, 'data-section': label },
    h('summary', null, label, h('span', { class: 'muted small' }, body ? `${hint} · ${lines} lines` : 'none recorded')),
    body ? (diff ? diffBlock(body) : h('pre', { class: 'text' }, body)) : null,
  );
}

function diffBlock(text) {
  const kind = (line) =>
    line.startsWith('+++') || line.startsWith('---') || line.startsWith('diff ')
      ? 'file'
      : line.startsWith('@@')
        ? 'hunk'
        : line.startsWith('+')
          ? 'add'
          : line.startsWith('-')
            ? 'del'
            : null;
  return h(
    'pre',
    { class: 'text diff' },
    text.split('\n').map((line) => {
      const k = kind(line);
      return k ? h('span', { class: k }, line) : `${line}\n`;
    }),
  );
}
