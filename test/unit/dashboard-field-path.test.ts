// Field errors as sentences (web/src/components/field-path.ts): no request paths on screen.
import { expect } from 'chai';
import { describeDetail, humanPath } from '../../web/src/components/field-path.ts';

describe('dashboard: field errors in words', () => {
  it('names list items by their number and the fields by words', () => {
    expect(humanPath('rules[0].action.url')).to.equal('Rule 1, action URL');
    expect(humanPath('ab_test.variants[2].url')).to.equal('A/B test, Variant 3, URL');
    expect(humanPath('expires_at')).to.equal('expiry');
    expect(humanPath('mobile.ios.app_url')).to.equal('mobile iOS app URL');
    expect(humanPath('')).to.equal('');
  });

  it('makes one sentence of a path and its message', () => {
    expect(describeDetail({ path: 'rules[0].action.url', message: 'is required' })).to.equal('Rule 1, action URL is required.');
    expect(describeDetail({ path: 'url', message: 'must be an http or https URL.' })).to.equal('URL must be an http or https URL.');
    expect(describeDetail({ path: '', message: 'is invalid' })).to.equal('Is invalid.');
  });
});
