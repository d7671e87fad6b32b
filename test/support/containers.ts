import { execFileSync } from 'node:child_process';

/** A fresh container of `image` (a filesystem of its own, as a new pod has); its name. */
export function newContainer(image: string): string {
  return execFileSync('buildah', ['from', '--quiet', '--pull-never', image], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  }).trim();
}

/**
 * `buildah run`'s arguments for `vouch <args>` in `container`, as the image's user (uid 10001) on
 * the host's network, with `env` set and `volumes` (`host:container[:ro]`) mounted. (`podman run`
 * does not work on these machines; `buildah run --isolation chroot` does.)
 */
export function vouchInContainer(
  container: string,
  args: string[],
  env: Record<string, string>,
  volumes: string[] = [],
): string[] {
  return [
    'run',
    '--isolation',
    'chroot',
    '--user',
    '10001:10001',
    ...volumes.flatMap((volume) => ['--volume', volume]),
    ...Object.entries(env).flatMap(([name, value]) => ['--env', `${name}=${value}`]),
    container,
    '--',
    'vouch',
    ...args,
  ];
}
