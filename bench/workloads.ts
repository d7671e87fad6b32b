import type { Target } from './load';
import { type SeededDataset, TEAM_COUNT } from './seed';

/** The requests the benchmarks send, spread over the seeded teams and their cases. */

const auth = (token: string) => ({ authorization: `Bearer ${token}` });

export function pingTarget() {
  return (): Target => ({ method: 'GET', path: '/v1/ping', headers: {} });
}

export function listTarget(ds: SeededDataset) {
  return (i: number): Target => ({
    method: 'GET',
    path: '/v1/cases/?status=open',
    headers: auth(ds.teams[i % TEAM_COUNT]?.token ?? ''),
  });
}

export function getTarget(ds: SeededDataset) {
  return (i: number): Target => {
    const team = ds.teams[i % TEAM_COUNT];
    if (!team) throw new Error('no team');
    const id = team.caseIds[Math.floor(i / TEAM_COUNT) % team.caseIds.length];
    return { method: 'GET', path: `/v1/cases/${id}/`, headers: auth(team.token) };
  };
}

/** `run` keeps the subjects of one run apart from another's. */
export function postTarget(ds: SeededDataset, run: string) {
  return (i: number): Target => ({
    method: 'POST',
    path: '/v1/cases/',
    headers: { ...auth(ds.teams[i % TEAM_COUNT]?.token ?? ''), 'content-type': 'application/json' },
    body: JSON.stringify({
      subject_email: `post-${run}-${i}@bench.example`,
      verification_methods: { email: true },
    }),
  });
}

/**
 * One employer's hiring wave: every creation for the same team (the first seeded one), which is
 * the shape that queues on one team's charge lock, unlike creations spread over the teams.
 */
export function postOneTeamTarget(ds: SeededDataset, run: string) {
  const team = ds.teams[0];
  if (!team) throw new Error('no seeded team');
  return (i: number): Target => ({
    method: 'POST',
    path: '/v1/cases/',
    headers: { ...auth(team.token), 'content-type': 'application/json' },
    body: JSON.stringify({
      subject_email: `wave-${run}-${i}@bench.example`,
      verification_methods: { email: true },
    }),
  });
}

/** The same wave sent as POST /v1/cases/batch/, `size` cases a request. */
export function batchOneTeamTarget(ds: SeededDataset, run: string, size = 100) {
  const team = ds.teams[0];
  if (!team) throw new Error('no seeded team');
  return (i: number): Target => ({
    method: 'POST',
    path: '/v1/cases/batch/',
    headers: { ...auth(team.token), 'content-type': 'application/json' },
    body: JSON.stringify({
      cases: Array.from({ length: size }, (_, n) => ({
        subject_email: `batch-${run}-${i}-${n}@bench.example`,
        verification_methods: { email: true },
      })),
    }),
  });
}

/**
 * The request path's floor: the same POST (its key and body), to an API path that takes only
 * GET, so the web process answers 405 before any operation's work (no key looked up, nothing
 * read). What every `/v1` request costs before its own work.
 */
export function floorTarget(ds: SeededDataset, run: string) {
  const post = postTarget(ds, run);
  return (i: number): Target => ({ ...post(i), path: '/v1/ping', expectStatus: 405 });
}

export const SCENARIOS = ['ping', 'floor', 'get', 'list', 'post'] as const;

/** A workload by the name the command-line tools take. */
export function scenarioTarget(scenario: string, ds: SeededDataset, run: string): (i: number) => Target {
  switch (scenario) {
    case 'ping':
      return pingTarget();
    case 'floor':
      return floorTarget(ds, run);
    case 'get':
      return getTarget(ds);
    case 'list':
      return listTarget(ds);
    case 'post':
      return postTarget(ds, run);
    default:
      throw new Error(`unknown scenario ${scenario}: use ${SCENARIOS.join(', ')}`);
  }
}
