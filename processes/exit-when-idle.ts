/**
 * How every process of the service ends itself: once its main thread has idled for a moment.
 *
 * Node's exit can deadlock. It joins V8's background threads, and a concurrent compile job
 * (Maglev, Sparkplug) may at that moment wait for the main thread to collect garbage, which it
 * never will: the process hangs, deaf to SIGTERM, until it is killed (nodejs/node#54918, still
 * open in Node 24.21). Compile jobs run while a process starts, so a start-up refusal is where
 * this was seen: about one in twenty hung. After a short idle the main thread has served those
 * jobs' requests and they are done.
 */
const IDLE_BEFORE_EXIT_MS = 100;

/** Exits with `code` after a short idle; the promise never settles, so an awaiting caller goes no further. */
export function exitWhenIdle(code: number): Promise<never> {
  process.exitCode = code;
  setTimeout(() => process.exit(code), IDLE_BEFORE_EXIT_MS);
  return new Promise<never>(() => {});
}
