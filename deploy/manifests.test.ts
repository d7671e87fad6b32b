/**
 * The deployment files against the Kubernetes API's schema and against the code they run: every
 * object valid (kubernetes-models, the published OpenAPI schemas), probes on paths and ports the
 * processes answer, every role an image command, what production requires supplied, migrations
 * as the Job while web and worker wait, and the pods locked down.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { parseEnv } from '@/server/platform/env';
import { productionRefusals } from '@/server/platform/production-refusals';
import { healthAnswer } from '@/server/platform/readiness';

const KUBERNETES = 'deploy/kubernetes';

/** The configuration a process in the image (NODE_ENV=production) makes of these variables. */
function imageConfig(variables: Record<string, string>) {
  return parseEnv({ NODE_ENV: 'production', ...variables });
}

interface KubeObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string };
  [field: string]: unknown;
}

function documents(file: string): KubeObject[] {
  return parseAllDocuments(readFileSync(file, 'utf8'), { merge: true }).map((document) => {
    expect(document.errors, file).toEqual([]);
    return document.toJS() as KubeObject;
  });
}

const kustomization = documents(path.join(KUBERNETES, 'kustomization.yaml'))[0] as unknown as {
  resources: string[];
  images: { name: string }[];
};
const objects = kustomization.resources.flatMap((file) => documents(path.join(KUBERNETES, file)));
const secretExample = documents(path.join(KUBERNETES, 'secret.example.yaml'))[0] as KubeObject & {
  stringData: Record<string, string>;
};
const configMap = objects.find((o) => o.kind === 'ConfigMap') as KubeObject & {
  data: Record<string, string>;
};

/** `kubernetes-models/<group>/<version>` for an apiVersion (`v1` is the core group's). */
async function modelOf(object: KubeObject): Promise<new (data: unknown) => { validate(): void }> {
  const module = (await import(`kubernetes-models/${object.apiVersion}`)) as Record<string, unknown>;
  const model = module[object.kind];
  if (typeof model !== 'function') throw new Error(`no model for ${object.apiVersion} ${object.kind}`);
  return model as new (
    data: unknown,
  ) => { validate(): void };
}

interface Container {
  name: string;
  image: string;
  args: string[];
  ports?: { name: string; containerPort: number }[];
  envFrom?: { configMapRef?: { name: string }; secretRef?: { name: string } }[];
  startupProbe?: Probe;
  readinessProbe?: Probe;
  livenessProbe?: Probe;
  securityContext: {
    allowPrivilegeEscalation: boolean;
    readOnlyRootFilesystem: boolean;
    capabilities: { drop: string[] };
  };
  volumeMounts?: { name: string; mountPath: string }[];
}
interface Probe {
  httpGet: { path: string; port: string | number };
}
interface PodSpec {
  containers: Container[];
  securityContext: { runAsNonRoot: boolean; runAsUser: number; seccompProfile: { type: string } };
  automountServiceAccountToken: boolean;
}

function podOf(object: KubeObject): PodSpec {
  return (object as unknown as { spec: { template: { spec: PodSpec } } }).spec.template.spec;
}
const workloads = objects.filter((o) => o.kind === 'Deployment' || o.kind === 'Job');
const named = (name: string) => {
  const found = workloads.find((o) => o.metadata.name === name);
  if (!found) throw new Error(`no workload ${name}`);
  return podOf(found).containers[0] as Container;
};

