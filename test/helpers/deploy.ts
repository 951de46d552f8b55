import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { StatefulSet } from "kubernetes-models/apps/v1";
import { Ingress, NetworkPolicy } from "kubernetes-models/networking.k8s.io/v1";
import { ConfigMap, Namespace, Service } from "kubernetes-models/v1";
import { parseAllDocuments } from "yaml";
import { repoRoot } from "./cli.ts";

/** Checks of rendered Kubernetes manifests, as pure functions so tests can also feed them broken objects. */

/** A rendered object: untyped JSON walked by path. */
export type Obj = Record<string, any>;

export const KUSTOMIZE_DIR = join(repoRoot, "deploy/kubernetes");

/** `kubectl kustomize DIR` parsed into objects. */
export function render(dir: string): Obj[] {
  const r = spawnSync("kubectl", ["kustomize", dir], { encoding: "utf8", timeout: 60_000 });
  if (r.status !== 0) throw new Error(`kubectl kustomize ${dir} failed: ${r.stderr || r.error?.message}`);
  return parseManifests(r.stdout);
}

export function parseManifests(text: string): Obj[] {
  return parseAllDocuments(text)
    .map((d) => {
      if (d.errors.length > 0) throw new Error(`YAML: ${d.errors[0]?.message}`);
      return d.toJS() as Obj | null;
    })
    .filter((o): o is Obj => o !== null);
}

const MODELS: Record<string, new (data: Obj) => { validate(): void }> = {
  "v1/ConfigMap": ConfigMap,
  "v1/Namespace": Namespace,
  "v1/Service": Service,
  "apps/v1/StatefulSet": StatefulSet,
  "networking.k8s.io/v1/Ingress": Ingress,
  "networking.k8s.io/v1/NetworkPolicy": NetworkPolicy,
};

/** Validate against the Kubernetes OpenAPI schema (kubernetes-models); an unknown kind is an error too. */
export function validateSchema(o: Obj): void {
  const key = `${o.apiVersion}/${o.kind}`;
  const Model = MODELS[key];
  if (!Model) throw new Error(`no schema for ${key} (${o.metadata?.name}): add its model to the test`);
  new Model(o).validate();
}

export const id = (o: Obj): string => `${o.kind}/${o.metadata?.namespace ?? "-"}/${o.metadata?.name}`;

/** Every problem with the security settings of a workload's pod template ([] = none). */
export function podSecurityProblems(o: Obj): string[] {
  const p: string[] = [];
  const pod = o.spec?.template?.spec as Obj | undefined;
  if (!pod) return [`${id(o)}: no pod template`];
  const psc = pod.securityContext ?? {};
  if (psc.runAsNonRoot !== true) p.push("pod runAsNonRoot is not true");
  if (!Number.isInteger(psc.runAsUser) || psc.runAsUser === 0) p.push("pod runAsUser is not a fixed non-zero uid");
  if (psc.seccompProfile?.type !== "RuntimeDefault") p.push("pod seccompProfile is not RuntimeDefault");
  if (pod.automountServiceAccountToken !== false) p.push("the service account token is mounted");
  for (const k of ["hostNetwork", "hostPID", "hostIPC"]) if (pod[k] === true) p.push(`${k} is on`);
  for (const v of pod.volumes ?? []) if (v.hostPath) p.push(`volume ${v.name} is a hostPath`);
  for (const c of [...(pod.initContainers ?? []), ...(pod.containers ?? [])] as Obj[]) {
    const sc = c.securityContext ?? {};
    const where = `container ${c.name}`;
    if (sc.allowPrivilegeEscalation !== false) p.push(`${where}: allowPrivilegeEscalation is not false`);
    if (sc.privileged === true) p.push(`${where}: privileged`);
    if (sc.readOnlyRootFilesystem !== true) p.push(`${where}: root filesystem is writable`);
    if (!(sc.capabilities?.drop ?? []).includes("ALL")) p.push(`${where}: capabilities are not dropped (ALL)`);
    if ((sc.capabilities?.add ?? []).length > 0) p.push(`${where}: adds capabilities`);
    if (sc.runAsUser === 0 || sc.runAsNonRoot === false) p.push(`${where}: runs as root`);
    if (sc.seccompProfile && sc.seccompProfile.type !== "RuntimeDefault")
      p.push(`${where}: seccomp profile is not RuntimeDefault`);
    for (const r of ["cpu", "memory"]) {
      if (!c.resources?.requests?.[r]) p.push(`${where}: no ${r} request`);
      if (!c.resources?.limits?.[r]) p.push(`${where}: no ${r} limit`);
    }
    const image = String(c.image ?? "");
    if (!/^[^@]+:[\w][\w.-]*$|@sha256:[0-9a-f]{64}$/.test(image) || image.endsWith(":latest"))
      p.push(`${where}: image ${image} is not pinned`);
  }
  return p.map((m) => `${id(o)}: ${m}`);
}

