// wasm-apiserver's JavaScript SDK: write a strategy plugin as a class, build it with
// componentize-js (`wasm-apiserver plugin new NAME --lang js` writes a project that does).
//
//   import { Strategy, exportStrategy, resourceDescription, field, Path } from './sdk/index.js';
//   class Widgets extends Strategy {
//     describe() { return resourceDescription('example.dev', 'v1', 'Widget', 'widgets'); }
//     validate(obj) { return obj.spec?.size ? [] : [field.required(new Path('spec').child('size'))]; }
//   }
//   export const strategy = exportStrategy(Widgets);

export * as field from './field.js';
export * as validation from './validation.js';
export { Path, FieldError, ErrorType } from './field.js';
export { Strategy, exportStrategy, resourceDescription, PrinterColumn, Rejected } from './strategy.js';
