/**
 * Identity-provider flows over time (issue 30), against a real PostgreSQL: a pushed request never
 * brought to authorize is deleted after a day, a flow that opened a case forgets its request (the
 * names and address it carried) and keeps which client opened which case; a code is redeemed once.
 */
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { oidcFlows } from '@/db/schema';
import {
  attachCase,
  BEGIN_LINK_SECONDS,
  bindBrowser,
  FLOW_BINDING_PARAM,
  FLOW_RETURN_SECONDS,
  flowBeginUrl,
  flowIdOf,
  flowOfCode,
  holdsBinding,
  insertFlow,
  issueCode,
  type PushedRequest,
  REQUEST_URI_PREFIX,
  redeemCode,
  spendRequest,
} from '@/server/oidc/flows';
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
    // Exactly the one request never authorized goes, and the one flow that opened a case forgets.
    expect(done).toEqual({ deleted: 1, forgotten: 1 });
    const rows = await database.db.select().from(oidcFlows);
    expect(rows.find((row) => row.id === unused)).toBeUndefined();
    expect(rows.find((row) => row.id === used)).toMatchObject({ request: {}, caseId: record.id, clientId });
    expect(rows.find((row) => row.id === fresh)?.request).toMatchObject({ loginHint: '00uPERSON' });
    expect(JSON.stringify(rows.find((row) => row.id === used))).not.toContain('Ada');
  });

  it('names a flow by its request_uri only: the prefix and 32 base62 characters', () => {
    const id = `${'A'.repeat(31)}9`;
    expect(REQUEST_URI_PREFIX).toBe('urn:ietf:params:oauth:request_uri:');
    expect(flowIdOf(`urn:ietf:params:oauth:request_uri:${id}`)).toBe(id);
    expect(flowIdOf(id)).toBeNull();
    expect(flowIdOf(`urn:ietf:params:oauth:request_uri:${id}x`)).toBeNull();
    expect(flowIdOf(`urn:ietf:params:oauth:request_uri:x${id}`)).toBeNull();
    expect(flowIdOf(`urn:ietf:params:oauth:request_uri:${id.slice(1)}-`)).toBeNull();
    expect(flowIdOf(`urn:other:${REQUEST_URI_PREFIX}${id}`)).toBeNull();
    expect(FLOW_RETURN_SECONDS).toBe(40 * 60);
  });

  it('binds the browser that follows authorize’s link: the right binding, once, within 120 s', async () => {
    const now = new Date();
    const record = await openCase(
      inProcess,
      { teamId, livemode: false },
      { subject_email: 'person@flows.test', verification_methods: { email: true } },
    );
    const pushedFlow = async () => {
      const id = idOf(await insertFlow(database.db, { clientId, teamId, request, now }));
      const spent = await spendRequest(database.db, id, null, now);
      if (!spent) throw new Error('not spent');
      const binding = await attachCase(database.db, id, record.id);
      const [flow] = await database.db.select().from(oidcFlows).where(eq(oidcFlows.id, id));
      if (!flow) throw new Error('no flow');
      return { flow, binding };
    };
    const { flow, binding } = await pushedFlow();
    expect(binding).toMatch(/^[0-9A-Za-z]{32}$/);
    // Only its hash is kept.
    expect(flow.browserBindingHash).toMatch(/^[0-9a-f]{64}$/);
    expect(JSON.stringify(flow)).not.toContain(binding);
    expect(flowBeginUrl('https://verify.test', 'pub', binding)).toBe(
      `https://verify.test/v/pub/begin?${FLOW_BINDING_PARAM}=${binding}`,
    );
    expect(FLOW_BINDING_PARAM).toBe('binding');
    expect(holdsBinding(flow, binding)).toBe(true);
    const changed = `${binding.slice(0, -1)}${binding.endsWith('x') ? 'y' : 'x'}`;
    expect(holdsBinding(flow, changed)).toBe(false);
    expect(holdsBinding(flow, null)).toBe(false);
    expect(holdsBinding(flow, '')).toBe(false);
    expect(holdsBinding({ ...flow, browserBindingHash: null }, binding)).toBe(false);
    expect(holdsBinding({ ...flow, browserBindingHash: 'abcd' }, binding)).toBe(false);

    // A wrong binding takes nothing; the right one takes it once.
    expect(await bindBrowser(database.db, flow, 'x'.repeat(32), now)).toBe(false);
    const at = new Date(now.getTime() + BEGIN_LINK_SECONDS * 1000);
    expect(await bindBrowser(database.db, flow, binding, at)).toBe(true);
    const [bound] = await database.db.select().from(oidcFlows).where(eq(oidcFlows.id, flow.id));
    expect(bound?.boundAt).toEqual(at);
    expect(await bindBrowser(database.db, flow, binding, at)).toBe(false);

    // A link followed a moment past its 120 s binds nothing, and a flow never authorized neither.
    const late = await pushedFlow();
    const tooLate = new Date(now.getTime() + BEGIN_LINK_SECONDS * 1000 + 1);
    expect(await bindBrowser(database.db, late.flow, late.binding, tooLate)).toBe(false);
    expect(await bindBrowser(database.db, { ...late.flow, authorizedAt: null }, late.binding, now)).toBe(
      false,
    );
    const [unbound] = await database.db.select().from(oidcFlows).where(eq(oidcFlows.id, late.flow.id));
    expect(unbound?.boundAt).toBeNull();
    expect(BEGIN_LINK_SECONDS).toBe(120);
  });

  it('answers a new code once the last one’s deadline is reached, and derives it from the flow and deadline', async () => {
    const now = new Date();
    const id = idOf(await insertFlow(database.db, { clientId, teamId, request, now }));
    const key = await teamHmacKey(database.db, teamId);
    const read = async () => {
      const [row] = await database.db.select().from(oidcFlows).where(eq(oidcFlows.id, id));
      if (!row) throw new Error('no flow');
      return row;
    };
    const first = (await issueCode(database.db, await read(), key, now)) ?? '';
    expect(first).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const deadline = new Date(now.getTime() + 60_000);
    expect((await read()).codeExpiresAt).toEqual(deadline);
    // At the deadline itself the code is over: a visit then gets a new one.
    const second = (await issueCode(database.db, await read(), key, deadline)) ?? '';
    expect(second).not.toBe(first);
    expect(await flowOfCode(database.db, first, now)).toBeNull();
    expect((await flowOfCode(database.db, second, deadline))?.id).toBe(id);
    // Another flow at the same moment gets another code.
    const otherId = idOf(await insertFlow(database.db, { clientId, teamId, request, now }));
    const [other] = await database.db.select().from(oidcFlows).where(eq(oidcFlows.id, otherId));
    if (!other) throw new Error('no flow');
    expect(await issueCode(database.db, other, key, now)).not.toBe(first);
    // A flow whose code hash was changed under it (redeemed by another) is not redeemed again.
    expect(await redeemCode(database.db, { ...(await read()), codeHash: null }, deadline)).toBe(false);
  });
});
