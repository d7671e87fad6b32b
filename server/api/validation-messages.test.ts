import { describe, expect, it } from 'vitest';
import type { ZodError } from 'zod';
import { createCaseInput, listCasesInput } from '@/server/cases/wire';
import { toWireError } from './error-table';

/** The `detail` a client gets for `input` against `schema` (the schemas the API really uses). */
function detailFor(schema: { safeParse: (input: unknown) => { error?: ZodError } }, input: unknown): string {
  const { error } = schema.safeParse(input);
  if (!error) throw new Error('the input was accepted');
  const wire = toWireError(error);
  expect(wire.status).toBe(422);
  expect(wire.body.code).toBe('VALIDATION_ERROR');
  return wire.body.detail;
}

describe('validation messages', () => {
  it('says "required" for a missing field', () => {
    expect(detailFor(createCaseInput, { verification_methods: { email: true } })).toBe(
      'subject_email: required',
    );
    expect(detailFor(createCaseInput, { subject_email: 'a@example.test' })).toBe(
      'verification_methods: required',
    );
  });

  it('still says what is wrong with a field that is present', () => {
    expect(detailFor(createCaseInput, { subject_email: 'nope', verification_methods: { email: true } })).toBe(
      'subject_email: must be a valid e-mail address',
    );
  });

  it('lists the valid methods and guesses a near miss', () => {
    expect(
      detailFor(createCaseInput, { subject_email: 'a@example.test', verification_methods: { emial: true } }),
    ).toBe(
      'verification_methods: unknown method "emial" (did you mean "email"?); the methods are email, sms, government_id, selfie, custom_question, manager; verification_methods: at least one method must be true',
    );
    // No guess when nothing is close.
    expect(
      detailFor(createCaseInput, {
        subject_email: 'a@example.test',
        verification_methods: { email: true, fingerprint: true },
      }),
    ).toBe(
      'verification_methods: unknown method "fingerprint"; the methods are email, sms, government_id, selfie, custom_question, manager',
    );
  });

  it('explains that dates need a time zone', () => {
    expect(detailFor(listCasesInput, { created_after: '2026-01-01T00:00:00' })).toBe(
      'created_after: must be an ISO 8601 date-time with a time zone, such as 2026-01-31T09:00:00Z or 2026-01-31T10:00:00+01:00',
    );
    expect(listCasesInput.safeParse({ created_after: '2026-01-01T00:00:00Z' }).success).toBe(true);
  });

  it('explains that the page size is fixed', () => {
    expect(detailFor(listCasesInput, { limit: '10' })).toBe(
      'unknown parameter "limit": every page holds up to 50 results, a fixed size; follow next_cursor for more',
    );
    expect(detailFor(listCasesInput, { colour: 'blue' })).toBe('unknown field "colour"');
  });
});
