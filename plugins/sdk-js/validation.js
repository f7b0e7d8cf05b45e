// Kubernetes' name and label rules, ported from k8s.io/apimachinery/pkg/util/validation
// (validation.go) and k8s.io/apimachinery/pkg/api/validation (objectmeta.go, generic.go), with
// Kubernetes' messages (apimachinery v0.33). The is* functions return the problems as
// Kubernetes words them (empty = valid); the validate* functions return FieldErrors at a path.

import { invalid } from './field.js';

const DNS1123_LABEL_FMT = '[a-z0-9]([-a-z0-9]*[a-z0-9])?';
const DNS1123_LABEL_MSG = "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character";
const DNS1123_SUBDOMAIN_FMT = `${DNS1123_LABEL_FMT}(\\.${DNS1123_LABEL_FMT})*`;
const DNS1123_SUBDOMAIN_MSG = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character";
const DNS1035_LABEL_FMT = '[a-z]([-a-z0-9]*[a-z0-9])?';
const DNS1035_LABEL_MSG = "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character";
const QUALIFIED_NAME_FMT = '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]';
const QUALIFIED_NAME_MSG = "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const LABEL_VALUE_FMT = `(${QUALIFIED_NAME_FMT})?`;
const LABEL_VALUE_MSG = "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";

const full = (fmt) => new RegExp(`^(?:${fmt})$`);
const DNS1123_LABEL = full(DNS1123_LABEL_FMT);
const DNS1123_SUBDOMAIN = full(DNS1123_SUBDOMAIN_FMT);
const DNS1035_LABEL = full(DNS1035_LABEL_FMT);
const QUALIFIED_NAME = full(QUALIFIED_NAME_FMT);
const LABEL_VALUE = full(LABEL_VALUE_FMT);

/** FieldImmutableErrorMsg. */
export const FIELD_IMMUTABLE_ERROR_MSG = 'field is immutable';

/** MaxLenError. */
export const maxLenError = (n) => `must be no more than ${n} characters`;

/** RegexError: `msg (e.g. 'a',  or 'b', regex used for validation is 'fmt')`. */
export function regexError(msg, fmt, ...examples) {
  if (!examples.length) return `${msg} (regex used for validation is '${fmt}')`;
  return `${msg} (e.g. ${examples.map((e) => `'${e}', `).join(' or ')}regex used for validation is '${fmt}')`;
}

// Lengths count UTF-8 bytes, as Go's len() does.
const byteLength = (s) => new TextEncoder().encode(s).length;

function check(value, max, re, msg, fmt, examples) {
  const errs = [];
  if (byteLength(value) > max) errs.push(maxLenError(max));
  if (!re.test(value)) errs.push(regexError(msg, fmt, ...examples));
  return errs;
}

/** IsDNS1123Label. */
export const isDns1123Label = (v) => check(v, 63, DNS1123_LABEL, DNS1123_LABEL_MSG, DNS1123_LABEL_FMT, ['my-name', '123-abc']);
/** IsDNS1123Subdomain. */
export const isDns1123Subdomain = (v) => check(v, 253, DNS1123_SUBDOMAIN, DNS1123_SUBDOMAIN_MSG, DNS1123_SUBDOMAIN_FMT, ['example.com']);
/** IsDNS1035Label. */
export const isDns1035Label = (v) => check(v, 63, DNS1035_LABEL, DNS1035_LABEL_MSG, DNS1035_LABEL_FMT, ['my-name', 'abc-123']);

/** IsQualifiedName (label keys, annotation keys, finalizers). */
export function isQualifiedName(value) {
  const errs = [];
  const parts = value.split('/');
  let name;
  if (parts.length === 1) {
    [name] = parts;
  } else if (parts.length === 2) {
    const [prefix] = parts;
    [, name] = parts;
    if (!prefix) errs.push('prefix part must be non-empty');
    else errs.push(...isDns1123Subdomain(prefix).map((m) => `prefix part ${m}`));
  } else {
    return [`a qualified name ${regexError(QUALIFIED_NAME_MSG, QUALIFIED_NAME_FMT, 'MyName', 'my.name', '123-abc')} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')`];
  }
  if (!name) errs.push('name part must be non-empty');
  else if (byteLength(name) > 63) errs.push(`name part ${maxLenError(63)}`);
  if (!QUALIFIED_NAME.test(name)) {
    errs.push(`name part ${regexError(QUALIFIED_NAME_MSG, QUALIFIED_NAME_FMT, 'MyName', 'my.name', '123-abc')}`);
  }
  return errs;
}

/** IsValidLabelValue. */
export const isValidLabelValue = (v) => check(v, 63, LABEL_VALUE, LABEL_VALUE_MSG, LABEL_VALUE_FMT, ['MyValue', 'my_value', '12345']);

/** The ValidateNameFuncs: NameIsDNSSubdomain, NameIsDNSLabel, NameIsDNS1035Label. */
export const NameIsDNSSubdomain = isDns1123Subdomain;
export const NameIsDNSLabel = isDns1123Label;
export const NameIsDNS1035Label = isDns1035Label;

/** field.Invalid(path, name, msg) for each problem `rule` finds with `name`. */
export const validateName = (name, path, rule = NameIsDNSSubdomain) => rule(name).map((m) => invalid(path, name, m));

/** ValidateLabels: keys as qualified names, values as label values, at `path`; sorted keys. */
export function validateLabels(labels, path) {
  const errs = [];
  for (const k of Object.keys(labels ?? {}).sort()) {
    errs.push(...isQualifiedName(k).map((m) => invalid(path, k, m)));
    errs.push(...isValidLabelValue(labels[k]).map((m) => invalid(path, labels[k], m)));
  }
  return errs;
}

/** ValidateImmutableField: `field is immutable` when new and old differ (as JSON). */
export const validateImmutableField = (next, old, path) =>
  (JSON.stringify(next ?? null) === JSON.stringify(old ?? null) ? [] : [invalid(path, next ?? null, FIELD_IMMUTABLE_ERROR_MSG)]);

/** ValidateNonnegativeField. */
export const validateNonnegativeField = (value, path) =>
  (value < 0 ? [invalid(path, value, 'must be greater than or equal to 0')] : []);