/** The paths ccb writes to at run time (workspace, HOME/XDG state, temp files, Chromium's shm). */
export const WRITABLE_PATHS = ["/workspace", "/var/lib/ccb", "/tmp", "/dev/shm"];

/** Each writable path must be a mount (the root filesystem is read-only). */
export function unmountedWritablePaths(o: Obj): string[] {
  const c = o.spec.template.spec.containers[0] as Obj;
  const mounts = (c.volumeMounts ?? []).map((m: Obj) => m.mountPath as string);
  return WRITABLE_PATHS.filter((w) => !mounts.includes(w));
}

/** Every Secret an object refers to: env/envFrom refs, secret volumes and projections, Ingress TLS. */
export function secretRefs(o: Obj): string[] {
  const out = new Set<string>();
  const walk = (v: unknown, key = ""): void => {
    if (Array.isArray(v)) {
      for (const x of v) walk(x, key);
      return;
    }
    if (!v || typeof v !== "object") return;
    const x = v as Obj;
    if ((key === "secretKeyRef" || key === "secretRef") && typeof x.name === "string") out.add(x.name);
    if (key === "secret" && typeof x.secretName === "string") out.add(x.secretName);
    if (key === "secret" && typeof x.name === "string") out.add(x.name);
    if (key === "tls" && typeof x.secretName === "string") out.add(x.secretName);
    for (const [k, child] of Object.entries(x)) walk(child, k);
  };
  walk(o.spec);
  return [...out].sort();
}

const SECRETISH = /TOKEN|SECRET|PASSWORD|PASSWD|API_KEY|PRIVATE|CREDENTIAL/i;

/** Secret material written into the manifests instead of referenced ([] = none). */
export function inlinedSecrets(objects: Obj[], text: string): string[] {
  const p: string[] = [];
  for (const o of objects) {
    if (o.kind === "Secret") p.push(`${id(o)}: a Secret object in the manifests`);
    if (o.kind === "ConfigMap")
      for (const k of Object.keys(o.data ?? {})) if (SECRETISH.test(k)) p.push(`${id(o)}: ConfigMap key ${k}`);
    for (const c of (o.spec?.template?.spec?.containers ?? []) as Obj[]) {
      for (const e of (c.env ?? []) as Obj[])
        if (SECRETISH.test(e.name) && e.value !== undefined) p.push(`${id(o)}: env ${e.name} has an inline value`);
      for (const a of (c.args ?? []) as string[])
        if (/^--(auth-token|key|token)\b/.test(a)) p.push(`${id(o)}: secret flag ${a} in args`);
    }
  }
  if (/-----BEGIN [A-Z ]*PRIVATE KEY-----/.test(text)) p.push("a PEM private key in the text");
  if (/\b[0-9a-f]{64}\b/i.test(text)) p.push("a 256-bit hex string (a token?) in the text");
  return p;
}

/** Kubernetes Prefix matching: by whole path elements. */
export function ingressPathMatches(rule: { path: string; pathType: string }, requestPath: string): boolean {
  if (rule.pathType === "Exact") return requestPath === rule.path;
  const prefix = rule.path.replace(/\/+$/, "");
  return prefix === "" || requestPath === prefix || requestPath.startsWith(`${prefix}/`);
}

export function ingressPaths(
  ing: Obj,
): Array<{ host: string; path: string; pathType: string; service: string; port: Obj }> {
  return (ing.spec.rules ?? []).flatMap((r: Obj) =>
    (r.http?.paths ?? []).map((p: Obj) => ({
      host: r.host,
      path: p.path,
      pathType: p.pathType,
      service: p.backend.service.name,
      port: p.backend.service.port,
    })),
  );
}

/** Whether a label selector (matchLabels only) selects these labels. */
export function selects(selector: Obj | undefined, labels: Obj): boolean {
  const ml = (selector?.matchLabels ?? {}) as Obj;
  if ((selector?.matchExpressions ?? []).length > 0) throw new Error("matchExpressions are not evaluated by this test");
  return Object.entries(ml).every(([k, v]) => labels[k] === v);
}
