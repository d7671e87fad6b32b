import { clientWireError } from '@/server/api/error-table';
import { evidenceContext } from '@/server/api/evidence-context';
import { pageUrl } from '@/server/api/page-url';
import { apiKeyProcedure, router } from '@/server/api/trpc/init';
import { wireContext } from '@/server/api/wire-context';
import { auditedCaseActions } from '@/server/application/cases/audited-actions';
import { downloadEvidence } from '@/server/application/cases/download-evidence';
import { listCases } from '@/server/application/cases/list-cases';
import { openIdempotentCase } from '@/server/application/cases/open-case';
import { openCaseBatch } from '@/server/application/cases/open-case-batch';
import { RESEND_LIMITS, resendLinksInput } from '@/server/application/cases/resend-links';
import { simulateCase, simulateCaseInput } from '@/server/application/cases/simulate-case';
import {
  CASE_BATCH_MAX,
  caseBatchInput,
  caseBatchOutput,
  caseIdInput,
  caseListOutput,
  caseOutput,
  createCaseInput,
  flattenedJwsOutput,
  listCasesInput,
  toCaseWire,
} from '@/server/application/cases/wire';
import { findTeamCaseOrFail } from '@/server/cases/case-repository';
import { EVIDENCE_MEDIA_TYPE } from '@/server/evidence/record-format';
import { parseIdempotencyKey } from '@/server/idempotency/run-idempotent';
import { RESEND_BUDGETS } from '@/server/rate-limits/limiters';

