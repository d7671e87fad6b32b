// The mutation score of each security-critical folder, from StrykerJS's last report
// (reports/mutation/mutation.json, written by `npm run test:mutation`): killed and timed-out mutants
// over every mutant that ran or had no test (compile errors and ignored ones left out), as Stryker
// counts it. Prints one line per folder and the surviving mutants of any folder under the target;
// exits 1 when a folder is under it.
//
// Usage: node scripts/mutation-scores.mjs [REPORT] [--target PERCENT]
import { readFileSync } from 'node:fs';

const args = process.argv.slice(2);
const targetAt = args.indexOf('--target');
const target = targetAt >= 0 ? Number(args[targetAt + 1]) : 80;
const reportPath =
  args.find((arg, i) => !arg.startsWith('--') && args[i - 1] !== '--target') ??
  'reports/mutation/mutation.json';
const report = JSON.parse(readFileSync(reportPath, 'utf8'));

/** The folders the issue names, each scored on its own; a file belongs to the first that holds it. */
const FOLDERS = [
  'server/application/oidc/',
  'server/oidc/',
  'server/audit/',
  'server/evidence/',
  'server/signing/',
  'server/auth/',
  'server/webhooks/signature.ts',
  'server/rate-limits/',
];
const DETECTED = new Set(['Killed', 'Timeout']);
const UNDETECTED = new Set(['Survived', 'NoCoverage']);

const byFolder = new Map(FOLDERS.map((folder) => [folder, { detected: 0, undetected: 0, survivors: [] }]));
for (const [file, { mutants, source }] of Object.entries(report.files)) {
  const folder = FOLDERS.find((prefix) => file.startsWith(prefix));
  if (!folder) continue;
  const tally = byFolder.get(folder);
  const lines = source.split('\n');
  for (const mutant of mutants) {
    if (DETECTED.has(mutant.status)) tally.detected += 1;
    else if (UNDETECTED.has(mutant.status)) {
      tally.undetected += 1;
      const line = mutant.location.start.line;
      tally.survivors.push(
        `${file}:${line} ${mutant.mutatorName} (${mutant.status}) ${JSON.stringify(mutant.replacement ?? '')} in: ${lines[line - 1]?.trim().slice(0, 120)}`,
      );
    }
  }
}

let ok = true;
for (const [folder, tally] of byFolder) {
  const valid = tally.detected + tally.undetected;
  const score = valid === 0 ? 100 : (100 * tally.detected) / valid;
  const below = score < target;
  if (below) ok = false;
  console.log(
    `${folder.padEnd(32)} ${score.toFixed(1).padStart(5)} %  (${tally.detected} of ${valid} mutants killed)${below ? `  below ${target} %` : ''}`,
  );
  if (below || args.includes('--survivors'))
    for (const survivor of tally.survivors) console.log(`    ${survivor}`);
}
process.exit(ok ? 0 : 1);
