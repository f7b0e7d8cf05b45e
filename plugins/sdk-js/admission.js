// Admission policies in JavaScript: a component exporting wit/admission/0.1.0/admission.wit
// (world `admission-plugin`), run in-process by the server for the requests it matches, as a
// webhook would be. Import this module (not index.js, whose strategy bindings a policy does
// not have), subclass AdmissionPolicy and export it:
//
//   import { AdmissionPolicy, exportAdmission, rule, allow, deny } from './sdk/admission.js';
//   class NoLatest extends AdmissionPolicy {
//     describe() { return { rules: [rule(['CREATE'], '', 'pods')] }; }
//     validate(request, settings) { return allow(); }
//   }
//   export const admission = exportAdmission(NoLatest);
//
// Build it with `componentize-js app.js -w wit/admission/0.1.0 -n admission-plugin -o x.wasm`.
// Other objects are read with getObject / listObjects, for the resources describe() lists in
// `contextReads` (each `{ group, resource }`, in its storage version).

import * as host from 'wasm-apiserver:admission/host@0.1.0';

/** One match rule, as admissionregistration.k8s.io/v1 RuleWithOperations. */
export function rule(operations, group, resource, { versions = ['*'], scope = '*' } = {}) {
  return { operations, apiGroups: [group], apiVersions: versions, resources: [resource], scope };
}

/** Allowed. */
export function allow() {
  return { allowed: true };
}

/** Refused with `message` (403 Forbidden unless `code` says otherwise). */
export function deny(message, { code = 0, reason = '' } = {}) {
  return { allowed: false, code, reason, message };
}

/** Allowed, storing `object` instead (a mutating policy). */
export function mutate(object) {
  return { allowed: true, mutatedObject: object };
}

/** A failed context read: `kind` is forbidden, invalid or unavailable. */
export class ReadError extends Error {
  constructor(kind, message) {
    super(message);
    this.kind = kind;
  }
}

function readError(e) {
  const p = e?.payload ?? e;
  return new ReadError(p?.tag ?? 'unavailable', String(p?.val ?? e));
}

/** One object of a declared resource from the server's watch cache, or undefined. */
export function getObject(group, resource, namespace, name) {
  let text;
  try {
    text = host.getObject({ group, version: '', resource }, namespace, name);
  } catch (e) {
    throw readError(e);
  }
  return text === undefined ? undefined : JSON.parse(text);
}

/** The objects of a declared resource in `namespace` (all when empty) matching `labelSelector`. */
export function listObjects(group, resource, namespace = '', labelSelector = '') {
  try {
    return host.listObjects({ group, version: '', resource }, namespace, labelSelector).map((t) => JSON.parse(t));
  } catch (e) {
    throw readError(e);
  }
}

/** Subclass and override describe() and validate() (or mutate()). */
export class AdmissionPolicy {
  describe() {
    throw new Error('describe() is required');
  }
  /** Why `settings` are refused (the object's status says so), or undefined. */
  validateSettings(_settings) {
    return undefined;
  }
  validate(_request, _settings) {
    return allow();
  }
  mutate(_request, _settings) {
    return allow();
  }
}

function answer(r) {
  return {
    allowed: Boolean(r.allowed),
    denial: r.allowed ? undefined : { code: r.code ?? 0, reason: r.reason ?? '', message: r.message ?? '' },
    warnings: r.warnings ?? [],
    auditAnnotations: Object.entries(r.auditAnnotations ?? {}),
    mutatedObject: r.mutatedObject === undefined ? undefined : JSON.stringify(r.mutatedObject),
  };
}

function settingsOf(text) {
  try {
    const v = JSON.parse(text);
    return v && typeof v === 'object' && !Array.isArray(v) ? v : {};
  } catch {
    return {};
  }
}

/** The object componentize-js exports as the `admission` interface, over an instance of `PolicyClass`. */
export function exportAdmission(PolicyClass) {
  const p = new PolicyClass();
  const run = (hook, request, settings) => {
    let req;
    try {
      req = JSON.parse(request);
    } catch (e) {
      return answer(deny(`the policy cannot decode the request: ${e}`, { code: 400, reason: 'BadRequest' }));
    }
    return answer(hook.call(p, req, settingsOf(settings)));
  };
  return {
    describe() {
      const d = p.describe();
      return {
        mutating: Boolean(d.mutating),
        rules: d.rules ?? [],
        contextReads: (d.contextReads ?? []).map((r) => ({ group: r.group ?? '', version: r.version ?? '', resource: r.resource })),
      };
    },
    validateSettings(settings) {
      let v;
      try {
        v = JSON.parse(settings);
      } catch (e) {
        throw `settings are not JSON: ${e}`;
      }
      const why = p.validateSettings(v && typeof v === 'object' ? v : {});
      if (why) throw why;
    },
    validate(request, settings) {
      return run(p.validate, request, settings);
    },
    mutate(request, settings) {
      return run(p.mutate, request, settings);
    },
  };
}
