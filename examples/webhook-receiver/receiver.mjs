/**
 * `npm run --silent example:receiver -- 4000`: a webhook receiver for your own machine, as small
 * as one can be written. It checks each delivery's signature with `standardwebhooks` and the
 * secret in VOUCH_LISTEN_SECRET (the one `listen` signs its forwards with, as Vouch signs a
 * delivery with its endpoint's secret) and prints what it verified; a delivery whose signature
 * does not verify is answered 400 and printed as refused. Ctrl-C (or `kill`) stops it.
 */
import { createServer } from 'node:http';
import { Webhook } from 'standardwebhooks';

const secret = process.env.VOUCH_LISTEN_SECRET;
if (!secret?.startsWith('whsec_')) {
  process.stderr.write('set VOUCH_LISTEN_SECRET to the whsec_... secret your deliveries are signed with\n');
  process.exit(1);
}
const port = Number(process.argv[2] ?? 4000);
const webhook = new Webhook(secret);

const server = createServer((request, response) => {
  const chunks = [];
  request.on('data', (chunk) => chunks.push(chunk));
  request.on('end', () => {
    const body = Buffer.concat(chunks).toString('utf8');
    try {
      // Verifies webhook-signature over webhook-id, webhook-timestamp and the exact body, and
      // refuses a timestamp more than five minutes away (a replayed delivery).
      const event = webhook.verify(body, request.headers);
      const about = event.data?.case_id ? ` case ${event.data.case_id} (${event.data.status})` : '';
      process.stdout.write(`verified ${event.type} ${event.id}${about}\n`);
      response.writeHead(204).end();
    } catch (error) {
      process.stdout.write(`refused a delivery: ${error instanceof Error ? error.message : String(error)}\n`);
      response.writeHead(400).end();
    }
  });
});
server.listen(port, '127.0.0.1', () => {
  process.stdout.write(`receiving webhooks on http://localhost:${port}/hook\n`);
});
for (const signal of ['SIGINT', 'SIGTERM']) process.once(signal, () => server.close(() => process.exit(0)));
