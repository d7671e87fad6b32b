import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { VERIFICATION_METHODS } from '@/db/schema';
import { systemClock } from '@/server/platform/clock';
import { createTeam, updateTeam } from '@/server/teams/manage-teams';
import { apiClient } from '@/test/support/api-client';
import { type RunningApp, startApp } from '@/test/support/app';
import { createTestDatabase, type TestDatabase } from '@/test/support/database';
import { expectError } from '@/test/support/errors';

let database: TestDatabase;
let app: RunningApp;

/** The top-up prices of the methods the all-methods case asks for (a passkey needs a person who holds one). */
const PRICES = { email: 10, sms: 25, government_id: 150, selfie: 50, custom_question: 5, manager: 20 };
const METHODS = Object.keys(PRICES) as Array<keyof typeof PRICES>;

const ALL_METHODS_BODY = {
  subject_email: 'all@billing.test',
  verification_methods: { email: true, sms: true, government_id: true, custom_question: true, manager: true },
  custom_question_text: 'Q?',
  custom_question_answer: 'A',
  manager_name: 'M',
  manager_email: 'm@billing.test',
};
const EMAIL_BODY = { subject_email: 'one@billing.test', verification_methods: { email: true } };

interface UsageEntry {
  allowed: number;
  included_used: number;
  topup_used: number;
  topup_cost_cents: number;
  total_used: number;
  percent_used: number;
}
interface Usage {
  billing_period_start: string;
  billing_period_end: string;
  usage: Record<string, UsageEntry>;
}

beforeAll(async () => {
  database = await createTestDatabase();
  app = await startApp({
    databaseUrl: database.url,
    env: { RATE_LIMIT_READ_PER_MINUTE: '100000', RATE_LIMIT_WRITE_PER_MINUTE: '100000' },
  });
  // The catalogue is editable; small plans make allowances quick to exhaust.
  await database.sql`
    insert into plans (code, name, included_units, trial_days) values
      ('three', 'Three', 3, null), ('five', 'Five', 5, null), ('none', 'None', 0, null)`;
});

afterAll(async () => {
  await app?.stop();
  await database?.close();
});

async function newTeam(name: string, planCode?: string) {
  const { team, key } = await createTeam(
    database.db,
    { name, adminEmail: `admin@${name}.test`, planCode },
    systemClock,
  );
  return { team, api: apiClient(app.baseUrl, key.token) };
}

async function createMany(api: ReturnType<typeof apiClient>, body: unknown, count: number) {
  for (let start = 0; start < count; start += 10) {
    const batch = await Promise.all(
      Array.from({ length: Math.min(10, count - start) }, () => api.post('/v1/cases/', body)),
    );
    for (const res of batch) expect(res.status, res.text).toBe(201);
  }
}

const entry = (allowed: number, included: number, topup = 0, cost = 0): UsageEntry => ({
  allowed,
  included_used: included,
  topup_used: topup,
  topup_cost_cents: cost,
  total_used: included + topup,
  percent_used: allowed === 0 ? 0 : Math.round((included / allowed) * 10000) / 100,
});

function addMonth(date: Date): string {
  const d = new Date(date);
  d.setUTCMonth(d.getUTCMonth() + 1);
  return d.toISOString();
}

