import postgres from 'postgres';

/**
 * A freshly migrated database for one benchmark run: on BENCH_DATABASE_URL's server, or else on
 * an embedded PostgreSQL kept under `embedded.dir`. Returns the URL for the bench's own
 * connections (TCP), the URL for the app's processes (the embedded server's Unix socket, as
 * `npm start` connects), and pushes onto `cleanups` what drops the database and stops the server.
 */
export async function benchDatabase(
  label: string,
  embedded: { dir: string; port: number; settings?: Record<string, string> },
  cleanups: Array<() => Promise<void>>,
): Promise<{ databaseUrl: string; appDatabaseUrl: string }> {
  const { migrateDatabase } = await import('@/db/client');
  const { embeddedDatabaseUrl, startEmbeddedPostgres } = await import('@/db/embedded');
  let adminUrl = process.env.BENCH_DATABASE_URL;
  if (!adminUrl) {
    const server = await startEmbeddedPostgres({
      dataDir: embedded.dir,
      port: embedded.port,
      database: 'postgres',
      tcp: true,
      settings: embedded.settings,
    });
    cleanups.push(server.stop);
    adminUrl = server.tcpUrl;
  }
  const name = `vouch_bench_${label}_${process.pid}`;
  const admin = postgres(adminUrl, { max: 1, onnotice: () => {} });
  await admin.unsafe(`create database ${name}`);
  cleanups.push(async () => {
    await admin.unsafe(`drop database if exists ${name} with (force)`);
    await admin.end();
  });
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  const databaseUrl = url.toString();
  await migrateDatabase(databaseUrl);
  return {
    databaseUrl,
    appDatabaseUrl: process.env.BENCH_DATABASE_URL
      ? databaseUrl
      : embeddedDatabaseUrl(embedded.dir, embedded.port, name),
  };
}
