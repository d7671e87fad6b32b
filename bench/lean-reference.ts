import { createHash, randomBytes } from 'node:crypto';
import http from 'node:http';
import postgres from 'postgres';
import { v7 as uuidv7 } from 'uuid';

/**
 * The same-run lean reference (bench/api.ts, issue 40): a bare `node:http` server on postgres.js
 * alone, no framework, ORM or validation library, that answers POST /v1/cases/ and
 * GET /v1/cases/{id}/ for the seeded API keys, writing the rows a Vouch case creation writes (and
 * reading the rows a get reads) in as few statements as they can be written: what "the same rows,
 * lean" costs this machine's CPU, for Vouch's CPU per request to be read against.
 *
 * Per request:
 * - the key's authentication (its SHA-256 looked up in `api_keys`, not revoked, joined to its team
 *   for the budgets) and one point of the team's `write` (or `read`) budget spent in `rate_limits`
 *   with the app's upsert (server/rate-limits/queries.ts, key `<bucket>:<teamId>[:test]`): ONE
 *   statement (and, as the app's, a note of the key's last use at most once a minute);
 * - a creation's writes, ONE statement (data-modifying CTEs): the charge (`usage_counters`, one
 *   unit per method from the plan's allowance, else at the method's price with the `teams` top-up
 *   balance debited), the case (`cases`), its steps (`case_steps`, the mailed link's token hash in
 *   the settings), `case.created` (`events`), the subject's link mail (`mail_outbox`) and the audit
 *   entry (`audit_log`: the request writes it, the app's worker seals the chain later). The mail is
 *   never due and the entry says it is in no chain: the app runs beside the reference in the
 *   comparison, and its worker must send and seal only the app's own (the same columns written);
 * - a get's read, ONE statement: the case with its steps as one JSON array, as the app's.
 *
 * Computed in the request, as the app does: the SHA-256 of the key, the link token's SHA-256
 * (only the hash is stored), and the SHA-256 of the event's body as every delivery sends it
 * (events.body_sha256); the ids are UUIDv7 (newRowId) and the public id 16 base62 characters.
 *
 * Left out, deliberately: idempotency keys, webhook fan-out (the app's statement that finds no
 * endpoint for the seeded teams), input validation beyond JSON.parse, translated mail text, and the
 * app's team row lock (`for no key update`): here the charge's upsert of the team's usage row is
 * what serialises one team's creations, decided on the row as locked. Only the subject's mail is
 * written (the bench's bodies name no manager, whose mail the app would add). The top-up debit
 * reads what the upsert charged through RETURNING old.* (PostgreSQL 18); on an older server
 * (BENCH_DATABASE_URL) the usage is still counted but the balance is not debited.
 *
 * Environment: LEAN_DATABASE_URL (`?host=/dir` for a Unix socket, as the app's), LEAN_READ_PER_MINUTE
 * and LEAN_WRITE_PER_MINUTE (the configured budgets, for teams without their own), LEAN_PAGE_BASE,
 * LEAN_CASE_TTL_SECONDS. Prints `{"port": n}` once it listens; SIGTERM stops it.
 */

const READ_BUDGET = Number(process.env.LEAN_READ_PER_MINUTE ?? 120);
const WRITE_BUDGET = Number(process.env.LEAN_WRITE_PER_MINUTE ?? 30);
const PAGE_BASE = process.env.LEAN_PAGE_BASE ?? 'http://localhost:3000';
const CASE_TTL_MS = Number(process.env.LEAN_CASE_TTL_SECONDS ?? 172_800) * 1000;
const WINDOW_MS = 60_000;
const METHODS = ['email', 'sms', 'government_id', 'selfie', 'custom_question', 'manager'] as const;
/** Each method's own fields of a Case's `verification_methods` (null until its step says more). */
const METHOD_FIELDS: Record<string, string[]> = {
  sms: ['phone_last4'],
  custom_question: ['question'],
  manager: ['manager_name', 'manager_email'],
};

