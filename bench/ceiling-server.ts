import http from 'node:http';

/**
 * The same-run ceiling: a bare Node `http` server that answers every request with the JSON body
 * the app returned for GET /v1/cases/{id}/. Whatever the generator measures against it is the
 * most this machine can do for that response, with no framework, auth or database.
 * Reads the body from stdin, prints the port it listens on.
 */
const chunks: Buffer[] = [];
for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
const body = Buffer.concat(chunks);

const server = http.createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    res.writeHead(200, {
      'content-type': 'application/json',
      'content-length': body.length,
      'cache-control': 'no-store',
    });
    res.end(body);
  });
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => {
  const address = server.address();
  process.stdout.write(
    `${JSON.stringify({ port: typeof address === 'object' && address ? address.port : 0 })}\n`,
  );
});
process.once('SIGTERM', () => {
  server.close(() => process.exit(0));
  server.closeAllConnections();
});