describe('account and usage', () => {
  it('GET /v1/account/ is exact', async () => {
    const { team, api } = await newTeam('account');
    const res = await api.get('/v1/account/');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      id: team.id,
      name: 'account',
      plan: 'trial',
      subscription_status: 'trialing',
      trial_ends_at: new Date(team.createdAt.getTime() + 14 * 86_400_000).toISOString(),
      topup_balance_cents: 0,
      created_at: team.createdAt.toISOString(),
    });
    await updateTeam(database.db, team.id, {
      planCode: 'growth',
      subscriptionStatus: 'active',
      topupBalanceCents: 1234,
    });
    expect((await api.get('/v1/account/')).body).toMatchObject({
      plan: 'growth',
      subscription_status: 'active',
      topup_balance_cents: 1234,
    });
  });

  it('a paid plan starts active, without a trial end', async () => {
    const { api } = await newTeam('paid', 'starter');
    expect((await api.get('/v1/account/')).body).toMatchObject({
      plan: 'starter',
      subscription_status: 'active',
      trial_ends_at: null,
    });
  });

  it('GET /v1/account/usage/ is exact: every method, the billing period, percent_used with two decimals', async () => {
    const { team, api } = await newTeam('usage', 'three');
    const empty = await api.get<Usage>('/v1/account/usage/');
    expect(empty.status).toBe(200);
    expect(empty.body).toEqual({
      billing_period_start: team.billingAnchor.toISOString(),
      billing_period_end: addMonth(team.billingAnchor),
      usage: Object.fromEntries(VERIFICATION_METHODS.map((m) => [m, entry(3, 0)])),
    });
    await api.post('/v1/cases/', EMAIL_BODY);
    await api.post('/v1/cases/', EMAIL_BODY);
    await api.post('/v1/cases/', { ...EMAIL_BODY, verification_methods: { government_id: true } });
    const used = await api.get<Usage>('/v1/account/usage/');
    expect(used.body.usage).toEqual({
      email: {
        allowed: 3,
        included_used: 2,
        topup_used: 0,
        topup_cost_cents: 0,
        total_used: 2,
        percent_used: 66.67,
      },
      sms: entry(3, 0),
      government_id: {
        allowed: 3,
        included_used: 1,
        topup_used: 0,
        topup_cost_cents: 0,
        total_used: 1,
        percent_used: 33.33,
      },
      selfie: {
        allowed: 3,
        included_used: 1,
        topup_used: 0,
        topup_cost_cents: 0,
        total_used: 1,
        percent_used: 33.33,
      },
      custom_question: entry(3, 0),
      manager: entry(3, 0),
      passkey: entry(3, 0),
    });
  });

  it('percent_used is 0 when the plan allows nothing', async () => {
    const { team, api } = await newTeam('none', 'none');
    await updateTeam(database.db, team.id, { topupBalanceCents: 10 });
    expect((await api.post('/v1/cases/', EMAIL_BODY)).status).toBe(201);
    const usage = (await api.get<Usage>('/v1/account/usage/')).body.usage;
    expect(usage.email).toEqual({
      allowed: 0,
      included_used: 0,
      topup_used: 1,
      topup_cost_cents: 10,
      total_used: 1,
      percent_used: 0,
    });
  });
});

describe('charging', () => {
  it('the trial allowance of 50 per method runs out, then top-up pays each method at its price', async () => {
    const { team, api } = await newTeam('trial');
    await createMany(api, ALL_METHODS_BODY, 50);
    const full = (await api.get<Usage>('/v1/account/usage/')).body.usage;
    for (const m of METHODS) expect(full[m]).toEqual(entry(50, 50));

    // No balance: refused, and nothing at all is charged.
    const refused = await api.post('/v1/cases/', ALL_METHODS_BODY);
    expectError(refused, 422, 'INSUFFICIENT_ALLOWANCE');
    expect((await api.get<Usage>('/v1/account/usage/')).body.usage).toEqual(full);

    // Enough for exactly one case with every method.
    const total = Object.values(PRICES).reduce((a, b) => a + b, 0);
    await updateTeam(database.db, team.id, { topupBalanceCents: total });
    expect((await api.post('/v1/cases/', ALL_METHODS_BODY)).status).toBe(201);
    const after = (await api.get<Usage>('/v1/account/usage/')).body.usage;
    for (const m of METHODS) expect(after[m]).toEqual(entry(50, 50, 1, PRICES[m]));
    expect((await api.get<{ topup_balance_cents: number }>('/v1/account/')).body.topup_balance_cents).toBe(0);
  });

  it('INSUFFICIENT_ALLOWANCE when one method of several cannot be paid: nothing charged, no case', async () => {
    const { team, api } = await newTeam('partial', 'three');
    await createMany(api, EMAIL_BODY, 3);
    // government_id and selfie still have allowance; email needs 10 cents and there are 9.
    await updateTeam(database.db, team.id, { topupBalanceCents: 9 });
    const usageBefore = (await api.get('/v1/account/usage/')).body;
    const accountBefore = (await api.get('/v1/account/')).body;
    const res = await api.post('/v1/cases/', {
      subject_email: 'partial@billing.test',
      verification_methods: { email: true, government_id: true },
    });
    expectError(res, 422, 'INSUFFICIENT_ALLOWANCE');
    expect(res.body).toMatchObject({ error: 'insufficient_allowance' });
    expect((await api.get('/v1/account/usage/')).body).toEqual(usageBefore);
    expect((await api.get('/v1/account/')).body).toEqual(accountBefore);
    const [row] =
      await database.sql`select count(*)::int as n from cases where subject_email = 'partial@billing.test'`;
    expect(row?.n).toBe(0);
  });

  it('TRIAL_EXPIRED for a trial past its end and for a canceled subscription; nothing charged', async () => {
    const { team, api } = await newTeam('expired');
    await updateTeam(database.db, team.id, { trialEndsAt: new Date(Date.now() - 1000) });
    const usageBefore = (await api.get('/v1/account/usage/')).body;
    const res = await api.post('/v1/cases/', EMAIL_BODY);
    expectError(res, 422, 'TRIAL_EXPIRED');
    expect((await api.get('/v1/account/usage/')).body).toEqual(usageBefore);

    await updateTeam(database.db, team.id, {
      planCode: 'starter',
      subscriptionStatus: 'canceled',
      trialEndsAt: null,
    });
    expectError(await api.post('/v1/cases/', EMAIL_BODY), 422, 'TRIAL_EXPIRED');

    // past_due is not refused; active is not either, whatever trial_ends_at says.
    await updateTeam(database.db, team.id, { subscriptionStatus: 'past_due' });
    expect((await api.post('/v1/cases/', EMAIL_BODY)).status).toBe(201);
    await updateTeam(database.db, team.id, {
      subscriptionStatus: 'active',
      trialEndsAt: new Date(Date.now() - 1000),
    });
    expect((await api.post('/v1/cases/', EMAIL_BODY)).status).toBe(201);
    // Reading still works for an expired team.
    expect((await api.get('/v1/cases/')).status).toBe(200);
  });
});