function connect(url: string) {
  const parsed = new URL(url);
  const host = parsed.searchParams.get('host');
  if (host?.startsWith('/')) parsed.searchParams.delete('host');
  return postgres(parsed.toString(), {
    ...(host?.startsWith('/') ? { host } : {}),
    max: 20,
    onnotice: () => {},
    fetch_types: false,
    connection: { TimeZone: 'UTC' },
  });
}

const databaseUrl = process.env.LEAN_DATABASE_URL;
if (!databaseUrl) throw new Error('LEAN_DATABASE_URL is not set');
const sql = connect(databaseUrl);
// json and jsonb parameters are given as values: postgres.js serialises them (JSON.stringify).
const [{ version } = { version: 0 }] = await sql<{ version: number }[]>`
  select current_setting('server_version_num')::int as version`;
/** RETURNING old.* / new.* (PostgreSQL 18): the charge's top-up cents as the upsert decided them. */
const returningOld = version >= 180_000;

// ---------------------------------------------------------------------------------------------
// Statements.

/**
 * $1 key hash, $2 now, $3 bucket (`read` / `write`), $4 the window's end if a new one starts. The
 * key's last use is noted apart, at most once a minute (LAST_USED_MS), as the app does.
 */
const AUTHENTICATE = `
  with k as (
    select k.id, k.team_id, k.livemode, k.last_used_at,
           t.rate_limit_read_per_minute as read_budget, t.rate_limit_write_per_minute as write_budget,
           coalesce(t.display_name, t.name) as team_name, t.brand_color, t.support_line
    from api_keys k join teams t on t.id = k.team_id
    where k.key_hash = $1 and k.revoked_at is null
    limit 1
  ), spent as (
    insert into rate_limits as r (key, points, expire)
    select $3 || ':' || k.team_id || case when k.livemode then '' else ':test' end, 1, $4::timestamptz from k
    on conflict (key) do update set
      points = case when r.expire <= $2::timestamptz then 1 else r.points + 1 end,
      expire = case when r.expire <= $2::timestamptz then $4::timestamptz else r.expire end
    returning r.points, r.expire
  )
  select k.id, k.team_id, k.livemode, k.last_used_at, k.read_budget, k.write_budget, k.team_name,
         k.brand_color, k.support_line, spent.points, spent.expire
  from k cross join spent`;

/** $1 key id, $2 now: the key's last use, unless noted within the last minute. */
const NOTE_USE = `
  update api_keys set last_used_at = $2::timestamptz
  where id = $1::uuid and (last_used_at is null or last_used_at < $2::timestamptz - interval '1 minute')`;
const LAST_USED_MS = 60_000;

/**
 * $1 team, $2 livemode, $3 now, $4 case id, $5 public id, $6 subject_email, $7 subject_name,
 * $8 locale, $9 notes, $10 expires_at, $11 the steps (json: method, settings), $12 methods
 * (json array), $13 event id, $14 event data (json text), $15 event body sha256, $16 mail id,
 * $17 mail subject, $18 mail text, $19 mail html, $20 audit actor, $21 client address,
 * $22 user agent.
 */
