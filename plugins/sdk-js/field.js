// Field paths and field errors, as k8s.io/apimachinery/pkg/util/validation/field (path.go,
// errors.go) words them. A validation hook returns an array of FieldError; the host answers a
// non-empty one with 422 Invalid, one details.causes entry per error.

/** The field.ErrorType of each error, as the WIT `error-type` enum spells it. */
export const ErrorType = Object.freeze({
  Required: 'required',
  Invalid: 'invalid',
  Duplicate: 'duplicate',
  NotSupported: 'not-supported',
  Forbidden: 'forbidden',
  TooLong: 'too-long',
  TooMany: 'too-many',
  Internal: 'internal',
  TypeInvalid: 'type-invalid',
  NotFound: 'not-found',
});

/**
 * A field path such as `spec.containers[0].image` or `metadata.labels[app]` (field.Path).
 * Immutable: every method returns a new path.
 */
export class Path {
  constructor(root = '') {
    this.path = root;
  }
  /** `spec` → `spec.containers`. */
  child(name) {
    return new Path(this.path ? `${this.path}.${name}` : name);
  }
  /** `spec.containers` → `spec.containers[0]`. */
  index(i) {
    return new Path(`${this.path}[${i}]`);
  }
  /** `metadata.labels` → `metadata.labels[app]` (keys printed bare, as Kubernetes does). */
  key(k) {
    return new Path(`${this.path}[${k}]`);
  }
  toString() {
    return this.path;
  }
}

/**
 * One validation error (field.Error): `type` (an ErrorType), `field` (the path as Kubernetes
 * prints it), `badValue` (any JSON value, `undefined` = omitted) and `detail`.
 */
export class FieldError {
  constructor(type, path, badValue, detail = '') {
    this.type = type;
    this.field = String(path);
    this.badValue = badValue;
    this.detail = detail;
  }
}

/** field.Required(path, detail): "Required value". */
export const required = (path, detail = '') => new FieldError(ErrorType.Required, path, undefined, detail);
/** field.Invalid(path, value, detail): "Invalid value". */
export const invalid = (path, value, detail) => new FieldError(ErrorType.Invalid, path, value, detail);
/** field.Duplicate(path, value). */
export const duplicate = (path, value) => new FieldError(ErrorType.Duplicate, path, value, '');
/** field.NotSupported(path, value, validValues): `supported values: "a", "b"`. */
export const notSupported = (path, value, valid) =>
  new FieldError(ErrorType.NotSupported, path, value,
    valid.length ? `supported values: ${valid.map((v) => `"${v}"`).join(', ')}` : '');
/** field.Forbidden(path, detail). */
export const forbidden = (path, detail) => new FieldError(ErrorType.Forbidden, path, undefined, detail);
/** field.TooLong(path, value, maxLength): `must have at most N bytes`. */
export const tooLong = (path, value, maxLength) =>
  new FieldError(ErrorType.TooLong, path, value, `must have at most ${maxLength} bytes`);
/** field.TooMany(path, actual, max): `must have at most N items`. */
export const tooMany = (path, actual, max) =>
  new FieldError(ErrorType.TooMany, path, actual, `must have at most ${max} items`);
/** field.InternalError(path, err). */
export const internal = (path, detail) => new FieldError(ErrorType.Internal, path, undefined, detail);
/** field.TypeInvalid(path, value, detail). */
export const typeInvalid = (path, value, detail) => new FieldError(ErrorType.TypeInvalid, path, value, detail);
/** field.NotFound(path, value). */
export const notFound = (path, value) => new FieldError(ErrorType.NotFound, path, value, '');
