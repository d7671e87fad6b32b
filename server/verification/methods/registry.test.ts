import { describe, expect, it } from 'vitest';
import { VERIFICATION_METHODS } from '@/db/schema/values';
import {
  ATTEMPT_LIMITS,
  expandRequestedMethods,
  FAILURE_REASONS,
  MAILED_METHODS,
  METHODS,
  stepsPassingTogether,
  takesPictures,
  vendorsOf,
} from './registry';

describe('the method registry', () => {
  it("lists every method of the database's value list, in its order", () => {
    expect(METHODS.map((m) => m.key)).toEqual([...VERIFICATION_METHODS]);
  });

  it('derives the failure reasons, attempt limits and mailed methods from the definitions', () => {
    expect(FAILURE_REASONS).toEqual([
      'sms_code_failed',
      'government_id_rejected',
      'name_mismatch',
      'selfie_rejected',
      'custom_question_failed',
      'manager_declined',
      'passkey_failed',
    ]);
    expect(ATTEMPT_LIMITS).toEqual({ sms: 5, custom_question: 3, passkey: 5 });
    expect(MAILED_METHODS).toEqual(['email', 'manager']);
  });

  it('adds the selfie to a government ID, which passes with it', () => {
    expect(expandRequestedMethods({ government_id: true, email: true })).toEqual([
      'email',
      'government_id',
      'selfie',
    ]);
    expect(expandRequestedMethods({ sms: true, manager: false })).toEqual(['sms']);
    expect(stepsPassingTogether(['email', 'government_id', 'selfie'], 'selfie')).toEqual([
      'government_id',
      'selfie',
    ]);
    expect(stepsPassingTogether(['email', 'government_id', 'selfie'], 'email')).toEqual(['email']);
  });

  it('names the vendors a case relies on, each once', () => {
    expect(vendorsOf(['email', 'manager', 'custom_question'])).toEqual(['mail']);
    expect(vendorsOf(['sms', 'government_id', 'selfie'])).toEqual(['texts', 'identity']);
    expect(vendorsOf(['custom_question'])).toEqual([]);
  });

  it('knows which cases take pictures', () => {
    expect(takesPictures(['email', 'sms', 'custom_question', 'manager'])).toBe(false);
    expect(takesPictures(['email', 'government_id', 'selfie'])).toBe(true);
  });
});
