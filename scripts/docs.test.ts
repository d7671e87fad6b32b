import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { SEEDED_PLANS, seededTopupCents } from '@/cli/plans-help';
import { COMMANDS } from '@/cli/usage';

/**
 * The README and docs/ hold to what they promise a reader of the repository: every relative link
 * and anchor leads somewhere, the README stays an entry point that starts with the two commands,
 * the commands its shell blocks show exist (package.json's scripts, the operator CLI's commands),
 * and no page cites what a reader does not have (issue numbers, internal documents).
 *
 * Each check is a function from a file's text to its problems, one line each, `file:line: what`,
 * so a failure says where to look.
 */
const root = process.cwd();

const README_MAX_LINES = 200;

/** The README and every page under docs/, as paths relative to the repository. */
function markdownFiles(): string[] {
  const walk = (dir: string): string[] =>
    readdirSync(path.join(root, dir), { withFileTypes: true })
      .flatMap((entry) => {
        const relative = path.posix.join(dir, entry.name);
        if (entry.isDirectory()) return walk(relative);
        return entry.name.endsWith('.md') ? [relative] : [];
      })
      .sort();
  return ['README.md', ...walk('docs')];
}

const read = (file: string) => readFileSync(path.join(root, file), 'utf8');

interface Fence {
  /** The info string's first word (`sh`, `bash`, `yaml`, or ''). */
  lang: string;
  /** 1-based line of the opening fence. */
  line: number;
  body: string[];
}

interface Parsed {
  lines: string[];
  /** For each line, whether it is part of a fenced code block (fences included). */
  inFence: boolean[];
  fences: Fence[];
}

function parse(text: string): Parsed {
  const lines = text.split('\n');
  const inFence: boolean[] = [];
  const fences: Fence[] = [];
  let open: { marker: string; fence: Fence } | null = null;
  lines.forEach((line, index) => {
    const fence = /^ {0,3}(`{3,}|~{3,})\s*([^\s`]*)/.exec(line);
    if (open) {
      inFence.push(true);
      const closing = fence?.[1];
      if (closing && closing[0] === open.marker[0] && closing.length >= open.marker.length && !fence[2]) {
        open = null;
      } else {
        open.fence.body.push(line);
      }
      return;
    }
    if (fence?.[1]) {
      const opened: Fence = { lang: (fence[2] ?? '').toLowerCase(), line: index + 1, body: [] };
      fences.push(opened);
      open = { marker: fence[1], fence: opened };
      inFence.push(true);
      return;
    }
    inFence.push(false);
  });
  return { lines, inFence, fences };
}

/** A heading's anchor as GitHub makes it: lower case, punctuation but `-` and `_` dropped, spaces to `-`. */
function slug(heading: string): string {
  return heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1') // a link's text
    .replace(/<[^>]+>/g, '') // inline HTML
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc}\- ]/gu, '')
    .replace(/ /g, '-');
}

/** Every anchor a page's headings make, repeated ones numbered as GitHub numbers them. */
function anchorsOf(text: string): Set<string> {
  const { lines, inFence } = parse(text);
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  lines.forEach((line, index) => {
    if (inFence[index]) return;
    const heading = /^ {0,3}#{1,6}\s+(.*?)(?:\s+#+)?\s*$/.exec(line);
    if (!heading?.[1]) return;
    const base = slug(heading[1]);
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    anchors.add(count === 0 ? base : `${base}-${count}`);
  });
  return anchors;
}

/** A line with its inline code spans blanked out: a link shown as code is not a link. */
const withoutCodeSpans = (line: string) => line.replace(/(`+)[^`]*?\1/g, (span) => ' '.repeat(span.length));

