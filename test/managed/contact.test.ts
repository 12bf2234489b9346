// Step 2's --contact: "Name <email>" or a bare e-mail, and nothing else.
import { describe, expect, it } from 'vitest';
import { contactText, parseContact } from '../../src/ops/managed/plan.js';

describe('parseContact', () => {
  it('takes "Name <email>", keeping the name as written (a quoted name without its quotes)', () => {
    expect(parseContact('Jo Bloggs <jo@acme.example>')).toEqual({ name: 'Jo Bloggs', email: 'jo@acme.example' });
    expect(parseContact('  Jo  <  jo@acme.example >  ')).toEqual({ name: 'Jo', email: 'jo@acme.example' });
    expect(parseContact('"Bloggs, Jo" <jo@acme.example>')).toEqual({ name: 'Bloggs, Jo', email: 'jo@acme.example' });
  });

  it('takes a bare e-mail (with or without angle brackets) as a contact with no name', () => {
    expect(parseContact('ops@example.com')).toEqual({ name: '', email: 'ops@example.com' });
    expect(parseContact(' <ops@example.com> ')).toEqual({ name: '', email: 'ops@example.com' });
    expect(parseContact('"" <ops@example.com>')).toEqual({ name: '', email: 'ops@example.com' });
  });

  it('refuses what is neither', () => {
    for (const text of ['', 'Jo Bloggs', 'jo@', 'jo@acme', '@acme.example', 'Jo <jo@acme.example', '<jo@acme.example', 'jo@acme.example>',
      'jo@acme.example, ann@acme.example', 'Jo <jo@acme.example> Ann <ann@acme.example>', 'jo bloggs@acme.example', 'Jo <>']) {
      expect(parseContact(text), text).toBeUndefined();
    }
  });

  it('shows a contact with no name as its e-mail alone', () => {
    expect(contactText({ name: 'Jo Bloggs', email: 'jo@acme.example' })).toBe('Jo Bloggs <jo@acme.example>');
    expect(contactText({ name: '', email: 'ops@example.com' })).toBe('ops@example.com');
  });
});
