// The webhook target policy, table-driven: every spelling of a non-public address a URL can
// carry (decimal, hex, octal, short forms, a trailing dot, IPv6 forms that carry an IPv4
// address) is refused with what it is; public addresses and names pass (a name is judged
// when a delivery connects); the operator's opt-ins; HOST[:PORT] entries.
import { describe, expect, it } from 'vitest';
import { parseHostPort } from '../../src/lib/host-port.js';
import { addressRefusal, TargetPolicy } from '../../src/service/webhooks/target-policy.js';

const strict = new TargetPolicy();
const refusalOf = (url: string) => strict.urlRefusal(new URL(url));

describe('urlRefusal, strict', () => {
  const refused: Array<[string, RegExp]> = [
    ['http://127.0.0.1:5432/', /^127\.0\.0\.1 is a loopback address/],
    ['http://127.0.0.1./hooks', /^127\.0\.0\.1 is a loopback address/],
    ['http://127.1/', /^127\.0\.0\.1 is a loopback address/],
    ['http://0x7f000001/', /^127\.0\.0\.1 is a loopback address/],
    ['http://0x7f.1/', /^127\.0\.0\.1 is a loopback address/],
    ['http://0177.0.0.1/', /^127\.0\.0\.1 is a loopback address/],
    ['http://017700000001/', /^127\.0\.0\.1 is a loopback address/],
    ['http://2130706433/', /^127\.0\.0\.1 is a loopback address/],
    ['http://127.255.255.254/', /loopback address/],
    ['http://１２７.0.0.1/', /^127\.0\.0\.1 is a loopback address/],
    ['http://169.254.169.254/latest/meta-data/', /^169\.254\.169\.254 is a link-local address/],
    ['http://2852039166/', /^169\.254\.169\.254 is a link-local address/],
    ['http://0xa9fea9fe/', /^169\.254\.169\.254 is a link-local address/],
    ['http://0251.0376.0251.0376/', /^169\.254\.169\.254 is a link-local address/],
    ['http://169.254.169.254.:80/', /^169\.254\.169\.254 is a link-local address/],
    ['http://10.0.0.1/', /^10\.0\.0\.1 is a private address/],
    ['http://10.1/', /^10\.0\.0\.1 is a private address/],
    ['http://172.16.0.1/', /private address/],
    ['http://172.31.255.255/', /private address/],
    ['http://192.168.1.1/', /private address/],
    ['http://100.64.0.1/', /shared address \(100\.64\.0\.0\/10\)/],
    ['http://100.127.255.254/', /shared address/],
    ['http://0.0.0.0/', /unspecified address/],
    ['http://0/', /^0\.0\.0\.0 is an unspecified address/],
    ['http://224.0.0.1/', /multicast address/],
    ['http://239.255.255.250/', /multicast address/],
    ['http://255.255.255.255/', /broadcast address/],
    ['http://240.0.0.1/', /reserved address/],
    ['http://192.0.2.1/', /reserved address/],
    ['http://198.18.0.1/', /reserved address/],
    ['http://203.0.113.7/', /reserved address/],
    ['http://[::1]/', /^::1 is the loopback address/],
    ['http://[0:0:0:0:0:0:0:1]/', /^::1 is the loopback address/],
    ['http://[::]/', /^:: is the unspecified address/],
    ['http://[::ffff:127.0.0.1]/', /^::ffff:7f00:1 is IPv4-mapped for 127\.0\.0\.1, a loopback address/],
    ['http://[::ffff:7f00:1]/', /IPv4-mapped for 127\.0\.0\.1, a loopback address/],
    ['http://[0:0:0:0:0:ffff:a9fe:a9fe]/', /IPv4-mapped for 169\.254\.169\.254, a link-local address/],
    ['http://[::ffff:0:a00:1]/', /IPv4-translated for 10\.0\.0\.1, a private address/],
    ['http://[::127.0.0.1]/', /^::7f00:1 is IPv4-compatible for 127\.0\.0\.1, a loopback address/],
    ['http://[::10.0.0.1]/', /IPv4-compatible for 10\.0\.0\.1/],
    ['http://[2002:7f00:1::]/', /6to4 for 127\.0\.0\.1, a loopback address/],
    ['http://[2002:a9fe:a9fe::1]/', /6to4 for 169\.254\.169\.254, a link-local address/],
    ['http://[64:ff9b::7f00:1]/', /NAT64 for 127\.0\.0\.1, a loopback address/],
    ['http://[64:ff9b::a9fe:a9fe]/', /NAT64 for 169\.254\.169\.254/],
    ['http://[64:ff9b:1::808:808]/', /local-use NAT64 address/],
    ['http://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/', /Teredo address/],
    ['http://[2001::1]/', /Teredo address/],
    ['http://[fd00::1]/', /^fd00::1 is a unique-local address \(fc00::\/7\)/],
    ['http://[fc00::1]/', /unique-local address/],
    ['http://[fe80::1]/', /link-local address \(fe80::\/10\)/],
    ['http://[febf::1]/', /link-local address/],
    ['http://[ff02::1]/', /multicast address/],
    ['http://[2001:db8::1]/', /reserved address/],
    ['http://[100::1]/', /reserved address/],
    ['http://[fec0::1]/', /reserved address/],
    ['http://[4000::1]/', /reserved address \(outside 2000::\/3\)/],
    ['http://localhost:8080/', /^localhost is this machine/],
    ['http://LOCALHOST./', /^localhost is this machine/],
    ['http://api.localhost/', /^api\.localhost is this machine/],
  ];
  it.each(refused)('refuses %s', (url, reason) => {
    expect(refusalOf(url)).toMatch(reason);
  });

  const passed = [
    'https://example.com/hooks', 'https://hooks.example.com./x', 'http://8.8.8.8/', 'http://134744072/', 'http://1.1.1.1:8443/',
    'http://100.63.255.255/', 'http://100.128.0.0/', 'http://172.15.255.255/', 'http://172.32.0.1/', 'http://169.253.255.255/',
    'http://[2606:4700:4700::1111]/', 'http://[::ffff:8.8.8.8]/', 'http://[2002:808:808::1]/', 'http://[64:ff9b::808:808]/',
    // A name is judged by what it resolves to, when a delivery connects.
    'http://internal.example/', 'http://db/',
  ];
  it.each(passed)('passes %s', (url) => {
    expect(refusalOf(url)).toBeUndefined();
  });

  it('judges resolved addresses in both families', () => {
    expect(addressRefusal('127.0.0.53')).toMatch(/loopback/);
    expect(addressRefusal('::ffff:192.168.0.1')).toMatch(/IPv4-mapped for 192\.168\.0\.1, a private address/);
    expect(addressRefusal('93.184.215.14')).toBeUndefined();
    expect(addressRefusal('2a00:1450:4001:80b::200e')).toBeUndefined();
  });
});

