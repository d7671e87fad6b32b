import { DrizzleQueryError } from 'drizzle-orm/errors';
// What pg-boss itself serializes a failed job's error with into `pgboss.job.output`.
import { serializeError } from 'serialize-error';
import { describe, expect, it } from 'vitest';
import { failingSafely, JobFailure } from './job-failure';

/** A failed statement as drizzle reports it: the SQL and every parameter, the database's error as its cause. */
function failedStatement(): DrizzleQueryError {
  const cause = Object.assign(new Error('unsupported Unicode escape sequence'), {
    name: 'PostgresError',
    code: '22P05',
    detail: '\\u0000 cannot be converted to text.',
    where: 'JSON data, line 1: [{"body":"ok\\u0000receiver-answer"...',
  });
  return new DrizzleQueryError(
    'with input as (select * from jsonb_to_recordset($1::jsonb) ...)',
    ['[{"id":"…","body":"ok\\u0000receiver-answer","email":"jane.doe@example.com"}]'],
    cause,
  );
}

const SECRETS = ['receiver-answer', 'jane.doe@example.com', 'jsonb_to_recordset', 'params', 'JSON data'];

describe('JobFailure', () => {
  it('keeps the database’s message and SQLSTATE, and nothing of the statement or its parameters', () => {
    const raw = JSON.stringify(serializeError(failedStatement()));
    // What pg-boss kept before: the parameters, the statement, the input around the fault.
    for (const secret of SECRETS) expect(raw).toContain(secret);

    const kept = serializeError(new JobFailure(failedStatement()));
    expect(kept).toMatchObject({
      name: 'JobFailure',
      message: 'PostgresError: unsupported Unicode escape sequence',
      sqlstate: '22P05',
    });
    expect(kept.stack).toMatch(/^JobFailure: PostgresError: unsupported Unicode escape sequence\n\s+at /);
    const text = JSON.stringify(kept);
    for (const secret of SECRETS) expect(text).not.toContain(secret);
  });

  it('keeps an ordinary error’s message', () => {
    expect(serializeError(new JobFailure(new TypeError('boom')))).toMatchObject({
      name: 'JobFailure',
      message: 'TypeError: boom',
    });
  });
});

describe('failingSafely', () => {
  it('passes a result through and rethrows a failure as a JobFailure', async () => {
    expect(await failingSafely('q', async (n: number) => n + 1)(1)).toBe(2);
    const failure = await failingSafely('q', async () => {
      throw failedStatement();
    })().catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(JobFailure);
    expect(JSON.stringify(serializeError(failure))).not.toContain('receiver-answer');
  });
});
