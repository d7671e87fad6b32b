import { clientWireError } from '@/server/api/error-table';
import { pageUrl } from '@/server/api/page-url';
import { apiKeyProcedure, router } from '@/server/api/trpc/init';
import { wireContext } from '@/server/api/wire-context';
import { auditedCaseActions } from '@/server/application/cases/audited-actions';
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
  listCasesInput,
  toCaseWire,
} from '@/server/application/cases/wire';
import { findTeamCaseOrFail } from '@/server/cases/case-repository';
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
      errors: ['TRIAL_EXPIRED', 'INSUFFICIENT_ALLOWANCE'],
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
