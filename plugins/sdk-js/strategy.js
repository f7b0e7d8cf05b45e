// The strategy base class and its export: kube-apiserver's rest.RESTCreateStrategy,
// rest.RESTUpdateStrategy, rest.RESTGracefulDeleteStrategy and the status strategy as methods,
// with kube-apiserver's defaults for every hook you do not write, bridged to the component's
// `wasm-apiserver:strategy/strategy` export (wit/0.2.0/strategy.wit).
//
// Objects are plain objects parsed from the JSON the host sends. Mutating hooks change the
// object in place; validation hooks return an array of FieldError; warning hooks an array of
// strings. Hooks must be pure functions of their arguments (the sandbox gives a fixed clock,
// no environment, no network).
//
// Around the hooks the SDK does what kube-apiserver's custom-resource strategy does
// (apiextensions-apiserver/pkg/registry/customresource/strategy.go), as the Rust SDK does:
// create sets metadata.generation = 1 and drops the client's status (status subresource);
// update restores status from the stored object and bumps generation when anything outside
// metadata and status changed; a status update keeps the stored object but its status (and
// managedFields).

/** One printer column (a CRD's additionalPrinterColumns). */
export class PrinterColumn {
  constructor(name, type, jsonPath, { format = '', description = '', priority = 0 } = {}) {
    Object.assign(this, { name, type, jsonPath, format, description, priority });
  }
  /** The NAME column, as kube-apiserver's default table has. */
  static nameColumn() {
    return new PrinterColumn('Name', 'string', '@name', { format: 'name', description: 'Name must be unique within a namespace.' });
  }
  /** The AGE column. */
  static ageColumn() {
    return new PrinterColumn('Age', 'date', '@age');
  }
  /** This column, shown only with `-o wide`. */
  wide() {
    this.priority = 1;
    return this;
  }
}

/**
 * What a plugin serves (the WIT resource-description). Only group, version, kind and plural
 * are required; the rest default as a CRD's do: listKind `<Kind>List`, singular the lower-cased
 * kind, namespaced, a status subresource, the NAME and AGE columns, a schema that keeps every
 * field. `openapiSchema` and `example` are objects. `version` is the storage version; a
 * resource served in several versions lists them in `versions` (`{name, served, storage,
 * deprecated, deprecationWarning, openapiSchema, printerColumns, selectableFields}`, the last
 * three defaulting to the description's own), `version` naming the storage one.
 */
export function resourceDescription(group, version, kind, plural, rest = {}) {
  return {
    group, version, kind, plural,
    listKind: `${kind}List`,
    singular: kind.toLowerCase(),
    shortNames: [],
    categories: [],
    namespaced: true,
    subresources: ['status'],
    printerColumns: [PrinterColumn.nameColumn(), PrinterColumn.ageColumn()],
    selectableFields: [],
    openapiSchema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
    example: undefined,
    returnDeletedObject: false,
    versions: [],
    ...rest,
  };
}

/**
 * Thrown by a mutating hook (prepare*, canonicalize) to refuse the object: with field errors
 * the host answers 422 Invalid, with a message only 400 BadRequest.
 */
export class Rejected extends Error {
  constructor(message, errors = []) {
    super(message);
    this.errors = errors;
  }
}