const CREATE = `
  with team as (
    select t.id, t.billing_anchor, p.included_units
    from teams t join plans p on p.code = t.plan_code
    where t.id = $1::uuid
      and t.subscription_status <> 'canceled'
      and not (t.subscription_status = 'trialing' and t.trial_ends_at is not null
               and t.trial_ends_at <= $3::timestamptz)
  ), period as (
    -- billingPeriodAt: monthly from the anchor, in UTC (the session's time zone).
    select team.id as team_id, team.included_units,
           case when team.billing_anchor + make_interval(months => m.n) > $3::timestamptz
                then team.billing_anchor + make_interval(months => greatest(m.n - 1, 0))
                else team.billing_anchor + make_interval(months => greatest(m.n, 0)) end as start
    from team cross join lateral (
      select ((extract(year from $3::timestamptz) - extract(year from team.billing_anchor)) * 12
              + extract(month from $3::timestamptz) - extract(month from team.billing_anchor))::int as n
    ) m
  ), charged as (
    -- One unit per method (live mode only): from the allowance while the locked row has some left,
    -- else at the method's price.
    insert into usage_counters as u (team_id, period_start, method, included_used, topup_used, topup_cost_cents)
    select period.team_id, period.start, m.method,
           case when period.included_units > 0 then 1 else 0 end,
           case when period.included_units > 0 then 0 else 1 end,
           case when period.included_units > 0 then 0 else mp.topup_price_cents end
    from period
    cross join json_array_elements_text($12::json) m(method)
    join method_prices mp on mp.method = m.method
    where $2::boolean
    on conflict (team_id, period_start, method) do update set
      included_used = u.included_used
        + case when u.included_used < (select included_units from period) then 1 else 0 end,
      topup_used = u.topup_used
        + case when u.included_used < (select included_units from period) then 0 else 1 end,
      topup_cost_cents = u.topup_cost_cents
        + case when u.included_used < (select included_units from period) then 0
               else (select topup_price_cents from method_prices where method = excluded.method) end
    returning ${returningOld ? 'new.topup_cost_cents - coalesce(old.topup_cost_cents, 0)' : '0::bigint'} as cents
  ), debited as (
    update teams set topup_balance_cents = topup_balance_cents - c.cents
    from (select sum(cents) as cents from charged) c
    where teams.id = $1::uuid and c.cents > 0
  ), inserted as (
    insert into cases (id, team_id, livemode, public_id, status, subject_email, subject_name, locale, notes,
                       external_ref, created_at, expires_at, updated_at)
    select $4::uuid, team.id, $2::boolean, $5, 'open', $6, $7, $8, $9, null, $3::timestamptz,
           $10::timestamptz, $3::timestamptz
    from team
    returning id
  ), steps as (
    insert into case_steps (case_id, method, settings, updated_at)
    select inserted.id, s.method, s.settings, $3::timestamptz
    from inserted cross join jsonb_to_recordset($11::jsonb) as s(method text, settings jsonb)
  ), event as (
    insert into events (id, team_id, livemode, type, data, case_id, body_sha256, created_at)
    select $13::uuid, $1::uuid, $2::boolean, 'case.created', $14::json, inserted.id, $15, $3::timestamptz
    from inserted
  ), mail as (
    insert into mail_outbox (id, "to", subject, text, html, language, livemode, case_id, next_attempt_at)
    select $16::uuid, $6, $17, $18, $19, 'en', $2::boolean, inserted.id, 'infinity'
    from inserted
  ), audit as (
    insert into audit_log (created_at, team_id, actor_user_id, actor_email, action, target, details,
                           ip_address, user_agent, hash)
    select $3::timestamptz, $1::uuid, null, $20, 'case.created', inserted.id::text,
           jsonb_build_object('livemode', $2::boolean), $21, $22, 'lean reference: in no chain'
    from inserted
  )
  select count(*)::int as created from inserted`;

/** $1 team, $2 livemode, $3 case id. */
const GET_CASE = `
  select c.*, coalesce((select json_agg(s order by s.method) from case_steps s where s.case_id = c.id), '[]') as steps
  from (select * from cases where team_id = $1::uuid and livemode = $2::boolean and id = $3::uuid) c`;

// ---------------------------------------------------------------------------------------------

interface Key {
  id: string;
  team_id: string;
  last_used_at: Date | null;
  livemode: boolean;
  read_budget: number | null;
  write_budget: number | null;
  team_name: string;
  brand_color: string | null;
  support_line: string | null;
  points: number;
  expire: Date;
}

