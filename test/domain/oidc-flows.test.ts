/**
 * Identity-provider flows over time (issue 30), against a real PostgreSQL: a pushed request never
 * brought to authorize is deleted after a day, a flow that opened a case forgets its request (the
 * names and address it carried) and keeps which client opened which case; a code is redeemed once.
 */
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { oidcFlows } from '@/db/schema';
import { flowOfCode, insertFlow, issueCode, type PushedRequest, redeemCode } from '@/server/oidc/flows';
import { createClient } from '@/server/oidc/oidc-clients';
import { purgeFlows } from '@/server/oidc/purge-flows';
import { systemClock } from '@/server/platform/clock';
import { createTeam } from '@/server/teams/manage-teams';
import { teamHmacKey } from '@/server/teams/team-secrets';
import type { TestDatabase } from '@/test/support/database';
import { type InProcess, openCase, startInProcess } from '@/test/support/in-process';

let inProcess: InProcess;
let database: TestDatabase;
let teamId: string;
let clientId: string;

const request: PushedRequest = {
  redirectUri: 'https://rp.example/cb',
  state: 's',
  nonce: 'n',
  codeChallenge: 'x'.repeat(43),
  scope: 'openid',
  loginHint: '00uPERSON',
  subjectEmail: 'person@flows.test',
  locale: null,
  template: 'helpdesk',
  verifiedClaims: [
    {
      trustFramework: 'IDV-DELEGATED',
      assuranceLevel: 'VERIFIED',
      claims: { given_name: { value: 'Ada', fuzzy: true } },
    },
  ],
};

beforeAll(async () => {
  inProcess = await startInProcess();
  database = inProcess.database;
  teamId = (await createTeam(database.db, { name: 'Flows', adminEmail: 'a@flows.test' }, systemClock)).team
    .id;
  clientId = (
    await createClient(
      database.db,
      teamId,
      { name: 'Okta', redirectUris: ['https://rp.example/cb'], defaultTemplate: null, livemode: false },
      new Date(),
    )
  ).client.id;
});

afterAll(async () => {
  await inProcess?.close();
});

const idOf = (uri: string) => uri.split(':').at(-1) ?? '';

describe('identity-provider flows', () => {
  it('redeems a code once, and not after its 60 s', async () => {
    const now = new Date();
    const id = idOf(await insertFlow(database.db, { clientId, teamId, request, now }));
    const key = await teamHmacKey(database.db, teamId);
    const [pushed] = await database.db.select().from(oidcFlows).where(eq(oidcFlows.id, id));
    if (!pushed) throw new Error('no flow');
    const code = (await issueCode(database.db, pushed, key, now)) ?? '';
    const flow = await flowOfCode(database.db, code, now);
    expect(flow?.id).toBe(id);
    if (!flow) return;
    // A second visit within the 60 s answers the same code; one after them, a new one.
    expect(await issueCode(database.db, flow, key, new Date(now.getTime() + 30_000))).toBe(code);
    expect(await flowOfCode(database.db, code, new Date(now.getTime() + 60_000))).toBeNull();
    expect(await redeemCode(database.db, flow, now)).toBe(true);
    expect(await redeemCode(database.db, flow, now)).toBe(false);
    expect(await flowOfCode(database.db, code, now)).toBeNull();
    // A flow whose code was redeemed hands over no other.
    const [redeemed] = await database.db.select().from(oidcFlows).where(eq(oidcFlows.id, id));
    if (!redeemed) throw new Error('no flow');
    expect(await issueCode(database.db, redeemed, key, now)).toBeNull();
  });

  it('deletes a day-old request never authorized, and makes a day-old flow forget its request', async () => {
    const old = new Date(Date.now() - 2 * 86_400_000);
    const unused = idOf(await insertFlow(database.db, { clientId, teamId, request, now: old }));
    const used = idOf(await insertFlow(database.db, { clientId, teamId, request, now: old }));
    const record = await openCase(
      inProcess,
      { teamId, livemode: false },
      {
        subject_email: 'person@flows.test',
        verification_methods: { email: true },
      },
    );
    await database.db
      .update(oidcFlows)
      .set({ caseId: record.id, authorizedAt: old })
      .where(eq(oidcFlows.id, used));
    const fresh = idOf(await insertFlow(database.db, { clientId, teamId, request, now: new Date() }));
    const done = await purgeFlows(database.db, new Date(Date.now() - 86_400_000));
    expect(done.deleted).toBeGreaterThanOrEqual(1);
    const rows = await database.db.select().from(oidcFlows);
    expect(rows.find((row) => row.id === unused)).toBeUndefined();
    expect(rows.find((row) => row.id === used)).toMatchObject({ request: {}, caseId: record.id, clientId });
    expect(rows.find((row) => row.id === fresh)?.request).toMatchObject({ loginHint: '00uPERSON' });
    expect(JSON.stringify(rows.find((row) => row.id === used))).not.toContain('Ada');
  });
});