/** Subclass it, write describe() and the hooks you need, then `export const strategy = exportStrategy(MyStrategy)`. */
export class Strategy {
  /** Keep metadata.generation (1 on create, bumped on a spec change), as for custom resources. */
  get tracksGeneration() { return true; }
  describe() { throw new Error('a strategy must describe its resource'); }
  prepareForCreate(_obj) {}
  validate(_obj) { return []; }
  warningsOnCreate(_obj) { return []; }
  canonicalize(_obj) {}
  allowCreateOnUpdate() { return false; }
  allowUnconditionalUpdate() { return true; }
  prepareForUpdate(_next, _old) {}
  validateUpdate(_next, _old) { return []; }
  warningsOnUpdate(_next, _old) { return []; }
  prepareForStatusUpdate(_next, _old) {}
  validateStatusUpdate(_next, _old) { return []; }
  warningsOnStatusUpdate(_next, _old) { return []; }
  /** undefined deletes at once; seconds delete gracefully. */
  checkGracefulDelete(_obj, _requested) { return undefined; }
  validateDelete(_old) { return []; }
  /** Cells of the printer columns whose jsonPath is empty, in column order. */
  printerCells(_obj) { return []; }
  /**
   * Convert an object to `desiredApiVersion` (a CRD conversion webhook's job), for a resource
   * served in several versions; called only when `obj` is in another version. Keep metadata
   * but labels and annotations; make A → B → A give back the original. The default serves one
   * version and refuses.
   */
  convert(obj, desiredApiVersion) {
    throw new Rejected(`cannot convert from ${obj.apiVersion} to ${desiredApiVersion}: this plugin serves one version`);
  }
  /** GetAttrs: labels, and each selectable field ("" when missing or null, JSON when not a string). */
  getAttrs(obj) {
    const labels = Object.entries(obj.metadata?.labels ?? {})
      .map(([k, v]) => [k, typeof v === 'string' ? v : '']).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    const fields = this.description().selectableFields.map((path) => {
      let cur = obj;
      for (const part of path.split('.')) cur = cur !== null && typeof cur === 'object' ? cur[part] : undefined;
      return [path, typeof cur === 'string' ? cur : cur == null ? '' : JSON.stringify(cur)];
    });
    return { labels, fields };
  }
  /** describe(), computed once: it may build a large schema. */
  description() {
    if (!this._description) this._description = this.describe();
    return this._description;
  }
}

const wireErrors = (errs) => errs.map((e) => ({
  type: e.type,
  field: e.field,
  badValue: e.badValue === undefined ? undefined : JSON.stringify(e.badValue),
  detail: e.detail ?? '',
}));

// A hook-error: componentize-js turns a thrown value into the err case of a result.
const badRequest = (message) => ({ tag: 'bad-request', val: message });

// JavaScript numbers are doubles: an integer beyond 2^53 would come back changed, so an
// object holding one is refused (400) rather than silently rewritten.
function safeNumbers(key, value) {
  if (typeof value === 'number' && Number.isInteger(value) && !Number.isSafeInteger(value)) {
    throw badRequest(`the integer at ${JSON.stringify(key)} is beyond what a JavaScript number holds exactly (2^53)`);
  }
  return value;
}

function parse(text) {
  let obj;
  try {
    obj = JSON.parse(text, safeNumbers);
  } catch (e) {
    if (e && e.tag) throw e;
    throw badRequest(`malformed JSON: ${e.message}`);
  }
  if (obj === null || typeof obj !== 'object' || Array.isArray(obj)) throw badRequest('the object is not a JSON object');
  return obj;
}

// The hook's result; a Rejected becomes the WIT hook-error.
function run(hook, ...objs) {
  try {
    return hook(...objs);
  } catch (e) {
    if (e instanceof Rejected) {
      throw e.errors.length ? { tag: 'invalid', val: wireErrors(e.errors) } : badRequest(e.message);
    }
    throw e;
  }
}

const read = (text) => { const o = JSON.parse(text); return o !== null && typeof o === 'object' ? o : {}; };

// JSON text with every object's keys sorted: equal values, whatever their key order, give
// equal text.
const canonical = (v) => JSON.stringify(v, (_k, x) => (x !== null && typeof x === 'object' && !Array.isArray(x)
  ? Object.fromEntries(Object.keys(x).sort().map((k) => [k, x[k]]))
  : x));
const withoutMetaStatus = (o) => canonical(Object.fromEntries(Object.entries(o).filter(([k]) => k !== 'metadata' && k !== 'status')));