interface CaseRow {
  id: string;
  public_id: string;
  status: string;
  subject_email: string;
  subject_name: string | null;
  locale: string | null;
  notes: string;
  external_ref: string | null;
  failure_reason: string | null;
  livemode: boolean;
  created_at: Date;
  expires_at: Date;
  canceled_at: Date | null;
  redacted_at: Date | null;
  steps: Array<{ method: string; state: string; settings: Record<string, unknown> }>;
}

const sha256Hex = (text: string) => createHash('sha256').update(text).digest('hex');

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
function base62(length: number): string {
  let out = '';
  while (out.length < length) {
    for (const byte of randomBytes(length * 2)) {
      if (byte < 248) out += BASE62[byte % 62];
      if (out.length === length) break;
    }
  }
  return out;
}

const escapeHtml = (text: string) =>
  text.replace(
    /[&<>"']/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] as string,
  );

class Answer extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(code);
  }
}

interface Authenticated {
  key: Key;
  /** The rate-limit headers the app answers with. */
  headers: Record<string, string>;
  /** How the audit log names the key (apiKeyLabel). */
  label: string;
}

/** The key, authenticated, with one point of its team's `bucket` budget spent (or 401 / 429). */
async function authenticate(req: http.IncomingMessage, bucket: 'read' | 'write'): Promise<Authenticated> {
  const token = /^Bearer\s+(\S+)\s*$/i.exec(req.headers.authorization ?? '')?.[1];
  if (!token) throw new Answer(401, 'UNAUTHORIZED');
  const now = new Date();
  const [key] = await sql.unsafe<Key[]>(
    AUTHENTICATE,
    [sha256Hex(token), now.toISOString(), bucket, new Date(now.getTime() + WINDOW_MS).toISOString()],
    { prepare: true },
  );
  if (!key) throw new Answer(401, 'UNAUTHORIZED');
  if (!key.last_used_at || now.getTime() - new Date(key.last_used_at).getTime() > LAST_USED_MS) {
    await sql.unsafe(NOTE_USE, [key.id, now.toISOString()], { prepare: true });
  }
  const budget =
    (bucket === 'read' ? key.read_budget : key.write_budget) ??
    (bucket === 'read' ? READ_BUDGET : WRITE_BUDGET);
  const headers = {
    'x-ratelimit-limit': String(budget),
    'x-ratelimit-remaining': String(Math.max(0, budget - key.points)),
    'x-ratelimit-reset': String(Math.ceil(new Date(key.expire).getTime() / 1000)),
  };
  if (key.points > budget) throw new Answer(429, 'RATE_LIMITED', headers);
  return { key, headers, label: `${token.slice(0, 15)}…${token.slice(-4)}` };
}

function caseWire(row: CaseRow) {
  const expired =
    row.status === 'expired' || (row.status === 'open' && new Date(row.expires_at) <= new Date());
  const status = expired ? 'expired' : row.status;
  return {
    id: row.id,
    public_id: row.public_id,
    status,
    subject_email: row.subject_email,
    subject_name: row.subject_name,
    locale: row.locale,
    created_at: new Date(row.created_at).toISOString(),
    expires_at: new Date(row.expires_at).toISOString(),
    is_expired: expired,
    verification_url: `${PAGE_BASE}/v/${row.public_id}`,
    verification_methods: Object.fromEntries(
      METHODS.map((method) => {
        const step = row.steps.find((s) => s.method === method);
        return [
          method,
          {
            requested: step !== undefined,
            verified: step?.state === 'verified',
            ...Object.fromEntries(
              (METHOD_FIELDS[method] ?? []).map((field) => [
                field,
                (step?.settings[field] as string) ?? null,
              ]),
            ),
          },
        ];
      }),
    ),
    notes: row.notes,
    external_ref: row.external_ref,
    failure_reason: row.failure_reason,
    livemode: row.livemode,
    canceled_at: row.canceled_at ? new Date(row.canceled_at).toISOString() : null,
    redacted_at: row.redacted_at ? new Date(row.redacted_at).toISOString() : null,
  };
}

