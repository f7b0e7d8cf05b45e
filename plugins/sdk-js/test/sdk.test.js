// The JavaScript SDK's helpers against the Kubernetes wording the Rust SDK's tests pin
// (plugins/apimachinery/src/validation/mod.rs, field.rs). Run: node --test plugins/sdk-js/test/
// (cargo test runs it: language_plugins.rs).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Path, field, validation, resourceDescription, exportStrategy, Strategy, ErrorType } from '../index.js';

const SUBDOMAIN_MSG = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
const NAME_PART_MSG = "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";

test('paths print as Kubernetes does', () => {
  assert.equal(String(new Path('spec').child('containers').index(0).child('image')), 'spec.containers[0].image');
  assert.equal(String(new Path('metadata').child('labels').key('app')), 'metadata.labels[app]');
  assert.equal(String(new Path().child('spec')), 'spec');
});

test('notSupported quotes the values', () => {
  const e = field.notSupported(new Path('spec').child('size'), 'huge', ['A', 'C']);
  assert.deepEqual([e.type, e.field, e.detail, e.badValue], [ErrorType.NotSupported, 'spec.size', 'supported values: "A", "C"', 'huge']);
});

test('DNS-1123 labels and subdomains', () => {
  for (const ok of ['a', '0', 'my-name', '123-abc', 'a--b', 'a'.repeat(63)]) assert.deepEqual(validation.isDns1123Label(ok), [], ok);
  for (const bad of ['', '-a', 'a-', 'A', 'my_name', 'a.b', 'ä', 'a b', 'a\n']) assert.notDeepEqual(validation.isDns1123Label(bad), [], bad);
  assert.deepEqual(validation.isDns1123Label('a'.repeat(64)), ['must be no more than 63 characters']);
  for (const ok of ['a', 'example.com', '1.2.3', 'a'.repeat(253)]) assert.deepEqual(validation.isDns1123Subdomain(ok), [], ok);
  for (const bad of ['', '.', 'a.', 'a..b', 'A.b', 'a_b', 'a/b']) assert.deepEqual(validation.isDns1123Subdomain(bad), [SUBDOMAIN_MSG], bad);
});

test('qualified names', () => {
  for (const ok of ['app', 'example.com/app', 'kubernetes.io/metadata.name', 'a/B']) assert.deepEqual(validation.isQualifiedName(ok), [], ok);
  assert.deepEqual(validation.isQualifiedName(''), ['name part must be non-empty', NAME_PART_MSG]);
  assert.deepEqual(validation.isQualifiedName('-app'), [NAME_PART_MSG]);
  assert.deepEqual(validation.isQualifiedName('/app'), ['prefix part must be non-empty']);
  assert.deepEqual(validation.isQualifiedName('Example.com/app'), [`prefix part ${SUBDOMAIN_MSG}`]);
  assert.deepEqual(validation.isQualifiedName('a'.repeat(64)), ['name part must be no more than 63 characters']);
});

test('labels and immutable fields', () => {
  const errs = validation.validateLabels({ ok: 'v', 'bad key!': 'v', k: '-v' }, new Path('metadata').child('labels'));
  assert.deepEqual(errs.map((e) => [e.field, e.badValue]), [['metadata.labels', 'bad key!'], ['metadata.labels', '-v']]);
  assert.deepEqual(validation.validateImmutableField('a', 'a', new Path('spec')), []);
  const [e] = validation.validateImmutableField('b', 'a', new Path('spec').child('x'));
  assert.deepEqual([e.field, e.badValue, e.detail], ['spec.x', 'b', 'field is immutable']);
});

test('the export applies the CRD strategy around the hooks', () => {
  class S extends Strategy {
    describe() { return resourceDescription('g', 'v1', 'K', 'ks', { selectableFields: ['spec.size', 'spec.n'] }); }
    validate(o) { return o.spec.size ? [] : [field.required(new Path('spec').child('size'))]; }
  }
  const s = exportStrategy(S);
  const created = s.createSequence(JSON.stringify({ apiVersion: 'g/v1', kind: 'K', metadata: { name: 'a' }, spec: { size: 'x' }, status: { x: 1 } }));
  const o = JSON.parse(created.object);
  assert.deepEqual([o.metadata.generation, o.status, created.errors], [1, undefined, []]);
  const bad = s.createSequence(JSON.stringify({ apiVersion: 'g/v1', kind: 'K', metadata: { name: 'a' }, spec: {} }));
  assert.deepEqual(bad.errors, [{ type: 'required', field: 'spec.size', badValue: undefined, detail: '' }]);
  const old = { ...o, status: { phase: 'A' } };
  const updated = JSON.parse(s.prepareForUpdate(JSON.stringify({ ...o, spec: { size: 'y' }, status: { phase: 'B' } }), JSON.stringify(old)));
  assert.deepEqual([updated.metadata.generation, updated.status], [2, { phase: 'A' }]);
  assert.deepEqual(s.getAttrs(JSON.stringify({ metadata: { labels: { b: '1', a: '2' } }, spec: { size: 'x', n: 3 } })),
    { labels: [['a', '2'], ['b', '1']], fields: [['spec.size', 'x'], ['spec.n', '3']] });
  assert.throws(() => s.prepareForCreate('[1]'), (e) => e.tag === 'bad-request');
});

test('generation is bumped on a change of value, not of key order', () => {
  class S extends Strategy {
    describe() { return resourceDescription('g', 'v1', 'K', 'ks'); }
    prepareForUpdate(n) { const { replicas } = n.spec; delete n.spec.replicas; n.spec.replicas = replicas; }
  }
  const s = exportStrategy(S);
  const old = { apiVersion: 'g/v1', kind: 'K', metadata: { name: 'a', generation: 3 }, spec: { replicas: 1, size: 'x' } };
  const same = JSON.parse(s.prepareForUpdate(JSON.stringify(old), JSON.stringify(old)));
  assert.equal(same.metadata.generation, 3);
  const changed = JSON.parse(s.prepareForUpdate(JSON.stringify({ ...old, spec: { replicas: 2, size: 'x' } }), JSON.stringify(old)));
  assert.equal(changed.metadata.generation, 4);
});

test('an integer beyond 2^53 is refused, not rewritten', () => {
  class S extends Strategy { describe() { return resourceDescription('g', 'v1', 'K', 'ks'); } }
  const s = exportStrategy(S);
  assert.throws(() => s.prepareForCreate('{"apiVersion":"g/v1","kind":"K","metadata":{"name":"a"},"spec":{"n":9007199254740993}}'),
    (e) => e.tag === 'bad-request' && e.val.includes('2^53'));
  const ok = JSON.parse(s.prepareForCreate('{"apiVersion":"g/v1","kind":"K","metadata":{"name":"a"},"spec":{"n":9007199254740991}}'));
  assert.equal(ok.spec.n, 9007199254740991);
});
