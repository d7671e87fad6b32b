/**
 * `GET /v1/passkeys/` and `DELETE /v1/passkeys/{id}/` against the running app: a subject's
 * passkeys in the key's team and mode, never the public key; a revocation audited and delivered
 * as `passkey.revoked` to a subscribed endpoint over HTTPS (its body checked against the OpenAPI
 * document's `webhooks` section by the receiver); another team's or mode's passkey not found.
 */
import { and, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auditLog } from '@/db/schema';
import { systemClock } from '@/server/platform/clock';
import { createTeam } from '@/server/teams/manage-teams';
import { apiClient } from '@/test/support/api-client';
import { type RunningApp, startApp } from '@/test/support/app';
import { createTestDatabase, type TestDatabase } from '@/test/support/database';
import { expectError } from '@/test/support/errors';
import {
  type Certificate,
  makeCertificate,
  type Receiver,
  startReceiver,
} from '@/test/support/https-receiver';
import { enrollPasskey, insertCase } from '@/test/support/passkeys';

type Api = ReturnType<typeof apiClient>;
interface PasskeyWire {
  id: string;
  subject_email: string;
  enrolling_case_id: string;
  device_type: string;
  [field: string]: unknown;
}

let database: TestDatabase;
let certificate: Certificate;
let webhooks: Receiver;
let app: RunningApp;
let teamId: string;
let live: Api;
let test: Api;
let others: Api;

beforeAll(async () => {
  database = await createTestDatabase();
  certificate = makeCertificate();
  webhooks = await startReceiver(certificate);
  app = await startApp({
    databaseUrl: database.url,
    env: { NODE_EXTRA_CA_CERTS: certificate.certPath, WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' },
  });
  const team = await createTeam(database.db, { name: 'Keyholders', adminEmail: 'a@keys.test' }, systemClock);
  teamId = team.team.id;
  live = apiClient(app.baseUrl, team.key.token);
  test = apiClient(app.baseUrl, team.testKey.token);
  const other = await createTeam(database.db, { name: 'Elsewhere', adminEmail: 'a@else.test' }, systemClock);
  others = apiClient(app.baseUrl, other.key.token);
}, 120_000);

afterAll(async () => {
  await app?.stop();
  await webhooks?.close();
  await database?.close();
});

/** A passkey saved at the end of a (live, closed) case of the team: the case's id. */
async function enrolledCase(subjectEmail: string): Promise<string> {
  const enrolling = await insertCase(database.db, { teamId, livemode: true, subjectEmail, status: 'closed' });
  await enrollPasskey(database.db, enrolling);
  return enrolling.caseId;
}

describe('the passkeys API', () => {
  it("lists a subject's passkeys in the key's team and mode, never the public key", async () => {
    const caseId = await enrolledCase('lister@keys.test');
    const listed = await live.get<{ results: PasskeyWire[] }>('/v1/passkeys/?subject_email=lister@keys.test');
    expect(listed.status).toBe(200);
    expect(listed.body.results).toEqual([
      {
        id: expect.any(String),
        subject_email: 'lister@keys.test',
        livemode: true,
        enrolling_case_id: caseId,
        device_type: 'single_device',
        backed_up: false,
        created_at: expect.any(String),
        last_used_at: null,
      },
    ]);
    expect(listed.text).not.toMatch(/public_key|publicKey|credential/);
    expect(
      (await test.get<{ results: unknown[] }>('/v1/passkeys/?subject_email=lister@keys.test')).body,
    ).toEqual({
      results: [],
    });
    expect(
      (await others.get<{ results: unknown[] }>('/v1/passkeys/?subject_email=lister@keys.test')).body,
    ).toEqual({ results: [] });
    expectError(await live.get('/v1/passkeys/'), 422, 'VALIDATION_ERROR');
  });

  it('revokes one: 204, audited, passkey.revoked delivered; another mode or team gets 404', async () => {
    const endpoint = await live.post<{ id: string }>('/v1/webhooks/endpoints/', {
      url: webhooks.url('/revoked'),
      events: ['passkey.revoked'],
    });
    expect(endpoint.status).toBe(201);
    const caseId = await enrolledCase('revoked@keys.test');
    const [passkey] = (
      await live.get<{ results: PasskeyWire[] }>('/v1/passkeys/?subject_email=revoked@keys.test')
    ).body.results;
    if (!passkey) throw new Error('no passkey listed');

    expectError(await test.delete(`/v1/passkeys/${passkey.id}/`), 404, 'NOT_FOUND');
    expectError(await others.delete(`/v1/passkeys/${passkey.id}/`), 404, 'NOT_FOUND');
    expectError(await live.delete('/v1/passkeys/not-a-uuid/'), 422, 'VALIDATION_ERROR');
    const revoked = await live.delete(`/v1/passkeys/${passkey.id}/`);
    expect(revoked.status).toBe(204);
    expectError(await live.delete(`/v1/passkeys/${passkey.id}/`), 404, 'NOT_FOUND');
    expect(
      (await live.get<{ results: unknown[] }>('/v1/passkeys/?subject_email=revoked@keys.test')).body.results,
    ).toEqual([]);

    const [delivered] = await webhooks.waitFor('/revoked', 1);
    expect(delivered?.problems).toEqual([]);
    expect(JSON.parse(delivered?.body ?? '{}')).toMatchObject({
      type: 'passkey.revoked',
      livemode: true,
      data: { passkey_id: passkey.id, case_id: caseId, subject_email: 'revoked@keys.test' },
    });
    const audited = await database.db
      .select()
      .from(auditLog)
      .where(and(eq(auditLog.teamId, teamId), eq(auditLog.action, 'passkey.revoked')));
    expect(audited).toMatchObject([
      { target: passkey.id, details: { livemode: true, enrolling_case_id: caseId } },
    ]);
  });
});
