// A wasm admission policy in JavaScript (plugins/sdk-js/admission.js): Pods may not run an
// image without a tag or tagged `latest` — unless the image's repository is listed in the
// policy object's settings (`{"allowLatest": ["nginx"]}`).

import { AdmissionPolicy, exportAdmission, rule, allow, deny } from './sdk/admission.js';

function floating(image) {
  const name = image.split('@')[0];
  if (image.includes('@')) return false;
  const slash = name.lastIndexOf('/');
  const colon = name.lastIndexOf(':');
  const tag = colon > slash ? name.slice(colon + 1) : '';
  return tag === '' || tag === 'latest';
}

function repository(image) {
  const name = image.split('@')[0];
  const slash = name.lastIndexOf('/');
  const colon = name.lastIndexOf(':');
  return colon > slash ? name.slice(0, colon) : name;
}

class NoLatest extends AdmissionPolicy {
  describe() {
    return { rules: [rule(['CREATE', 'UPDATE'], '', 'pods')] };
  }

  validateSettings(settings) {
    const a = settings.allowLatest ?? [];
    if (!Array.isArray(a) || !a.every((x) => typeof x === 'string')) return 'allowLatest: must be a list of image repositories';
    return undefined;
  }

  validate(request, settings) {
    const spec = request.object?.spec ?? {};
    const allowed = new Set(settings.allowLatest ?? []);
    const bad = [...(spec.initContainers ?? []), ...(spec.containers ?? [])]
      .filter((c) => typeof c.image === 'string' && floating(c.image) && !allowed.has(repository(c.image)))
      .map((c) => `${c.name} (${c.image})`);
    return bad.length ? deny(`images must be pinned to a tag other than latest: ${bad.join(', ')}`) : allow();
  }
}

export const admission = exportAdmission(NoLatest);
