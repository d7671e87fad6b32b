import { describe, expect, it } from 'vitest';
import { describeStatement } from './statement-spans';

describe('a statement span', () => {
  it('is named by its operation and first table', () => {
    expect(describeStatement('select "id" from "cases" where "id" = $1')).toEqual({
      operation: 'SELECT',
      table: 'cases',
      summary: undefined,
    });
    expect(describeStatement('insert into "audit_log" ("id") values ($1)')).toMatchObject({
      operation: 'INSERT',
      table: 'audit_log',
    });
  });

  it('sums up a statement whose WITH parts write several tables, each write in order', () => {
    const text = `with usage as (insert into "usage_counters" ("team_id") select 1 on conflict do nothing),
      balance as (update "teams" set "topup_balance_cents" = 0),
      new_cases as (insert into "cases" ("id") select 1 returning *),
      gone as (delete from "mail_outbox" where false)
      select 1`;
    expect(describeStatement(text).summary).toBe(
      'INSERT usage_counters UPDATE teams INSERT cases DELETE mail_outbox',
    );
  });

  it('keeps the plain name of a WITH that writes one table or none', () => {
    const oneWrite = `with found as (select "id" from "api_keys"), spent as (insert into "rate_limits" (key) select 1)
      select found.*`;
    expect(describeStatement(oneWrite)).toMatchObject({ summary: undefined });
    expect(describeStatement('with x as (select 1) select * from x').summary).toBeUndefined();
  });
});
