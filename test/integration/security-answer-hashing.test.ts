/**
 * A custom question's answer is hashed with scrypt, deliberately slow. The attacker's third pass
 * starved every team of the crypto threads with one team's batches (half of them replays, hashed
 * before the idempotency look-up) and import drafts. Replayed here against the running service:
 * a replay hashes nothing; a team's hashing is bounded per process (its share of the fair queue,
 * 429 with Retry-After past it) and per minute across processes (its budget of hashed answers);
 * another team's answer waits for the team's turn, not for the storm; drafts hash nothing.
 */
import { and, eq, like } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rateLimits } from '@/db/schema';
import { systemClock } from '@/server/platform/clock';
import { HASHED_ANSWERS_PER_MINUTE } from '@/server/rate-limits/limiters';
import { createTeam } from '@/server/teams/manage-teams';
import { apiClient } from '@/test/support/api-client';
import { type RunningApp, startApp } from '@/test/support/app';
import { createTestDatabase, type TestDatabase } from '@/test/support/database';

let database: TestDatabase;
let app: RunningApp;
let stormTeam: string;
let storm: ReturnType<typeof apiClient>;
let quiet: ReturnType<typeof apiClient>;

beforeAll(async () => {
  database = await createTestDatabase();
  app = await startApp({ databaseUrl: database.url });
  const created = await createTeam(
    database.db,
    { name: 'Storm', adminEmail: 'owner@storm.test', planCode: 'enterprise' },
    systemClock,
  );
  stormTeam = created.team.id;
  storm = apiClient(app.baseUrl, created.testKey.token);
  const other = await createTeam(
    database.db,
    { name: 'Quiet', adminEmail: 'owner@quiet.test', planCode: 'enterprise' },
    systemClock,
  );
  quiet = apiClient(app.baseUrl, other.testKey.token);
}, 120_000);

afterAll(async () => {
  await app?.stop();
  await database?.close();
});

const withQuestion = (n: number, prefix: string) => ({
  cases: Array.from({ length: n }, (_, i) => ({
    subject_email: `${prefix}-${i}@storm.test`,
    verification_methods: { custom_question: true },
    custom_question_text: 'Badge colour?',
    custom_question_answer: `Blue ${i}`,
  })),
});

/** The hashed answers the team's budget has counted this minute (null: none yet). */
async function hashedThisMinute(teamId: string): Promise<number | null> {
  const [row] = await database.db
    .select({ points: rateLimits.points })
    .from(rateLimits)
    .where(and(like(rateLimits.key, `hashed_answers%`), like(rateLimits.key, `%${teamId}`)));
  return row?.points ?? null;
}

describe('hashing custom answers fairly', () => {
  it('a replayed batch hashes nothing: the idempotency key is looked up first', async () => {
    const body = withQuestion(20, 'replay');
    const first = await storm.post('/v1/cases/batch/', body, { 'Idempotency-Key': 'storm-batch-1' });
    expect(first.status, first.text).toBe(200);
    expect(await hashedThisMinute(stormTeam)).toBe(20);
    for (let i = 0; i < 3; i++) {
      const replay = await storm.post('/v1/cases/batch/', body, { 'Idempotency-Key': 'storm-batch-1' });
      expect(replay.status).toBe(200);
      expect(replay.headers.get('idempotent-replayed')).toBe('true');
    }
    expect(await hashedThisMinute(stormTeam)).toBe(20);
  });

  it('refuses a team past its share of the process’s hashing with 429 and Retry-After, while another team’s answer is hashed in its turn', async () => {
    // Three batches of 100 at once: two fill the team's share (200), the third is refused.
    const batches = ['a', 'b', 'c'].map((prefix) =>
      storm.post('/v1/cases/batch/', withQuestion(100, prefix)),
    );
    // The quiet team's single create, sent while the storm's 200 hashes wait, is answered before
    // the storm's batches: it waits for the team's turn, not behind their queue.
    await new Promise((resolve) => setTimeout(resolve, 300));
    let settled = false;
    let quietAnsweredFirst = false;
    const single = quiet
      .post<{ id: string }>('/v1/cases/', {
        subject_email: 'one@quiet.test',
        verification_methods: { custom_question: true },
        custom_question_text: 'Desk floor?',
        custom_question_answer: 'Fourth',
      })
      .then((res) => {
        quietAnsweredFirst = !settled;
        return res;
      });
    // A request of the busy team with no answer to hash is never refused for hashing.
    const plain = await storm.post('/v1/cases/', {
      subject_email: 'plain-during-storm@storm.test',
      verification_methods: { email: true },
    });
    expect(plain.status, plain.text).toBe(201);
    const results = await Promise.all(
      batches.map((batch) =>
        batch.then((res) => {
          if (res.status === 200) settled = true;
          return res;
        }),
      ),
    );
    const answered = await single;
    expect(answered.status, answered.text).toBe(201);
    expect(quietAnsweredFirst).toBe(true);
    const statuses = results.map((res) => res.status).sort();
    expect(statuses).toEqual([200, 200, 429]);
    const refused = results.find((res) => res.status === 429) as (typeof results)[number];
    expect(refused.body).toMatchObject({ code: 'RATE_LIMITED' });
    expect((refused.body as { detail: string }).detail).toMatch(/share of this server/);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
  }, 60_000);

  it('spends the team’s budget of hashed answers a minute across processes, refusing a batch that would exceed it whole', async () => {
    const [row] = await database.db
      .select()
      .from(rateLimits)
      .where(and(like(rateLimits.key, 'hashed_answers%'), like(rateLimits.key, `%${stormTeam}`)));
    if (!row) throw new Error('no budget row');
    // As if the team had hashed all but 10 of its minute's answers in another process.
    await database.db
      .update(rateLimits)
      .set({ points: HASHED_ANSWERS_PER_MINUTE - 10 })
      .where(eq(rateLimits.key, row.key));
    const over = await storm.post<{ code: string; detail: string }>(
      '/v1/cases/batch/',
      withQuestion(11, 'over'),
    );
    expect(over.status).toBe(429);
    expect(over.body.code).toBe('RATE_LIMITED');
    expect(over.body.detail).toMatch(/custom answers hashed in the last minute/);
    expect(over.headers.get('retry-after')).toMatch(/^\d+$/);
    // Refused whole: nothing spent, so the ten left still go through, and a single create without
    // a question is never refused for it.
    expect(await hashedThisMinute(stormTeam)).toBe(HASHED_ANSWERS_PER_MINUTE - 10);
    const fits = await storm.post('/v1/cases/batch/', withQuestion(10, 'fits'));
    expect(fits.status, fits.text).toBe(200);
    const plain = await storm.post('/v1/cases/', {
      subject_email: 'plain@storm.test',
      verification_methods: { email: true },
    });
    expect(plain.status, plain.text).toBe(201);
    const refusedOne = await storm.post('/v1/cases/', {
      subject_email: 'q@storm.test',
      verification_methods: { custom_question: true },
      custom_question_text: 'Q?',
      custom_question_answer: 'A',
    });
    expect(refusedOne.status).toBe(429);
    // Another team's budget is its own.
    const theirs = await quiet.post('/v1/cases/', {
      subject_email: 'two@quiet.test',
      verification_methods: { custom_question: true },
      custom_question_text: 'Q?',
      custom_question_answer: 'A',
    });
    expect(theirs.status, theirs.text).toBe(201);
  });
});