describe('the operator\'s opt-ins', () => {
  it('--webhook-allow-private lets every address through', () => {
    const open = new TargetPolicy({ allowPrivate: true });
    for (const url of ['http://127.0.0.1:5432/', 'http://[fd00::1]/', 'http://localhost/', 'http://2852039166/']) expect(open.urlRefusal(new URL(url))).toBeUndefined();
    expect(open.trusts('10.0.0.1', 80)).toBe(true);
  });

  it('--webhook-allow HOST[:PORT] lets that host through, on that port when one is given, in any spelling', () => {
    const some = new TargetPolicy({ allow: ['hooks.internal', '127.0.0.1:8080', '[FD00::1]:443', 'Intranet.Example.'] });
    expect(some.urlRefusal(new URL('http://hooks.internal:9999/'))).toBeUndefined();
    expect(some.urlRefusal(new URL('http://127.0.0.1:8080/x'))).toBeUndefined();
    expect(some.urlRefusal(new URL('http://0x7f000001:8080/x'))).toBeUndefined();
    expect(some.urlRefusal(new URL('http://127.0.0.1:8081/x'))).toMatch(/loopback/);
    expect(some.urlRefusal(new URL('http://127.0.0.1/x'))).toMatch(/loopback/);
    expect(some.urlRefusal(new URL('https://[fd00::1]/'))).toBeUndefined();
    expect(some.urlRefusal(new URL('http://[fd00::1]/'))).toMatch(/unique-local/);
    expect(some.trusts('intranet.example', 80)).toBe(true);
    expect(some.trusts('hooks.internal.', 443)).toBe(true);
    expect(some.trusts('other.internal', 443)).toBe(false);
  });

  it('refuses an entry that is not HOST[:PORT]', () => {
    expect(() => new TargetPolicy({ allow: ['http://hooks.internal/'] })).toThrow(/must be a host name or address/);
  });
});

describe('parseHostPort', () => {
  it.each([
    ['hooks.internal', { host: 'hooks.internal' }],
    ['Hooks.Internal.:8443', { host: 'hooks.internal', port: 8443 }],
    ['10.0.0.5:8080', { host: '10.0.0.5', port: 8080 }],
    ['0xa000005', { host: '10.0.0.5' }],
    ['[fd00::1]:443', { host: 'fd00::1', port: 443 }],
    ['[::ffff:127.0.0.1]', { host: '::ffff:7f00:1' }],
  ])('reads %s', (value, expected) => {
    expect(parseHostPort(value)).toEqual(expected);
  });

  it.each(['', 'http://x', 'x/y', 'user@x', 'x:', 'x:0', 'x:65536', 'x:80:80', 'fd00::1', '[fd00::1', 'a b', 'x?y', '[::1]x'])('refuses %j', (value) => {
    expect(typeof parseHostPort(value)).toBe('string');
  });
});
