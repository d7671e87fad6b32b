import { DrizzleQueryError } from 'drizzle-orm/errors';
import { describe, expect, it } from 'vitest';
import { errorFields } from './logger';

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