/** Every link target outside code: inline links and images (their text may wrap), and reference definitions. */
function linkTargets(text: string): Array<{ line: number; target: string }> {
  const { lines, inFence } = parse(text);
  const visible = lines.map((line, index) => (inFence[index] ? '' : withoutCodeSpans(line)));
  const targets: Array<{ line: number; target: string }> = [];
  const joined = visible.join('\n');
  const link = /!?\[(?:[^\]\\\n]|\\.|\n(?!\s*\n))*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g;
  for (const match of joined.matchAll(link)) {
    const at = match.index + match[0].indexOf('](');
    targets.push({ line: joined.slice(0, at).split('\n').length, target: match[1] ?? '' });
  }
  visible.forEach((line, index) => {
    const definition = /^ {0,3}\[[^\]]+\]:\s+<?([^\s>]+)>?/.exec(line);
    if (definition?.[1]) targets.push({ line: index + 1, target: definition[1] });
  });
  return targets.sort((a, b) => a.line - b.line);
}

/** Relative links whose file does not exist, lies outside the repository, or lacks the anchor. */
function linkProblems(file: string, text: string): string[] {
  const problems: string[] = [];
  for (const { line, target } of linkTargets(text)) {
    if (/^[a-z][a-z\d+.-]*:/i.test(target)) continue; // http(s), mailto and other schemes
    const where = `${file}:${line}: link ${target}`;
    const hash = target.indexOf('#');
    const pathPart = decodeURIComponent(hash === -1 ? target : target.slice(0, hash));
    const anchor = hash === -1 ? null : decodeURIComponent(target.slice(hash + 1));
    const samePage = pathPart === '';
    const resolved = pathPart.startsWith('/')
      ? path.join(root, pathPart)
      : path.resolve(root, path.dirname(file), samePage ? path.basename(file) : pathPart);
    const relative = path.relative(root, resolved);
    if (relative.startsWith('..') || path.isAbsolute(relative)) {
      problems.push(`${where}: leads outside the repository`);
      continue;
    }
    if (!samePage && !existsSync(resolved)) {
      problems.push(`${where}: ${relative} does not exist`);
      continue;
    }
    if (anchor === null) continue;
    if (!samePage && (!resolved.endsWith('.md') || statSync(resolved).isDirectory())) {
      if (!/^L\d+(-L\d+)?$/.test(anchor)) problems.push(`${where}: ${relative} has no headings to link to`);
      continue;
    }
    const anchors = anchorsOf(samePage ? text : readFileSync(resolved, 'utf8'));
    if (!anchors.has(anchor)) {
      problems.push(`${where}: ${relative} has no heading #${anchor} (it has: ${[...anchors].join(', ')})`);
    }
  }
  return problems;
}

