import { PgTransaction } from 'drizzle-orm/pg-core';

/**
 * Work that must see a transaction's outcome before it runs (a metric counted only for what
 * committed): `afterCommit(tx, fn)` runs `fn` once `tx` has committed, and never when it rolls
 * back. The hooks are kept beside the transaction (a WeakMap: the transaction object itself is
 * left as drizzle made it), in a map shared through `globalThis`, because Next.js bundles its own
 * copy of this module beside the processes' copy, and both must find them.
 */
type Hook = () => void;

/** A drizzle handle that opens transactions (the pool, `Db` in ./client). */
interface Transacting {
  transaction<T>(callback: (tx: object) => Promise<T>, config?: unknown): Promise<T>;
}

const HOLDER = Symbol.for('vouch.afterCommit');
const holder = globalThis as { [HOLDER]?: WeakMap<object, Hook[]> };
holder[HOLDER] ??= new WeakMap();
const hooksOf = holder[HOLDER];

/**
 * Runs `hook` after `tx` commits. On the pool itself (each statement commits alone) it runs at
 * once. A savepoint's transaction is refused: its hooks would have to wait for the outermost
 * commit and be dropped with a rolled-back savepoint, which nothing here needs yet.
 */
export function afterCommit(tx: object, hook: Hook): void {
  const hooks = hooksOf.get(tx);
  if (hooks) hooks.push(hook);
  else if (tx instanceof PgTransaction) throw new Error('afterCommit is not supported inside a savepoint');
  else hook();
}

/** `db` whose transactions run their `afterCommit` hooks once committed. */
export function runningCommitHooks<D extends Transacting>(db: D): D {
  const transaction = db.transaction.bind(db);
  const withHooks: Transacting['transaction'] = async (callback, config) => {
    const hooks: Hook[] = [];
    const result = await transaction((tx) => {
      hooksOf.set(tx, hooks);
      return callback(tx);
    }, config);
    for (const hook of hooks) {
      try {
        hook();
      } catch {
        // What committed stays committed: a hook (a metric) failing must not make it look failed.
      }
    }
    return result;
  };
  (db as Transacting).transaction = withHooks;
  return db;
}
