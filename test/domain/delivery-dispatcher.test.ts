import { getCACertificates, setDefaultCACertificates } from 'node:tls';
import { eq, inArray } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectDatabase } from '@/db/client';
import { webhookDeliveries } from '@/db/schema';
import { systemClock } from '@/server/platform/clock';
import type { DataScope } from '@/server/platform/data-scope';
import { createTeam } from '@/server/teams/manage-teams';
import type { DeliveryDeps } from '@/server/webhooks/attempt-delivery';
import { type DispatcherOptions, startDeliveryDispatcher } from '@/server/webhooks/delivery-dispatcher';
import { createEndpoint } from '@/server/webhooks/manage-endpoints';
import {
  type Certificate,
  eventually,
  makeCertificate,
  type Receiver,
  startReceiver,
} from '@/test/support/https-receiver';
import { type InProcess, openCase, startInProcess } from '@/test/support/in-process';

let inProcess: InProcess;
let certificate: Certificate;
let receiver: Receiver;

/** Long enough that a test sees the attempt under way, however slow the machine. */
const SLOW_MS = 3000;

beforeAll(async () => {
  inProcess = await startInProcess();
  certificate = makeCertificate();
  receiver = await startReceiver(certificate);
  setDefaultCACertificates([...getCACertificates('default'), certificate.cert]);
  for (const path of ['/slow', '/slow-capped'])
    receiver.replies.set(path, () => ({ status: 200, delayMs: SLOW_MS }));
});

afterAll(async () => {
  await receiver?.close();
  await inProcess?.close();
});

const deps = (db = inProcess.database.db): DeliveryDeps => ({
  db,
  clock: systemClock,
  jobs: inProcess.jobs,
  retrySchedule: [1],
  timeoutMs: 10_000,
  allowPrivateNetworks: true,
});

const OPTIONS: DispatcherOptions = { maxInFlight: 200, writeBatch: 50, writeAfterMs: 10 };

/** A team whose only endpoints are at `paths` of the receiver (each for `case.created`), by path. */
async function teamReceiving(
  ...paths: string[]
): Promise<{ scope: DataScope; endpoints: Map<string, string> }> {
  const { team } = await createTeam(
    inProcess.database.db,
    { name: 'Dispatch', adminEmail: `owner-${crypto.randomUUID()}@dispatch.test` },
    systemClock,
  );
  const scope = { teamId: team.id, livemode: true };
  const endpoints = new Map<string, string>();
  for (const path of paths) {
    const endpoint = await createEndpoint(
      inProcess.database.db,
      scope,
      { url: receiver.url(path), events: ['case.created'] },
      { clock: systemClock, allowPrivateNetworks: true },
    );
    endpoints.set(endpoint.id, path);
  }
  return { scope, endpoints };
}

/** The deliveries `count` new cases of the team queue, by receiver path. */
async function deliveriesOf(
  team: Awaited<ReturnType<typeof teamReceiving>>,
  count: number,
): Promise<Map<string, string[]>> {
  for (let i = 0; i < count; i++) {
    await openCase(inProcess, team.scope, {
      subject_email: `person-${crypto.randomUUID()}@dispatch.test`,
      verification_methods: { email: true },
    });
  }
  const rows = await inProcess.database.db
    .select({ id: webhookDeliveries.id, endpointId: webhookDeliveries.endpointId })
    .from(webhookDeliveries)
    .where(eq(webhookDeliveries.teamId, team.scope.teamId));
  const byPath = new Map<string, string[]>();
  for (const row of rows) {
    const path = team.endpoints.get(row.endpointId) ?? '';
    byPath.set(path, [...(byPath.get(path) ?? []), row.id]);
  }
  return byPath;
}

async function rowsOf(ids: string[]) {
  return inProcess.database.db
    .select({
      id: webhookDeliveries.id,
      status: webhookDeliveries.status,
      claimToken: webhookDeliveries.claimToken,
      attemptCount: webhookDeliveries.attemptCount,
    })
    .from(webhookDeliveries)
    .where(inArray(webhookDeliveries.id, ids));
}