describe('charging under concurrency', () => {
  it('parallel creations never spend the same last unit or the same cents', async () => {
    const ALLOWED = 5;
    const K = 10;
    const { team, api } = await newTeam('race', 'five');
    await updateTeam(database.db, team.id, { topupBalanceCents: K * PRICES.email });
    // An endpoint, so each creation also fans out: its rows are written before the team's lock is
    // taken, and a refused creation must take them back with it.
    const endpoint = await api.post('/v1/webhooks/endpoints/', {
      url: 'https://hooks.example.com/race',
      events: ['case.created'],
    });
    expect(endpoint.status).toBe(201);
    const results = await Promise.all(
      Array.from({ length: 3 * (ALLOWED + K) }, (_, i) =>
        api.post('/v1/cases/', {
          subject_email: `race${i}@billing.test`,
          verification_methods: { email: true },
        }),
      ),
    );
    const created = results.filter((r) => r.status === 201);
    for (const res of results) if (res.status !== 201) expectError(res, 422, 'INSUFFICIENT_ALLOWANCE');
    expect(created).toHaveLength(ALLOWED + K);
    expect((await api.get<{ topup_balance_cents: number }>('/v1/account/')).body.topup_balance_cents).toBe(0);
    expect((await api.get<Usage>('/v1/account/usage/')).body.usage.email).toEqual(
      entry(ALLOWED, ALLOWED, K, K * 10),
    );
    const [row] = await database.sql`select count(*)::int as n from cases where team_id = ${team.id}`;
    expect(row?.n).toBe(ALLOWED + K);
    // Exactly the created cases' events, deliveries and mails: none of a refused one's.
    const [written] = await database.sql<{ events: number; deliveries: number; mails: number }[]>`
      select (select count(*)::int from events where team_id = ${team.id} and type = 'case.created') as events,
             (select count(*)::int from webhook_deliveries where team_id = ${team.id}) as deliveries,
             (select count(*)::int from mail_outbox where "to" like 'race%@billing.test') as mails`;
    expect(written).toEqual({ events: ALLOWED + K, deliveries: ALLOWED + K, mails: ALLOWED + K });
  });

  it('parallel multi-method cases: balance for exactly K cases, 3K requests, exactly K succeed', async () => {
    const K = 4;
    const { team, api } = await newTeam('race-multi', 'none');
    const perCase = PRICES.government_id + PRICES.selfie + PRICES.sms;
    await updateTeam(database.db, team.id, { topupBalanceCents: K * perCase });
    const body = {
      subject_email: 'multi@billing.test',
      verification_methods: { government_id: true, sms: true },
    };
    const results = await Promise.all(Array.from({ length: 3 * K }, () => api.post('/v1/cases/', body)));
    expect(results.filter((r) => r.status === 201)).toHaveLength(K);
    expect((await api.get<{ topup_balance_cents: number }>('/v1/account/')).body.topup_balance_cents).toBe(0);
    const usage = (await api.get<Usage>('/v1/account/usage/')).body.usage;
    expect(usage.government_id).toEqual(entry(0, 0, K, K * PRICES.government_id));
    expect(usage.selfie).toEqual(entry(0, 0, K, K * PRICES.selfie));
    expect(usage.sms).toEqual(entry(0, 0, K, K * PRICES.sms));
  });
});