/** The subject's link mail, shaped (and about as long) as the app's English one. */
function linkMail(team: Key, url: string, expiresAt: Date) {
  const name = team.team_name;
  const subject = `${name} asks you to verify your identity`;
  const before = [
    `${name} uses Vouch to verify the identity of the people it works with.`,
    'Open the link below to confirm this e-mail address and see the remaining steps.',
  ];
  const after = [
    `The link works until ${expiresAt.toUTCString()}.`,
    'If you did not expect this message, you can ignore it.',
  ];
  const footer = [team.support_line, `Sent by Vouch on behalf of ${name}.`].filter(Boolean) as string[];
  const text = [before.join('\n\n'), url, '', after.join('\n'), '', '-- ', footer.join('\n')].join('\n');
  const color = team.brand_color ?? '#2563eb';
  const p = (line: string) => `<p style="margin:0 0 16px">${escapeHtml(line)}</p>`;
  const html = `<!DOCTYPE html>
<html lang="en" dir="ltr"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${escapeHtml(subject)}</title></head>
<body style="margin:0;padding:0;background:#f5f6f8;color:#14171f;font-family:system-ui,-apple-system,'Segoe UI',Roboto,sans-serif;font-size:16px;line-height:1.5">
<div style="max-width:560px;margin:0 auto;padding:24px 16px">
<div style="background:#ffffff;border:1px solid #c9ced8;border-radius:8px;padding:24px">
${before.map(p).join('')}
<p style="margin:24px 0"><a href="${url}" style="display:inline-block;background:${color};color:#ffffff;text-decoration:none;font-weight:600;padding:12px 20px;border-radius:6px">Verify my identity</a></p>
<p style="margin:0 0 16px;font-size:14px;color:#4a5163">If the button does not work, copy this address into your browser:<br><a href="${url}" style="color:${color};word-break:break-all">${url}</a></p>
${after.map(p).join('')}
</div>
<div style="padding:16px 8px;font-size:14px;color:#4a5163">${footer.map(p).join('')}</div>
</div></body></html>`;
  return { subject, text, html };
}

async function readBody(req: http.IncomingMessage): Promise<string> {
  let body = '';
  req.setEncoding('utf8');
  for await (const chunk of req) body += chunk;
  return body;
}

