import type { AuthenticationResponseJSON, RegistrationResponseJSON } from '@simplewebauthn/server';
import type { MethodRoutes } from '@/server/api/page-kit/method-routes';
import { withNotice } from '@/server/api/page-kit/notices';
import {
  answerCaseStep,
  type CaseRequest,
  readProtectedForm,
  readProtectedJson,
  scriptAnswer,
} from '@/server/api/page-kit/page-request';
import { seeOther } from '@/server/api/page-kit/respond';
import { appErrorIn } from '@/server/platform/errors';
import { logger } from '@/server/platform/logger';
import { relyingPartyOf } from '@/server/verification/methods/passkey/ceremonies';
import {
  declinePasskeyOffer,
  enrollmentOptions,
  enrollPasskeyOnCase,
} from '@/server/verification/methods/passkey/enrollment';
import { passkeyChallenge, provePasskeyStep } from '@/server/verification/methods/passkey/step';

/**
 * The largest answer a ceremony takes. A registration's attestation (`none`: no certificate chain)
 * or an assertion is well under 2 KB; a body larger than this is not a browser's.
 */
export const PASSKEY_BODY_LIMIT_BYTES = 16 * 1024;

/**
 * A page script's ceremony request spends one of the case's budget (options and answers alike):
 * null when it may go on, else the 429 to answer with the place to go (the page says why).
 */
export async function spendCeremony(req: CaseRequest): Promise<Response | null> {
  try {
    await req.ctx.rateLimiters.consume('passkey_ceremonies', req.found.record.id);
    return null;
  } catch (error) {
    const refused = appErrorIn(error);
    if (refused?.appCode !== 'RATE_LIMITED') throw error;
    return scriptAnswer(
      429,
      { error: 'rate_limited', location: withNotice(req.back, 'passkey-too-many') },
      refused.headers,
    );
  }
}

/** A ceremony's step, from its JSON body within the limit and after the form's checks and the budget. */
function ceremonyRequest(
  request: Request,
  publicId: string,
  run: (req: CaseRequest, body: Record<string, unknown>) => Promise<Response>,
): Promise<Response> {
  return answerCaseStep(request, publicId, async (req) => {
    const body = await readProtectedJson(request, req, PASSKEY_BODY_LIMIT_BYTES);
    if (body instanceof Response) return body;
    const spent = await spendCeremony(req);
    if (spent) return spent;
    return run(req, body);
  });
}

/** POST /v/<id>/passkey/options: the challenge for the browser's passkey prompt. */
function postProofOptions(request: Request, publicId: string): Promise<Response> {
  return ceremonyRequest(request, publicId, async ({ ctx, found, back }) => {
    const options = await passkeyChallenge(ctx.db, found.record, relyingPartyOf(ctx.pageBase), ctx.clock());
    if (options.ok) return scriptAnswer(200, { options: options.value });
    // The case moved on (the page says how), or its subject's passkeys were revoked since.
    const location = options.why === 'not_asked' ? back : withNotice(back, 'passkey-none');
    return scriptAnswer(409, { error: options.why, location });
  });
}

/**
 * POST /v/<id>/passkey/answer: the browser's signed answer. Its result goes back with where the
 * page is to go: the case's page, saying what happened.
 */
function postProofAnswer(request: Request, publicId: string): Promise<Response> {
  return ceremonyRequest(request, publicId, async ({ ctx, found, back }, body) => {
    const response = body.response;
    if (typeof response !== 'object' || response === null) {
      return scriptAnswer(400, { error: 'invalid_request', location: back });
    }
    const checked = await provePasskeyStep(
      ctx.db,
      ctx.jobs,
      found.record,
      response as AuthenticationResponseJSON,
      relyingPartyOf(ctx.pageBase),
      ctx.clock(),
    );
    if (checked.refused) {
      logger.info('passkey refused', { case_id: found.record.id, refused: checked.refused });
    }
    switch (checked.result) {
      case 'verified':
        return scriptAnswer(200, { result: 'verified', location: withNotice(back, 'passkey-verified') });
      case 'wrong':
        return scriptAnswer(200, {
          result: 'wrong',
          refused: checked.refused,
          location: withNotice(back, 'passkey-wrong', checked.attemptsLeft),
        });
      default:
        // Failed (the last attempt) or over: the page itself says what happened.
        return scriptAnswer(200, { result: checked.result, refused: checked.refused, location: back });
    }
  });
}

/** POST /v/<id>/passkey/enroll-options: the challenge for the browser's prompt to save a passkey. */
function postEnrollmentOptions(request: Request, publicId: string): Promise<Response> {
  return ceremonyRequest(request, publicId, async ({ ctx, found, back }) => {
    const options = await enrollmentOptions(ctx.db, found.record, relyingPartyOf(ctx.pageBase), ctx.clock());
    if (options.ok) return scriptAnswer(200, { options: options.value });
    // Declined, saved already, or the subject holds as many as they may: the page says which.
    return scriptAnswer(409, { error: options.why, location: back });
  });
}

/** POST /v/<id>/passkey/enroll: the browser's new passkey, saved for this case's subject. */
function postEnrollment(request: Request, publicId: string): Promise<Response> {
  return ceremonyRequest(request, publicId, async ({ ctx, found, back }, body) => {
    const response = body.response;
    if (typeof response !== 'object' || response === null) {
      return scriptAnswer(400, { error: 'invalid_request', location: back });
    }
    const saved = await enrollPasskeyOnCase(
      ctx.db,
      ctx.jobs,
      found.record,
      response as RegistrationResponseJSON,
      relyingPartyOf(ctx.pageBase),
      ctx.clock(),
    );
    if (saved.ok) {
      return scriptAnswer(200, { result: 'saved', location: withNotice(back, 'passkey-saved') });
    }
    logger.info('passkey not saved', { case_id: found.record.id, refused: saved.why });
    return scriptAnswer(200, {
      result: 'refused',
      refused: saved.why,
      location: saved.why === 'not_offered' ? back : withNotice(back, 'passkey-save-failed'),
    });
  });
}

/** POST /v/<id>/passkey/decline: the subject says no; the case never offers again. A plain form. */
function postDecline(request: Request, publicId: string): Promise<Response> {
  return answerCaseStep(request, publicId, async (req) => {
    const form = await readProtectedForm(request, req, req.back);
    if (form instanceof Response) return form;
    const declined = await declinePasskeyOffer(req.ctx.db, req.found.record, req.ctx.clock());
    return seeOther(declined ? withNotice(req.back, 'passkey-declined') : req.back);
  });
}

/** The passkey's ceremonies under `/v/<public id>/passkey/…`. */
export const passkeyRoutes: MethodRoutes = {
  segment: 'passkey',
  paths: {
    options: { POST: (request, { publicId }) => postProofOptions(request, publicId) },
    answer: { POST: (request, { publicId }) => postProofAnswer(request, publicId) },
    'enroll-options': { POST: (request, { publicId }) => postEnrollmentOptions(request, publicId) },
    enroll: { POST: (request, { publicId }) => postEnrollment(request, publicId) },
    decline: { POST: (request, { publicId }) => postDecline(request, publicId) },
  },
};