/** What a reader of the repository does not have: issue numbers and documents kept elsewhere. */
const FORBIDDEN: ReadonlyArray<{ pattern: RegExp; why: string }> = [
  { pattern: /\bissues?\s+#?\d+/i, why: 'an issue number' },
  { pattern: /decisions\.md/i, why: 'decisions.md, which is not in the repository' },
  {
    pattern: /\bdecisions:\s*"/i,
    why: 'a citation of the decisions document, which is not in the repository',
  },
  {
    pattern: /\bthe spec\b/i,
    why: '"the spec": say the OpenAPI document (/v1/openapi.json, rendered at /docs)',
  },
  {
    pattern: /\bspec says\b/i,
    why: '"spec says": say the OpenAPI document (/v1/openapi.json, rendered at /docs)',
  },
  { pattern: /\.\.\/shared\//, why: '../shared/, which is outside the repository' },
  {
    pattern: /\b(api-spec|stack-notes|architecture\.md)\b/i,
    why: 'a design document that is not in the repository',
  },
  {
    pattern: /\bthe decisions\b|\bdecisions (say|says|fix|require)\b/i,
    why: 'the decisions document, which is not in the repository',
  },
  // Two digits after # and no more hex digits: an issue's number, never a colour (#333, #0a5fff).
  { pattern: /(?<![\w&])#\d{2}(?![\da-f])/i, why: 'an issue number' },
];

function forbiddenProblems(file: string, text: string): string[] {
  return text
    .split('\n')
    .flatMap((line, index) =>
      FORBIDDEN.flatMap(({ pattern, why }) =>
        [...line.matchAll(new RegExp(pattern.source, `${pattern.flags}g`))].map(
          (found) => `${file}:${index + 1}: "${found[0]}": ${why}`,
        ),
      ),
    );
}

function readmeProblems(text: string): string[] {
  const problems: string[] = [];
  const lines = text.replace(/\n$/, '').split('\n');
  if (lines.length > README_MAX_LINES) {
    problems.push(
      `README.md: ${lines.length} lines, more than ${README_MAX_LINES}: move the detail into docs/`,
    );
  }
  const { fences, inFence } = parse(text);
  const first = fences[0];
  if (!first) return [...problems, 'README.md: no fenced code block: it must start with the two commands'];
  const body = first.body.join('\n');
  for (const command of ['npm install && npm start', 'npm test']) {
    if (!body.includes(command)) {
      problems.push(`README.md:${first.line}: the first code block does not contain \`${command}\``);
    }
  }
  const firstSection = lines.findIndex((line, index) => !inFence[index] && /^#{2,6}\s/.test(line));
  if (firstSection !== -1 && firstSection < first.line - 1) {
    problems.push(
      `README.md:${firstSection + 1}: a section starts before the first code block (line ${first.line}): the two commands come first`,
    );
  }
  return problems;
}

const SHELL_LANGS = new Set(['sh', 'bash', 'shell']);

/** A shell block's commands, each with the line it starts on: continuation lines joined. */
function shellCommands(fence: Fence): Array<{ line: number; text: string }> {
  const commands: Array<{ line: number; text: string }> = [];
  let pending: { line: number; text: string } | null = null;
  fence.body.forEach((line, index) => {
    const lineNumber = fence.line + 1 + index;
    const current: { line: number; text: string } = pending ?? { line: lineNumber, text: '' };
    const continued = /\\\s*$/.test(line);
    current.text += ` ${continued ? line.replace(/\\\s*$/, '') : line}`;
    if (continued) {
      pending = current;
    } else {
      commands.push(current);
      pending = null;
    }
  });
  if (pending) commands.push(pending);
  return commands;
}

const COMMAND_NAMES = Object.keys(COMMANDS);

/**
 * Whether the words after `cli --` name a command the CLI knows (cli/usage.ts), read as the CLI
 * reads them: the words before the first option, `help` aside; a group (`teams`) only with help.
 */
function cliCommandProblem(args: string): string | null {
  const tokens: string[] = [];
  for (const token of args.trim().split(/\s+/)) {
    if (token === '' || /^(\||;|&|\)|<|>|#|\d?>)/.test(token)) break; // the shell's, not the CLI's
    tokens.push(token.replace(/^["']|["']$/g, ''));
  }
  const firstOption = tokens.findIndex((token) => token.startsWith('-'));
  const words = (firstOption === -1 ? tokens : tokens.slice(0, firstOption)).filter(
    (word) => word !== 'help',
  );
  const wantsHelp = tokens.some((token) => token === 'help' || token === '--help' || token === '-h');
  if (words.length === 0) return null;
  if (COMMAND_NAMES.some((name) => name.split(' ').every((word, i) => words[i] === word))) return null;
  if (wantsHelp && words.length === 1 && COMMAND_NAMES.some((name) => name.startsWith(`${words[0]} `))) {
    return null;
  }
  return `"${words.slice(0, 2).join(' ')}" is not a command of the CLI (cli/usage.ts knows: ${COMMAND_NAMES.join(', ')})`;
}

/** `npm run <script>` naming no script of package.json, and `cli -- <command>` naming no command. */
function shellBlockProblems(file: string, text: string, scripts: ReadonlySet<string>): string[] {
  const problems: string[] = [];
  for (const fence of parse(text).fences) {
    if (!SHELL_LANGS.has(fence.lang)) continue;
    for (const command of shellCommands(fence)) {
      const where = `${file}:${command.line}`;
      // Each `npm run` up to the next one: a line may hold several.
      const starts = [...command.text.matchAll(/\bnpm\s+run(?:-script)?(?=\s)/g)].map((found) => found.index);
      for (const [i, start] of starts.entries()) {
        const segment = command.text.slice(start, starts[i + 1]);
        const match = /^npm\s+run(?:-script)?((?:\s+-[\w-]+(?:=\S+)?)*)\s+([^\s;|&()<>#"'`]+)(.*)$/.exec(
          segment,
        );
        if (!match) continue;
        const script = match[2] ?? '';
        if (!scripts.has(script)) {
          problems.push(`${where}: npm run ${script}: package.json has no script "${script}"`);
          continue;
        }
        if (script !== 'cli') continue;
        const problem = cliCommandProblem((match[3] ?? '').replace(/^\s*--(?=\s|$)/, ''));
        if (problem) problems.push(`${where}: npm run cli: ${problem}`);
      }
      for (const match of command.text.matchAll(/\bvouch\s+cli\s+(.*)$/g)) {
        const problem = cliCommandProblem(match[1] ?? '');
        if (problem) problems.push(`${where}: vouch cli: ${problem}`);
      }
    }
  }
  return problems;
}

const scripts = new Set(Object.keys(JSON.parse(read('package.json')).scripts as Record<string, string>));
const files = markdownFiles();

describe('the README and docs/', () => {
  it('are found: the README and the pages by reader', () => {
    expect(files).toContain('README.md');
    expect(files).toContain('docs/README.md');
    expect(files).toContain('docs/guides/1-quick-start.md');
  });

  it('link only to files and headings that exist', () => {
    expect(files.flatMap((file) => linkProblems(file, read(file)))).toEqual([]);
  });

  it('cite no issue numbers and no documents outside the repository', () => {
    expect(files.flatMap((file) => forbiddenProblems(file, read(file)))).toEqual([]);
  });

  it("show in shell blocks only package.json's scripts and the CLI's commands", () => {
    expect(files.flatMap((file) => shellBlockProblems(file, read(file), scripts))).toEqual([]);
  });

  it('keep the README short, starting with the two commands', () => {
    expect(readmeProblems(read('README.md'))).toEqual([]);
  });

  it("say that npm install's EBADENGINE warnings are expected on a machine whose own Node is older", () => {
    // The dependencies (and package.json's engines) ask for Node 24, which the `node` package
    // brings; npm still weighs the machine's own Node and warns.
    const engines = JSON.parse(read('package.json')) as { engines?: { node?: string } };
    expect(engines.engines?.node).toMatch(/24/);
    expect(read('README.md').replaceAll('\n', ' ')).toMatch(/`EBADENGINE` warnings .*expected and harmless/);
  });

  it('say what the trial plan allows and what each unit past it costs, as the migrations seed them', () => {
    const trial = SEEDED_PLANS.find((plan) => plan.code === 'trial');
    const readme = read('README.md').replaceAll('\n', ' ');
    expect(readme).toContain(
      `\`trial\` plan for ${trial?.trialDays} days: it includes ${trial?.includedUnits} units`,
    );
    const prices = Object.entries(seededTopupCents())
      .map(([method, cents]) => `${method} ${cents}`)
      .join(', ');
    for (const file of ['README.md', 'docs/operators/command-line.md']) {
      expect(read(file).replaceAll('\n', ' '), file).toContain(`${prices} cents`);
    }
  });
});

describe('the checks themselves', () => {
  it("make GitHub's anchors", () => {
    expect(slug("Where a request's CPU goes")).toBe('where-a-requests-cpu-goes');
    expect(slug('Capacity: what to scale when')).toBe('capacity-what-to-scale-when');
    expect(slug('`simulate`')).toBe('simulate');
    expect(slug('1. The image')).toBe('1-the-image');
    expect(slug('snake_case and [a link](x.md)')).toBe('snake_case-and-a-link');
    expect([...anchorsOf('# A\n```sh\n# not a heading\n```\n## A\n')]).toEqual(['a', 'a-1']);
  });

  it('find a missing file, a missing anchor, and a link out of the repository', () => {
    const page = [
      '[ok](../README.md) [ok](#here) `[code](nowhere.md)` [web](https://example.com/x.md)',
      '[gone](guides/no-such-guide.md)',
      '[anchor](guides/operations.md#no-such-heading)',
      '[out](../../elsewhere.md) and a [wrapped',
      'link](guides/operations.md#restore)',
      '## Here',
    ].join('\n');
    expect(linkProblems('docs/scratch.md', page)).toEqual([
      'docs/scratch.md:2: link guides/no-such-guide.md: docs/guides/no-such-guide.md does not exist',
      expect.stringMatching(
        /^docs\/scratch\.md:3: link .*: docs\/guides\/operations\.md has no heading #no-such-heading/,
      ),
      'docs/scratch.md:4: link ../../elsewhere.md: leads outside the repository',
      expect.stringMatching(
        /^docs\/scratch\.md:5: link .*: docs\/guides\/operations\.md has no heading #restore/,
      ),
    ]);
  });

  it('find issue numbers and documents outside the repository', () => {
    const page =
      'Fine.\nAs issue 27 says (issue 29).\nSee decisions.md.\nThe spec says so.\nIn ../shared/notes.md.\n' +
      'As api-spec and the decisions say.\nFixed by #41.\nColours #333 and #0a5fff, and &#38; are fine.';
    expect(forbiddenProblems('docs/scratch.md', page).map((problem) => problem.split(': ')[0])).toEqual([
      'docs/scratch.md:2',
      'docs/scratch.md:2',
      'docs/scratch.md:3',
      'docs/scratch.md:4',
      'docs/scratch.md:4',
      'docs/scratch.md:5',
      'docs/scratch.md:6',
      'docs/scratch.md:6',
      'docs/scratch.md:7',
    ]);
  });

  it('find unknown scripts and unknown CLI commands in shell blocks only', () => {
    const page = [
      'Run `npm run nope` (not a block).',
      '```sh',
      'npm run --silent cli -- teams create --name A --admin-email a@example.test | tail -n 1',
      'npm run --silent cli -- --help',
      'npm run cli -- teams --help',
      'npm run nope',
      'npm run --silent cli -- teams destroy --team ID',
      'CASE=$(npm run --silent cli -- \\',
      '  evidence check FILE)',
      '```',
      '```js',
      "run('npm run nope')",
      '```',
    ].join('\n');
    expect(shellBlockProblems('docs/scratch.md', page, scripts)).toEqual([
      'docs/scratch.md:6: npm run nope: package.json has no script "nope"',
      expect.stringMatching(/^docs\/scratch\.md:7: npm run cli: "teams destroy" is not a command/),
      expect.stringMatching(/^docs\/scratch\.md:8: npm run cli: "evidence check" is not a command/),
    ]);
  });

  it('find a long README, and one that does not start with the two commands', () => {
    const commands = '```sh\nnpm install && npm start\nnpm test\n```\n';
    expect(readmeProblems(`# Vouch\n\n${commands}`)).toEqual([]);
    expect(readmeProblems(`# Vouch\n\n${commands}${'line\n'.repeat(README_MAX_LINES)}`)).toEqual([
      expect.stringMatching(/^README\.md: \d+ lines, more than 200/),
    ]);
    expect(readmeProblems('# Vouch\n\n```sh\nnpm start\n```\n')).toEqual([
      'README.md:3: the first code block does not contain `npm install && npm start`',
      'README.md:3: the first code block does not contain `npm test`',
    ]);
    expect(readmeProblems(`# Vouch\n\n## Processes\n\n${commands}`)).toEqual([
      'README.md:3: a section starts before the first code block (line 5): the two commands come first',
    ]);
  });
});
