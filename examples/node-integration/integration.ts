/**
 * A complete Vouch integration in Node, typed from the API's own OpenAPI document:
 *
 *   1. a webhook receiver that verifies every delivery with `standardwebhooks`;
 *   2. an endpoint subscribed to `case.closed`, pointing at it;
 *   3. a test case, created with an Idempotency-Key;
 *   4. its steps completed with `simulate` (a test key's shortcut for the subject's clicks);
 *   5. a hiring wave's batch: several cases in one request, each item answered alone;
 *   6. the `case.closed` webhook received and verified, and the case read back as closed;
 *   7. the subject's passkeys listed, and one revoked as a helpdesk would (when they hold one).
 *
 * Types: `npm run example:types` (openapi-typescript, from VOUCH_URL/v1/openapi.json) writes
 * vouch-api.d.ts; calls go through openapi-fetch, so a path, a field or a status the document
 * does not have is a compile error here. Run: see README.md beside this file.
 */
import { readFileSync } from 'node:fs';
import { createServer } from 'node:https';
import createClient from 'openapi-fetch';
import { Webhook } from 'standardwebhooks';
import type { components, paths } from './vouch-api';

type CaseClosedEvent = components['schemas']['CaseClosedEvent'];

function required(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`set ${name} (see examples/node-integration/README.md)`);
  return value;
}

const vouchUrl = required('VOUCH_URL');
const testKey = required('VOUCH_TEST_KEY');
const receiverPort = Number(process.env.RECEIVER_PORT ?? 4443);
const receiverTls = {
  cert: readFileSync(required('RECEIVER_CERT')),
  key: readFileSync(required('RECEIVER_KEY')),
};

const vouch = createClient<paths>({
  baseUrl: vouchUrl,
  headers: { Authorization: `Bearer ${testKey}` },
});

/** An API answer's data, or the error's code and detail as an exception (with its Request-Id). */
function dataOf<T>(result: { data?: T; error?: { code: string; detail: string }; response: Response }): T {
  if (result.data !== undefined) return result.data;
  const requestId = result.response.headers.get('Request-Id');
  throw new Error(
    `${result.response.status} ${result.error?.code}: ${result.error?.detail} (request ${requestId})`,
  );
}

// 1. The receiver. The secret is known once the endpoint exists; deliveries wait for it.
let webhook: Webhook | undefined;
let resolveClosed: (event: CaseClosedEvent) => void = () => {};
const closedEvents = new Map<string, Promise<CaseClosedEvent>>();
function closedEventFor(caseId: string): Promise<CaseClosedEvent> {
  let promise = closedEvents.get(caseId);
  if (!promise) {
    promise = new Promise((resolve) => {
      resolveClosed = (event) => {
        if (event.data.case_id === caseId) resolve(event);
      };
    });
    closedEvents.set(caseId, promise);
  }
  return promise;
}

const receiver = createServer(receiverTls, async (req, res) => {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const body = Buffer.concat(chunks).toString('utf8');
  let event: CaseClosedEvent;
  try {
    if (!webhook) throw new Error('no secret yet');
    event = webhook.verify(body, req.headers as Record<string, string>) as CaseClosedEvent;
  } catch (error) {
    console.log(`refused a delivery: ${(error as Error).message}`);
    res.writeHead(400).end();
    return;
  }
  console.log(
    `received ${event.type} ${event.id} (delivery ${req.headers['webhook-id']}), signature verified`,
  );
  res.writeHead(204).end();
  if (event.type === 'case.closed') resolveClosed(event);
});
await new Promise<void>((resolve) => receiver.listen(receiverPort, '127.0.0.1', resolve));

