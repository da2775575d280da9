/**
 * The table of calibrate.sh: one Markdown row per project from the reports it kept (<name>.json,
 * as `genesis calibrate --json` prints them, and projects.tsv, what the script knew of each), then
 * f over all the projects' replayed commits together, and every rejection with its cause.
 * f counts the rejections Genesis's own rules and readers make (a rule such as tests-vanished, a
 * runner's report it could not read): each is a right change refused by Genesis. A version whose
 * own tests fail where its parent's passed, or that the gate's environment failed (a missing tool,
 * the network, its time and memory limits), is rejected by the project or by world.yaml, not by a
 * rule: those are counted apart, each listed with the message that names its failing tests, so
 * the reader can check that it fails outside Genesis too. They are left out of f's denominator as
 * well: the gate stops at a failing test before its rules on vanished tests are asked, so such a
 * commit says nothing of them. f over every rejection and every commit is printed beside it.
 *   node --import tsx scripts/real-history/report-table.ts <folder>
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { computeWilsonInterval } from '../../src/reliability/wilson.js';

interface Measure {
  rate: number;
  low: number;
  high: number;
  count: number;
  of: number;
}

interface Report {
  falseRejection?: Measure & {
    flaky: unknown[];
    causes: { cause: string; count: number; advice?: string }[];
    replays: { commit: string; subject: string; accepted: boolean; cause?: string; reason?: string; message?: string }[];
  };
  recall?: Measure & { sites: number; byLanguage: { language: string; count: number; of: number }[] };
  recallUnmeasured?: string;
}

/** Causes (rejection-cause.ts) that are Genesis's own doing: its rules and its readers of the runners' output. */
const GENESIS_OWN: ReadonlySet<string> = new Set(['genesis-rule', 'report-unread']);

const percent = (x: number) => `${(100 * x).toFixed(1).replace(/\.0$/, '')}%`;
const measure = (count: number, of: number): Measure => ({ count, of, rate: of === 0 ? 0 : count / of, ...computeWilsonInterval(count, of) });
const measured = (m: Measure) => `${m.count}/${m.of} = ${percent(m.rate)} (${percent(m.low)}–${percent(m.high)})`;

async function main(folder: string): Promise<void> {
  const lines = (await readFile(join(folder, 'projects.tsv'), 'utf8')).split('\n').filter(Boolean);
  const rows: string[] = [];
  const rejections: string[] = [];
  let rejected = 0;
  let rejectedAtAll = 0;
  let replayed = 0;
  let judged = 0;
  let flaky = 0;
  for (const line of lines) {
    const [name, versions, runner, seconds, command] = line.split('\t');
    const text = await readFile(join(folder, `${name}.json`), 'utf8').catch(() => null);
    if (text === null) {
      rows.push(
        `| ${name} | ${runner} | ${versions} | – | failed: adoption or calibration did not finish (its error is on stderr) | – | ${seconds} s | \`${command}\` |`,
      );
      continue;
    }
    const report = JSON.parse(text) as Report;
    const f = report.falseRejection;
    const d = report.recall;
    let own = 0;
    if (f) {
      const refused = f.replays.filter((r) => !r.accepted);
      own = refused.filter((r) => GENESIS_OWN.has(r.cause ?? '')).length;
      rejected += own;
      rejectedAtAll += refused.length;
      replayed += f.of;
      judged += f.of - (refused.length - own);
      flaky += f.flaky.length;
      for (const replay of refused) {
        const kind = GENESIS_OWN.has(replay.cause ?? '') ? 'false rejection' : 'rejected apart from f';
        rejections.push(
          `${kind}: ${name}: ${replay.subject} (${replay.commit.slice(0, 12)}) ${replay.cause ?? ''} ${replay.reason ?? ''}: ${(replay.message ?? '').split('\n').slice(0, 3).join(' / ')}`,
        );
      }
    }
    const recall = d
      ? `${measured(d)} of ${d.sites} sites (${d.byLanguage.map((l) => `${l.language} ${l.count}/${l.of}`).join(', ')})`
      : `not measured: ${report.recallUnmeasured ?? 'no report'}`;
    const apart = f ? f.count - own : 0;
    const falseRejection = f
      ? `${measured(measure(own, f.of - apart))}${apart > 0 ? `, ${apart} rejected apart (not Genesis's rules)` : ''}${f.flaky.length > 0 ? `, ${f.flaky.length} flaky apart` : ''}`
      : 'not measured';
    rows.push(`| ${name} | ${runner} | ${versions} | ${f?.of ?? 0} | ${falseRejection} | ${recall} | ${seconds} s | \`${command}\` |`);
  }
  const overall = computeWilsonInterval(rejected, judged);
  const atAll = computeWilsonInterval(rejectedAtAll, replayed);
  const out = [
    '| project | runner | versions (commits) | commits replayed | f (95% Wilson) | d (95% Wilson) | adopt + calibrate | command |',
    '|---|---|---|---|---|---|---|---|',
    ...rows,
    '',
    `f over all ${judged} replayed commits that no test of the project rejected: ${rejected}/${judged} = ${percent(judged === 0 ? 0 : rejected / judged)} (95% Wilson ${percent(overall.low)}–${percent(overall.high)}); flaky, apart from f: ${flaky}`,
    `every rejection, whatever its cause, over all ${replayed} replayed commits: ${rejectedAtAll}/${replayed} = ${percent(replayed === 0 ? 0 : rejectedAtAll / replayed)} (95% Wilson ${percent(atAll.low)}–${percent(atAll.high)})`,
    ...rejections,
  ];
  process.stdout.write(`${out.join('\n')}\n`);
}

const folder = process.argv[2];
if (!folder) {
  process.stderr.write('usage: node --import tsx scripts/real-history/report-table.ts <folder>\n');
  process.exit(2);
}
await main(folder);
