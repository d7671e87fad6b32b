import { describe, expect, it } from 'vitest';
import { isDatabaseUnavailable } from './database-unavailable';

/** An error as node-postgres makes one: a message, no code. */
const pgError = (message: string) => new Error(message);

describe('isDatabaseUnavailable', () => {
  it.each([
    'Connection terminated unexpectedly',
    'Connection terminated due to connection timeout',
    'Client has encountered a connection error and is not queryable',
    'timeout exceeded when trying to connect',
  ])('reads node-postgres\'s "%s" as the database unreachable', (message) => {
    expect(isDatabaseUnavailable(pgError(message))).toBe(true);
    // pg-boss passes a worker's error on as a copy of its fields.
    const copied = pgError(message);
    expect(isDatabaseUnavailable({ ...copied, message: copied.message, stack: copied.stack })).toBe(true);
  });

  it.each([
    ['a connection refused', { code: 'ECONNREFUSED' }],
    ['postgres.js losing its connection', { code: 'CONNECTION_CLOSED' }],
    ['the server shutting down', { code: '57P01' }],
    ['too many connections', { code: '53300' }],
    ['a vanished Unix socket', { code: 'ENOENT', syscall: 'connect' }],
    ['a cause two levels down', { message: 'query failed', cause: { cause: { code: '08006' } } }],
  ])('reads %s as the database unreachable', (_, error) => {
    expect(isDatabaseUnavailable(error)).toBe(true);
  });

  it.each([
    ['a unique violation', { code: '23505' }],
    ['a missing file', { code: 'ENOENT', syscall: 'open' }],
    ['a statement that failed', new Error('relation "x" does not exist')],
    ['a message that only mentions a connection', new Error('the connection string is invalid')],
    ['nothing', undefined],
  ])('does not read %s as an outage', (_, error) => {
    expect(isDatabaseUnavailable(error)).toBe(false);
  });
});
