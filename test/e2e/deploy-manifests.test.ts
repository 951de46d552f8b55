import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { describe, test } from "node:test";
import { repoRoot } from "../helpers/cli.ts";
import {
  id,
  ingressPathMatches,
  ingressPaths,
  inlinedSecrets,
  KUSTOMIZE_DIR,
  type Obj,
  podSecurityProblems,
  render,
  secretRefs,
  selects,
  unmountedWritablePaths,
  validateSchema,
} from "../helpers/deploy.ts";

/** Every kustomization under deploy/kubernetes (the base, each overlay and each developer folder). */
function kustomizations(dir = KUSTOMIZE_DIR): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out.push(...kustomizations(p));
    else if (name === "kustomization.yaml") out.push(dir);
  }
  return out.sort();
}

const DIRS = kustomizations();
const rendered = new Map(DIRS.map((d) => [d, render(d)] as const));
const text = (d: string) => spawnSync("kubectl", ["kustomize", d], { encoding: "utf8" }).stdout;
const rel = (d: string) => d.slice(repoRoot.length);
const clone = (o: Obj): Obj => structuredClone(o);
const base = rendered.get(join(KUSTOMIZE_DIR, "base")) as Obj[];
const team = rendered.get(join(KUSTOMIZE_DIR, "overlays/team")) as Obj[];
const baseSts = base.find((o) => o.kind === "StatefulSet") as Obj;

/** The Secrets a workspace needs, created by the operator or cert-manager, never in the manifests. */
const WORKSPACE_SECRETS = ["ccb-workspace-tls", "ccb-workspace-token"];