export const casesRouter = router({
  create: apiKeyProcedure
    // Before `.input()`: a bad Idempotency-Key is a 400 whatever the body holds.
    .use(({ ctx, next }) =>
      next({ ctx: { idempotencyKey: parseIdempotencyKey(ctx.requestHeaders.get('idempotency-key')) } }),
    )
    .meta({
      successStatus: 201,
      idempotent: true,
      errors: ['TRIAL_EXPIRED', 'INSUFFICIENT_ALLOWANCE', 'PASSKEY_NOT_ENROLLED'],
      openapi: {
        method: 'POST',
        path: '/cases/',
        tags: ['Cases'],
        summary: 'Create a verification case',
        description:
          'Opens a case for a subject and charges one unit per requested method (government_id adds selfie). Send an Idempotency-Key header to make retries safe.',
        successDescription: 'The created case (201).',
      },
    })
    .input(createCaseInput)
    .output(caseOutput)
    .mutation(async ({ ctx, input }) => {
      const { body, replayed } = await openIdempotentCase(
        { ...ctx, caseTtlSeconds: ctx.env.CASE_TTL_SECONDS },
        input,
      );
      if (replayed) ctx.responseHeaders.set('Idempotent-Replayed', 'true');
      ctx.responseHeaders.set('Location', `${ctx.env.BASE_URL}/v1/cases/${body.id}/`);
      return body;
    }),

  createBatch: apiKeyProcedure
    .use(({ ctx, next }) =>
      next({ ctx: { idempotencyKey: parseIdempotencyKey(ctx.requestHeaders.get('idempotency-key')) } }),
    )
    .meta({
      idempotent: true,
      openapi: {
        method: 'POST',
        path: '/cases/batch/',
        tags: ['Cases'],
        summary: 'Create up to 100 cases',
        description: `Opens 1 to ${CASE_BATCH_MAX} cases in one request, each item exactly the body of a single create. Answers 200 with one result per item, in the order given: \`{"case": …}\`, or \`{"error": …, "status": …}\` with the error a single create would have answered. Items succeed or fail alone; each case is charged, evented and mailed as if created alone. The request counts once against the write budget. An Idempotency-Key covers the whole batch.`,
        successDescription: 'One result per item, in order (200 even when items failed).',
      },
    })
    .input(caseBatchInput)
    .output(caseBatchOutput)
    .mutation(async ({ ctx, input }) => {
      const { body, replayed } = await openCaseBatch(
        {
          ...ctx,
          caseTtlSeconds: ctx.env.CASE_TTL_SECONDS,
          itemError: (error) => {
            const wired = clientWireError(error);
            return wired && { error: wired.body, status: wired.status };
          },
        },
        input,
      );
      if (replayed) ctx.responseHeaders.set('Idempotent-Replayed', 'true');
      return body;
    }),

  list: apiKeyProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/cases/',
        tags: ['Cases'],
        summary: 'List cases',
        description:
          '50 per page, newest first. Follow `next` and `previous` as given; filters are kept in them.',
      },
    })
    .input(listCasesInput)
    .output(caseListOutput)
    .query(async ({ ctx, input }) => {
      const at = wireContext(ctx);
      const page = await listCases(ctx.db, ctx.scope, input, at.now);
      return {
        next: pageUrl(ctx.env.BASE_URL, '/v1/cases/', input, page.nextCursor),
        previous: pageUrl(ctx.env.BASE_URL, '/v1/cases/', input, page.previousCursor),
        results: page.results.map((record) => toCaseWire(record, at)),
      };
    }),

  get: apiKeyProcedure
    .meta({
      openapi: { method: 'GET', path: '/cases/{id}/', tags: ['Cases'], summary: 'Get one case' },
    })
    .input(caseIdInput)
    .output(caseOutput)
    .query(async ({ ctx, input }) => {
      const record = await findTeamCaseOrFail(ctx.db, ctx.scope, input.id);
      return toCaseWire(record, wireContext(ctx));
    }),

  evidence: apiKeyProcedure
    .meta({
      responseType: EVIDENCE_MEDIA_TYPE,
      openapi: {
        method: 'GET',
        path: '/cases/{id}/evidence/',
        tags: ['Cases'],
        summary: 'Get the case’s signed evidence record',
        description:
          'The case’s evidence record, signed when asked for: a JWS (RFC 7515) in flattened JSON serialization, `application/jose+json`, signed with EdDSA (Ed25519) by a key of the service’s published key set (`/.well-known/jwks.json`; the protected header names it by `kid`). The payload is the RFC 8785 canonical JSON of the record: issuer, issue time and key id; the case (ids, team, mode, created, ended, outcome, methods requested, subject); each step’s outcome, decision time, failed attempts and evidence reference (the ID vendor’s session and report ids; the confirmed e-mail address; the phone’s country and last four digits; the manager’s address and decision; for the custom question only its outcome); the case’s events by id, type, time and SHA-256 of the body as delivered; and its audit entries with their place and hashes in the team’s hash chain (`sealed_through`: the chain is sealed a few seconds behind). `provisional` is true while the case is open. After redaction, personal values appear only as `hmac:` HMAC-SHA-256 under the team’s evidence key (the console shows it to owners). Two records of an ended case differ only in `issued_at` and `kid`. Every download is audited. Verify one offline with `npm run --silent cli -- evidence verify FILE --jwks URL` (URL: this service’s `/.well-known/jwks.json`) or with any JOSE library (the guide below).',
        successDescription: 'The signed record (application/jose+json).',
      },
    })
    .input(caseIdInput)
    .output(flattenedJwsOutput)
    .query(async ({ ctx, input }) => (await downloadEvidence(evidenceContext(ctx), input.id, 'json')).jws),

  simulate: apiKeyProcedure
    .meta({
      errors: ['CASE_NOT_OPEN', 'STEP_NOT_PENDING', 'TEST_MODE_ONLY'],
      openapi: {
        method: 'POST',
        path: '/cases/{id}/simulate/',
        tags: ['Cases'],
        summary: 'Simulate a step or the end of a test case',
        description:
          'Test mode only. Completes a step (`complete_step`), fails one (`fail_step`, optionally with a `failure_reason`) or expires the case (`expire`) through the same state machine as the verification pages, so the same events and webhooks follow. Answers the case as it now is.',
      },
    })
    .input(simulateCaseInput)
    .output(caseOutput)
    .mutation(async ({ ctx, input }) =>
      toCaseWire(await simulateCase(ctx.db, ctx.scope, input, ctx), wireContext(ctx)),
    ),

  cancel: apiKeyProcedure
    .meta({
      errors: ['CASE_NOT_OPEN'],
      openapi: {
        method: 'POST',
        path: '/cases/{id}/cancel/',
        tags: ['Cases'],
        summary: 'Cancel an open case',
        description:
          'Ends the case now: status `expired`, `canceled_at` set, and `case.expired` with `reason: "canceled"`. Every link of the case stops working, and its pages tell the subject that the team canceled the verification. 409 CASE_NOT_OPEN once the case has ended.',
      },
    })
    .input(caseIdInput)
    .output(caseOutput)
    .mutation(async ({ ctx, input }) =>
      toCaseWire(await auditedCaseActions.cancel(ctx, input.id), wireContext(ctx)),
    ),

  resend: apiKeyProcedure
    .meta({
      errors: ['CASE_NOT_OPEN', 'STEP_NOT_PENDING'],
      openapi: {
        method: 'POST',
        path: '/cases/{id}/resend/',
        tags: ['Cases'],
        summary: 'Send the case’s links again',
        description: `Mails fresh links for \`methods\` (\`email\`: the subject's link; \`manager\`: the manager's request), by default every one whose step is still to do. The earlier links stop working at once. At most ${RESEND_LIMITS.perCase} times per case and once per ${RESEND_LIMITS.intervalSeconds} s, ${RESEND_BUDGETS.team.points} times an hour per team and ${RESEND_BUDGETS.recipient.points} times a day per address mailed (429 with Retry-After); 409 CASE_NOT_OPEN once the case has ended, 409 STEP_NOT_PENDING for a step already done.`,
      },
    })
    .input(resendLinksInput)
    .output(caseOutput)
    .mutation(async ({ ctx, input }) =>
      toCaseWire(await auditedCaseActions.resend(ctx, input), wireContext(ctx)),
    ),

  redact: apiKeyProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/cases/{id}/redact/',
        tags: ['Cases'],
        summary: 'Erase the subject’s personal data',
        description:
          'For good: `subject_email` becomes `redacted+<public_id>@redacted.invalid`, `subject_name` null, `notes` empty; the manager’s name and e-mail, the phone’s last digits and the question are erased, as are the stored bodies of the case’s events and deliveries, what receivers answered to those deliveries, its mails and the stored request and answer of its idempotent creation (a repeat of that request then answers the case as it now is). The copies kept by the identity and SMS providers are erased through their APIs shortly after, by a job queued with the redaction. The case keeps its status, ids and results and gains `redacted_at`; `case.redacted` follows. An open case is canceled first. Repeating it answers the case and changes nothing.',
      },
    })
    .input(caseIdInput)
    .output(caseOutput)
    .mutation(async ({ ctx, input }) =>
      toCaseWire(await auditedCaseActions.redact(ctx, input.id), wireContext(ctx)),
    ),
});
