import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import Stripe from 'stripe';
import { listenRestartable } from './listen-restartable';

export type StandInOutcome = 'verified' | 'reject_document' | 'reject_selfie';

interface Session {
  id: string;
  object: 'identity.verification_session';
  status: 'requires_input' | 'processing' | 'verified' | 'canceled';
  type: string;
  url: string | null;
  return_url: string | null;
  client_reference_id: string | null;
  metadata: Record<string, string>;
  options: Record<string, unknown>;
  last_error: { code: string; reason: string } | null;
  verified_outputs: { first_name: string; last_name: string } | null;
  /** The id of the report of the last attempt (Stripe's VerificationReport, `vr_…`); null before one. */
  last_verification_report: string | null;
  /** Null until redacted: `processing` (Stripe takes up to four days), then `redacted`. */
  redaction: { status: 'processing' | 'redacted' } | null;
  livemode: false;
  created: number;
}

export interface StripeStandIn {
  /** Use as STRIPE_API_BASE. */
  url: string;
  secretKey: string;
  webhookSecret: string;
  sessions: Map<string, Session>;
  /** Settles a session as Stripe would after the subject's attempt, and sends the signed webhook. */
  complete: (sessionId: string, outcome: StandInOutcome, name?: string) => Promise<void>;
  /** Where `complete` posts events (the app's /integrations/stripe); unset, no webhook is sent. */
  webhookUrl?: string;
  /**
   * While true, `complete` keeps its webhook instead of sending it (Stripe is late), so a test can
   * have the subject come back first; `releaseWebhooks` sends what was kept.
   */
  holdWebhooks: boolean;
  releaseWebhooks: () => Promise<void>;
  /** Every webhook sent, with the app's answer, in order. */
  webhookDeliveries: Array<{ sessionId: string; type: string; status: number }>;
  /** Every API call received (method and path), in order. */
  requests: Array<{ method: string; path: string }>;
  /**
   * While true, a redaction stays `processing` until `finishRedactions`; otherwise it is done by
   * the next time the session is read.
   */
  holdRedactions: boolean;
  finishRedactions: () => void;
  /** Unreachable (connections refused) until `up`; sessions are kept. */
  down: () => Promise<void>;
  up: () => Promise<void>;
  close: () => Promise<void>;
}

/** Stripe's form encoding: `metadata[case_id]=…`, `options[document][require_matching_selfie]=true`. */
function parseStripeForm(body: string): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of new URLSearchParams(body)) {
    const path = key.split(/\[|\]\[|\]/).filter(Boolean);
    let node = out as Record<string, unknown>;
    path.forEach((part, i) => {
      if (i === path.length - 1) node[part] = value;
      else {
        node[part] ??= {};
        node = node[part] as Record<string, unknown>;
      }
    });
  }
  return out;
}

const read = (req: IncomingMessage) =>
  new Promise<string>((resolve) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
  });

/** What Stripe's redaction leaves of a session: its personal fields replaced, metadata erased. */
function finishRedaction(session: Session): void {
  if (session.redaction?.status !== 'processing') return;
  session.redaction = { status: 'redacted' };
  session.metadata = {};
  session.return_url = '[redacted]';
  session.client_reference_id = '[redacted]';
  if (session.verified_outputs)
    session.verified_outputs = { first_name: '[redacted]', last_name: '[redacted]' };
}

/**
 * A local server that speaks the Stripe Identity API the adapter uses (create, retrieve and
 * redact a VerificationSession, Bearer auth with the secret key, Stripe's error JSON), plus a minimal
 * "hosted" page at the session's `url` where a test chooses the outcome; the subject is then sent
 * to `return_url` and a webhook signed like Stripe's (`Stripe-Signature: t=…,v1=…`) goes out.
 */
