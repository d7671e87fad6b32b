import { and, eq } from 'drizzle-orm';
import Stripe from 'stripe';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { caseSteps, cases } from '@/db/schema';
import { findCaseByPublicId } from '@/server/cases/case-repository';
import { systemClock } from '@/server/platform/clock';
import type { RedirectIdentityProvider } from '@/server/platform/providers/identity/identity-provider';
import { createStripeIdentityProvider } from '@/server/platform/providers/identity/stripe-identity-provider';
import { VendorError } from '@/server/platform/providers/vendor-copy';
import { createTeam } from '@/server/teams/manage-teams';
import { startIdentitySession, syncIdentitySession } from '@/server/verification/methods/government-id/step';
import type { TestDatabase } from '@/test/support/database';
import { type InProcess, openCase, startInProcess } from '@/test/support/in-process';
import { type StripeStandIn, startStripeStandIn } from '@/test/support/stripe-stand-in';

let inProcess: InProcess;
let database: TestDatabase;
let stripe: StripeStandIn;
let provider: RedirectIdentityProvider;
let teamId: string;

beforeAll(async () => {
  inProcess = await startInProcess();
  database = inProcess.database;
  stripe = await startStripeStandIn();
  provider = createStripeIdentityProvider({
    secretKey: stripe.secretKey,
    webhookSecret: stripe.webhookSecret,
    apiBase: stripe.url,
  });
  const { team } = await createTeam(
    database.db,
    { name: 'Stripe Co', adminEmail: 'a@stripe.test' },
    systemClock,
  );
  teamId = team.id;
});

afterAll(async () => {
  await stripe?.close();
  await inProcess?.close();
});

function newIdCase() {
  return openCase(
    inProcess,
    { teamId, livemode: true },
    {
      subject_email: 's@stripe.test',
      verification_methods: { government_id: true },
    },
  );
}

async function current(publicId: string) {
  const found = await findCaseByPublicId(database.db, publicId);
  if (!found) throw new Error('case vanished');
  return found.record;
}

/** Starts the case's identity session as the subject's page does; the Stripe session's id. */
async function startedSession(record: Awaited<ReturnType<typeof newIdCase>>): Promise<string> {
  await startIdentitySession(database.db, inProcess.jobs, {
    record,
    provider,
    returnUrl: 'http://x.test/r',
    now: new Date(),
  });
  return (await current(record.publicId)).steps.find((s) => s.method === 'government_id')?.settings
    .provider_session_id as string;
}

/** Reads the session's outcome from Stripe into the case, as the return page and the webhook do. */
async function sync(publicId: string) {
  return syncIdentitySession(database.db, inProcess.jobs, {
    record: await current(publicId),
    provider,
    now: new Date(),
  });
}