describe('the worker’s delivery dispatcher', () => {
  it('hands back as soon as the deliveries are claimed: a slow receiver holds back nobody’s outcome, and drain waits for it', async () => {
    const byPath = await deliveriesOf(await teamReceiving('/slow', '/quick'), 1);
    const slow = byPath.get('/slow') ?? [];
    const quick = byPath.get('/quick') ?? [];
    expect([slow.length, quick.length]).toEqual([1, 1]);
    const dispatcher = startDeliveryDispatcher(deps(), OPTIONS);

    await dispatcher.dispatch([...slow, ...quick]);
    // Claimed, both: neither can be taken by another worker meanwhile.
    for (const row of await rowsOf([...slow, ...quick])) expect(row.claimToken).not.toBeNull();
    expect(dispatcher.inFlight).toBe(2);

    // The quick receiver's outcome is written while the slow one still has not answered.
    await eventually(async () => (await rowsOf(quick))[0]?.status === 'success');
    expect(await rowsOf(slow)).toEqual([expect.objectContaining({ status: 'pending', attemptCount: 0 })]);
    expect((await rowsOf(slow))[0]?.claimToken).not.toBeNull();
    expect(dispatcher.inFlight).toBe(1);

    await dispatcher.drain();
    expect(await rowsOf(slow)).toEqual([
      expect.objectContaining({ status: 'success', attemptCount: 1, claimToken: null }),
    ]);
    expect(dispatcher.inFlight).toBe(0);
  });

  it('keeps at most maxInFlight attempts under way: the next dispatch waits until one is written', async () => {
    const [first, second] =
      (await deliveriesOf(await teamReceiving('/slow-capped'), 2)).get('/slow-capped') ?? [];
    if (!first || !second) throw new Error('two deliveries expected');
    const dispatcher = startDeliveryDispatcher(deps(), { ...OPTIONS, maxInFlight: 1 });

    await dispatcher.dispatch([first]);
    let secondClaimed = false;
    const secondDispatch = dispatcher.dispatch([second]).then(() => {
      secondClaimed = true;
    });
    // While the first is under way, the second waits unclaimed (another worker could take it).
    const [firstSeen] = await receiver.waitFor('/slow-capped', 1);
    expect(firstSeen?.headers['x-service-delivery']).toBe(first);
    expect((await rowsOf([second]))[0]?.claimToken).toBeNull();
    expect(secondClaimed).toBe(false);

    await secondDispatch;
    expect((await rowsOf([first]))[0]?.status).toBe('success');
    // Its attempt began once the first had its answer (SLOW_MS after it arrived).
    const secondSeen = await eventually(async () =>
      receiver.requestsTo('/slow-capped').find((r) => r.headers['x-service-delivery'] === second),
    );
    expect(secondSeen.receivedAt).toBeGreaterThanOrEqual((firstSeen?.receivedAt ?? Infinity) + SLOW_MS - 50);
    await dispatcher.drain();
    expect((await rowsOf([second]))[0]?.status).toBe('success');
  });

  it('writes the outcomes that end together in one statement, and a full batch at once', async () => {
    const together = await deliveriesOf(await teamReceiving('/together'), 6);
    const ids = together.get('/together') ?? [];
    expect(ids).toHaveLength(6);
    // Time enough for all six to end before the first write.
    const dispatcher = startDeliveryDispatcher(deps(), { ...OPTIONS, writeAfterMs: 2000 });
    await dispatcher.dispatch(ids);
    await eventually(async () => (await rowsOf(ids)).every((row) => row.status === 'success'));
    const transactions = async (of: string[]) =>
      new Set(
        (
          await inProcess.database.sql<Array<{ xmin: string }>>`
            select xmin::text from webhook_deliveries where id = any(${`{${of.join(',')}}`}::uuid[])`
        ).map((row) => row.xmin),
      );
    expect((await transactions(ids)).size).toBe(1);

    // Two to a batch: written as each pair ends, never waiting the two seconds.
    const paired = (await deliveriesOf(await teamReceiving('/paired'), 6)).get('/paired') ?? [];
    const pairs = startDeliveryDispatcher(deps(), { ...OPTIONS, writeBatch: 2, writeAfterMs: 60_000 });
    await pairs.dispatch(paired);
    await eventually(async () => (await rowsOf(paired)).every((row) => row.status === 'success'));
    expect((await transactions(paired)).size).toBeGreaterThanOrEqual(3);
  });

  it('a claim that cannot be made throws and holds no place', async () => {
    const ids = (await deliveriesOf(await teamReceiving('/unreached'), 1)).get('/unreached') ?? [];
    const away = connectDatabase('postgres://vouch@127.0.0.1:9/nowhere', { max: 1 });
    try {
      const dispatcher = startDeliveryDispatcher(deps(away.db), { ...OPTIONS, maxInFlight: 1 });
      await expect(dispatcher.dispatch(ids)).rejects.toThrow();
      expect(dispatcher.inFlight).toBe(0);
      await dispatcher.drain(); // nothing under way: returns at once
    } finally {
      await away.close();
    }
    expect(await rowsOf(ids)).toEqual([expect.objectContaining({ status: 'pending', claimToken: null })]);
    expect(receiver.requestsTo('/unreached')).toHaveLength(0);
  });
});