/** The object componentize-js exports as the `strategy` interface, over an instance of `StrategyClass`. */
export function exportStrategy(StrategyClass) {
  const s = new StrategyClass();
  const hasStatus = () => s.description().subresources.includes('status');
  const prepareForCreate = (o) => {
    if (hasStatus()) delete o.status;
    if (s.tracksGeneration && o.metadata && typeof o.metadata === 'object') o.metadata.generation = 1;
    s.prepareForCreate(o);
  };
  const exported = {
    describe() {
      const d = s.description();
      const versions = d.versions.length ? d.versions : [{ name: d.version, storage: true }];
      return {
        group: d.group,
        versions: versions.map((v) => ({
          name: v.name,
          served: v.served ?? true,
          storage: v.storage ?? false,
          deprecated: v.deprecated ?? false,
          deprecationWarning: v.deprecationWarning,
          openapiSchema: JSON.stringify(v.openapiSchema ?? d.openapiSchema),
          printerColumns: (v.printerColumns ?? d.printerColumns).map((c) => ({ ...c })),
          selectableFields: v.selectableFields ?? d.selectableFields,
        })),
        kind: d.kind,
        listKind: d.listKind,
        plural: d.plural,
        singular: d.singular,
        shortNames: d.shortNames,
        categories: d.categories,
        namespaced: d.namespaced,
        subresources: d.subresources,
        returnDeletedObject: d.returnDeletedObject,
        example: d.example === undefined ? undefined : JSON.stringify(d.example),
      };
    },
    prepareForCreate(obj) { const o = parse(obj); run(prepareForCreate, o); return JSON.stringify(o); },
    validate(obj) { return wireErrors(s.validate(read(obj))); },
    warningsOnCreate(obj) { return s.warningsOnCreate(read(obj)); },
    canonicalize(obj) { const o = parse(obj); run((x) => s.canonicalize(x), o); return JSON.stringify(o); },
    createSequence(obj) {
      const o = parse(obj);
      run(prepareForCreate, o);
      const errs = s.validate(o);
      if (errs.length) return { object: JSON.stringify(o), errors: wireErrors(errs), warnings: [] };
      const warnings = s.warningsOnCreate(o);
      run((x) => s.canonicalize(x), o);
      return { object: JSON.stringify(o), errors: [], warnings };
    },
    allowCreateOnUpdate() { return Boolean(s.allowCreateOnUpdate()); },
    allowUnconditionalUpdate() { return Boolean(s.allowUnconditionalUpdate()); },
    prepareForUpdate(next, old) {
      const n = parse(next);
      const o = parse(old);
      if (hasStatus()) {
        if ('status' in o) n.status = o.status;
        else delete n.status;
      }
      run((a, b) => s.prepareForUpdate(a, b), n, o);
      if (s.tracksGeneration && n.metadata && typeof n.metadata === 'object' && withoutMetaStatus(n) !== withoutMetaStatus(o)) {
        n.metadata.generation = (o.metadata?.generation ?? 0) + 1;
      }
      return JSON.stringify(n);
    },
    validateUpdate(next, old) { return wireErrors(s.validateUpdate(read(next), read(old))); },
    warningsOnUpdate(next, old) { return s.warningsOnUpdate(read(next), read(old)); },
    prepareForStatusUpdate(next, old) {
      const n = parse(next);
      const o = parse(old);
      const merged = parse(old);
      if ('status' in n) merged.status = n.status;
      else delete merged.status;
      if (n.metadata?.managedFields !== undefined && merged.metadata) merged.metadata.managedFields = n.metadata.managedFields;
      run((a, b) => s.prepareForStatusUpdate(a, b), merged, o);
      return JSON.stringify(merged);
    },
    validateStatusUpdate(next, old) { return wireErrors(s.validateStatusUpdate(read(next), read(old))); },
    warningsOnStatusUpdate(next, old) { return s.warningsOnStatusUpdate(read(next), read(old)); },
    checkGracefulDelete(obj, requested) {
      // s64 crosses as a BigInt.
      const r = s.checkGracefulDelete(read(obj), requested === undefined ? undefined : Number(requested));
      return r == null ? undefined : BigInt(Math.max(0, Math.trunc(Number(r))));
    },
    validateDelete(old) { return wireErrors(s.validateDelete(read(old))); },
    printerCells(obj) { return s.printerCells(read(obj)).map((c) => JSON.stringify(c)); },
    getAttrs(obj) { return s.getAttrs(parse(obj)); },
    convert(obj, desiredApiVersion) {
      const o = parse(obj);
      if (o.apiVersion === desiredApiVersion) return obj;
      return JSON.stringify(run((x) => s.convert(x, desiredApiVersion), o));
    },
  };
  // A hook-error passes through as the err case; anything else thrown is a bug in the plugin:
  // its stack goes to stderr, which the host quotes in the 500 of the call that traps.
  for (const [name, f] of Object.entries(exported)) {
    exported[name] = (...args) => {
      try {
        return f(...args);
      } catch (e) {
        if (!(e && (e.tag === 'bad-request' || e.tag === 'invalid'))) console.error(`${name}: ${e}\n${e?.stack ?? ""}`);
        throw e;
      }
    };
  }
  return exported;
}
