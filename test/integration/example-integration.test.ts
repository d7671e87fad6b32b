/**
 * The typed example integration (examples/node-integration), run the way its README says against
 * a real app: types generated from this app's /v1/openapi.json, the example type-checked against
 * them, then run: it creates a test case, simulates it to closed, and receives and verifies the
 * `case.closed` webhook on its own HTTPS receiver; it lists the subject's passkeys, and revokes one
 * when they hold one (run again once a passkey is saved for them). A document that drifts from the
 * API (a path, a field, a status) fails the type check or the run.
 */
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { passkeys } from '@/db/schema';
import { systemClock } from '@/server/platform/clock';
import { createTeam } from '@/server/teams/manage-teams';
import { freePort, type RunningApp, startApp } from '@/test/support/app';
import { createTestDatabase, type TestDatabase } from '@/test/support/database';
import { type Certificate, makeCertificate } from '@/test/support/https-receiver';
import { conformanceForChild } from '@/test/support/openapi-conformance';
import { enrollPasskey, insertCase } from '@/test/support/passkeys';

const EXAMPLE = path.resolve('examples/node-integration');
const TYPES = path.join(EXAMPLE, 'vouch-api.d.ts');

let database: TestDatabase;
let app: RunningApp;
let certificate: Certificate;
let testKey: string;
let teamId: string;

beforeAll(async () => {
  database = await createTestDatabase();
  certificate = makeCertificate();
  app = await startApp({
    databaseUrl: database.url,
    env: { NODE_EXTRA_CA_CERTS: certificate.certPath, WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' },
  });
  const created = await createTeam(
    database.db,
    { name: 'Example', adminEmail: 'admin@example.test' },
    systemClock,
  );
  testKey = created.testKey.token;
  teamId = created.team.id;
}, 120_000);

afterAll(async () => {
  await app?.stop();
  await database?.close();
});

/** Runs a command to its end; its exit code and everything it printed. */
function run(command: string, args: string[], env: Record<string, string> = {}) {
  return new Promise<{ code: number | null; output: string }>((resolve) => {
    const child = spawn(command, args, {
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk) => {
      output += chunk;
    });
    child.stderr.on('data', (chunk) => {
      output += chunk;
    });
    child.once('exit', (code) => resolve({ code, output }));
  });
}

/** The example, run as its README says, against the app (its calls held to the document). */
async function runExample() {
  return run('npm', ['run', '--silent', 'example'], {
    ...conformanceForChild(),
    VOUCH_URL: app.baseUrl,
    VOUCH_TEST_KEY: testKey,
    RECEIVER_PORT: String(await freePort()),
    RECEIVER_CERT: certificate.certPath,
    RECEIVER_KEY: path.join(path.dirname(certificate.certPath), 'key.pem'),
  });
}

describe('examples/node-integration', () => {
  it('is typed from the served document, type-checks against it, and closes a test case with a verified webhook', async () => {
    rmSync(TYPES, { force: true });
    const types = await run('npm', ['run', '--silent', 'example:types'], { VOUCH_URL: app.baseUrl });
    expect(types.code, types.output).toBe(0);
    expect(existsSync(TYPES)).toBe(true);
    // The generated types carry the document's operations and the webhook events' envelopes.
    const generated = readFileSync(TYPES, 'utf8');
    expect(generated).toContain('"/v1/cases/{id}/simulate/"');
    expect(generated).toContain('CaseClosedEvent');

    const typecheck = await run(process.execPath, ['node_modules/typescript/bin/tsc', '-p', EXAMPLE]);
    expect(typecheck.code, typecheck.output).toBe(0);

    // The example's own calls are checked against the document too (its answers and its webhook).
    const example = await runExample();
    expect(example.code, example.output).toBe(0);
    expect(example.output).toMatch(/^received case\.closed evt_\S+ \(delivery \S+\), signature verified$/m);
    expect(example.output).toMatch(/^simulated custom_question: the case is closed$/m);
    expect(example.output).toMatch(
      /^case\.closed evt_\S+ for jane\.doe@acme\.example; the case reads as closed$/m,
    );
    expect(example.output).toMatch(/^jane\.doe@acme\.example holds 0 passkey\(s\)$/m);
    expect(example.output).toMatch(/^no passkey to revoke$/m);
    expect(example.output).toMatch(/^batch item 0: case \S+ for ana\.lima@acme\.example$/m);
    expect(example.output).toMatch(/^batch item 1: 422 VALIDATION_ERROR$/m);
    expect(example.output).toContain('done: the endpoint is deleted');
    expect(example.output).not.toContain('refused a delivery');
  }, 120_000);

  it('revokes the passkey the subject holds with DELETE /v1/passkeys/{id}/', async () => {
    // A passkey saved for the example's subject at the end of an earlier (test) case of the team.
    const enrolling = await insertCase(database.db, {
      teamId,
      livemode: false,
      subjectEmail: 'jane.doe@acme.example',
      status: 'closed',
    });
    const saved = await enrollPasskey(database.db, enrolling);
    const example = await runExample();
    expect(example.code, example.output).toBe(0);
    expect(example.output).toMatch(/^jane\.doe@acme\.example holds 1 passkey\(s\)$/m);
    expect(example.output).toContain(`revoked passkey ${saved.id}, saved by case ${enrolling.caseId}`);
    expect(example.output).toContain('done: the endpoint is deleted');
    expect(await database.db.select().from(passkeys).where(eq(passkeys.id, saved.id))).toEqual([]);
  }, 120_000);
});