async function create(
  req: http.IncomingMessage,
): Promise<{ status: number; body: unknown; headers?: Record<string, string> }> {
  const raw = await readBody(req);
  const { key, headers, label } = await authenticate(req, 'write');
  let input: {
    subject_email?: string;
    subject_name?: string;
    notes?: string;
    locale?: string;
    verification_methods?: Record<string, boolean>;
  };
  try {
    input = JSON.parse(raw);
  } catch {
    throw new Answer(400, 'VALIDATION_ERROR');
  }
  if (typeof input.subject_email !== 'string') throw new Answer(400, 'VALIDATION_ERROR');
  const requested = Object.entries(input.verification_methods ?? { email: true })
    .filter(([, on]) => on)
    .map(([method]) => method);
  // As expandRequestedMethods: a government id comes with a selfie.
  if (requested.includes('government_id') && !requested.includes('selfie')) requested.push('selfie');
  const methods = METHODS.filter((m) => requested.includes(m));

  const now = new Date();
  const expiresAt = new Date(now.getTime() + CASE_TTL_MS);
  const id = uuidv7();
  const publicId = base62(16);
  const token = base62(32);
  const steps = methods.map((method) => ({
    method,
    settings: method === 'email' || method === 'manager' ? { link_token_hash: sha256Hex(token) } : {},
  }));
  const eventId = uuidv7();
  const data = {
    case_id: id,
    public_id: publicId,
    subject_email: input.subject_email,
    status: 'open',
    created_at: now.toISOString(),
  };
  const envelope = {
    id: `evt_${eventId}`,
    type: 'case.created',
    created_at: now.toISOString(),
    livemode: key.livemode,
    data,
  };
  const mail = linkMail(key, `${PAGE_BASE}/v/${publicId}/email/${token}`, expiresAt);
  const [result] = await sql.unsafe<{ created: number }[]>(
    CREATE,
    [
      key.team_id,
      key.livemode,
      now.toISOString(),
      id,
      publicId,
      input.subject_email,
      input.subject_name ?? null,
      input.locale ?? null,
      input.notes ?? '',
      expiresAt.toISOString(),
      steps as never,
      methods as never,
      eventId,
      data as never,
      sha256Hex(JSON.stringify(envelope)),
      uuidv7(),
      mail.subject,
      mail.text,
      mail.html,
      `API key ${label}`,
      req.socket.remoteAddress ?? null,
      req.headers['user-agent'] ?? null,
    ],
    { prepare: true },
  );
  if (!result?.created) throw new Answer(402, 'TRIAL_EXPIRED');
  return {
    status: 201,
    headers: { ...headers, location: `${PAGE_BASE}/v1/cases/${id}/` },
    body: caseWire({
      id,
      public_id: publicId,
      status: 'open',
      subject_email: input.subject_email,
      subject_name: input.subject_name ?? null,
      locale: input.locale ?? null,
      notes: input.notes ?? '',
      external_ref: null,
      failure_reason: null,
      livemode: key.livemode,
      created_at: now,
      expires_at: expiresAt,
      canceled_at: null,
      redacted_at: null,
      steps: steps.map((s) => ({ ...s, state: 'pending' })),
    }),
  };
}

const CASE_PATH = /^\/v1\/cases\/([0-9a-f-]{36})\/?$/i;

async function get(req: http.IncomingMessage, caseId: string) {
  req.resume();
  const { key, headers } = await authenticate(req, 'read');
  const [row] = await sql.unsafe<CaseRow[]>(GET_CASE, [key.team_id, key.livemode, caseId], { prepare: true });
  if (!row) throw new Answer(404, 'NOT_FOUND');
  return { status: 200, headers, body: caseWire(row) };
}

const server = http.createServer((req, res) => {
  const path = (req.url ?? '').split('?')[0] ?? '';
  const caseId = CASE_PATH.exec(path)?.[1];
  let work: Promise<{ status: number; body: unknown; headers?: Record<string, string> }>;
  if (req.method === 'POST' && (path === '/v1/cases/' || path === '/v1/cases')) work = create(req);
  else if (req.method === 'GET' && caseId) work = get(req, caseId);
  else {
    req.resume();
    work = Promise.reject(new Answer(404, 'NOT_FOUND'));
  }
  work.then(
    ({ status, body, headers }) => {
      const text = JSON.stringify(body);
      res.writeHead(status, {
        ...headers,
        'content-type': 'application/json',
        'content-length': Buffer.byteLength(text),
        'cache-control': 'no-store',
      });
      res.end(text);
    },
    (error: unknown) => {
      const answer = error instanceof Answer ? error : new Answer(500, 'INTERNAL');
      if (!(error instanceof Answer)) process.stderr.write(`lean-reference: ${String(error)}\n`);
      const text = JSON.stringify({ error: answer.code.toLowerCase(), code: answer.code });
      res.writeHead(answer.status, { ...answer.headers, 'content-type': 'application/json' });
      res.end(text);
    },
  );
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => {
  const address = server.address();
  process.stdout.write(
    `${JSON.stringify({ port: typeof address === 'object' && address ? address.port : 0, postgres: version })}\n`,
  );
});
process.once('SIGTERM', () => {
  server.close(() => {
    sql.end({ timeout: 2 }).finally(() => process.exit(0));
  });
  server.closeAllConnections();
});
