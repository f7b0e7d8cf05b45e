// __PLURAL__.__GROUP__/v1: a wasm-apiserver strategy plugin (written by `wasm-apiserver plugin
// new`). One rule to start from: spec.message is required.
//
// sdk/ is the JavaScript SDK and wit/ the contract, copied here so the project builds on its
// own; ./build.sh makes __NAME__.wasm with componentize-js.

import { Strategy, exportStrategy, resourceDescription, Path, field } from './sdk/index.js';

const SCHEMA = {
  type: 'object',
  properties: {
    apiVersion: { type: 'string' },
    kind: { type: 'string' },
    metadata: { type: 'object' },
    spec: {
      type: 'object',
      properties: { message: { type: 'string', description: 'What it says.' } },
    },
    status: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
  },
};

class __KIND__Strategy extends Strategy {
  describe() {
    return resourceDescription('__GROUP__', 'v1', '__KIND__', '__PLURAL__', {
      openapiSchema: SCHEMA,
      example: {
        apiVersion: '__GROUP__/v1', kind: '__KIND__',
        metadata: { name: 'example', namespace: 'default' },
        spec: { message: 'hello' },
      },
    });
  }

  validate(obj) {
    return obj.spec?.message ? [] : [field.required(new Path('spec').child('message'), 'a __SINGULAR__ must say something')];
  }

  validateUpdate(next) {
    return this.validate(next);
  }
}

export const strategy = exportStrategy(__KIND__Strategy);