try {
  // 2. The endpoint.
  const endpoint = dataOf(
    await vouch.POST('/v1/webhooks/endpoints/', {
      body: {
        url: `https://localhost:${receiverPort}/vouch-webhooks`,
        events: ['case.closed'],
        description: 'examples/node-integration',
      },
    }),
  );
  webhook = new Webhook(endpoint.secret);
  console.log(`endpoint ${endpoint.id} → ${endpoint.url}`);

  // 3. The case. A retry with the same Idempotency-Key would get this same case back.
  const created = dataOf(
    await vouch.POST('/v1/cases/', {
      params: { header: { 'Idempotency-Key': `example-${Date.now()}` } },
      body: {
        subject_email: 'jane.doe@acme.example',
        subject_name: 'Jane Doe',
        verification_methods: { email: true, custom_question: true },
        custom_question_text: 'The colour of your badge?',
        custom_question_answer: 'Blue',
      },
    }),
  );
  if (created.livemode) throw new Error('a test key made a live case');
  console.log(`case ${created.id} is ${created.status}; the subject’s link: ${created.verification_url}`);
  const closed = closedEventFor(created.id);

  // 4. Each step, as if the subject had done it.
  for (const method of ['email', 'custom_question'] as const) {
    const after = dataOf(
      await vouch.POST('/v1/cases/{id}/simulate/', {
        params: { path: { id: created.id } },
        body: { action: 'complete_step', method },
      }),
    );
    console.log(`simulated ${method}: the case is ${after.status}`);
  }

  // 5. A hiring wave: up to 100 cases in one request, each item answered alone (here the second
  // item's address is not one, and only that item fails).
  const wave = dataOf(
    await vouch.POST('/v1/cases/batch/', {
      params: { header: { 'Idempotency-Key': `example-wave-${Date.now()}` } },
      body: {
        cases: [
          { subject_email: 'ana.lima@acme.example', verification_methods: { email: true } },
          { subject_email: 'not-an-address', verification_methods: { email: true } },
        ],
      },
    }),
  );
  for (const [index, result] of wave.results.entries()) {
    console.log(
      'case' in result
        ? `batch item ${index}: case ${result.case.id} for ${result.case.subject_email}`
        : `batch item ${index}: ${result.status} ${result.error.code}`,
    );
  }

  // 6. The webhook, then the case as the API reads it.
  const timeout = new Promise<never>((_, reject) =>
    setTimeout(() => reject(new Error('no case.closed webhook within 30 s')), 30_000).unref(),
  );
  const event = await Promise.race([closed, timeout]);
  const current = dataOf(await vouch.GET('/v1/cases/{id}/', { params: { path: { id: created.id } } }));
  if (current.status !== 'closed') throw new Error(`the case reads as ${current.status}`);
  console.log(`case.closed ${event.id} for ${event.data.subject_email}; the case reads as ${current.status}`);

  // 7. The passkeys the subject saved at the end of a case that offered one (the case above did
  //    not offer it: they hold one only if an earlier case saved it); a helpdesk revokes one (a
  //    lost phone, say) with DELETE /v1/passkeys/{id}/, and no case can verify them by it again.
  const passkeys = dataOf(
    await vouch.GET('/v1/passkeys/', { params: { query: { subject_email: current.subject_email } } }),
  );
  console.log(`${current.subject_email} holds ${passkeys.results.length} passkey(s)`);
  const [passkey] = passkeys.results;
  if (passkey) {
    const revoked = await vouch.DELETE('/v1/passkeys/{id}/', { params: { path: { id: passkey.id } } });
    if (revoked.response.status !== 204) {
      throw new Error(
        `revoking passkey ${passkey.id}: ${revoked.response.status} ${revoked.error?.code}: ${revoked.error?.detail}`,
      );
    }
    console.log(`revoked passkey ${passkey.id}, saved by case ${passkey.enrolling_case_id}`);
  } else {
    console.log('no passkey to revoke');
  }

  const deleted = await vouch.DELETE('/v1/webhooks/endpoints/{id}/', {
    params: { path: { id: endpoint.id } },
  });
  if (deleted.response.status !== 204) throw new Error(`deleting the endpoint: ${deleted.response.status}`);
  console.log('done: the endpoint is deleted');
} finally {
  receiver.close();
  receiver.closeAllConnections();
}
