import { RateLimiterDrizzle, RateLimiterRes } from 'rate-limiter-flexible';
import type { Db } from '@/db/client';
import { rateLimits } from '@/db/schema';
import type { Env } from '../lib/env';
import { AppError } from '../trpc/errors';

export type RateLimitBucket = 'read' | 'write' | 'address';

/**
 * Per-team budgets for reads and writes, and a per-address budget for unauthenticated traffic.
 * State lives in PostgreSQL (rate-limiter-flexible's drizzle store: one atomic upsert per
 * request), so every app process draws on the same budget.
 */
export interface RateLimiters {
  consume: (bucket: RateLimitBucket, key: string) => Promise<RateLimitResult>;
}

export interface RateLimitResult {
  headers: Record<string, string>;
}

const WINDOW_SECONDS = 60;

export function createRateLimiters(db: Db, config: Env): RateLimiters {
  const make = (keyPrefix: string, points: number) =>
    new RateLimiterDrizzle({
      storeClient: db,
      schema: rateLimits,
      keyPrefix,
      points,
      duration: WINDOW_SECONDS,
    });
  const limiters: Record<RateLimitBucket, RateLimiterDrizzle> = {
    read: make('read', config.RATE_LIMIT_READ_PER_MINUTE),
    write: make('write', config.RATE_LIMIT_WRITE_PER_MINUTE),
    address: make('addr', config.RATE_LIMIT_READ_PER_MINUTE),
  };

  return {
    async consume(bucket, key) {
      const limiter = limiters[bucket];
      const headersFor = (res: RateLimiterRes): Record<string, string> => {
        return {
          'X-RateLimit-Limit': String(limiter.points),
          'X-RateLimit-Remaining': String(res.remainingPoints),
          // Unix time (seconds) at which the current window ends and the budget is full again.
          'X-RateLimit-Reset': String(Math.ceil((Date.now() + res.msBeforeNext) / 1000)),
        };
      };
      try {
        const res = await limiter.consume(key);
        return { headers: headersFor(res) };
      } catch (rejection) {
        if (rejection instanceof RateLimiterRes) {
          const headers = headersFor(rejection);
          headers['Retry-After'] = String(Math.max(1, Math.ceil(rejection.msBeforeNext / 1000)));
          throw new AppError(
            'RATE_LIMITED',
            `Rate limit of ${limiter.points} ${bucket === 'write' ? 'writes' : 'requests'} per minute exceeded; retry in ${headers['Retry-After']} s.`,
            headers,
          );
        }
        throw rejection;
      }
    },
  };
}