describe('Stripe Identity adapter (official SDK against a local stand-in)', () => {
  it('creates a document session with a matching selfie and a return URL, then resumes the same session', async () => {
    const record = await newIdCase();
    const url = await startIdentitySession(database.db, inProcess.jobs, {
      record,
      provider,
      returnUrl: `http://verify.test/v/${record.publicId}/identity/return`,
      now: new Date(),
    });
    const [session] = [...stripe.sessions.values()].filter((s) => s.metadata.case_id === record.id);
    expect(session).toMatchObject({
      type: 'document',
      return_url: `http://verify.test/v/${record.publicId}/identity/return`,
      options: { document: { require_matching_selfie: 'true' } },
      metadata: { case_id: record.id, public_id: record.publicId },
    });
    expect(url).toBe(session?.url);
    const again = await startIdentitySession(database.db, inProcess.jobs, {
      record: await current(record.publicId),
      provider,
      returnUrl: 'x',
      now: new Date(),
    });
    expect(again).toBe(url);
    expect([...stripe.sessions.values()].filter((s) => s.metadata.case_id === record.id)).toHaveLength(1);
  });

  it('a verified session verifies ID and selfie and sets the name read from the document', async () => {
    const record = await newIdCase();
    const sessionId = await startedSession(record);
    const before = await sync(record.publicId);
    expect(before).toEqual({ outcome: 'pending' });
    await stripe.complete(sessionId, 'verified', 'Katherine Johnson');
    const result = await sync(record.publicId);
    const report = stripe.sessions.get(sessionId)?.last_verification_report;
    expect(report).toMatch(/^vr_/);
    expect(result).toEqual({
      outcome: 'verified',
      name: 'Katherine Johnson',
      names: { given: 'Katherine', family: 'Johnson' },
      reportId: report,
    });
    const [row] = await database.db.select().from(cases).where(eq(cases.id, record.id));
    expect(row).toMatchObject({ status: 'closed', subjectName: 'Katherine Johnson' });
    // The session and the report that decided it stay on the step, for the case's evidence record.
    const [step] = await database.db
      .select()
      .from(caseSteps)
      .where(and(eq(caseSteps.caseId, record.id), eq(caseSteps.method, 'government_id')));
    expect(step?.settings).toMatchObject({ provider_session_id: sessionId, provider_report_id: report });
  });

  it('stores a name the provider read with NUL or control characters repaired, and closes the case', async () => {
    // The API refuses such names at its edge; a vendor's answer never went through it, and a NUL
    // failed the step's transaction on every try, leaving the case open.
    const record = await newIdCase();
    const sessionId = await startedSession(record);
    await stripe.complete(sessionId, 'verified', 'Kathe\0rine John\u001bson');
    await sync(record.publicId);
    const [row] = await database.db.select().from(cases).where(eq(cases.id, record.id));
    expect(row).toMatchObject({ status: 'closed', subjectName: 'Kathe\uFFFDrine John\uFFFDson' });
  });

  it.each([
    ['reject_document', 'government_id_rejected'],
    ['reject_selfie', 'selfie_rejected'],
  ] as const)('%s fails the case with %s', async (outcome, reason) => {
    const record = await newIdCase();
    const sessionId = await startedSession(record);
    await stripe.complete(sessionId, outcome);
    await sync(record.publicId);
    const [row] = await database.db.select().from(cases).where(eq(cases.id, record.id));
    expect(row).toMatchObject({ status: 'failed', failureReason: reason });
  });

  it('erases a session through Stripe’s redaction, which runs on at Stripe, and is refused while it processes', async () => {
    const record = await newIdCase();
    const sessionId = await startedSession(record);
    const session = stripe.sessions.get(sessionId);
    if (!session) throw new Error('no session');
    // The subject's attempt is being checked: Stripe does not redact it yet, and says only why.
    session.status = 'processing';
    const refused = provider.copies.erase(sessionId);
    await expect(refused).rejects.toThrow(VendorError);
    await expect(refused).rejects.toThrow('Stripe answered 400 (invalid_request_error)');
    session.status = 'requires_input';
    // Accepted (the session waiting for input is canceled by it), then carried out at Stripe.
    stripe.holdRedactions = true;
    try {
      expect(await provider.copies.erase(sessionId)).toBe('in_progress');
      expect(session).toMatchObject({ status: 'canceled', redaction: { status: 'processing' } });
      expect(await provider.copies.erase(sessionId)).toBe('in_progress');
      stripe.finishRedactions();
    } finally {
      stripe.holdRedactions = false;
    }
    expect(await provider.copies.erase(sessionId)).toBe('erased');
    expect(session).toMatchObject({ redaction: { status: 'redacted' }, metadata: {} });
    expect(
      stripe.requests.filter((r) => r.method === 'POST' && r.path.endsWith(`${sessionId}/redact`)),
    ).toHaveLength(2);
    expect(await provider.copies.erase('vs_unknown0000')).toBe('absent');
  });

  it('accepts only webhooks signed with the endpoint secret', () => {
    const payload = JSON.stringify({
      id: 'evt_1',
      object: 'event',
      type: 'identity.verification_session.verified',
      data: {
        object: { id: 'vs_123', object: 'identity.verification_session', metadata: { case_id: 'c1' } },
      },
    });
    const signer = new Stripe('sk_test_x');
    const good = signer.webhooks.generateTestHeaderString({ payload, secret: stripe.webhookSecret });
    expect(provider.parseWebhook(payload, good)).toEqual({ sessionId: 'vs_123', caseId: 'c1' });
    const forged = signer.webhooks.generateTestHeaderString({ payload, secret: 'whsec_other' });
    expect(() => provider.parseWebhook(payload, forged)).toThrow(
      Stripe.errors.StripeSignatureVerificationError,
    );
    expect(() => provider.parseWebhook(payload.replace('c1', 'c2'), good)).toThrow(
      Stripe.errors.StripeSignatureVerificationError,
    );
  });
});
