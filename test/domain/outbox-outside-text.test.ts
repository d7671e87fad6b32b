/**
 * The outbox's statements take outside text (subjects' addresses and names, a vendor's reading of
 * a document, mail text) from every path, not only the API's, whose check refuses control
 * characters. PostgreSQL refuses NUL in text and `\u0000` or a lone surrogate in json: one such
 * value failed the whole statement, the other events in it and the change that caused them.
 */
import { eq, inArray } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { events, mailOutbox, webhookDeliveries, webhookEndpoints } from '@/db/schema';
import { systemClock } from '@/server/platform/clock';
import type { DataScope } from '@/server/platform/data-scope';
import { enqueueMail } from '@/server/platform/outbox/enqueue-mail';
import { deliveryBody, recordEvents } from '@/server/platform/outbox/record-events';
import { createTeam } from '@/server/teams/manage-teams';
import { createEndpoint } from '@/server/webhooks/manage-endpoints';
import type { TestDatabase } from '@/test/support/database';
import { type InProcess, startInProcess } from '@/test/support/in-process';

let inProcess: InProcess;
let database: TestDatabase;
let scope: DataScope;

beforeAll(async () => {
  inProcess = await startInProcess();
  database = inProcess.database;
  const { team } = await createTeam(
    database.db,
    { name: 'Outbox', adminEmail: 'a@outbox.test' },
    systemClock,
  );
  scope = { teamId: team.id, livemode: true };
  const endpoint = await createEndpoint(
    database.db,
    scope,
    { url: 'https://example.com/hook', events: ['case.created'] },
    { clock: systemClock, allowPrivateNetworks: false },
  );
  // Disabled by the service: its deliveries are written (held) and no job is queued for them, so
  // the outbox runs here without the job queue of a running service.
  await database.db
    .update(webhookEndpoints)
    .set({ isActive: false, disabledAt: new Date() })
    .where(eq(webhookEndpoints.id, endpoint.id));
});

afterAll(async () => {
  await inProcess?.close();
});

describe('the outbox with outside text', () => {
  it('records events whose data holds NUL, control characters or a lone surrogate, repaired, with the rest', async () => {
    const now = new Date();
    const recorded = await database.db.transaction((tx) =>
      recordEvents(tx, inProcess.jobs, [
        { scope, type: 'case.created', data: { subject_email: 'plain@example.test' }, now },
        {
          scope,
          type: 'case.created',
          data: {
            subject_email: 'nul\0@example.test',
            name: 'esc\u001b[31m',
            lone: 'x\ud800',
            'key\0': [1, '\u0007'],
          },
          now,
        },
      ]),
    );
    expect(recorded.map((event) => event.envelope.data)).toEqual([
      { subject_email: 'plain@example.test' },
      {
        subject_email: 'nul\uFFFD@example.test',
        name: 'esc\uFFFD[31m',
        lone: 'x\uFFFD',
        'key\uFFFD': [1, '\uFFFD'],
      },
    ]);
    const ids = recorded.map((event) => event.id);
    const stored = await database.db.select().from(events).where(inArray(events.id, ids));
    expect(new Map(stored.map((row) => [row.id, row.data]))).toEqual(
      new Map(recorded.map((event) => [event.id, event.envelope.data])),
    );
    // Each delivery carries exactly the envelope the events API serves.
    const deliveries = await database.db
      .select()
      .from(webhookDeliveries)
      .where(inArray(webhookDeliveries.eventId, ids));
    expect(new Map(deliveries.map((row) => [row.eventId, row.body]))).toEqual(
      new Map(recorded.map((event) => [event.id, deliveryBody(event.envelope)])),
    );
  });

  it('queues a mail whose fields hold NUL or control characters, repaired, keeping line breaks and tabs', async () => {
    const { id } = await database.db.transaction((tx) =>
      enqueueMail(tx, {
        to: 'someone@example.test',
        subject: 'For Ada\0 Lovelace',
        text: 'Hello Ada\0,\r\n\tyour \u001b[1mlink\n',
        html: '<p>Ada\0</p>',
      }),
    );
    const [mail] = await database.db.select().from(mailOutbox).where(eq(mailOutbox.id, id));
    expect(mail).toMatchObject({
      to: 'someone@example.test',
      subject: 'For Ada\uFFFD Lovelace',
      text: 'Hello Ada\uFFFD,\r\n\tyour \uFFFD[1mlink\n',
      html: '<p>Ada\uFFFD</p>',
    });
  });
});