describe("deploy/kubernetes: rendered with kubectl kustomize", () => {
  test("there is a base and a team overlay, and each renders", () => {
    assert.ok(DIRS.some((d) => d.endsWith("/base")));
    assert.ok(DIRS.some((d) => d.endsWith("/overlays/team")));
    for (const [d, objs] of rendered) assert.ok(objs.length > 0, `${rel(d)} renders nothing`);
  });

  test("every object validates against the Kubernetes OpenAPI schema", () => {
    for (const [d, objs] of rendered)
      for (const o of objs) assert.doesNotThrow(() => validateSchema(o), `${rel(d)}: ${id(o)}`);
  });

  test("the schema check catches wrong types, missing required fields and unknown kinds (positive control)", () => {
    const badReplicas = clone(baseSts);
    badReplicas.spec.replicas = "1";
    assert.throws(() => validateSchema(badReplicas), /replicas must be integer/);
    const noName = clone(baseSts);
    delete noName.spec.template.spec.containers[0].name;
    assert.throws(() => validateSchema(noName), /must have required property 'name'|required property name/);
    const badBool = clone(baseSts);
    badBool.spec.template.spec.securityContext.runAsNonRoot = "true";
    assert.throws(() => validateSchema(badBool), /runAsNonRoot must be boolean/);
    assert.throws(
      () => validateSchema({ apiVersion: "v1", kind: "Secret", metadata: { name: "x" } }),
      /no schema for v1\/Secret/,
    );
  });

  test("every workload runs non-root, without privilege escalation or capabilities, seccomp RuntimeDefault, read-only root, with limits", () => {
    for (const [d, objs] of rendered) {
      const workloads = objs.filter((o) => o.spec?.template?.spec);
      for (const w of workloads) assert.deepEqual(podSecurityProblems(w), [], rel(d));
    }
  });

  test("the security check fails on each weakened setting (attack: one field at a time)", () => {
    const weaken: Array<[string, (o: Obj) => void, RegExp]> = [
      ["root uid", (o) => (o.spec.template.spec.securityContext.runAsUser = 0), /runAsUser/],
      ["runAsNonRoot off", (o) => (o.spec.template.spec.securityContext.runAsNonRoot = false), /pod runAsNonRoot/],
      [
        "escalation",
        (o) => (o.spec.template.spec.containers[0].securityContext.allowPrivilegeEscalation = true),
        /allowPrivilegeEscalation/,
      ],
      [
        "caps kept",
        (o) => (o.spec.template.spec.containers[0].securityContext.capabilities.drop = ["NET_RAW"]),
        /not dropped/,
      ],
      [
        "caps added",
        (o) => (o.spec.template.spec.containers[0].securityContext.capabilities.add = ["SYS_ADMIN"]),
        /adds capabilities/,
      ],
      [
        "writable root",
        (o) => delete o.spec.template.spec.containers[0].securityContext.readOnlyRootFilesystem,
        /root filesystem is writable/,
      ],
      [
        "unconfined",
        (o) => (o.spec.template.spec.securityContext.seccompProfile.type = "Unconfined"),
        /seccompProfile/,
      ],
      ["privileged", (o) => (o.spec.template.spec.containers[0].securityContext.privileged = true), /privileged/],
      ["sa token", (o) => delete o.spec.template.spec.automountServiceAccountToken, /service account token/],
      ["host network", (o) => (o.spec.template.spec.hostNetwork = true), /hostNetwork/],
      ["no limits", (o) => delete o.spec.template.spec.containers[0].resources.limits, /no cpu limit/],
      ["latest", (o) => (o.spec.template.spec.containers[0].image = "ghcr.io/x/ccb:latest"), /not pinned/],
      ["untagged", (o) => (o.spec.template.spec.containers[0].image = "ghcr.io/x/ccb"), /not pinned/],
    ];
    for (const [what, mutate, want] of weaken) {
      const o = clone(baseSts);
      mutate(o);
      const problems = podSecurityProblems(o);
      assert.ok(
        problems.some((p) => want.test(p)),
        `${what}: ${JSON.stringify(problems)}`,
      );
    }
  });

  test("every path ccb writes is a mounted volume; workspace and state are PersistentVolumeClaims", () => {
    for (const sts of [baseSts, ...team.filter((o) => o.kind === "StatefulSet")]) {
      assert.deepEqual(unmountedWritablePaths(sts), [], id(sts));
      const claims = (sts.spec.volumeClaimTemplates as Obj[]).map((c) => c.metadata.name).sort();
      assert.deepEqual(claims, ["state", "workspace"]);
      const mounts = Object.fromEntries(
        (sts.spec.template.spec.containers[0].volumeMounts as Obj[]).map((m) => [m.mountPath, m.name]),
      );
      assert.equal(mounts["/workspace"], "workspace");
      assert.equal(mounts["/var/lib/ccb"], "state");
      const shm = (sts.spec.template.spec.volumes as Obj[]).find((v) => v.name === mounts["/dev/shm"]);
      assert.equal(shm?.emptyDir?.medium, "Memory");
    }
    const noTmp = clone(baseSts);
    noTmp.spec.template.spec.containers[0].volumeMounts = noTmp.spec.template.spec.containers[0].volumeMounts.filter(
      (m: Obj) => m.mountPath !== "/tmp",
    );
    assert.deepEqual(unmountedWritablePaths(noTmp), ["/tmp"]);
  });

  test("Secrets are referenced, never inlined: the token from a secretKeyRef, TLS by name", () => {
    for (const d of DIRS) {
      const objs = rendered.get(d) as Obj[];
      assert.deepEqual(inlinedSecrets(objs, text(d)), [], rel(d));
      const byNamespace = new Map<string, Set<string>>();
      for (const o of objs) {
        const ns = o.metadata?.namespace ?? "";
        const set = byNamespace.get(ns) ?? new Set<string>();
        for (const s of secretRefs(o)) set.add(s);
        byNamespace.set(ns, set);
      }
      // The OAuth overlay has no shared token: its workspaces reference the TLS Secret only.
      const want = d.endsWith("/overlays/oauth") ? ["ccb-workspace-tls"] : WORKSPACE_SECRETS;
      for (const [ns, set] of byNamespace)
        if (set.size > 0) assert.deepEqual([...set].sort(), want, `${rel(d)} namespace ${ns}`);
    }
    const env = baseSts.spec.template.spec.containers[0].env as Obj[];
    assert.deepEqual(env.find((e) => e.name === "CCB_AUTH_TOKEN")?.valueFrom, {
      secretKeyRef: { name: "ccb-workspace-token", key: "token" },
    });
    const ing = base.find((o) => o.kind === "Ingress") as Obj;
    assert.deepEqual(
      ing.spec.tls.map((t: Obj) => t.secretName),
      ["ccb-workspace-tls"],
    );
    assert.ok(ing.metadata.annotations["cert-manager.io/cluster-issuer"], "cert-manager issues the TLS Secret");
  });

  test("the inline-secret check finds a token value, a Secret object, a token flag and a PEM key (positive control)", () => {
    const o = clone(baseSts);
    const env = o.spec.template.spec.containers[0].env as Obj[];
    (env.find((e) => e.name === "CCB_AUTH_TOKEN") as Obj).value = "hunter2";
    o.spec.template.spec.containers[0].args.push("--auth-token=x");
    const secret = { apiVersion: "v1", kind: "Secret", metadata: { name: "t" }, stringData: { token: "x" } };
    const found = inlinedSecrets([o, secret], `a: ${"ab".repeat(32)}\nb: -----BEGIN PRIVATE KEY-----`);
    for (const want of [
      /env CCB_AUTH_TOKEN has an inline value/,
      /a Secret object/,
      /secret flag --auth-token/,
      /PEM private key/,
      /256-bit hex/,
    ]) {
      assert.ok(
        found.some((f) => want.test(f)),
        `${want}: ${JSON.stringify(found)}`,
      );
    }
  });

  test("the Ingress routes the workbench, /mcp and the App to the Service, never /bridge or /readyz, with long WebSocket timeouts", () => {
    for (const objs of [base, team]) {
      for (const ing of objs.filter((o) => o.kind === "Ingress")) {
        const paths = ingressPaths(ing);
        const routed = (p: string) => paths.some((r) => ingressPathMatches(r, p));
        for (const p of ["/mcp", "/ide/0123abcd/", "/ide/k/stable-x/static/x.js", "/app", "/session.json", "/stream"])
          assert.ok(routed(p), `${id(ing)} routes ${p}`);
        for (const p of ["/bridge", "/bridge/x", "/readyz", "/", "/idea", "/mcpx"])
          assert.ok(!routed(p), `${id(ing)} must not route ${p}`);
        const ns = ing.metadata.namespace;
        const svc = objs.find(
          (o) =>
            o.kind === "Service" && o.metadata.namespace === ns && paths.every((p) => p.service === o.metadata.name),
        ) as Obj;
        assert.ok(svc, `${id(ing)}: backend Service exists`);
        for (const p of paths)
          assert.ok(
            (svc.spec.ports as Obj[]).some((sp) => sp.name === p.port.name),
            `port ${p.port.name}`,
          );
        const a = ing.metadata.annotations as Obj;
        assert.ok(Number(a["nginx.ingress.kubernetes.io/proxy-read-timeout"]) >= 3600);
        assert.ok(Number(a["nginx.ingress.kubernetes.io/proxy-send-timeout"]) >= 3600);
        assert.deepEqual(
          ing.spec.tls.flatMap((t: Obj) => t.hosts).sort(),
          (ing.spec.rules as Obj[]).map((r) => r.host).sort(),
          "TLS covers every host",
        );
      }
    }
    assert.ok(
      ingressPathMatches({ path: "/", pathType: "Prefix" }, "/bridge"),
      "a catch-all / would expose /bridge (control)",
    );
  });

  test("the NetworkPolicy selects the workspace pod and admits only the ingress controller, on the HTTP port", () => {
    for (const objs of [base, team]) {
      for (const sts of objs.filter((o) => o.kind === "StatefulSet")) {
        const ns = sts.metadata.namespace;
        const labels = sts.spec.template.metadata.labels as Obj;
        const np = objs.find((o) => o.kind === "NetworkPolicy" && o.metadata.namespace === ns) as Obj;
        assert.ok(np, `${id(sts)}: a NetworkPolicy in its namespace`);
        assert.ok(
          selects(np.spec.podSelector, labels) && Object.keys(np.spec.podSelector.matchLabels).length > 0,
          "selects the pod",
        );
        assert.ok(np.spec.policyTypes.includes("Ingress"));
        for (const rule of np.spec.ingress as Obj[]) {
          assert.deepEqual(rule.ports, [{ port: "http", protocol: "TCP" }]);
          for (const peer of rule.from as Obj[]) {
            assert.equal(
              peer.namespaceSelector?.matchLabels?.["kubernetes.io/metadata.name"],
              "ingress-nginx",
              "peer is in the controller's namespace",
            );
            assert.equal(
              peer.podSelector?.matchLabels?.["app.kubernetes.io/name"],
              "ingress-nginx",
              "peer is the controller's pods",
            );
            assert.ok(
              !selects(peer.podSelector, labels),
              "the peer selector must not select the workspace pods themselves",
            );
            assert.equal(peer.ipBlock, undefined);
          }
        }
        const port = (sts.spec.template.spec.containers[0].ports as Obj[]).find((p) => p.name === "http");
        assert.ok(port, "the policy's named port exists on the container");
      }
    }
  });

  test("probes: /healthz for startup and liveness, /readyz (bridge live) for readiness, with a Host ccb accepts", () => {
    const c = baseSts.spec.template.spec.containers[0] as Obj;
    assert.equal(c.livenessProbe.httpGet.path, "/healthz");
    assert.equal(c.startupProbe.httpGet.path, "/healthz");
    assert.equal(c.readinessProbe.httpGet.path, "/readyz");
    for (const p of [c.livenessProbe, c.startupProbe, c.readinessProbe]) {
      assert.equal(p.httpGet.port, "http");
      assert.deepEqual(p.httpGet.httpHeaders, [{ name: "Host", value: "localhost:8080" }]);
    }
    assert.ok(c.args.includes("--http") && c.args.includes("--trust-proxy"));
    assert.equal(c.args[c.args.indexOf("--port") + 1], "8080");
    assert.equal(c.ports[0].containerPort, 8080);
    assert.ok(baseSts.spec.template.spec.terminationGracePeriodSeconds >= 30);
  });

  test("the team overlay stamps out one isolated workspace per developer", () => {
    const sets = team.filter((o) => o.kind === "StatefulSet");
    assert.ok(sets.length >= 2, "at least two workspaces");
    const namespaces = new Set(sets.map((s) => s.metadata.namespace));
    assert.equal(namespaces.size, sets.length, "one namespace per workspace");
    for (const ns of namespaces)
      assert.ok(
        team.some((o) => o.kind === "Namespace" && o.metadata.name === ns),
        `Namespace ${ns} is created`,
      );
    const hosts = new Set<string>();
    for (const sts of sets) {
      const ns = sts.metadata.namespace;
      const ing = team.find((o) => o.kind === "Ingress" && o.metadata.namespace === ns) as Obj;
      const host = ing.spec.rules[0].host as string;
      hosts.add(host);
      const env = sts.spec.template.spec.containers[0].env as Obj[];
      assert.equal(
        new URL(env.find((e) => e.name === "CCB_PUBLIC_URL")?.value).host,
        host,
        `${ns}: CCB_PUBLIC_URL names the Ingress host`,
      );
      assert.ok(sts.metadata.labels["ccb.dev/developer"], `${ns}: labelled with its developer`);
    }
    assert.equal(hosts.size, sets.length, "distinct hosts");
  });

  test("the OAuth overlay: issuer and audience from a ConfigMap, no shared token, the metadata document routed", () => {
    const objs = rendered.get(join(KUSTOMIZE_DIR, "overlays/oauth")) as Obj[];
    const sts = objs.find((o) => o.kind === "StatefulSet") as Obj;
    const env = sts.spec.template.spec.containers[0].env as Obj[];
    assert.equal(
      env.find((e) => e.name === "CCB_AUTH_TOKEN"),
      undefined,
      "no static token beside OAuth",
    );
    const cm = objs.find((o) => o.kind === "ConfigMap") as Obj;
    const from = (name: string) => {
      const ref = env.find((e) => e.name === name)?.valueFrom?.configMapKeyRef;
      assert.equal(ref?.name, cm.metadata.name, `${name} comes from the ConfigMap`);
      return cm.data[ref.key] as string;
    };
    assert.equal(new URL(from("CCB_OAUTH_ISSUER")).protocol, "https:");
    const publicUrl = env.find((e) => e.name === "CCB_PUBLIC_URL")?.value as string;
    assert.equal(from("CCB_OAUTH_AUDIENCE"), `${publicUrl}/mcp`, "the audience is the resource: the public URL + /mcp");
    const ing = objs.find((o) => o.kind === "Ingress") as Obj;
    const paths = ingressPaths(ing);
    for (const p of ["/.well-known/oauth-protected-resource", "/.well-known/oauth-protected-resource/mcp", "/mcp"])
      assert.ok(
        paths.some((r) => ingressPathMatches(r, p)),
        `routes ${p}`,
      );
    assert.ok(!paths.some((r) => ingressPathMatches(r, "/.well-known/other")), "routes no other well-known document");
  });

  test("the README's Kubernetes section creates exactly the Secrets the manifests reference", () => {
    const readme = readFileSync(join(repoRoot, "README.md"), "utf8");
    const start = readme.indexOf("## Deploying on Kubernetes");
    assert.ok(start >= 0, "README has the section");
    const end = readme.indexOf("\n## ", start + 1);
    const section = readme.slice(start, end < 0 ? undefined : end);
    assert.match(section, /kubectl (-n \S+ )?create secret generic ccb-workspace-token[^\n]*--from-literal=token=/);
    assert.match(section, /kubectl (-n \S+ )?create secret tls ccb-workspace-tls /);
    assert.match(section, /kubectl kustomize deploy\/kubernetes\/overlays\/team/);
  });
});
