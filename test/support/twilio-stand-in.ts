import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { listenRestartable } from './listen-restartable';

export interface TwilioMessage {
  sid: string;
  to: string;
  from: string;
  body: string;
  /** `sending` until the carrier is done (see `holdSending`), then `delivered`. */
  status: 'sending' | 'delivered';
  /** Deleted from the account's log (DELETE …/Messages/{Sid}.json). */
  deleted: boolean;
}

export interface TwilioStandIn {
  /** Use as TWILIO_API_BASE. */
  url: string;
  accountSid: string;
  authToken: string;
  /** Every message sent, in order, deleted ones included (marked). */
  messages: TwilioMessage[];
  /** Every API call received (method and path), in order. */
  requests: Array<{ method: string; path: string }>;
  /** While true, new messages stay `sending`, which Twilio refuses to delete (error 20009). */
  holdSending: boolean;
  /** Delivers the messages held `sending`. */
  finishSending: () => void;
  /** Unreachable (connections refused) until `up`; messages are kept. */
  down: () => Promise<void>;
  up: () => Promise<void>;
  close: () => Promise<void>;
}

/**
 * A local server that speaks the part of Twilio's REST API the SMS adapter uses, as documented:
 * POST /2010-04-01/Accounts/{AccountSid}/Messages.json, form-encoded To/From/Body, HTTP basic
 * auth with the Account SID and Auth Token; 201 with the message resource, or Twilio's error JSON
 * ({code, message, more_info, status}) — 401/20003 for bad credentials, 400/21211 for a bad `To`.
 * DELETE /2010-04-01/Accounts/{AccountSid}/Messages/{Sid}.json removes a message from the log:
 * 204, 404/20404 when there is none (or it was deleted), and 409/20009 ("Cannot delete this
 * resource before it is complete") while it is still being sent.
 * GET /__messages lists what was "sent" (for tests in other processes).
 */
export async function startTwilioStandIn(): Promise<TwilioStandIn> {
  const accountSid = `AC${randomBytes(16).toString('hex')}`;
  const authToken = randomBytes(16).toString('hex');
  const messages: TwilioMessage[] = [];
  const requests: TwilioStandIn['requests'] = [];
  const error = (res: import('node:http').ServerResponse, status: number, code: number, message: string) => {
    res.writeHead(status, { 'Content-Type': 'application/json' });
    res.end(
      JSON.stringify({ code, message, more_info: `https://www.twilio.com/docs/errors/${code}`, status }),
    );
  };

  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://stand-in');
      if (req.method === 'GET' && url.pathname === '/__messages') {
        res.writeHead(200, { 'Content-Type': 'application/json' });
        res.end(JSON.stringify(messages));
        return;
      }
      requests.push({ method: req.method ?? '', path: url.pathname });
      const expected = `Basic ${Buffer.from(`${accountSid}:${authToken}`).toString('base64')}`;
      const one = /^\/2010-04-01\/Accounts\/([^/]+)\/Messages\/([^/]+)\.json$/.exec(url.pathname);
      if (req.method === 'DELETE' && one) {
        if (req.headers.authorization !== expected || one[1] !== accountSid) {
          return error(res, 401, 20003, 'Authenticate');
        }
        const message = messages.find((m) => m.sid === one[2] && !m.deleted);
        if (!message) return error(res, 404, 20404, 'The requested resource was not found');
        if (message.status === 'sending') {
          return error(res, 409, 20009, 'Cannot delete this resource before it is complete');
        }
        message.deleted = true;
        res.writeHead(204);
        res.end();
        return;
      }
      const match = /^\/2010-04-01\/Accounts\/([^/]+)\/Messages\.json$/.exec(url.pathname);
      if (req.method !== 'POST' || !match)
        return error(res, 404, 20404, 'The requested resource was not found');
      if (req.headers.authorization !== expected || match[1] !== accountSid) {
        return error(res, 401, 20003, 'Authenticate');
      }
      if (!String(req.headers['content-type']).startsWith('application/x-www-form-urlencoded')) {
        return error(res, 400, 20001, 'Invalid content type');
      }
      const form = new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
      const to = form.get('To') ?? '';
      const from = form.get('From') ?? '';
      const body = form.get('Body') ?? '';
      if (!/^\+[1-9]\d{6,14}$/.test(to))
        return error(res, 400, 21211, `The 'To' number ${to} is not a valid phone number.`);
      if (!from) return error(res, 400, 21603, "A 'From' phone number is required.");
      if (!body) return error(res, 400, 21602, 'Message body is required.');
      const sid = `SM${randomBytes(16).toString('hex')}`;
      messages.push({
        sid,
        to,
        from,
        body,
        status: standIn.holdSending ? 'sending' : 'delivered',
        deleted: false,
      });
      res.writeHead(201, { 'Content-Type': 'application/json' });
      res.end(
        JSON.stringify({
          sid,
          account_sid: accountSid,
          to,
          from,
          body,
          status: 'queued',
          num_segments: '1',
          direction: 'outbound-api',
          api_version: '2010-04-01',
          date_created: new Date().toUTCString(),
          uri: `/2010-04-01/Accounts/${accountSid}/Messages/${sid}.json`,
        }),
      );
    });
  });
  const listening = await listenRestartable(server);
  const standIn: TwilioStandIn = {
    url: `http://127.0.0.1:${listening.port}`,
    accountSid,
    authToken,
    messages,
    requests,
    holdSending: false,
    finishSending() {
      for (const message of messages) message.status = 'delivered';
    },
    down: listening.down,
    up: listening.up,
    close: listening.close,
  };
  return standIn;
}