export async function startStripeStandIn(): Promise<StripeStandIn> {
  const secretKey = `sk_test_${randomBytes(12).toString('hex')}`;
  const webhookSecret = `whsec_${randomBytes(16).toString('hex')}`;
  const sessions = new Map<string, Session>();
  const signer = new Stripe(secretKey);
  let base = '';

  const json = (res: ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, {
      'Content-Type': 'application/json',
      'Request-Id': `req_${randomBytes(6).toString('hex')}`,
    });
    res.end(JSON.stringify(body));
  };
  const stripeError = (res: ServerResponse, status: number, type: string, message: string, code?: string) =>
    json(res, status, { error: { type, message, ...(code ? { code } : {}) } });

  const held: Array<() => Promise<void>> = [];
  const standIn: StripeStandIn = {
    url: '',
    secretKey,
    webhookSecret,
    sessions,
    holdWebhooks: false,
    webhookDeliveries: [],
    requests: [],
    holdRedactions: false,
    finishRedactions() {
      for (const session of sessions.values()) finishRedaction(session);
    },
    down: async () => {},
    up: async () => {},
    async releaseWebhooks() {
      for (const send of held.splice(0)) await send();
    },
    async complete(sessionId, outcome, name = 'Ada Lovelace') {
      const session = sessions.get(sessionId);
      if (!session) throw new Error(`no session ${sessionId}`);
      // Each attempt gets its report, as Stripe makes one per submission.
      session.last_verification_report = `vr_${randomBytes(12).toString('hex')}`;
      if (outcome === 'verified') {
        const [first_name = '', ...rest] = name.split(' ');
        Object.assign(session, {
          status: 'verified',
          url: null,
          last_error: null,
          verified_outputs: { first_name, last_name: rest.join(' ') },
        });
      } else {
        const code = outcome === 'reject_document' ? 'document_expired' : 'selfie_face_mismatch';
        Object.assign(session, {
          status: 'requires_input',
          last_error: { code, reason: code.replace(/_/g, ' ') },
        });
      }
      const webhookUrl = standIn.webhookUrl;
      if (!webhookUrl) return;
      const type =
        outcome === 'verified'
          ? 'identity.verification_session.verified'
          : 'identity.verification_session.requires_input';
      const payload = JSON.stringify({
        id: `evt_${randomBytes(12).toString('hex')}`,
        object: 'event',
        api_version: '2026-10-28.endive',
        created: Math.floor(Date.now() / 1000),
        livemode: false,
        type,
        // Like Stripe, the event's object is not expanded: verified_outputs is absent.
        data: { object: { ...session, verified_outputs: null } },
      });
      const send = async () => {
        // Signed when sent, as Stripe does: a late webhook carries a fresh timestamp.
        const signature = signer.webhooks.generateTestHeaderString({ payload, secret: webhookSecret });
        const answer = await fetch(webhookUrl, {
          method: 'POST',
          headers: { 'Content-Type': 'application/json', 'Stripe-Signature': signature },
          body: payload,
        });
        standIn.webhookDeliveries.push({ sessionId, type, status: answer.status });
      };
      if (standIn.holdWebhooks) held.push(send);
      else await send();
    },
    close: async () => {},
  };

  const server = createServer(async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://stand-in');
    const body = await read(req);
    if (url.pathname.startsWith('/v1/'))
      standIn.requests.push({ method: req.method ?? '', path: url.pathname });
    const hosted = /^\/hosted\/(vs_\w+)$/.exec(url.pathname);
    if (hosted?.[1]) {
      const session = sessions.get(hosted[1]);
      if (!session) return stripeError(res, 404, 'invalid_request_error', 'No such session');
      if (req.method === 'POST') {
        const outcome = new URLSearchParams(body).get('outcome') as StandInOutcome;
        await standIn.complete(session.id, outcome, new URLSearchParams(body).get('name') ?? undefined);
        res.writeHead(303, { Location: session.return_url ?? '/' });
        return res.end();
      }
      res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' });
      return res.end(`<!DOCTYPE html><html lang="en"><head><title>Stripe Identity (stand-in)</title></head><body><main>
<h1>Identity check (stand-in)</h1><form method="post"><input type="hidden" name="name" value="Ada Lovelace">
<button name="outcome" value="verified">Pass</button><button name="outcome" value="reject_document">Reject document</button>
<button name="outcome" value="reject_selfie">Reject selfie</button></form></main></body></html>`);
    }

    if (req.headers.authorization !== `Bearer ${secretKey}`) {
      return stripeError(res, 401, 'invalid_request_error', 'Invalid API Key provided');
    }
    if (req.method === 'POST' && url.pathname === '/v1/identity/verification_sessions') {
      const form = parseStripeForm(body) as {
        type?: string;
        return_url?: string;
        client_reference_id?: string;
        metadata?: Record<string, string>;
        options?: Record<string, unknown>;
      };
      if (form.type !== 'document' && form.type !== 'id_number') {
        return stripeError(res, 400, 'invalid_request_error', 'Invalid type', 'parameter_invalid_empty');
      }
      const id = `vs_${randomBytes(12).toString('hex')}`;
      const session: Session = {
        id,
        object: 'identity.verification_session',
        status: 'requires_input',
        type: form.type,
        url: `${base}/hosted/${id}`,
        return_url: form.return_url ?? null,
        client_reference_id: form.client_reference_id ?? null,
        metadata: form.metadata ?? {},
        options: form.options ?? {},
        last_error: null,
        verified_outputs: null,
        last_verification_report: null,
        redaction: null,
        livemode: false,
        created: Math.floor(Date.now() / 1000),
      };
      sessions.set(id, session);
      return json(res, 200, session);
    }
    const missing = (id: string) =>
      stripeError(
        res,
        404,
        'invalid_request_error',
        `No such verificationsession: '${id}'`,
        'resource_missing',
      );
    // As documented: a session in `requires_input` or `verified` may be redacted (one that
    // requires input is canceled by it); one `processing` the subject's attempt may not yet.
    const redact = /^\/v1\/identity\/verification_sessions\/(vs_\w+)\/redact$/.exec(url.pathname);
    if (req.method === 'POST' && redact?.[1]) {
      const session = sessions.get(redact[1]);
      if (!session) return missing(redact[1]);
      if (session.status === 'processing') {
        return stripeError(
          res,
          400,
          'invalid_request_error',
          'This VerificationSession is processing and cannot be redacted yet.',
        );
      }
      if (session.status === 'requires_input') Object.assign(session, { status: 'canceled', url: null });
      session.redaction ??= { status: 'processing' };
      return json(res, 200, session);
    }
    const one = /^\/v1\/identity\/verification_sessions\/(vs_\w+)$/.exec(url.pathname);
    if (req.method === 'GET' && one?.[1]) {
      const session = sessions.get(one[1]);
      if (!session) return missing(one[1]);
      if (!standIn.holdRedactions) finishRedaction(session);
      // The SDK sends `expand[0]=verified_outputs` (indexed arrays, Stripe's encoding).
      const expanded = [...url.searchParams].some(
        ([k, v]) => k.startsWith('expand[') && v === 'verified_outputs',
      );
      return json(
        res,
        200,
        expanded ? session : { ...session, verified_outputs: session.verified_outputs ? 'vo_x' : null },
      );
    }
    return stripeError(
      res,
      404,
      'invalid_request_error',
      `Unrecognized request URL (${req.method}: ${url.pathname})`,
    );
  });
  const listening = await listenRestartable(server);
  base = `http://127.0.0.1:${listening.port}`;
  Object.assign(standIn, { url: base, down: listening.down, up: listening.up, close: listening.close });
  return standIn;
}
