// widgets.example.dev/v1 in JavaScript: the rules of examples/widgets (Rust), through the
// JavaScript SDK (plugins/sdk-js), passing the same fixtures (examples/widgets/fixtures).
//
// - a computed default: spec.replicas from spec.size (small 1, medium 3, large 5);
// - a cross-field rule: spec.minReplicas <= spec.replicas <= spec.maxReplicas;
// - a warning above 10 replicas; spec.storageClass immutable;
// - printer columns SIZE, REPLICAS, PHASE (STORAGE-CLASS with -o wide);
// - status.phase starts Pending; a status update may set only Pending, Ready or Failed.

import { Strategy, exportStrategy, resourceDescription, PrinterColumn, Path, field, validation } from './sdk/index.js';

const SIZES = ['small', 'medium', 'large'];
const DEFAULT_REPLICAS = { small: 1, medium: 3, large: 5 };
const PHASES = ['Pending', 'Ready', 'Failed'];

const SCHEMA = {
  type: 'object',
  description: 'A Widget is the tutorial resource of wasm-apiserver.',
  properties: {
    apiVersion: { type: 'string' },
    kind: { type: 'string' },
    metadata: { type: 'object' },
    spec: {
      type: 'object',
      description: 'Desired state of the widget.',
      required: ['size'],
      properties: {
        size: { type: 'string', enum: SIZES, description: 'small, medium or large.' },
        replicas: { type: 'integer', format: 'int32', description: 'Defaults from size: 1, 3 or 5.' },
        minReplicas: { type: 'integer', format: 'int32' },
        maxReplicas: { type: 'integer', format: 'int32' },
        storageClass: { type: 'string', description: 'Immutable once set.' },
      },
    },
    status: {
      type: 'object',
      properties: { phase: { type: 'string', description: 'Pending, Ready or Failed.' } },
    },
  },
};

class Widgets extends Strategy {
  describe() {
    return resourceDescription('example.dev', 'v1', 'Widget', 'widgets', {
      shortNames: ['wd'],
      categories: ['all'],
      printerColumns: [
        PrinterColumn.nameColumn(),
        new PrinterColumn('Size', 'string', '.spec.size'),
        new PrinterColumn('Replicas', 'integer', '.spec.replicas'),
        new PrinterColumn('Phase', 'string', '.status.phase'),
        PrinterColumn.ageColumn(),
        new PrinterColumn('Storage-Class', 'string', '.spec.storageClass').wide(),
      ],
      selectableFields: ['spec.size'],
      openapiSchema: SCHEMA,
      example: {
        apiVersion: 'example.dev/v1', kind: 'Widget',
        metadata: { name: 'example', namespace: 'default' },
        spec: { size: 'medium' },
      },
    });
  }

  prepareForCreate(w) {
    w.spec ??= {};
    if (w.spec.replicas == null && w.spec.size in DEFAULT_REPLICAS) w.spec.replicas = DEFAULT_REPLICAS[w.spec.size];
    w.status = { phase: 'Pending' };
  }

  validate(w) {
    const spec = new Path('spec');
    const s = w.spec ?? {};
    const errs = validation.validateName(w.metadata?.name ?? '', new Path('metadata').child('name'));
    if (!s.size) errs.push(field.required(spec.child('size'), ''));
    else if (!SIZES.includes(s.size)) errs.push(field.notSupported(spec.child('size'), s.size, SIZES));
    const r = s.replicas;
    if (r != null) {
      if (r < 0) errs.push(field.invalid(spec.child('replicas'), r, 'must be greater than or equal to 0'));
      if (s.minReplicas != null && r < s.minReplicas) {
        errs.push(field.invalid(spec.child('replicas'), r, `must be greater than or equal to spec.minReplicas (${s.minReplicas})`));
      }
      if (s.maxReplicas != null && r > s.maxReplicas) {
        errs.push(field.invalid(spec.child('replicas'), r, `must be less than or equal to spec.maxReplicas (${s.maxReplicas})`));
      }
    }
    return errs;
  }

  warningsOnCreate(w) {
    const r = w.spec?.replicas;
    return r != null && r > 10 ? [`spec.replicas: ${r} replicas is more than 10; widgets are expensive`] : [];
  }

  validateUpdate(next, old) {
    return [
      ...this.validate(next),
      ...validation.validateImmutableField(next.spec?.storageClass, old.spec?.storageClass, new Path('spec').child('storageClass')),
    ];
  }

  warningsOnUpdate(next) {
    return this.warningsOnCreate(next);
  }

  validateStatusUpdate(next) {
    const phase = next.status?.phase;
    return phase != null && !PHASES.includes(phase) ? [field.notSupported(new Path('status').child('phase'), phase, PHASES)] : [];
  }
}

export const strategy = exportStrategy(Widgets);
