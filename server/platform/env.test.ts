import { describe, expect, it } from 'vitest';
import { parseEnv as parseEnvOf } from './env';

const parseEnv = (variables: Record<string, string>) => parseEnvOf({ NODE_ENV: 'test', ...variables });

const SECRET = 'a-keys-secret-of-at-least-thirty-two-chars';

describe('KEYS_SECRET and its former name, SIGNING_KEY_SECRET', () => {
  it('reads KEYS_SECRET', () => {
    expect(parseEnv({ KEYS_SECRET: SECRET })).toMatchObject({
      KEYS_SECRET: SECRET,
      KEYS_SECRET_VARIABLE: 'KEYS_SECRET',
    });
  });

  it('reads SIGNING_KEY_SECRET alone as KEYS_SECRET, and remembers the name the operator used', () => {
    const config = parseEnv({ SIGNING_KEY_SECRET: SECRET });
    expect(config).toMatchObject({ KEYS_SECRET: SECRET, KEYS_SECRET_VARIABLE: 'SIGNING_KEY_SECRET' });
    expect(config).not.toHaveProperty('SIGNING_KEY_SECRET');
  });

  it('accepts both with one value', () => {
    expect(parseEnv({ KEYS_SECRET: SECRET, SIGNING_KEY_SECRET: SECRET })).toMatchObject({
      KEYS_SECRET: SECRET,
      KEYS_SECRET_VARIABLE: 'KEYS_SECRET',
    });
  });

  it('refuses both with different values, naming both', () => {
    expect(() => parseEnv({ KEYS_SECRET: SECRET, SIGNING_KEY_SECRET: `${SECRET}-other` })).toThrow(
      'KEYS_SECRET and SIGNING_KEY_SECRET (its former name) differ',
    );
  });

  it('leaves it unset when neither is set (development keeps one in the database)', () => {
    expect(parseEnv({})).toMatchObject({ KEYS_SECRET: undefined, KEYS_SECRET_VARIABLE: 'KEYS_SECRET' });
  });

  it('refuses a short one under either name', () => {
    expect(() => parseEnv({ SIGNING_KEY_SECRET: 'short' })).toThrow(/SIGNING_KEY_SECRET/);
    expect(() => parseEnv({ KEYS_SECRET: 'short' })).toThrow(/KEYS_SECRET/);
  });
});
