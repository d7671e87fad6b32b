import { DrizzleQueryError } from 'drizzle-orm/errors';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { errorFields, logger, routeConsoleThroughLogger } from './logger';
import { runInRequestScope } from './request-scope';

/** What the logger writes to stdout and stderr while `work` runs, as parsed lines. */
function captured(work: () => void) {
  const lines = {
    stdout: [] as Array<Record<string, unknown>>,
    stderr: [] as Array<Record<string, unknown>>,
  };
  for (const name of ['stdout', 'stderr'] as const) {
    vi.spyOn(process[name], 'write').mockImplementation((chunk) => {
      for (const line of String(chunk).split('\n').filter(Boolean)) lines[name].push(JSON.parse(line));
      return true;
    });
  }
  try {
    work();
  } finally {
    vi.restoreAllMocks();
  }
  return lines;
}

describe('logger', () => {
  afterEach(() => vi.restoreAllMocks());

  it('writes one JSON line per entry: info on stdout, warn and error on stderr, debug below LOG_LEVEL', () => {
    const { stdout, stderr } = captured(() => {
      logger.debug('not shown');
      logger.info('started', { port: 3000 });
      logger.warn('slow', { ms: 12 });
      logger.error('failed');
    });
    expect(stdout).toEqual([{ level: 'info', time: expect.any(String), port: 3000, message: 'started' }]);
    expect(stderr.map((line) => [line.level, line.message])).toEqual([
      ['warn', 'slow'],
      ['error', 'failed'],
    ]);
    expect(new Date(String(stdout[0]?.time)).toISOString()).toBe(stdout[0]?.time);
  });

  it('carries the request id of the request being served', () => {
    const { stdout } = captured(() => {
      runInRequestScope({ requestId: 'req_abc' }, () => logger.info('inside'));
      logger.info('outside');
    });
    expect(stdout[0]).toMatchObject({ request_id: 'req_abc', message: 'inside' });
    expect(stdout[1]).not.toHaveProperty('request_id');
  });

  it('never writes a field named like a secret, at the top or one object down', () => {
    const { stdout } = captured(() =>
      logger.info('call', { password: 'hunter2', user: { token: 'tok_1', id: 'u1' }, params: ['a@b.c'] }),
    );
    const line = JSON.stringify(stdout[0]);
    for (const secret of ['hunter2', 'tok_1', 'a@b.c']) expect(line).not.toContain(secret);
    expect(stdout[0]).toMatchObject({ user: { id: 'u1' } });
  });

  it('routes what libraries print through console to the same lines, without statement parameters', () => {
    const original = { ...console };
    try {
      routeConsoleThroughLogger();
      const failed = new DrizzleQueryError('select $1', ['jane.doe@example.com'], new Error('boom'));
      const { stdout, stderr } = captured(() => {
        runInRequestScope({ requestId: 'req_lib' }, () => console.error('route failed', failed));
        console.log('ready on %s', 'port 3000');
      });
      expect(stderr[0]).toMatchObject({ level: 'error', request_id: 'req_lib' });
      expect(JSON.stringify(stderr)).not.toContain('jane.doe@example.com');
      expect(stdout[0]).toMatchObject({ level: 'info', message: 'ready on %s port 3000' });
    } finally {
      Object.assign(console, original);
    }
  });
});

describe('errorFields', () => {
  it('describes a failed statement by the database error, never its SQL or parameters', () => {
    const cause = Object.assign(new Error('invalid byte sequence for encoding "UTF8": 0x00'), {
      name: 'PostgresError',
      code: '22021',
    });
    const failed = new DrizzleQueryError(
      'insert into "cases" ("subject_email", "notes")\nvalues ($1, $2)',
      ['jane.doe@example.com', 'badge colour blue'],
      cause,
    );
    const fields = errorFields(failed);
    const line = JSON.stringify(fields);
    expect(fields.error).toBe('PostgresError: invalid byte sequence for encoding "UTF8": 0x00');
    expect(fields.sqlstate).toBe('22021');
    expect(fields.stack).toMatch(/^\s+at /);
    for (const secret of ['jane.doe@example.com', 'badge colour blue', 'insert into', 'params']) {
      expect(line).not.toContain(secret);
    }
  });

  it('keeps an ordinary error’s message and frames', () => {
    const fields = errorFields(new TypeError('boom'));
    expect(fields.error).toBe('TypeError: boom');
    expect(fields.stack).toContain('logger.test.ts');
    expect(errorFields('plain')).toEqual({ error: 'plain' });
  });
});