/** The image's commands (the cases of deploy/image/vouch) and the node command each runs. */
const entrypoint = readFileSync('deploy/image/vouch', 'utf8');
const imageRoles = new Map(
  [...entrypoint.matchAll(/^ {2}([a-z]+)\)\n(?:\s+#.*\n)*\s+(.*?) ;;$/gm)].map(
    (match) => [match[1], match[2]] as const,
  ),
);

describe('deploy/kubernetes', () => {
  it('lists every manifest in the kustomization, and each object is valid against the API schema', async () => {
    const files = readdirSync(KUBERNETES).filter((name) => name.endsWith('.yaml'));
    const unlisted = files.filter(
      (name) =>
        !kustomization.resources.includes(name) &&
        !['kustomization.yaml', 'secret.example.yaml'].includes(name),
    );
    expect(unlisted).toEqual([]);
    expect(objects.map((o) => o.kind).sort()).toEqual(
      [
        'ConfigMap',
        'Deployment',
        'Deployment',
        'HorizontalPodAutoscaler',
        'Job',
        'NetworkPolicy',
        'PodDisruptionBudget',
        'Service',
        'ServiceAccount',
      ].sort(),
    );
    for (const object of [...objects, secretExample]) {
      const Model = await modelOf(object);
      expect(() => new Model(object).validate(), `${object.kind} ${object.metadata.name}`).not.toThrow();
    }
  });

  it('the validation catches a broken object (a replica count that is not a number)', async () => {
    const web = structuredClone(
      objects.find((o) => o.metadata.name === 'vouch-web' && o.kind === 'Deployment'),
    );
    if (!web) throw new Error('no web Deployment');
    const Model = await modelOf(web);
    const spec = web as unknown as { spec: { replicas: unknown } };
    spec.spec.replicas = 'two';
    expect(() => new Model(web).validate()).toThrow();
  });

  it('supplies everything production requires, from the ConfigMap and the Secret every workload reads', () => {
    const environment = { ...configMap.data, ...secretExample.stringData };
    expect(environment.VOUCH_ENV).toBe('production');
    expect(productionRefusals(imageConfig(environment))).toEqual([]);
    // And the check bites: without the Secret, production refuses.
    expect(productionRefusals(imageConfig(configMap.data)).length).toBeGreaterThan(0);
    for (const workload of workloads) {
      const sources = podOf(workload).containers[0]?.envFrom ?? [];
      expect(sources, workload.metadata.name).toEqual([
        { configMapRef: { name: configMap.metadata.name } },
        { secretRef: { name: secretExample.metadata.name } },
      ]);
    }
  });

  it('runs migrations as the Job while web and worker wait for them', () => {
    expect(named('vouch-migrate').args).toEqual(['migrate']);
    expect(named('vouch-web').args).toEqual(['web']);
    expect(named('vouch-worker').args).toEqual(['worker']);
    expect(imageConfig(configMap.data).MIGRATE_ON_START).toBe(false);
    for (const workload of workloads) {
      const container = podOf(workload).containers[0] as Container;
      expect(imageRoles.has(container.args[0] as string), container.args[0]).toBe(true);
      expect(kustomization.images.map((image) => image.name)).toContain(container.image);
    }
  });

  it('probes paths the processes answer, on the ports they listen on', async () => {
    const config = imageConfig(configMap.data);
    const portsOf = (container: Container) =>
      new Map((container.ports ?? []).map((port) => [port.name, port.containerPort]));
    const web = named('vouch-web');
    const worker = named('vouch-worker');
    expect(portsOf(web).get('http')).toBe(config.PORT);
    expect(portsOf(web).get('metrics')).toBe(config.METRICS_PORT);
    expect(portsOf(worker).get('health')).toBe(config.HEALTH_PORT);
    expect(portsOf(worker).get('metrics')).toBe(config.METRICS_PORT);
    for (const container of [web, worker]) {
      for (const probe of [container.startupProbe, container.readinessProbe, container.livenessProbe]) {
        expect(probe, container.name).toBeDefined();
        const { path: probePath, port } = (probe as Probe).httpGet;
        expect(portsOf(container).has(String(port)), `${container.name} probes port ${port}`).toBe(true);
        expect(await healthAnswer(probePath, undefined), probePath).not.toBeNull();
      }
      // Liveness never depends on the database: it is /livez, never /readyz.
      expect(container.livenessProbe?.httpGet.path).toBe('/livez');
      expect(container.readinessProbe?.httpGet.path).toBe('/readyz');
    }
    const service = objects.find((o) => o.kind === 'Service') as unknown as {
      spec: { ports: { name: string; targetPort: string }[] };
    };
    for (const port of service.spec.ports) expect(portsOf(web).has(port.targetPort)).toBe(true);
  });

  it('locks every pod down: non-root uid 10001, read-only root, no capabilities, RuntimeDefault seccomp', () => {
    const containerfile = readFileSync('Containerfile', 'utf8');
    expect(containerfile).toMatch(/^USER 10001:10001$/m);
    for (const workload of workloads) {
      const pod = podOf(workload);
      expect(pod.securityContext).toMatchObject({
        runAsNonRoot: true,
        runAsUser: 10001,
        seccompProfile: { type: 'RuntimeDefault' },
      });
      expect(pod.automountServiceAccountToken).toBe(false);
      const container = pod.containers[0] as Container;
      expect(container.securityContext).toEqual({
        allowPrivilegeEscalation: false,
        readOnlyRootFilesystem: true,
        capabilities: { drop: ['ALL'] },
      });
      // What the processes write goes to /tmp, a volume of its own.
      expect(container.volumeMounts).toContainEqual({ name: 'tmp', mountPath: '/tmp' });
    }
  });
});

describe('deploy/compose', () => {
  const compose = documents('deploy/compose/compose.yaml')[0] as unknown as {
    services: Record<
      string,
      {
        command?: string[];
        environment?: Record<string, string>;
        healthcheck?: { test: string[] };
        depends_on?: Record<string, { condition: string }>;
        read_only?: boolean;
        user?: string;
      }
    >;
  };
  const envFile = Object.fromEntries(
    readFileSync('deploy/compose/vouch.env.example', 'utf8')
      .split('\n')
      .filter((line) => line.trim() !== '' && !line.startsWith('#'))
      .map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]),
  );

  it('runs the migration once, then web and worker with health checks the processes answer', async () => {
    const { migrate, web, worker } = compose.services;
    expect(migrate?.command).toEqual(['migrate']);
    for (const [service, role, port] of [
      [web, 'web', 3000],
      [worker, 'worker', 9465],
    ] as const) {
      expect(service?.command).toEqual([role]);
      expect(service?.depends_on?.migrate?.condition).toBe('service_completed_successfully');
      expect(service?.environment?.MIGRATE_ON_START).toBe('false');
      expect(service?.read_only).toBe(true);
      expect(service?.user).toBe('10001:10001');
      const [, command, subcommand, url] = service?.healthcheck?.test ?? [];
      expect([command, subcommand]).toEqual(['vouch', 'probe']);
      expect(imageRoles.has('probe')).toBe(true);
      const probeUrl = new URL(url as string);
      expect(Number(probeUrl.port)).toBe(port);
      expect(await healthAnswer(probeUrl.pathname, undefined)).not.toBeNull();
    }
  });

  it('supplies everything production requires', () => {
    const environment = {
      ...envFile,
      ...compose.services.web?.environment,
      DATABASE_URL: 'postgres://vouch:secret@postgres:5432/vouch',
    };
    expect(productionRefusals(imageConfig(environment))).toEqual([]);
  });
});

describe('the image entrypoint (deploy/image/vouch)', () => {
  it("runs each process with package.json's Node options", () => {
    const scripts = (JSON.parse(readFileSync('package.json', 'utf8')) as { scripts: Record<string, string> })
      .scripts;
    expect([...imageRoles.keys()].sort()).toEqual(['cli', 'launch', 'migrate', 'probe', 'web', 'worker']);
    const nodeCommand = (command: string) => command.slice(command.indexOf('node ')).replace(/ "\$@"$/, '');
    expect(nodeCommand(imageRoles.get('web') as string)).toBe(nodeCommand(scripts.web as string));
    expect(imageRoles.get('web')).toMatch(/^RUN_WORKERS=false exec node /);
    expect(nodeCommand(imageRoles.get('worker') as string)).toBe(nodeCommand(scripts.worker as string));
    expect(nodeCommand(imageRoles.get('launch') as string)).toBe(nodeCommand(scripts.launch as string));
  });
});
