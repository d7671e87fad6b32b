import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createInterface } from 'node:readline';
import postgres from 'postgres';
import { migrateDatabase } from '../db/client';
import { buildProcesses, type RunningApp, startApp } from '../test/support/app';
import { makeCertificate, type Receiver, startReceiver } from '../test/support/https-receiver';
import { type SmtpInbox, startSmtpInbox } from '../test/support/smtp-inbox';
import { startTwilioStandIn, type TwilioStandIn } from '../test/support/twilio-stand-in';

/**
 * One app for the whole run, started as an operator would (`next start`), wired to real
 * neighbours: an embedded PostgreSQL (in a child process: its exit hook must not own this
 * process), a real SMTP server receiving the app's mail, a Twilio stand-in receiving its texts and
 * a real HTTPS receiver for its webhooks. Specs in worker processes read mail, texts and webhook
 * requests through a small inspection server.
 */
async function startDatabaseServer(): Promise<{ adminUrl: string; child: ChildProcess }> {
  mkdirSync('.test-data', { recursive: true });
  const child = spawn(process.execPath, ['--import', 'tsx', 'test/setup/database-server.ts'], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream });
  const adminUrl = await new Promise<string>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`database server exited with ${code}`)));
    lines.on('line', (line) => {
      try {
        resolve((JSON.parse(line) as { adminUrl: string }).adminUrl);
      } catch {
        // not the ready line
      }
    });
  });
  return { adminUrl, child };
}

function startInspector(smtp: SmtpInbox, twilio: TwilioStandIn, receiver: Receiver): Promise<Server> {
  const server = createServer((req, res) => {
    res.setHeader('Content-Type', 'application/json');
    if (req.url === '/mail') return res.end(JSON.stringify(smtp.mails));
    if (req.url === '/sms') return res.end(JSON.stringify(twilio.messages));
    if (req.url === '/webhooks') return res.end(JSON.stringify(receiver.received));
    res.statusCode = 404;
    res.end('{}');
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

export default async function globalSetup() {
  const { adminUrl, child } = await startDatabaseServer();
  const name = `vouch_e2e_${randomBytes(4).toString('hex')}`;
  const admin = postgres(adminUrl, { max: 1, onnotice: () => {} });
  await admin.unsafe(`create database ${name}`);
  await admin.end();
  const databaseUrl = adminUrl.replace(/\/[^/]*$/, `/${name}`);
  await migrateDatabase(databaseUrl);

  const smtp = await startSmtpInbox();
  const twilio = await startTwilioStandIn();
  // A real HTTPS webhook receiver; the app trusts its self-signed certificate (TLS checks stay on).
  const certificate = makeCertificate();
  const receiver = await startReceiver(certificate);
  const inspector = await startInspector(smtp, twilio, receiver);
  let app: RunningApp;
  // The service's processes as `npm run build` builds them: fresh for the code under test.
  buildProcesses();
  try {
    app = await startApp({
      databaseUrl,
      env: {
        SMTP_URL: smtp.url,
        SMS_PROVIDER: 'twilio',
        TWILIO_ACCOUNT_SID: twilio.accountSid,
        TWILIO_AUTH_TOKEN: twilio.authToken,
        TWILIO_FROM: '+15005550006',
        TWILIO_API_BASE: twilio.url,
        IDENTITY_PROVIDER: 'simulated',
        NODE_EXTRA_CA_CERTS: certificate.certPath,
        WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
        RATE_LIMIT_READ_PER_MINUTE: '100000',
        RATE_LIMIT_WRITE_PER_MINUTE: '100000',
        MAIL_RETRY_DELAY_SECONDS: '1',
        JOB_TICK_SECONDS: '1',
      },
    });
  } catch (error) {
    child.kill('SIGTERM');
    throw error;
  }

  process.env.E2E_BASE_URL = app.baseUrl;
  process.env.E2E_DATABASE_URL = databaseUrl;
  process.env.E2E_WEBHOOK_RECEIVER = receiver.url('');
  process.env.E2E_INSPECT_URL = `http://127.0.0.1:${(inspector.address() as AddressInfo).port}`;

  return async () => {
    await app.stop();
    await new Promise((resolve) => inspector.close(resolve));
    await smtp.close();
    await twilio.close();
    await receiver.close();
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    await exited;
  };
}
