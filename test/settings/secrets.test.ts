import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { maskUrl } from '../../src/settings/secrets.js';

describe('maskUrl', () => {
  it('hides the password of a URL and keeps the rest', () => {
    assert.equal(maskUrl('postgres://alice:s3cret@db1:5432/forecastd'), 'postgres://alice:***@db1:5432/forecastd');
    assert.equal(maskUrl('redis://:hunter2@cache:6379/0'), 'redis://:***@cache:6379/0');
  });

  it('leaves a URL without a password alone', () => {
    for (const url of ['postgres://alice@db1/forecastd', 'postgres://db1:5432/forecastd', 'sqlite:./data/forecastd.db', './x.db']) {
      assert.equal(maskUrl(url), url);
    }
  });

  it('hides a password holding unencoded @, / or ? whole', () => {
    const masked = maskUrl('postgres://alice:p@ss/w?rd@db1/forecastd');
    assert.equal(masked, 'postgres://alice:***@db1/forecastd');
  });

  it('hides a password= query parameter', () => {
    assert.equal(maskUrl('postgres://db1/forecastd?sslmode=require&password=s3cret&x=1'), 'postgres://db1/forecastd?sslmode=require&password=***&x=1');
  });

  it('hides a lone user name only when asked to (Redis reads it as a password)', () => {
    assert.equal(maskUrl('redis://s3cret@cache:6379'), 'redis://s3cret@cache:6379');
    assert.equal(maskUrl('redis://s3cret@cache:6379', true), 'redis://***@cache:6379');
  });
});
