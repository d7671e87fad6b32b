import { type ChildProcess, spawn } from 'node:child_process';

export interface Exited {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** A started command, to its exit, with what it printed. */
export function toExit(child: ChildProcess): Promise<Exited> {
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (chunk) => {
    stdout += chunk;
  });
  child.stderr?.on('data', (chunk) => {
    stderr += chunk;
  });
  return new Promise((resolve) => child.once('close', (code) => resolve({ code, stdout, stderr })));
}

/**
 * `script` in a newcomer's shell: bash with none of the test run's variables but PATH and HOME,
 * and `env` (what the reader is told to set, or what their machine would give the command).
 */
export function newcomerBash(script: string, env: Record<string, string> = {}): Promise<Exited> {
  const shellEnv: NodeJS.ProcessEnv = { ...process.env };
  for (const name of Object.keys(shellEnv)) if (name !== 'PATH' && name !== 'HOME') delete shellEnv[name];
  Object.assign(shellEnv, env);
  return toExit(spawn('bash', ['-c', script], { env: shellEnv, stdio: ['ignore', 'pipe', 'pipe'] }));
}

/**
 * A markdown document's section: from its heading line to the next heading of the same level or
 * higher outside a code block (`# ` ends a `# ` section, `## ` or `# ` a `## ` one). Null when the
 * heading is not there.
 */
export function markdownSection(markdown: string, heading: string): string | null {
  const lines = markdown.split('\n');
  const start = lines.indexOf(heading);
  if (start < 0) return null;
  const level = /^#+/.exec(heading)?.[0].length ?? 1;
  const ends = new RegExp(`^#{1,${level}} `);
  let inCode = false;
  let end = start + 1;
  for (; end < lines.length; end++) {
    if (lines[end]?.startsWith('```')) inCode = !inCode;
    else if (!inCode && ends.test(lines[end] ?? '')) break;
  }
  return lines.slice(start, end).join('\n');
}

/** The shell blocks (```sh) of a piece of markdown, in order. */
export function shellBlocks(markdown: string): string[] {
  return [...markdown.matchAll(/```sh\n([\s\S]*?)```/g)].map((match) => match[1] ?? '');
}
