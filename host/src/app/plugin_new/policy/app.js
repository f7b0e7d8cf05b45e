// __NAME__: a wasm-apiserver admission policy in JavaScript (written by `wasm-apiserver plugin
// new --lang js --policy`). One rule to start from: a ConfigMap must carry the label named by
// the settings' `label` (`owner` by default).
//
// `sdk/` is the JavaScript SDK and `wit/` the contract, copied here so the project builds on
// its own; `./build.sh` makes __NAME__.wasm with componentize-js.

import { AdmissionPolicy, exportAdmission, rule, allow, deny } from './sdk/admission.js';

/** The label every ConfigMap must carry. */
const label = (settings) => settings.label ?? 'owner';

class Policy extends AdmissionPolicy {
  describe() {
    return { rules: [rule(['CREATE', 'UPDATE'], '', 'configmaps')] };
  }

  validateSettings(settings) {
    return typeof label(settings) === 'string' ? undefined : 'label: must be a string';
  }

  validate(request, settings) {
    const key = label(settings);
    const labels = request.object?.metadata?.labels ?? {};
    return typeof labels[key] === 'string' ? allow() : deny(`a ConfigMap must carry the label ${JSON.stringify(key)}`);
  }
}

export const admission = exportAdmission(Policy);
