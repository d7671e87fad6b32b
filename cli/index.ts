import { z } from 'zod';
import { runCli } from './run';
import { UsageError } from './usage';

/*
 * The operator's command line: `npm run --silent cli -- <command>`. The last line of stdout is
 * one JSON object; errors go to stderr with exit code 1. `help`, `--help` or `-h` with any command
 * (or alone) prints its usage and exits 0 without loading the service or touching the database.
 */

/** An error as the operator reads it: a validation's messages, else the error's own. */
function messageOf(error: unknown): string {
  if (error instanceof z.ZodError) return error.issues.map((issue) => issue.message).join('; ');
  return error instanceof Error ? error.message : String(error);
}

runCli(process.argv.slice(2)).then(
  (output) => {
    process.stdout.write(`${output}\n`);
    process.exit(0);
  },
  (error: unknown) => {
    process.stderr.write(`error: ${messageOf(error)}\n`);
    if (error instanceof UsageError) process.stderr.write(`${error.usage}\n`);
    process.exit(1);
  },
);
