/**
 * Runs once when the Next.js server starts (not during `next build`). The Node-only start-up
 * lives in its own module so the Edge bundle never sees it.
 */
export async function register(): Promise<void> {
  if (process.env.NEXT_RUNTIME !== 'nodejs') return;
  const { startServer } = await import('./server/start-server');
  await startServer();
}
